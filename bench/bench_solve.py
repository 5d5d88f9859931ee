"""``solve`` and ``index``: per-solve time over the contract's grid, and indexing 1,000 wheels.

1. A torch-like package (the real torch 2.9 variant metadata, wheels with the torch 2.10 pins)
   indexed with ``cells`` and ``rank`` beside conda-forge-shaped ``cuda-version`` packages; then
   one py-rattler solve of ``torch`` (+ a ``cuda-version`` pin) per machine of the grid (264).
   Baseline, same run and channels: a solve of ``cuda-version`` alone (conda records only).
2. ``index`` of 1,000 wheels (250 projects x cu126/cu128/cu129/null, each wheel a small real zip
   with ``variant.json``, METADATA and ``sm_arch`` lists). Baseline, same run: reading each wheel's
   sha256 and METADATA (the I/O floor every index pays).

    PYTHONPATH=. .venv/bin/python bench/bench_solve.py [--repeat 3]

Prints medians and ratios; ``tests/solve/test_contract.py`` checks the choices themselves.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.solve.test_contract import grid, machine  # noqa: E402
from tests.worlds.channel import Channel, base_packages, cuda_packages  # noqa: E402
from tests.worlds.torch_index import build_torch_index  # noqa: E402
from tests.worlds.wheels import make_release  # noqa: E402

from variant_bridge.indexes import FindLinks, file_sha256, read_wheel_metadata  # noqa: E402
from variant_bridge.jobs.context import Context, Sources  # noqa: E402
from variant_bridge.jobs.index import IndexReport, IndexRequest, index_wheels  # noqa: E402
from variant_bridge.jobs.specs import FetchSpec  # noqa: E402
from variant_bridge.jobs.target import Target  # noqa: E402
from variant_bridge.priority import Encoding  # noqa: E402
from variant_bridge.solve.solver import solve_specs  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
SM = [f"nvidia :: sm_arch :: {v}" for v in ("80_real", "86_real", "90_real")]
Env = tuple[str | None, str | None, str | None]


def _median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _solve_all(project: str, channels: list[Path], envs: list[Env]) -> None:
    for driver, gpu, pin in envs:
        specs = [project] + ([f"cuda-version {pin}.*"] if pin else [])
        solve_specs(specs, channels, platform="linux-64", virtual_packages=machine(driver, gpu))


def _index(wheels: Path, channel: Path, encoding: Encoding) -> IndexReport:
    """``variant-bridge index WHEELS -o CHANNEL --subdir linux-64 --no-cache``, in process."""
    sources = Sources((FindLinks.parse(wheels),))
    with Context.open(sources, Target.of_platform("linux-64"), FetchSpec(no_cache=True)) as ctx:
        return index_wheels(IndexRequest(channel, encoding=encoding), ctx)


def bench_solve(work: Path, repeat: int) -> None:
    conda = Channel(work / "conda").add([*cuda_packages(), *base_packages()])
    wheels = build_torch_index(CORPUS, work / "torch")
    envs = list(grid())
    with_driver = [e for e in envs if e[0] is not None]
    baseline = _median_ms(
        lambda: _solve_all("cuda-version", [conda.path], with_driver), repeat
    ) / len(with_driver)
    print(f"baseline: solve cuda-version alone, per solve: {baseline:.2f} ms")
    for encoding in Encoding:
        channel = work / f"channel-{encoding.value}"
        report = _index(wheels, channel, encoding)
        channels = [channel, conda.path]
        per = _median_ms(lambda c=channels: _solve_all("torch", c, envs), repeat) / len(envs)
        print(
            f"{encoding.value:5}: {report.record_count} records; solve torch (+ pin), "
            f"{len(envs)} machines, per solve: {per:.2f} ms ({per / baseline:.2f}x baseline)"
        )


def _release(wheels: Path, n: int) -> None:
    variants = {
        "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6", *SM],
        "cu128": ["nvidia :: cuda_version_lower_bound :: 12.8", *SM],
        "cu129": ["nvidia :: cuda_version_lower_bound :: 12.9", *SM[1:]],
        "null": [],
    }
    make_release(
        wheels, f"pkg{n:03d}", "1.0", variants, namespace_priorities=["nvidia"], non_variant=False
    )


def bench_index(work: Path, repeat: int) -> None:
    wheels = work / "many"
    for n in range(250):
        _release(wheels, n)
    files = sorted(wheels.glob("*.whl"))

    def floor() -> None:
        for path in files:
            file_sha256(path)
            read_wheel_metadata(path)

    base = _median_ms(floor, repeat)
    print(f"baseline: sha256 + METADATA of {len(files)} wheels: {base:.0f} ms")
    runs = iter(range(10_000))
    for encoding in Encoding:

        def one(enc: Encoding = encoding) -> None:
            out = work / f"out-{enc.value}-{next(runs)}"
            _index(wheels, out, enc)

        took = _median_ms(one, repeat)
        print(
            f"{encoding.value:5}: index {len(files)} wheels: {took:.0f} ms "
            f"({took / len(files):.2f} ms per wheel, {took / base:.1f}x baseline)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-solve-") as scratch:
        bench_solve(Path(scratch), args.repeat)
        bench_index(Path(scratch), args.repeat)


if __name__ == "__main__":
    main()
