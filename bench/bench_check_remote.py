"""``check`` against a remote index: bytes fetched by how the index serves metadata (issue 21).

The world is ``tests/worlds/torch_index.py``: the real ``torch-2.9.0-variants.json`` (7
variants) and wheels whose METADATA pins the CUDA components as the torch 2.10 declaration does,
each padded to ``--wheel-mb`` MiB with incompressible bytes so a download shows. The loopback
index serves them four ways; each time the ``check`` job runs in process against conda-forge's
pytorch-cpu 2.9.1 ``.ci_support`` (every platform), and the bytes of bodies the command's
transport received are counted (``Transport.received``: a server that ignores a range request
starts sending the whole wheel, which the client stops reading at the status line):

- PEP 658 ``.metadata`` files;
- range requests only (the METADATA read from the zip's end);
- neither, ``check`` as it is now: the wheels are named, not opened (labels and tags say the
  toolkits);
- neither, with ``--download``: each variant's wheel downloaded whole, what ``check`` did before.

Baseline (same run): the bytes of one wheel per variant, what a whole download of each costs.

    .venv/bin/python bench/bench_check_remote.py [--wheel-mb 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the offline test worlds build the wheels and serve the index

from tests.worlds.index_server import IndexServer  # noqa: E402
from tests.worlds.torch_index import build_torch_index  # noqa: E402

from variant_bridge.jobs.check import CheckRequest, run_check  # noqa: E402
from variant_bridge.jobs.context import open_downloads  # noqa: E402
from variant_bridge.jobs.specs import FetchSpec  # noqa: E402
from variant_bridge.release_check import Level  # noqa: E402

CASES = {  # name -> (server options, check's --download)
    "PEP 658 metadata": ({"core_metadata": True}, False),
    "range requests only": ({"core_metadata": False, "ranges": True}, False),
    "neither (wheels named, not opened)": ({"core_metadata": False, "ranges": False}, False),
    "neither, --download (the old way)": ({"core_metadata": False, "ranges": False}, True),
}


def _corpus() -> Path:
    for parent in ROOT.parents:
        if (parent / "shared" / "corpus").is_dir():
            return parent / "shared" / "corpus"
    raise SystemExit("the shared corpus is missing (expected shared/corpus beside the checkout)")


def _pad(world: Path, megabytes: int) -> None:
    for wheel in world.glob("torch-*.whl"):
        with zipfile.ZipFile(wheel, "a", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr("torch/_padding.bin", os.urandom(megabytes * 1024 * 1024))


def _check(index: IndexServer, download: bool, corpus: Path) -> tuple[float, int, int, str]:
    request = CheckRequest(
        conda=(corpus / "maint" / "pytorch-cpu-2.9.1" / ".ci_support",),
        wheels=index.url,
        project="torch",
        arch_lists=("12.9=5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",),
        download=download,
    )
    with open_downloads(FetchSpec(no_cache=True, quiet=True)) as downloads:  # as `check` opens
        start = time.perf_counter()
        report = run_check(request, downloads)
        elapsed = time.perf_counter() - start
    received = downloads.transport.received
    worst = {Level.OK: "ok", Level.INFO: "info", Level.WARN: "warn", Level.ERROR: "error"}
    return elapsed, received, len(report.wheels.unread), worst[report.worst]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel-mb", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpus = _corpus()
    with tempfile.TemporaryDirectory() as scratch:
        world = build_torch_index(
            corpus, Path(scratch) / "index", tags="cp312-cp312-manylinux_2_28_x86_64"
        )
        _pad(world, args.wheel_mb)
        wheels = sorted(world.glob("torch-*.whl"))
        whole = sum(p.stat().st_size for p in wheels)
        print(
            f"torch world: {len(wheels)} variant wheels of {args.wheel_mb} MiB; baseline, one "
            f"whole wheel per variant: {whole / 2**20:.1f} MiB"
        )
        for name, (options, download) in CASES.items():
            with IndexServer(world, **options) as index:
                runs = [_check(index, download, corpus) for _ in range(args.repeat)]
            elapsed = statistics.median(r[0] for r in runs)
            _, received, unread, worst = runs[-1]
            print(
                f"  {name:36} {received / 1024:10.1f} KiB received = "
                f"{100 * received / whole:7.3f}% of "
                f"the baseline; {unread} wheels not opened; {elapsed * 1000:7.1f} ms; "
                f"worst finding: {worst}"
            )


if __name__ == "__main__":
    main()
