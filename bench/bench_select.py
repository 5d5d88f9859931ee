"""``select`` over a big find-links directory: 10,000 and 20,000 files, and how the time grows.

Each directory holds one project with many releases (2,500 or 5,000), every release a
``*-variants.json`` and three variant wheels (cu129, cu126, null), written as small real zips.
The ``select`` job runs in process (detection declared, tables loaded beforehand), best of
``--repeat`` runs; a cold ``variant-bridge select`` process over the 10,000 files is timed too.

    .venv/bin/python bench/bench_select.py [--repeat 3]

Prints the times and the ratio 20k / 10k (linear growth: about 2; the aim is under 0.5 s at 10k).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from variant_bridge.environment import Environment, VirtualPackage
from variant_bridge.indexes import Downloads, FindLinks
from variant_bridge.indexes.transport import Transport
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.select import parse_requests, select
from variant_bridge.jobs.target import Target
from variant_bridge.platform_tags import TargetPython
from variant_bridge.translate import supported_properties

BIN = Path(sys.executable).parent
SCHEMA = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
LABELS = {"cu129": "12.9", "cu126": "12.6", "null": None}
ENV = Environment("linux-64", (VirtualPackage("__glibc", "2.36"), VirtualPackage("__cuda", "12.9")))
MACHINE = ["--platform", "linux-64", "-t", "cuda=12.9", "-t", "glibc=2.36", "--python", "3.12"]


def _variant(label: str) -> dict[str, dict[str, list[str]]]:
    lower = LABELS[label]
    return {"nvidia": {"cuda_version_lower_bound": [lower]}} if lower else {}


def _wheel(directory: Path, version: str, label: str) -> None:
    dist_info = f"bigpkg-{version}.dist-info"
    document = {
        "$schema": SCHEMA,
        "default-priorities": {"namespace": ["nvidia"]},
        "variants": {label: _variant(label)},
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(
            f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: bigpkg\nVersion: {version}\n\n"
        )
        zf.writestr(f"{dist_info}/variant.json", json.dumps(document))
    (directory / f"bigpkg-{version}-py3-none-any-{label}.whl").write_bytes(buffer.getvalue())


def build(directory: Path, files: int) -> Path:
    """*files* files: a quarter of that many releases of four files each."""
    directory.mkdir()
    for i in range(files // 4):
        version = f"1.{i}"
        for label in LABELS:
            _wheel(directory, version, label)
        document = {
            "$schema": SCHEMA,
            "default-priorities": {"namespace": ["nvidia"]},
            "variants": {label: _variant(label) for label in LABELS},
        }
        (directory / f"bigpkg-{version}-variants.json").write_text(json.dumps(document))
    return directory


def in_process(directory: Path, repeat: int) -> float:
    target = Target(ENV, TargetPython.parse("3.12.7"), supported_properties(ENV))
    requests = parse_requests(["bigpkg"])
    best = float("inf")
    for _ in range(repeat):
        with Downloads.temporary(transport=Transport()) as downloads:
            start = time.perf_counter()
            ctx = Context(Sources((FindLinks.parse(directory),)), downloads, target)
            (choice,) = select(requests, ctx)
            best = min(best, time.perf_counter() - start)
        assert choice.selected is not None
        assert choice.selected.label == "cu129"
    return best


def cold(directory: Path) -> float:
    command = [str(BIN / "variant-bridge"), "select", "bigpkg", "-f", str(directory), *MACHINE]
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vb-bench-select-") as tmp:
        small = build(Path(tmp) / "10k", 10_000)
        large = build(Path(tmp) / "20k", 20_000)
        supported_properties(ENV)  # load the tables outside the timings
        t_small = in_process(small, args.repeat)
        t_large = in_process(large, args.repeat)
        cold(small)  # warm the OS caches
        t_cold = min(cold(small) for _ in range(args.repeat))
    print(f"select job, 10,000 files       {t_small * 1000:7.1f} ms (best of {args.repeat})")
    print(f"select job, 20,000 files       {t_large * 1000:7.1f} ms (best of {args.repeat})")
    print(f"ratio 20k / 10k: {t_large / t_small:.2f} (2 = linear)")
    print(f"variant-bridge select, 10,000 files, cold process {t_cold * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
