"""The staged copy of a variant wheel, its ``Requires-Dist`` variant markers decided.

uv 0.13.9 and pip cannot parse PEP 825 variant markers (``variant_label == 'cuda12.8'``): they
refuse the whole wheel ("invalid metadata"), and a dist-info left with such a line breaks later
``pip check``/``uv pip`` runs on the environment. The bridge knows which variant it chose, so the
staged copy (already renamed for the installer) gets a ``METADATA`` whose variant comparisons are
decided (:meth:`variant_bridge.markers.Dependency.for_variant`): lines for other variants are
dropped, the others keep their ordinary markers for the installer. ``RECORD`` is updated to
match. A wheel without variant markers is copied byte for byte.
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
from variant_bridge.markers import VariantValues, parse_dependency

__all__ = ["stage_wheel"]

_REQUIRES = "Requires-Dist:"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _decided(text: str, values: VariantValues) -> str | None:
    """METADATA with its variant comparisons decided; ``None`` when it has none."""
    head, sep, body = text.partition("\n\n")
    lines = head.split("\n")
    out: list[str] = []
    changed = False
    for line in lines:
        if not line.startswith(_REQUIRES):
            out.append(line)
            continue
        value = line[len(_REQUIRES) :].strip()
        try:
            dependency = parse_dependency(value)
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


def stage_wheel(source: Path, target: Path, values: VariantValues) -> bool:
    """Copy *source* to *target*, deciding its variant markers for *values*.

    :returns: whether ``METADATA`` was changed (``False``: the bytes are identical).
    """
    with zipfile.ZipFile(source) as archive:
        names = archive.namelist()
        member = next(
            (n for n in names if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), None
        )
        text = archive.read(member).decode("utf-8") if member is not None else None
        decided = _decided(text, values) if text is not None else None
        if member is None or decided is None:
            shutil.copyfile(source, target)
            return False
        metadata = decided.encode("utf-8")
        record_name = member.rsplit("/", 1)[0] + "/RECORD"
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as out:
            for info in archive.infolist():
                data = archive.read(info)
                if info.filename == member:
                    data = metadata
                elif info.filename == record_name:
                    data = _record(data, member, metadata)
                out.writestr(info, data, compress_type=info.compress_type)
    target.write_bytes(buffer.getvalue())
    return True


def _record(record: bytes, member: str, metadata: bytes) -> bytes:
    rows = list(csv.reader(io.StringIO(record.decode("utf-8"))))
    for row in rows:
        if row and row[0] == member:
            row[1:] = [_record_hash(metadata), str(len(metadata))]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")
