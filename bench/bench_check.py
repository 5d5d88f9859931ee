"""``check`` on the real pytorch data: conda-forge's pytorch-cpu 2.10.0 and 2.13.0 ``.ci_support``
files (with their build.sh arch lists) against torch 2.10.0's published variants.

Timed, best of ``--repeat``:

- a cold ``variant-bridge check`` process on each release (what a maintainer waits for; the aim
  is under 1 s), against a cold ``variant-bridge --version`` process (the interpreter and CLI
  start-up alone) as the baseline;
- the ``check`` job in process, against the baseline of reading the same files with PyYAML and
  json alone (the parsing floor).

    .venv/bin/python bench/bench_check.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from variant_bridge.jobs.check import CheckRequest, run_check
from variant_bridge.jobs.context import open_downloads
from variant_bridge.jobs.specs import FetchSpec

BIN = Path(sys.executable).parent
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "maint"
ARCHS = {
    "2.10.0": ("12.9=5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",),
    "2.13.0": (
        "12.9=5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",
        "13.0=7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX",
    ),
}
FOLDERS = {"2.10.0": "pytorch-cpu-2.10.0", "2.13.0": "pytorch-cpu"}
WHEELS = CORPUS / "variant-repack" / "torch-2.10.0-variants.json"
TAG = "cp312-cp312-manylinux_2_28_x86_64"


def best(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def command(release: str) -> list[str]:
    args = [str(BIN / "variant-bridge"), "check", "--conda", str(CORPUS / FOLDERS[release])]
    for item in ARCHS[release]:
        args += ["--arch-list", item]
    return [*args, "--wheels", str(WHEELS), "--wheel-tag", TAG]


def parse_only(release: str) -> None:
    for path in sorted((CORPUS / FOLDERS[release]).glob("*.yaml")):
        yaml.safe_load(path.read_text())
    json.loads(WHEELS.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    if not CORPUS.is_dir():
        sys.exit(f"the corpus is missing: {CORPUS}")
    version = [str(BIN / "variant-bridge"), "--version"]
    start_up = best(repeat, lambda: subprocess.run(version, capture_output=True, check=True))
    print(f"baseline: cold `variant-bridge --version`: {start_up * 1000:.0f} ms")
    for release in ("2.10.0", "2.13.0"):
        # exit status 1: torch 2.10's CUDA 13 wheels have no conda build (an ERROR finding)
        cold = best(
            repeat, lambda r=release: subprocess.run(command(r), capture_output=True, check=False)
        )
        request = CheckRequest(
            conda=(CORPUS / FOLDERS[release],),
            wheels=str(WHEELS),
            arch_lists=ARCHS[release],
            wheel_tags=(TAG,),
        )
        # tables and imports loaded once, as in a long-lived process
        with open_downloads(FetchSpec(no_cache=True, quiet=True)) as downloads:
            run_check(request, downloads)
            warm = best(repeat, lambda q=request: run_check(q, downloads))
        floor = best(repeat, lambda r=release: parse_only(r))
        print(
            f"pytorch-cpu {release}: cold check {cold * 1000:.0f} ms "
            f"({cold / start_up:.1f}x start-up; aim < 1000 ms); in process {warm * 1000:.1f} ms "
            f"({warm / floor:.1f}x parsing the same files: {floor * 1000:.1f} ms)"
        )


if __name__ == "__main__":
    main()
