"""End-to-end ``variant-bridge install --dry-run`` against ``uv pip install --dry-run``.

One find-links world (a release with cu129 / cu126 / null / non-variant wheels and its
``*-variants.json``, plus a dependency), one conda prefix (``conda-meta`` records of python and
``cuda-version`` 12.9, written as plain JSON) and one throwaway venv. Both commands run as fresh
processes, interleaved, after one warm-up each, and resolve the same package for the same claimed
driver:

- ours: ``variant-bridge install gpupkg -f DIR --prefix P --python VENV --dry-run`` with the
  machine's GPU, glibc and CPU declared (``-t cuda=12.9 ...``): detection, choosing, copying and
  hash-checking the wheel, reading its requirements (a dry run runs no installer);
- baseline: ``uv pip install --dry-run --preview-features wheel-variants --no-index
  --find-links DIR gpupkg`` with ``NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.9``.

    .venv/bin/python bench/bench_install.py [-n 15]

Prints both medians and the ratio (ours / uv); the aim is 6x at most. A third process, measured
the same way, shows the floor under it: a bare interpreter importing only the libraries any
Python implementation of this command loads (click, packaging, hashlib, zipfile, tempfile, json,
subprocess, resolvelib).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the offline test worlds build the wheels

from tests.worlds.wheels import make_release, make_wheel  # noqa: E402

BIN = Path(sys.executable).parent
LOWER = "nvidia :: cuda_version_lower_bound :: {}"
AIM_RATIO = 6.0
FLOOR = (
    "import click, packaging.requirements, packaging.specifiers, packaging.tags, hashlib, "
    "zipfile, tempfile, json, subprocess, resolvelib"
)


def _prefix(root: Path) -> Path:
    """A conda prefix as detection reads it: records only (the venv is the interpreter)."""
    meta = root / "prefix" / "conda-meta"
    meta.mkdir(parents=True)
    version = "{}.{}.{}".format(*sys.version_info[:3])
    for name, record_version in (("python", version), ("cuda-version", "12.9")):
        record = {"name": name, "version": record_version, "build": "h0_0", "subdir": "linux-64"}
        (meta / f"{name}-{record_version}-h0_0.json").write_text(json.dumps(record))
    return meta.parent


def build(root: Path) -> tuple[Path, Path]:
    wheels = root / "wheels"
    wheels.mkdir()
    make_release(
        wheels,
        "gpupkg",
        "1.0",
        {"cu129": [LOWER.format("12.9")], "cu126": [LOWER.format("12.6")], "null": []},
        requires=["helperdep>=1"],
    )
    make_wheel(wheels, "helperdep", "1.1")
    venv = root / "venv"
    subprocess.run([str(BIN / "uv"), "venv", "-q", "--python", sys.executable, str(venv)],
                   check=True)  # fmt: skip
    return wheels, venv / "bin" / "python"


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="runs of each command (default 15)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vb-bench-install-") as tmp:
        wheels, python = build(Path(tmp))
        prefix = _prefix(Path(tmp))
        # Bytecode is cached as for an installed package (see bench_detect.clean_env).
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(("CONDA_", "NV_VARIANT_PROVIDER_FORCE_", "UV_"))
                 and k != "PYTHONDONTWRITEBYTECODE"}  # fmt: skip
        clean["UV_CACHE_DIR"] = str(Path(tmp) / "uv-cache")
        ours = [
            str(BIN / "variant-bridge"), "install", "gpupkg", "-f", str(wheels),
            "--prefix", str(prefix), "--python", str(python), "-t", "cuda=12.9",
            "-t", "glibc=2.36", "-t", "archspec=haswell", "--installer", "uv", "--dry-run",
        ]  # fmt: skip
        baseline = [
            str(BIN / "uv"), "pip", "install", "--dry-run", "--preview-features",
            "wheel-variants", "--no-index", "--find-links", str(wheels),
            "--python", str(python), "gpupkg",
        ]  # fmt: skip
        uv_env = {**clean, "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.9"}
        floor = [sys.executable, "-c", FLOOR]
        timed(ours, clean)
        timed(baseline, uv_env)
        a: list[float] = []
        b: list[float] = []
        c: list[float] = []
        for _ in range(args.n):
            a.append(timed(ours, clean))
            b.append(timed(baseline, uv_env))
            c.append(timed(floor, clean))
    ours_median, uv_median = statistics.median(a), statistics.median(b)
    floor_median = statistics.median(c)
    print(
        f"variant-bridge install --dry-run    median {ours_median * 1000:7.1f} ms  ({args.n} runs)"
    )
    print(f"uv pip install --dry-run (baseline) median {uv_median * 1000:7.1f} ms  ({args.n} runs)")
    print(f"ratio ours / uv: {ours_median / uv_median:.2f}x (aim <= {AIM_RATIO:g}x)")
    print(
        f"floor (the imports alone) median {floor_median * 1000:7.1f} ms "
        f"= {floor_median / uv_median:.2f}x uv"
    )


if __name__ == "__main__":
    main()
