"""Cold-process cost of ``variant-bridge detect --json`` against bare rattler detection.

Both run as fresh processes, interleaved (so drift in the machine's load hits both alike), after
one warm-up each (the first rattler run after boot can take seconds while it fills its caches).
Two installs of variant-bridge are measured, each against the same baseline in the same run:

- editable: the development venv's own ``variant-bridge`` script (``pip install -e .``);
- regular: the project built and installed as a wheel (``pip install --no-deps --target``, with
  its bytecode compiled as pip compiles it), run by the same interpreter with the venv's
  dependencies (``python -m variant_bridge``).

    .venv/bin/python bench/bench_detect.py [-n 21] [--importtime]

Prints the medians and the ratios. Aims: ratio <= 1.5, median < 0.4 s, for both installs. Both
run with bytecode cached (see :func:`clean_env`). ``--importtime`` adds the slowest imports of one
``detect --json`` run (``python -X importtime``), cumulative, to show where start-up time goes.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BASELINE = "import rattler; rattler.VirtualPackage.detect()"
AIM_RATIO = 1.5
AIM_SECONDS = 0.4


def console_script() -> str:
    """The installed ``variant-bridge`` next to this interpreter (what a user runs)."""
    beside = Path(sys.executable).with_name("variant-bridge")
    found = str(beside) if beside.exists() else shutil.which("variant-bridge")
    if found is None:
        sys.exit(
            "variant-bridge is not installed next to this Python; run `pip install -e .` first"
        )
    return found


def clean_env() -> dict[str, str]:
    # Same inputs for both: no override or prefix leaking in from the caller's shell. Bytecode is
    # cached as for any installed package (an editable install under PYTHONDONTWRITEBYTECODE=1
    # would compile every module of ours on every run, which no user's install does).
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CONDA_OVERRIDE_", "NV_VARIANT_PROVIDER_FORCE_", "CONDA_PREFIX"))
        and k != "PYTHONDONTWRITEBYTECODE"
    }


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def import_profile(command: list[str], env: dict[str, str], top: int = 15) -> list[tuple[int, str]]:
    """``(cumulative microseconds, module)`` of the slowest top-level imports."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3:
            continue
        cumulative, name = parts[1].strip(), parts[2]
        # The name column is indented by nesting depth: one space marks a top-level import,
        # and top-level cumulative times add up to the whole import cost.
        if cumulative.isdigit() and name.startswith(" ") and not name.startswith("  "):
            rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:top]


def regular_install(target: Path) -> dict[str, str]:
    """variant-bridge installed from a wheel into *target* (no editable path), bytecode compiled;
    the environment that runs it (its folder first on ``sys.path``)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(ROOT)],
        check=True,
    )  # fmt: skip
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(target)], check=True)
    env = {**clean_env(), "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import variant_bridge; print(variant_bridge.__file__)"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout  # fmt: skip
    assert where.startswith(str(target)), f"the regular install is not the one imported: {where}"
    return env


def measure(runs: int, ours: list[str], ours_env: dict[str, str]) -> tuple[float, float]:
    """Interleaved cold runs of *ours* and the baseline: both medians."""
    env = clean_env()
    baseline = [sys.executable, "-c", BASELINE]
    timed(ours, ours_env)  # warm-up: page cache, rattler's on-disk caches
    timed(baseline, env)
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(runs):
        mine.append(timed(ours, ours_env))
        theirs.append(timed(baseline, env))
    return statistics.median(mine), statistics.median(theirs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=21)
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args()

    env = clean_env()
    print(f"cold processes, {args.runs} interleaved runs each, {os.cpu_count()} CPUs")
    ok = True
    with tempfile.TemporaryDirectory(prefix="vb-bench-detect-") as tmp:
        installs = {
            "editable": ([console_script(), "detect", "--json"], env),
            "regular": (
                [sys.executable, "-m", "variant_bridge", "detect", "--json"],
                regular_install(Path(tmp) / "site"),
            ),
        }
        for kind, (ours, ours_env) in installs.items():
            mine, theirs = measure(args.runs, ours, ours_env)
            ratio = mine / theirs
            print(
                f"  {kind:8} variant-bridge detect --json median {mine * 1000:7.1f} ms;"
                f" bare rattler detect {theirs * 1000:7.1f} ms; ratio {ratio:.2f}x"
                f" (aim <= {AIM_RATIO:g}x)"
            )
            ok = ok and ratio <= AIM_RATIO and mine < AIM_SECONDS
    print("  within aims" if ok else "  OVER the aims: run with --importtime")

    if args.importtime:
        # Through `python -X importtime -m variant_bridge`, the same code path as the script.
        profile = import_profile(["-m", "variant_bridge", "detect", "--json"], env)
        print("slowest top-level imports of one `detect --json` (cumulative):")
        for micros, name in profile:
            print(f"  {micros / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
