"""Read variant metadata from files: index files and wheels (local or remote).

The parsing and merging are :mod:`variant_bridge.metadata` (pure); this module opens things and
names them in errors (a member of a wheel is ``{wheel}!{member}``). For one release it reads the
``{name}-{version}-variants.json`` files a source has (size-capped, hash-checked when the index
gives a hash), then the ``variant.json`` inside one wheel per label they lack (PEP 825 PR
#5100): a remote wheel's with HTTP range requests, or from the cache; the whole wheel is
downloaded only from a server that cannot serve ranges
(:meth:`~variant_bridge.indexes.Downloads.members`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from variant_bridge.errors import HashMismatch, IndexReadError, InvalidMetadata, NotRegularFileError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes.candidates import Candidate, IndexFile, Problem, ProblemKind
from variant_bridge.indexes.download import Downloads, fetch
from variant_bridge.indexes.local import read_regular
from variant_bridge.indexes.members import VARIANT_JSON, WheelMembers, local_members
from variant_bridge.indexes.transport import MAX_DOCUMENT, Transport
from variant_bridge.metadata import (
    VariantMetadata,
    merge_metadata,
    read_variant_json,
    single_variant,
)
from variant_bridge.properties import VariantDescription

__all__ = [
    "MAX_VARIANTS_JSON",
    "VARIANT_JSON",
    "complete_metadata",
    "read_copy_variant",
    "read_variants_files",
    "read_wheel_variant_metadata",
    "variant_metadata_of",
    "variants_file_body",
]

MAX_VARIANTS_JSON = MAX_DOCUMENT
"""The largest ``*-variants.json`` read (torch's lists a few dozen labels in a few KiB)."""


def variant_metadata_of(members: WheelMembers, filename: WheelFilename) -> VariantMetadata | None:
    """The metadata in a wheel's ``*.dist-info/variant.json``; ``None`` for a non-variant wheel.

    The label of the filename must be the single label of ``variant.json``.

    :raises InvalidMetadata: naming the wheel: a labelled wheel without ``variant.json`` (or the
        reverse), several ``variant.json`` files, one too large, or a label mismatch.
    """
    where = members.where
    found = members.one(VARIANT_JSON)
    if found is None:
        if filename.label is not None:
            raise InvalidMetadata(
                f"{where}: variant wheel (label {filename.label!r}) has no "
                f"*.dist-info/{VARIANT_JSON}"
            )
        return None
    name, data = found
    source = f"{where}!{name}"
    meta = read_variant_json(data, source=source)
    if filename.label is None:
        raise InvalidMetadata(
            f"{source}: the wheel has variant metadata but its filename has no variant label"
        )
    single_variant(meta, source=source, expected_label=filename.label)
    return meta


def read_wheel_variant_metadata(wheel: str | os.PathLike[str]) -> VariantMetadata | None:
    """:func:`variant_metadata_of` a local wheel.

    :raises InvalidWheelFilename: when the file is not named like a wheel.
    :raises InvalidMetadata: see :func:`variant_metadata_of`; also a corrupt zip.
    """
    path = Path(wheel)
    filename = WheelFilename.parse(path.name)
    return variant_metadata_of(local_members(path), filename)


def read_copy_variant(wheel: str | os.PathLike[str]) -> VariantDescription | None:
    """The one variant in a plain-named wheel's ``variant.json``: a byte-identical copy of a
    variant wheel under its standard filename (what ``export`` and ``solve --lockfile`` ship
    for installers without wheel-variant support); ``None`` for a wheel without one.

    :raises InvalidMetadata: a malformed ``variant.json``, or one with several labels.
    """
    members = local_members(Path(wheel))
    found = members.one(VARIANT_JSON)
    if found is None:
        return None
    name, data = found
    source = f"{members.where}!{name}"
    meta = read_variant_json(data, source=source)
    return single_variant(meta, source=source)


def _body(file: IndexFile, transport: Transport) -> bytes:
    if file.path is not None:
        try:
            return read_regular(file.path, max_bytes=MAX_VARIANTS_JSON)
        except NotRegularFileError as e:  # a FIFO would block the read forever
            raise IndexReadError(str(e)) from e
        except OSError as e:
            if e.errno == errno.EFBIG:
                raise IndexReadError(
                    f"{file.path} is larger than {MAX_VARIANTS_JSON} bytes: refused"
                ) from e
            raise IndexReadError(f"cannot read {file.path}: {e.strerror}") from e
    response = fetch(file.url, max_bytes=MAX_VARIANTS_JSON, transport=transport)
    assert response is not None  # fetch returns None only when not_found_ok
    actual = hashlib.sha256(response.body).hexdigest()
    if file.sha256 is not None and actual != file.sha256:
        raise HashMismatch(
            f"hash mismatch for {file.filename} from {file.url}", file.sha256, actual
        )
    return response.body


def variants_file_body(file: IndexFile, transport: Transport) -> bytes:
    """The bytes of one ``*-variants.json`` (size-capped; a remote one checked against its
    advertised hash), as read to parse it.

    :raises IndexReadError, HashMismatch: as :func:`read_variants_files`.
    """
    return _body(file, transport)


def read_variants_files(
    files: Iterable[IndexFile], transport: Transport
) -> tuple[VariantMetadata | None, list[str]]:
    """The merged ``*-variants.json`` *files* of one release, and where they were read from.

    :raises IndexReadError: a file cannot be read, or is too large; :raises HashMismatch: a
        remote one does not have its advertised sha256; :raises InvalidMetadata: one is
        malformed (naming it).
    """
    merged: VariantMetadata | None = None
    where: list[str] = []
    for file in files:
        location = str(file.path) if file.path is not None else file.url
        meta = read_variant_json(_body(file, transport), source=location)
        merged = meta if merged is None else merge_metadata(merged, meta, source=location)
        where.append(location)
    return merged, where


def _read_cost(candidate: Candidate) -> tuple[bool, int, str]:
    remote = not candidate.url.startswith("file:")
    size = candidate.size if candidate.size is not None else sys.maxsize
    return (remote, size if remote else 0, candidate.name)


def complete_metadata(
    candidates: Sequence[Candidate],
    meta: VariantMetadata | None,
    where: list[str],
    downloads: Downloads,
) -> tuple[VariantMetadata | None, dict[str, Problem], Mapping[str, str]]:
    """Read ``variant.json`` from one wheel per label *meta* lacks.

    :param where: the locations *meta* was read from; the wheels read are appended.
    :returns: the completed metadata, a problem per label whose wheel could not be read, and
        where each completed label's description was read (the wheel).
    :raises IndexReadError: a remote wheel cannot be read (nor downloaded).
    """
    known = set(meta.labels) if meta is not None else set()
    # Every wheel of a label carries the same variant.json (PEP 825), so one per label will do:
    # a local one first, else the smallest remote one.
    first_per_label: dict[str, Candidate] = {}
    for candidate in sorted(candidates, key=_read_cost):
        label = candidate.label
        if label is not None and label not in known:
            first_per_label.setdefault(label, candidate)
    problems: dict[str, Problem] = {}
    read_from: dict[str, str] = {}
    for label, candidate in sorted(first_per_label.items()):
        try:
            members = downloads.members(candidate)
            assert members is not None  # a download is allowed
            wheel_meta = variant_metadata_of(members, candidate.filename)
            assert wheel_meta is not None  # a labelled wheel gives metadata or an error
            location = members.where
            merged = (
                wheel_meta if meta is None else merge_metadata(meta, wheel_meta, source=location)
            )
        except InvalidMetadata as e:
            # One broken wheel makes its label unusable, not the whole release: selection
            # reports it as the reason that wheel is incompatible.
            problems[label] = Problem(ProblemKind.INVALID_VARIANT_METADATA, str(e))
            continue
        meta = merged
        where.append(location)
        read_from[label] = location
    return meta, problems, read_from
