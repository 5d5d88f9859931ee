"""``select`` of a 25-project dependency tree from a distant index, against ``uv pip install
--dry-run`` of the same tree from the same server.

A loopback PEP 691 index (tests/worlds/index_server.py, PEP 658 metadata advertised as PyPI does)
answers every request after ``--latency`` seconds (default 50 ms, a distant index). The tree:
``tree-root`` requires 4 projects, each of those 2 more, each of those one more, and 4 of those
one more (25 projects, 5 levels deep); every project has three releases, so each page lists
several versions. Both commands run as whole cold processes (no cache), interleaved, after one
warm-up each:

- ours: ``variant-bridge select tree-root --index-url URL --python VENV --no-cache --json``
  (the target declared with ``-t``, so nothing is detected);
- baseline: ``uv pip install --dry-run --no-cache --index-url URL --python VENV tree-root``.

    .venv/bin/python bench/bench_tree_index.py [-n 5] [--latency 0.05]

Prints both medians, the ratio (the aim: 1.5x at most) and, per command, the requests and TCP
connections the server saw.
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

from tests.worlds.index_server import IndexServer  # noqa: E402
from tests.worlds.wheels import make_wheel  # noqa: E402

BIN = Path(sys.executable).parent
AIM_RATIO = 1.5
VERSIONS = ("1.0", "1.1", "2.0")


def tree() -> dict[str, list[str]]:
    """Project -> the projects it requires: 1 + 4 + 8 + 8 + 4 = 25 projects."""
    requires: dict[str, list[str]] = {"tree-root": [f"tree-a{i}" for i in range(4)]}
    for i in range(4):
        requires[f"tree-a{i}"] = [f"tree-b{i}{j}" for j in range(2)]
        for j in range(2):
            requires[f"tree-b{i}{j}"] = [f"tree-c{i}{j}"]
            requires[f"tree-c{i}{j}"] = [f"tree-d{i}"] if j == 0 else []
        requires[f"tree-d{i}"] = []
    return requires


def build(root: Path) -> tuple[Path, Path]:
    wheels = root / "wheels"
    for project, deps in tree().items():
        for version in VERSIONS:
            make_wheel(wheels, project, version, requires=[f"{d}>=1" for d in deps])
    venv = root / "venv"
    subprocess.run([str(BIN / "uv"), "venv", "-q", "--python", sys.executable, str(venv)],
                   check=True)  # fmt: skip
    return wheels, venv / "bin" / "python"


def timed(command: list[str], env: dict[str, str], index: IndexServer) -> tuple[float, int, int]:
    """(seconds, requests, connections) of one run."""
    requests, connections = len(index.requests), index.connections
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({done.returncode}): {done.stderr}")
    return elapsed, len(index.requests) - requests, index.connections - connections


def _check(output: str) -> None:
    chosen = {c["package"]: c["version"] for c in json.loads(output)}
    assert len(chosen) == len(tree()), chosen
    assert set(chosen.values()) == {VERSIONS[-1]}, chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="runs of each command (default 5)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per answer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vb-bench-tree-") as tmp:
        wheels, python = build(Path(tmp))
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith(("CONDA_", "NV_VARIANT_PROVIDER_FORCE_", "UV_"))
                 and k != "PYTHONDONTWRITEBYTECODE"}  # fmt: skip
        with IndexServer(wheels, core_metadata=True, latency=args.latency) as index:
            ours = [
                str(BIN / "variant-bridge"), "select", "tree-root", "--index-url", index.url,
                "--python", str(python), "--platform", "linux-64", "-t", "cuda=12.9",
                "-t", "cuda_arch=9.0", "-t", "glibc=2.36", "-t", "archspec=haswell",
                "--no-cache", "--json",
            ]  # fmt: skip
            baseline = [
                str(BIN / "uv"), "pip", "install", "--dry-run", "--no-cache", "--index-url",
                index.url, "--python", str(python), "tree-root",
            ]  # fmt: skip
            _check(subprocess.run(ours, capture_output=True, env=clean, text=True,
                                  check=True).stdout)  # fmt: skip
            timed(baseline, clean, index)
            a: list[tuple[float, int, int]] = []
            b: list[tuple[float, int, int]] = []
            for _ in range(args.n):
                a.append(timed(ours, clean, index))
                b.append(timed(baseline, clean, index))
    ours_median = statistics.median(t for t, _, _ in a)
    uv_median = statistics.median(t for t, _, _ in b)
    latency = f"{args.latency * 1000:g} ms latency"
    print(f"25-project tree, 3 releases each, PEP 658 metadata, {latency}, {args.n} runs each")
    for name, runs, median in (("variant-bridge select", a, ours_median),
                               ("uv pip install --dry-run", b, uv_median)):  # fmt: skip
        _, requests, connections = runs[-1]
        print(f"{name:>26}: median {median * 1000:7.1f} ms  "
              f"({requests} requests on {connections} connections)")  # fmt: skip
    print(f"ratio ours / uv: {ours_median / uv_median:.2f}x (aim <= {AIM_RATIO:g}x)")


if __name__ == "__main__":
    main()
