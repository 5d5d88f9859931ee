"""``select torch`` from a loopback index shaped like the real torch variant index (issue 8).

The world is ``tests/worlds/torch_index.py``: the real ``torch-2.9.0-variants.json`` (7 variants)
and wheels whose METADATA pins the CUDA components per variant as the torch 2.10 declaration
does, each wheel padded to ``--wheel-mb`` MiB so a download would show. The loopback index serves
PEP 658 ``.metadata`` files (then, for comparison, only range requests). For each environment the
``select`` job runs in process; the server's log counts the requests per kind and the bytes sent.

Baseline (same run): the same ``select`` with the toolkit evidence not read (the variants judged
by their properties alone, as before issue 8), so the ratio is the cost of the evidence.

    .venv/bin/python bench/bench_torch_index.py [--repeat 5] [--wheel-mb 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the offline test worlds build the wheels and serve the index

from tests.worlds.index_server import IndexServer  # noqa: E402
from tests.worlds.torch_index import build_torch_index  # noqa: E402

from variant_bridge.environment import Environment, Source, Toolkit, VirtualPackage  # noqa: E402
from variant_bridge.indexes import Downloads, SimpleIndex  # noqa: E402
from variant_bridge.indexes.transport import Transport  # noqa: E402
from variant_bridge.jobs import _choice as choice_job  # noqa: E402
from variant_bridge.jobs.context import Context, Sources  # noqa: E402
from variant_bridge.jobs.select import parse_requests, select  # noqa: E402
from variant_bridge.jobs.target import Target  # noqa: E402
from variant_bridge.platform_tags import TargetPython  # noqa: E402
from variant_bridge.translate import supported_properties  # noqa: E402

CASES = {  # name -> (driver, toolkit)
    "toolkit 12.6, driver 12.9": ("12.9", "12.6"),
    "toolkit 12.9, driver 12.9": ("12.9", "12.9"),
    "no toolkit, driver 13.0": ("13.0", None),
}


def _corpus() -> Path:
    for parent in (ROOT, *ROOT.parents):
        if (parent / "shared" / "corpus").is_dir() and parent != ROOT:
            return parent / "shared" / "corpus"
    raise SystemExit("the shared corpus is missing (expected shared/corpus beside the checkout)")


def _env(driver: str, toolkit: str | None) -> Environment:
    vps = (
        VirtualPackage("__glibc", "2.36"),
        VirtualPackage("__cuda", driver, source=Source.TARGET),
        VirtualPackage("__cuda_arch", "9.0", source=Source.TARGET),
    )
    tk = Toolkit("cuda-version", toolkit, Source.TARGET) if toolkit else None
    return Environment("linux-64", vps, tk, python="3.12.7")


def _pad(world: Path, megabytes: int) -> None:
    """Grow each torch wheel with an incompressible member, so that reading one whole shows."""
    import zipfile

    for wheel in world.glob("torch-*.whl"):
        with zipfile.ZipFile(wheel, "a", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr("torch/_padding.bin", os.urandom(megabytes * 1024 * 1024))


def _run(index: IndexServer, env: Environment) -> tuple[str, float]:
    target = Target(env, TargetPython.parse("3.12.7"), supported_properties(env))
    sources = (SimpleIndex.parse(index.url),)
    start = time.perf_counter()
    with Downloads.temporary(transport=Transport()) as downloads:
        # torch alone (its dependency tree is not resolved): the cost of its variants' evidence
        ctx = Context(Sources(sources), downloads, target)
        (choice,) = select(parse_requests(["torch"]), ctx, deps=False)
    elapsed = time.perf_counter() - start
    assert choice.selected is not None
    return str(choice.selected.label), elapsed


def _kinds(index: IndexServer) -> tuple[Counter[str], int]:
    kinds: Counter[str] = Counter()
    sent = 0
    for request in index.requests:
        if not request.path.startswith("/files/torch-"):
            continue
        sent += request.sent
        if request.path.endswith(".metadata"):
            kinds["metadata"] += 1
        elif request.path.endswith(".whl"):
            kinds["range" if request.status == 206 else "whole wheel"] += 1
        else:
            kinds["variants.json"] += 1
    return kinds, sent


def measure(
    index: IndexServer, env: Environment, repeat: int
) -> tuple[str, float, Counter[str], int]:
    index.requests.clear()
    label, _ = _run(index, env)
    kinds, sent = _kinds(index)
    times = [_run(index, env)[1] for _ in range(repeat)]
    return label, statistics.median(times), kinds, sent


def baseline(index: IndexServer, env: Environment, repeat: int) -> float:
    """The same select with no toolkit evidence read (properties alone)."""
    with mock.patch.object(choice_job, "read_toolkits", return_value={}):
        return statistics.median(_run(index, env)[1] for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--wheel-mb", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        world = build_torch_index(_corpus(), Path(scratch) / "index")
        _pad(world, args.wheel_mb)
        size = sum(p.stat().st_size for p in world.glob("torch-*.whl"))
        print(f"torch world: 7 variant wheels, {size / 2**20:.0f} MiB in all")
        for pep658 in (True, False):
            how = "with PEP 658 metadata" if pep658 else "without PEP 658 metadata (range requests)"
            print(f"\nindex {how}:")
            with IndexServer(world, core_metadata=pep658) as index:
                for name, (driver, toolkit) in CASES.items():
                    env = _env(driver, toolkit)
                    label, median, kinds, sent = measure(index, env, args.repeat)
                    base = baseline(index, env, args.repeat)
                    counts = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
                    print(
                        f"  {name:28} -> {label:9} {median * 1000:6.1f} ms "
                        f"(properties alone {base * 1000:5.1f} ms, x{median / base:.1f}); "
                        f"torch requests: {counts}; {sent / 1024:.0f} KiB of torch files sent"
                    )


if __name__ == "__main__":
    main()
