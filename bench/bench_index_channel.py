"""``index -o CHANNEL`` into a channel that already holds the same wheels, against a fresh one.

A find-links directory of ``--projects`` releases (cu126 / cu128 / cu129 / null, each wheel
padded to ``--size`` MiB of incompressible bytes, as real CUDA wheels are mostly payload) is
indexed by the real command, as whole processes, interleaved after one warm-up each:

- fresh: ``variant-bridge index DIR -o NEW`` into a new directory every time;
- existing: ``variant-bridge index DIR -o CHANNEL`` into one channel indexed from DIR before
  (its ``wheels/`` already holds every wheel, its repodata every record) that also serves
  ``--conda`` conda packages (indexed by rattler beside the wheel records).

    .venv/bin/python bench/bench_index_channel.py [-n 5] [--projects 25] [--size 2] [--conda 300]

Prints both medians and the ratio existing / fresh (the aim: 1x at most).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.worlds.channel import Pkg, write_package  # noqa: E402
from tests.worlds.wheels import make_release  # noqa: E402

BIN = Path(sys.executable).parent
LOWER = "nvidia :: cuda_version_lower_bound :: {}"
AIM_RATIO = 1.0


def build(wheels: Path, projects: int, size: int) -> None:
    for n in range(projects):
        variants = {f"cu{v.replace('.', '')}": [LOWER.format(v)] for v in ("12.6", "12.8", "12.9")}
        make_release(wheels, f"chan{n:03d}", "1.0", {**variants, "null": []},
                     namespace_priorities=["nvidia"], non_variant=False)  # fmt: skip
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel, "a", zipfile.ZIP_STORED) as zf:
            zf.writestr(f"{wheel.name.split('-')[0]}/_payload.bin", os.urandom(size))


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--projects", type=int, default=25, help="releases of 4 wheels")
    parser.add_argument("--size", type=float, default=2.0, help="MiB of payload per wheel")
    parser.add_argument("--conda", type=int, default=300, help="conda packages in the channel")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vb-bench-channel-") as tmp:
        wheels = Path(tmp) / "wheels"
        build(wheels, args.projects, int(args.size * 1024 * 1024))
        count = len(list(wheels.glob("*.whl")))
        total = sum(p.stat().st_size for p in wheels.glob("*.whl")) / 2**20
        index = [str(BIN / "variant-bridge"), "index", str(wheels), "--subdir", "linux-64", "-o"]
        existing = Path(tmp) / "existing"
        for n in range(args.conda):
            write_package(existing, Pkg(f"condapkg{n:03d}", "1.0", "h0_0"))
        timed([*index, str(existing)])  # the channel that already holds them; a warm-up too
        fresh_runs: list[float] = []
        existing_runs: list[float] = []
        for i in range(args.n + 1):
            fresh = Path(tmp) / f"fresh{i}"
            took_fresh = timed([*index, str(fresh)])
            took_existing = timed([*index, str(existing)])
            shutil.rmtree(fresh)
            if i:  # the first pair warms up
                fresh_runs.append(took_fresh)
                existing_runs.append(took_existing)
    a, b = statistics.median(existing_runs), statistics.median(fresh_runs)
    print(f"{count} wheels ({total:.0f} MiB), the existing channel with {args.conda} conda "
          f"packages, {args.n} runs each")  # fmt: skip
    print(f"index -o into the existing channel: median {a * 1000:7.1f} ms")
    print(f"index -o into a fresh channel:      median {b * 1000:7.1f} ms")
    print(f"ratio existing / fresh: {a / b:.2f}x (aim <= {AIM_RATIO:g}x)")


if __name__ == "__main__":
    main()
