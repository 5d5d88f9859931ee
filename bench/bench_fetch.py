"""What ``select`` fetches from an index without ``*-variants.json``: range reads vs whole wheels.

A loopback index (tests/worlds/index_server.py) serves one project with 7 variant wheels (cu118 to
cu130 and null) of ``--size`` MiB each (incompressible payload, as real CUDA wheels are) and no
``*-variants.json``, so every label's ``variant.json`` and ``METADATA`` must come from its wheel.
``variant-bridge select`` runs in process three times:

- cold: an empty cache (range requests read each wheel's tail);
- warm: the same cache again (members read from the cache, no wheel request at all);
- baseline: a server that ignores ranges (each wheel downloaded whole, as before issue 12).

    .venv/bin/python bench/bench_fetch.py [--size 8]

Prints the bytes of wheel files sent against the sum of the wheel sizes (the aim: under 5% cold,
0 warm) and each run's time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from click.testing import CliRunner  # noqa: E402
from tests.worlds.index_server import IndexServer  # noqa: E402
from tests.worlds.wheels import make_release  # noqa: E402

from variant_bridge.cli import main as cli  # noqa: E402

LABELS = {
    "cu118": ["nvidia :: cuda_version_lower_bound :: 11.8"],
    "cu121": ["nvidia :: cuda_version_lower_bound :: 12.1"],
    "cu124": ["nvidia :: cuda_version_lower_bound :: 12.4"],
    "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"],
    "cu128": ["nvidia :: cuda_version_lower_bound :: 12.8"],
    "cu130": ["nvidia :: cuda_version_lower_bound :: 13.0"],
    "null": [],
}


def _pad(directory: Path, size: int) -> None:
    """Grow each wheel by *size* incompressible bytes, stored before its .dist-info."""
    import zipfile

    for wheel in sorted(directory.glob("*.whl")):
        with zipfile.ZipFile(wheel) as source:
            members = [(i, source.read(i)) for i in source.infolist()]
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as out:
            out.writestr("fetchbench/_payload.bin", os.urandom(size))
            for info, data in members:
                out.writestr(info, data)


def _select(index: IndexServer, cache: Path) -> tuple[int, int, float]:
    """One ``select --json`` run: (wheel bytes sent, wheel requests, seconds)."""
    before = len(index.requests)
    args = [
        "select", "fetchbench", "--index-url", index.url, "--python", "3.12", "--platform",
        "linux-64", "-t", "cuda=12.9", "-t", "cuda_arch=9.0", "-t", "glibc=2.35", "-t",
        "archspec=x86_64", "--cache-dir", str(cache), "--json",
    ]  # fmt: skip
    start = time.perf_counter()
    result = CliRunner().invoke(cli, args)
    elapsed = time.perf_counter() - start
    if result.exit_code != 0:
        raise SystemExit(f"select failed: {result.output}{result.stderr}")
    files = [r for r in index.requests[before:] if r.path.startswith("/files/")]
    return sum(r.sent for r in files), len(files), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=8.0, help="MiB of payload per wheel")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vb-bench-fetch-") as scratch:
        wheels = Path(scratch) / "wheels"
        make_release(wheels, "fetchbench", "1.0", LABELS, non_variant=False, variants_json=False)
        _pad(wheels, int(options.size * 1024 * 1024))
        total = sum(p.stat().st_size for p in wheels.glob("*.whl"))
        count = len(list(wheels.glob("*.whl")))
        print(f"{count} variant wheels, {total / 2**20:.1f} MiB in all, no *-variants.json\n")
        with IndexServer(wheels) as index:
            runs = [
                ("cold cache (ranges)", index, Path(scratch) / "cache"),
                ("warm cache", index, Path(scratch) / "cache"),
            ]
            for name, server, cache in runs:
                sent, requests, seconds = _select(server, cache)
                share = 100 * sent / total
                print(f"{name:>22}: {sent:>10} bytes ({share:5.2f}% of the wheels) in "
                      f"{requests:>2} requests, {seconds * 1000:6.0f} ms")  # fmt: skip
            with index.configured(ranges=False):
                sent, requests, seconds = _select(index, Path(scratch) / "cache-baseline")
            print(f"{'no ranges (baseline)':>22}: {sent:>10} bytes ({100 * sent / total:5.1f}% of "
                  f"the wheels) in {requests:>2} requests, {seconds * 1000:6.0f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
