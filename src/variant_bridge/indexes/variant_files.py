"""Read variant metadata from files: JSON documents, wheel zips and installed ``*.dist-info`` dirs.

The parsing itself is :mod:`variant_bridge.metadata` (pure); this module only opens things and
names them in errors. A member of a wheel is named ``{wheel}!{member}``.
"""

from __future__ import annotations

import os
import re
import zipfile
import zlib
from pathlib import Path

from variant_bridge.errors import InvalidMetadata
from variant_bridge.filenames import WheelFilename
from variant_bridge.metadata.model import VariantMetadata
from variant_bridge.metadata import read_variant_json, single_variant
from variant_bridge.properties import VariantDescription

__all__ = [
    "VARIANT_JSON",
    "read_dist_info_variant",
    "read_wheel_variant_metadata",
]

VARIANT_JSON = "variant.json"
"""The file name of a wheel's variant metadata inside its ``.dist-info`` directory."""

# Only a top-level .dist-info directory counts; a vendored package's copy deeper down does not.
_VARIANT_MEMBER_RE = re.compile(r"[^/]+\.dist-info/" + re.escape(VARIANT_JSON))
# A variant.json is a few KiB; refuse to inflate something absurd into memory.
_MAX_MEMBER_SIZE = 16 * 1024 * 1024


def _read_bytes(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise InvalidMetadata(f"{path}: cannot read {what}: {reason}") from error


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


def read_dist_info_variant(dist_info: str | os.PathLike[str]) -> VariantDescription | None:
    """The variant an installed distribution was built as, from ``{dist_info}/variant.json``.

    :returns: ``None`` when the distribution has no ``variant.json`` (a non-variant install).
    :raises InvalidMetadata: when *dist_info* is not a directory, or ``variant.json`` is
        malformed or lists other than exactly one label.
    """
    directory = Path(dist_info)
    if not directory.is_dir():
        raise InvalidMetadata(f"{directory}: not a .dist-info directory")
    file = directory / VARIANT_JSON
    if not file.exists():
        return None
    meta = read_variant_json(_read_bytes(file, "variant metadata"), source=str(file))
    return single_variant(meta, source=str(file))
