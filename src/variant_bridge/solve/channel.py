"""A local conda channel that serves conda packages and variant wheels together.

``rattler.index`` indexes the conda packages of the channel directory (it writes no ``v3.whl``
section; packages it indexed before and that did not change are not read again), then the wheel
records are merged into ``<subdir>/repodata.json``: the records of the projects indexed now
replace that subdir's earlier records of the same projects; other wheel records stay. Every file
is written whole (a temporary file beside it, renamed over it), and a wheel already in the
channel with the same bytes is not copied again (:func:`place_wheel`): indexing into a channel
that holds the wheels costs no more than indexing into a new one.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from variant_bridge._json import loads
from variant_bridge.errors import NotRegularFileError, SolveError
from variant_bridge.indexes.local import read_regular
from variant_bridge.solve.records import WheelRecord

__all__ = [
    "REPODATA",
    "add_package_records",
    "index_conda_packages",
    "place_wheel",
    "read_repodata",
    "write_channel",
]

REPODATA = "repodata.json"
_STALE = ("repodata.json.zst", "repodata_shards.msgpack.zst")
MAX_REPODATA = 1024 * 1024 * 1024
"""The largest ``repodata.json`` read (conda-forge's linux-64 one is ~300 MB)."""


def read_repodata(path: Path) -> dict[str, Any]:
    """A subdir's ``repodata.json``; an empty one when the file does not exist.

    :raises SolveError: unreadable or not a repodata object (naming the file).
    """
    try:
        data = loads(read_regular(path, max_bytes=MAX_REPODATA), source=str(path), error=SolveError)
    except FileNotFoundError:
        return {}
    except NotRegularFileError as e:  # a FIFO would block the read forever
        raise SolveError(str(e)) from e
    except OSError as e:
        raise SolveError(f"{path}: cannot read repodata ({e.strerror or e})") from e
    if not isinstance(data, dict):
        raise SolveError(f"{path}: expected a JSON object (conda repodata)")
    return data


def _whl_records(data: Mapping[str, Any]) -> dict[str, Any]:
    v3 = data.get("v3")
    whl = v3.get("whl") if isinstance(v3, dict) else None
    return dict(whl) if isinstance(whl, dict) else {}


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def place_wheel(source: Path, destination: Path, sha256: str) -> bool:
    """Copy the wheel *source* (whose sha256 is *sha256*) to *destination* in a channel: written
    beside it and renamed into place, so a reader never sees half a wheel; skipped when
    *destination* already holds those bytes.

    :returns: whether it was copied.
    :raises SolveError: it cannot be read or written (naming both paths).
    """
    if source.resolve() == destination.resolve():
        return False
    try:
        if destination.is_file() and destination.stat().st_size == source.stat().st_size:
            from variant_bridge.indexes import file_sha256

            if file_sha256(destination) == sha256:
                return False
        destination.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{destination.name}.", dir=destination.parent)
        os.close(handle)
        try:
            shutil.copyfile(source, temporary)
            os.replace(temporary, destination)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as e:
        raise SolveError(f"cannot copy {source} to {destination}: {e.strerror or e}") from e
    return True


def index_conda_packages(channel: Path, *, force: bool = True) -> None:
    """``rattler.index`` over the channel's conda packages (``.conda``/``.tar.bz2``).

    :param force: re-read every package; ``False``: only those the repodata does not list yet
        (rattler reads a whole package into memory to index it; those it indexed before are
        taken from the repodata it wrote then).
    """
    from rattler.index import index_fs

    (channel / "noarch").mkdir(parents=True, exist_ok=True)
    try:
        asyncio.run(index_fs(channel, write_zst=False, write_shards=False, force=force))
    except Exception as e:  # rattler raises its own exception types
        raise SolveError(f"{channel}: rattler could not index the conda packages: {e}") from e


def add_package_records(channel: Path, records: Mapping[str, Mapping[str, Any]]) -> None:
    """List conda packages in their subdir's ``repodata.json`` (``packages`` keyed by file
    name: *records* maps ``subdir/filename`` to the record), replacing earlier entries."""
    by_subdir: dict[str, dict[str, Mapping[str, Any]]] = {}
    for key, record in records.items():
        subdir, _, filename = key.partition("/")
        by_subdir.setdefault(subdir, {})[filename] = record
    for subdir, entries in by_subdir.items():
        target = channel / subdir / REPODATA
        data = read_repodata(target) or {"info": {"subdir": subdir}, "packages.conda": {}}
        data.setdefault("repodata_version", 1)
        packages = data.get("packages")
        data["packages"] = {**(packages if isinstance(packages, dict) else {}), **entries}
        _write_json(target, data)


def write_channel(
    channel: Path,
    subdir: str,
    records: Iterable[WheelRecord],
    *,
    projects: Iterable[str],
    index_conda: bool = True,
) -> list[str]:
    """Index *channel*'s conda packages and merge the wheel *records* into *subdir*.

    :param projects: the projects whose earlier wheel records in *subdir* are replaced.
    :returns: notes (stale compressed repodata removed).
    :raises SolveError: a repodata file cannot be read, or rattler cannot index.
    """
    target = channel / subdir / REPODATA
    kept = _whl_records(read_repodata(target))
    replaced = {canonicalize_name(p) for p in projects}
    kept = {
        key: record
        for key, record in kept.items()
        if not (
            isinstance(record, dict) and canonicalize_name(str(record.get("name", ""))) in replaced
        )
    }
    if index_conda:
        index_conda_packages(channel, force=False)  # what did not change is not read again
    data = read_repodata(target) or {
        "info": {"subdir": subdir},
        "packages": {},
        "packages.conda": {},
    }
    data.setdefault("info", {"subdir": subdir})
    data.setdefault("repodata_version", 1)
    whl = {**kept, **{r.key: dict(r.record) for r in records}}
    v3 = data.get("v3")
    data["v3"] = {**(v3 if isinstance(v3, dict) else {}), "whl": whl}
    _write_json(target, data)
    noarch = channel / "noarch" / REPODATA
    if not noarch.exists():
        _write_json(noarch, {"info": {"subdir": "noarch"}, "packages": {}, "packages.conda": {}})
    notes = []
    for name in _STALE:
        stale = channel / subdir / name
        if stale.exists():
            stale.unlink()
            notes.append(
                f"removed {stale}: it would hide the wheel records from clients that read it"
            )
    return notes
