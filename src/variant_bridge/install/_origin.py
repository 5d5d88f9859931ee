"""Recording where an installed variant wheel came from (PEP 610 ``direct_url.json``).

The installer is handed staged copies through a find-links directory, so it writes no
``direct_url.json`` at all (a registry-style install): no installed file can ever name the
temporary staging copy, even when the command is killed half-way. Afterwards the bridge records
the wheel's real origin itself, each file written whole (a temporary file, then an atomic
rename), ``RECORD`` first so that an uninstall removes ``direct_url.json`` too. A run killed
before that leaves the variant without ``direct_url.json``; the next ``install`` sees that the
chosen file is not recorded and installs it again.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
from pathlib import Path

from packaging.utils import canonicalize_name

from variant_bridge.indexes import Candidate
from variant_bridge.indexes.local import read_text

__all__ = ["record_origin", "write_atomically"]


def write_atomically(path: Path, data: bytes) -> None:
    """Replace *path* with *data*: readers see the old file or the new one, never a part."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _dist_info(site_packages: tuple[Path, ...], candidate: Candidate) -> Path | None:
    name = canonicalize_name(candidate.filename.name).replace("-", "_")
    wanted = f"{name}-{candidate.filename.version}.dist-info".lower()
    for root in site_packages:
        for path in root.glob("*.dist-info"):
            if path.name.lower() == wanted:
                return path
    return None


def record_origin(site_packages: tuple[Path, ...], candidate: Candidate, sha256: str) -> None:
    """Point the installed ``direct_url.json`` at the wheel's real URL, listed in ``RECORD``."""
    dist_info = _dist_info(site_packages, candidate)
    if dist_info is None:
        return
    data = (
        json.dumps(
            {
                "url": candidate.url,
                "archive_info": {"hashes": {"sha256": sha256}, "hash": f"sha256={sha256}"},
            },
            indent=2,
        ).encode()
        + b"\n"
    )
    record = dist_info / "RECORD"
    if record.is_file():  # the installer has just written it; still read through the cap
        rows = list(csv.reader(io.StringIO(read_text(record))))
        relative = f"{dist_info.name}/direct_url.json"
        rows = [r for r in rows if r and r[0] != relative]
        rows.append([relative, _record_hash(data), str(len(data))])
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        write_atomically(record, out.getvalue().encode("utf-8"))
    write_atomically(dist_info / "direct_url.json", data)
