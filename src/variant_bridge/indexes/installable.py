"""A copy of a variant wheel that installers without wheel-variant support accept.

pip (25.x) and uv 0.13.9 cannot parse PEP 825 variant markers (``variant_label == 'cuda12.8'``) in
``Requires-Dist``: they refuse the whole wheel ("invalid metadata"), and a dist-info left with
such a line breaks later ``pip check``/``uv pip`` runs. The bridge knows which variant a wheel
is, so every copy it hands on under a plain name (``install``'s staged copy, ``export``'s copies
beside an environment.yml, pixi.toml or pylock.toml, the copies a pixi.lock names) gets a
``METADATA`` whose variant comparisons are decided for that variant
(:meth:`variant_bridge.markers.Dependency.for_variant`): lines for other variants are dropped,
the others keep their ordinary markers. ``RECORD`` is updated to match; every other member, and
``variant.json`` with it, is copied unchanged. A wheel without variant markers is copied byte for
byte.

The wheel is opened as a checked :class:`~.archive.WheelArchive` (paths, caps) and streamed
member by member: memory stays bounded by the small text members, whatever the wheel's size.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import shutil
import zipfile
from pathlib import Path

from variant_bridge.errors import RequirementError
from variant_bridge.indexes.archive import WheelArchive
from variant_bridge.indexes.members import MAX_MEMBER, MemberTooLarge
from variant_bridge.markers import VariantValues, parse_dependency

__all__ = ["decided_metadata", "installable_copy", "write_with_metadata"]

_REQUIRES = "Requires-Dist:"
_CHUNK = 1024 * 1024


def _decided(text: str, values: VariantValues) -> str | None:
    """METADATA with its variant comparisons decided; ``None`` when it has none."""
    head, sep, body = text.partition("\n\n")
    out: list[str] = []
    changed = False
    for line in head.split("\n"):
        if not line.startswith(_REQUIRES):
            out.append(line)
            continue
        try:
            dependency = parse_dependency(line[len(_REQUIRES) :].strip())
        except RequirementError:
            out.append(line)  # the installer reports it in its own words
            continue
        if not dependency.uses_variant_markers:
            out.append(line)
            continue
        changed = True
        resolved = dependency.for_variant(values)
        if resolved is not None:
            out.append(f"{_REQUIRES} {resolved}")
    return "\n".join(out) + sep + body if changed else None


def decided_metadata(source: Path, values: VariantValues) -> bytes | None:
    """The ``METADATA`` the installable copy of *source* carries, its variant markers decided
    for *values*; ``None`` when the wheel has no variant marker (its copy is byte for byte).

    :raises UnsafeArchive: a path or cap of the wheel (:class:`~.archive.WheelArchive`).
    :raises MemberTooLarge: its ``METADATA`` is larger than :data:`~.members.MAX_MEMBER`.
    :raises zipfile.BadZipFile, OSError, UnicodeDecodeError: not a readable wheel.
    """
    with WheelArchive(source) as wheel:
        name = f"{wheel.dist_info}/METADATA"
        info = next((i for i in wheel.files if i.filename == name), None)
        if info is None:
            return None
        if info.file_size > MAX_MEMBER:
            raise MemberTooLarge(
                f"{source.name}: {name} is {info.file_size} bytes, more than {MAX_MEMBER}",
                info.file_size,
            )
        with wheel.open(info) as stream:
            text = stream.read(MAX_MEMBER).decode("utf-8")
    decided = _decided(text, values)
    return decided.encode("utf-8") if decided is not None else None


def write_with_metadata(source: Path, target: Path, metadata: bytes) -> None:
    """Write *source* to the new file *target* with *metadata* as its ``METADATA`` (and its
    ``RECORD`` line to match), every other member streamed unchanged.

    :raises UnsafeArchive, zipfile.BadZipFile, OSError: as :func:`decided_metadata`.
    """
    with WheelArchive(source) as wheel, zipfile.ZipFile(target, "w") as out:
        member = f"{wheel.dist_info}/METADATA"
        record_name = f"{wheel.dist_info}/RECORD"
        for info in wheel.files:
            if info.filename == member:
                out.writestr(info, metadata, compress_type=info.compress_type)
            elif info.filename == record_name:
                record = _record(wheel.read_text(record_name) or "", member, metadata)
                out.writestr(info, record, compress_type=info.compress_type)
            else:
                with wheel.open(info) as stream, out.open(info, "w") as sink:
                    shutil.copyfileobj(stream, sink, _CHUNK)


def installable_copy(source: Path, target: Path, values: VariantValues) -> bool:
    """Copy *source* to *target* for an installer: its variant markers decided for *values*.

    :returns: whether ``METADATA`` was changed (``False``: the bytes are identical).
    :raises UnsafeArchive, zipfile.BadZipFile, OSError, UnicodeDecodeError: not a wheel the
        bridge hands on.
    """
    metadata = decided_metadata(source, values)
    if metadata is None:
        shutil.copyfile(source, target)
        return False
    write_with_metadata(source, target, metadata)
    return True


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _record(record: str, member: str, metadata: bytes) -> bytes:
    rows = list(csv.reader(io.StringIO(record)))
    for row in rows:
        if row and row[0] == member:
            row[1:] = [_record_hash(metadata), str(len(metadata))]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")
