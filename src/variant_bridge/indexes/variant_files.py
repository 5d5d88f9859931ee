"""Read variant metadata from files: index files, wheel zips and installed ``*.dist-info`` dirs.

The parsing and merging are :mod:`variant_bridge.metadata` (pure); this module opens things and
names them in errors (a member of a wheel is ``{wheel}!{member}``). For one release it reads the
``{name}-{version}-variants.json`` files a source has, then the ``variant.json`` inside one wheel
per label they lack (PEP 825 PR #5100), downloading remote wheels (hash-checked) for that.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from variant_bridge.errors import HashMismatch, IndexReadError, InvalidMetadata
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes.candidates import Candidate, IndexFile, Problem, ProblemKind
from variant_bridge.indexes.download import Downloads, fetch, url_to_path
from variant_bridge.metadata import (
    VariantMetadata,
    merge_metadata,
    read_variant_json,
    single_variant,
)

__all__ = [
    "VARIANT_JSON",
    "complete_metadata",
    "read_variants_files",
    "read_wheel_variant_metadata",
]

VARIANT_JSON = "variant.json"
"""The file name of a wheel's variant metadata inside its ``.dist-info`` directory."""

# Only a top-level .dist-info directory counts; a vendored package's copy deeper down does not.
_VARIANT_MEMBER_RE = re.compile(r"[^/]+\.dist-info/" + re.escape(VARIANT_JSON))
# A variant.json is a few KiB; refuse to inflate something absurd into memory.
_MAX_MEMBER_SIZE = 16 * 1024 * 1024


def read_wheel_variant_metadata(wheel: str | os.PathLike[str]) -> VariantMetadata | None:
    """The metadata in a wheel's ``*.dist-info/variant.json``; ``None`` for a non-variant wheel.

    The label of the filename must be the single label of ``variant.json``.

    :raises InvalidWheelFilename: when the file is not named like a wheel.
    :raises InvalidMetadata: naming the wheel, for a corrupt zip, a labelled wheel without
        ``variant.json`` (or the reverse), several ``variant.json`` files or a label mismatch.
    """
    path = Path(wheel)
    filename = WheelFilename.parse(path.name)
    try:
        with zipfile.ZipFile(path) as archive:
            members = [
                info for info in archive.infolist() if _VARIANT_MEMBER_RE.fullmatch(info.filename)
            ]
            if len(members) > 1:
                names = sorted(info.filename for info in members)
                raise InvalidMetadata(f"{path}: more than one {VARIANT_JSON}: {names}")
            if not members:
                if filename.label is not None:
                    raise InvalidMetadata(
                        f"{path}: variant wheel (label {filename.label!r}) has no "
                        f"*.dist-info/{VARIANT_JSON}"
                    )
                return None
            (member,) = members
            if member.file_size > _MAX_MEMBER_SIZE:
                raise InvalidMetadata(
                    f"{path}!{member.filename}: {member.file_size} bytes, too large for "
                    "variant metadata"
                )
            data = archive.read(member)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as error:
        raise InvalidMetadata(f"{path}: not a readable wheel (zip) file: {error}") from error
    except OSError as error:
        reason = error.strerror or str(error)
        raise InvalidMetadata(f"{path}: cannot read wheel: {reason}") from error
    source = f"{path}!{member.filename}"
    meta = read_variant_json(data, source=source)
    if filename.label is None:
        raise InvalidMetadata(
            f"{source}: the wheel has variant metadata but its filename has no variant label"
        )
    single_variant(meta, source=source, expected_label=filename.label)
    return meta


def _body(file: IndexFile) -> bytes:
    if file.path is not None:
        try:
            return file.path.read_bytes()
        except OSError as e:
            raise IndexReadError(f"cannot read {file.path}: {e.strerror}") from e
    response = fetch(file.url)
    assert response is not None  # fetch returns None only when not_found_ok
    actual = hashlib.sha256(response.body).hexdigest()
    if file.sha256 is not None and actual != file.sha256:
        raise HashMismatch(
            f"hash mismatch for {file.filename} from {file.url}", file.sha256, actual
        )
    return response.body


def read_variants_files(files: Iterable[IndexFile]) -> tuple[VariantMetadata | None, list[str]]:
    """The merged ``*-variants.json`` *files* of one release, and where they were read from.

    :raises IndexReadError: a file cannot be read; :raises HashMismatch: a remote one does not
        have its advertised sha256; :raises InvalidMetadata: one is malformed (naming it).
    """
    merged: VariantMetadata | None = None
    where: list[str] = []
    for file in files:
        location = str(file.path) if file.path is not None else file.url
        meta = read_variant_json(_body(file), source=location)
        merged = meta if merged is None else merge_metadata(merged, meta, source=location)
        where.append(location)
    return merged, where


def _read_cost(candidate: Candidate) -> tuple[bool, int, str]:
    remote = not candidate.url.startswith("file:")
    size = candidate.size if candidate.size is not None else sys.maxsize
    return (remote, size if remote else 0, candidate.name)


def _local_copy(candidate: Candidate, downloads: Downloads) -> Path:
    """The find-links file itself, else a hash-checked download."""
    if candidate.url.startswith("file:"):
        return url_to_path(candidate.url)
    return downloads.get(candidate)


def complete_metadata(
    candidates: Sequence[Candidate],
    meta: VariantMetadata | None,
    where: list[str],
    downloads: Downloads,
) -> tuple[VariantMetadata | None, dict[str, Problem]]:
    """Read ``variant.json`` from one wheel per label *meta* lacks; return problems per label.

    :param where: the locations *meta* was read from; the wheels read are appended.
    :raises HashMismatch: a downloaded wheel does not have its advertised sha256.
    :raises IndexReadError: a remote wheel cannot be fetched.
    """
    known = set(meta.labels) if meta is not None else set()
    # Every wheel of a label carries the same variant.json (PEP 825), so one per label will do:
    # a local one first, else the smallest download.
    first_per_label: dict[str, Candidate] = {}
    for candidate in sorted(candidates, key=_read_cost):
        label = candidate.label
        if label is not None and label not in known:
            first_per_label.setdefault(label, candidate)
    problems: dict[str, Problem] = {}
    for label, candidate in sorted(first_per_label.items()):
        local = candidate.url.startswith("file:")
        path = _local_copy(candidate, downloads)
        location = str(path) if local else candidate.url
        try:
            wheel_meta = read_wheel_variant_metadata(path)
            assert wheel_meta is not None  # a labelled wheel gives metadata or an error
            merged = (
                wheel_meta if meta is None else merge_metadata(meta, wheel_meta, source=location)
            )
        except InvalidMetadata as e:
            # One broken wheel makes its label unusable, not the whole release: selection
            # reports it as the reason that wheel is incompatible.
            text = str(e).replace(str(path), location)
            problems[label] = Problem(ProblemKind.INVALID_VARIANT_METADATA, text)
            continue
        meta = merged
        where.append(location)
    return meta, problems
