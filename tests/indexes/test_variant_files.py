"""Layer 2: variant metadata read from files, real wheel zips and installed .dist-info dirs."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from variant_bridge.detect.prefix import read_dist_info_variant
from variant_bridge.errors import InvalidMetadata, InvalidWheelFilename
from variant_bridge.indexes.variant_files import (
    VARIANT_JSON,
    read_wheel_variant_metadata,
)
from variant_bridge.metadata.parse import parse_variant_metadata
from variant_bridge.properties import VariantDescription

DATA = Path(__file__).resolve().parents[1] / "data" / "metadata"
CU128 = VariantDescription.parse("cu128: nvidia :: cuda_version_lower_bound :: 12.8")


def fixture_json(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(
    directory: Path,
    filename: str,
    variant_json: dict[str, Any] | str | None,
    *,
    dist_info: str = "tinyvar-0.1.0.dist-info",
    extra: dict[str, bytes] | None = None,
    compression: int = zipfile.ZIP_DEFLATED,
) -> Path:
    """Write a real wheel: a module, METADATA, WHEEL, optional variant.json and a RECORD."""
    members: dict[str, bytes] = {
        "tinyvar/__init__.py": b"VALUE = 1\n",
        f"{dist_info}/METADATA": b"Metadata-Version: 2.4\nName: tinyvar\nVersion: 0.1.0\n",
        f"{dist_info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: variant-bridge-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    if variant_json is not None:
        text = variant_json if isinstance(variant_json, str) else json.dumps(variant_json, indent=4)
        members[f"{dist_info}/{VARIANT_JSON}"] = text.encode()
    members.update(extra or {})
    record_name = f"{dist_info}/RECORD"
    record = "".join(f"{_record_line(n, d)}\n" for n, d in members.items()) + f"{record_name},,\n"
    members[record_name] = record.encode()
    path = directory / filename
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def wheel_json(label: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = fixture_json("wheel_cu128.json")
    data["variants"] = {label: body if body is not None else {}}
    return data


# --------------------------------------------------------------------------- wheels


def test_reads_a_variant_wheel(tmp_path: Path) -> None:
    wheel = build_wheel(
        tmp_path, "tinyvar-0.1.0-py3-none-any-cu128.whl", wheel_json("cu128", CU128.to_dict())
    )
    meta = read_wheel_variant_metadata(wheel)
    assert meta is not None
    assert meta == parse_variant_metadata(fixture_json("wheel_cu128.json"), source="x")
    assert meta.variants == (CU128,)
    assert meta.providers[0].namespace == "nvidia"


@pytest.mark.parametrize(
    "compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2]
)
def test_reads_any_standard_compression(tmp_path: Path, compression: int) -> None:
    wheel = build_wheel(
        tmp_path,
        "tinyvar-0.1.0-py3-none-any-cu128.whl",
        wheel_json("cu128", CU128.to_dict()),
        compression=compression,
    )
    meta = read_wheel_variant_metadata(wheel)
    assert meta is not None
    assert meta.variants == (CU128,)


def test_reads_the_null_variant_wheel(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "tinyvar-0.1.0-py3-none-any-null.whl", wheel_json("null"))
    meta = read_wheel_variant_metadata(wheel)
    assert meta is not None
    assert meta.variants == (VariantDescription.null(),)


def test_non_variant_wheel_has_no_metadata(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "tinyvar-0.1.0-py3-none-any.whl", None)
    assert read_wheel_variant_metadata(wheel) is None
    # A vendored package's dist-info deeper in the tree is not this wheel's metadata.
    nested = build_wheel(
        tmp_path,
        "tinyvar-0.1.0-1-py3-none-any.whl",
        None,
        extra={f"tinyvar/_vendor/dep-1.0.dist-info/{VARIANT_JSON}": b"{}"},
    )
    assert read_wheel_variant_metadata(nested) is None


@pytest.mark.parametrize(
    ("filename", "variant_json", "extra", "message"),
    [
        (
            "tinyvar-0.1.0-py3-none-any-cu126.whl",
            wheel_json("cu128", CU128.to_dict()),
            None,
            "variants: label 'cu128' does not match the wheel filename's label 'cu126'",
        ),  # renamed wheel
        (
            "tinyvar-0.1.0-py3-none-any-cu128.whl",
            None,
            None,
            "variant wheel (label 'cu128') has no *.dist-info/variant.json",
        ),  # label without metadata
        (
            "tinyvar-0.1.0-py3-none-any.whl",
            wheel_json("cu128", CU128.to_dict()),
            None,
            "the wheel has variant metadata but its filename has no variant label",
        ),  # metadata without label
        (
            "tinyvar-0.1.0-py3-none-any-cu128.whl",
            fixture_json("variantlib.json"),
            None,
            "variants: a wheel's variant.json must list exactly one label, got 3",
        ),  # an index file packed as variant.json
        (
            "tinyvar-0.1.0-py3-none-any-cu128.whl",
            wheel_json("cu128", {"nvidia": {"sm_arch": ["SM90"]}}),
            None,
            "variants.cu128.nvidia.sm_arch[0]: invalid value 'SM90'",
        ),  # malformed variant.json
        (
            "tinyvar-0.1.0-py3-none-any-cu128.whl",
            '{"variants": ',
            None,
            "invalid JSON at line 1, column 14",
        ),  # truncated variant.json
        (
            "tinyvar-0.1.0-py3-none-any-cu128.whl",
            wheel_json("cu128", CU128.to_dict()),
            {f"other-1.0.dist-info/{VARIANT_JSON}": b"{}"},
            "more than one variant.json",
        ),  # two dist-info dirs
    ],
)
def test_wheel_errors(
    tmp_path: Path,
    filename: str,
    variant_json: dict[str, Any] | str | None,
    extra: dict[str, bytes] | None,
    message: str,
) -> None:
    wheel = build_wheel(tmp_path, filename, variant_json, extra=extra)
    with pytest.raises(InvalidMetadata) as info:
        read_wheel_variant_metadata(wheel)
    text = str(info.value)
    assert text.startswith(str(wheel)), text  # names the wheel (and the member, if any)
    assert message in text
    assert "\n" not in text


def test_member_is_named_in_content_errors(tmp_path: Path) -> None:
    wheel = build_wheel(
        tmp_path, "tinyvar-0.1.0-py3-none-any-cu126.whl", wheel_json("cu128", CU128.to_dict())
    )
    with pytest.raises(
        InvalidMetadata, match=r"cu126\.whl!tinyvar-0\.1\.0\.dist-info/variant\.json: "
    ):
        read_wheel_variant_metadata(wheel)


def test_corrupt_wheels(tmp_path: Path) -> None:
    garbage = tmp_path / "tinyvar-0.1.0-py3-none-any-cu128.whl"
    garbage.write_bytes(b"this is not a zip file" * 10)
    with pytest.raises(
        InvalidMetadata, match=r"not a readable wheel \(zip\) file: File is not a zip"
    ):
        read_wheel_variant_metadata(garbage)

    good = build_wheel(
        tmp_path, "tinyvar-0.1.0-py3-none-any-cu127.whl", wheel_json("cu127", CU128.to_dict())
    )
    truncated = tmp_path / "tinyvar-0.1.0-py3-none-any-cu128.whl"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(InvalidMetadata, match="not a readable wheel"):
        read_wheel_variant_metadata(truncated)

    # Flip a byte inside a stored variant.json: the zip's CRC check must catch it.
    stored = build_wheel(
        tmp_path,
        "tinyvar-0.1.0-py3-none-any-cu129.whl",
        wheel_json("cu129", CU128.to_dict()),
        compression=zipfile.ZIP_STORED,
    )
    raw = bytearray(stored.read_bytes())
    offset = raw.index(b'"cuda_version_lower_bound"')
    raw[offset + 1] = ord("X")
    stored.write_bytes(bytes(raw))
    with pytest.raises(InvalidMetadata, match=r"cu129\.whl: not a readable wheel .*Bad CRC-32"):
        read_wheel_variant_metadata(stored)

    with pytest.raises(InvalidMetadata, match="cannot read wheel: No such file"):
        read_wheel_variant_metadata(tmp_path / "tinyvar-0.1.0-py3-none-any-gone.whl")


def test_wheel_filename_must_be_valid(tmp_path: Path) -> None:
    path = tmp_path / "download.zip"
    shutil.copy(build_wheel(tmp_path, "tinyvar-0.1.0-py3-none-any.whl", None), path)
    with pytest.raises(InvalidWheelFilename, match=r"'download\.zip'"):
        read_wheel_variant_metadata(path)


# --------------------------------------------------------------------------- installed dist-info


def install(wheel: Path, site_packages: Path) -> Path:
    """Unpack a wheel the way an installer lays it out; return its .dist-info directory."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site_packages)
    (dist_info,) = site_packages.glob("*.dist-info")
    return dist_info


def test_installed_variant(tmp_path: Path) -> None:
    wheel = build_wheel(
        tmp_path, "tinyvar-0.1.0-py3-none-any-cu128.whl", wheel_json("cu128", CU128.to_dict())
    )
    dist_info = install(wheel, tmp_path / "site-packages")
    assert read_dist_info_variant(dist_info) == CU128
    assert read_dist_info_variant(str(dist_info)) == CU128


def test_installed_non_variant(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "tinyvar-0.1.0-py3-none-any.whl", None)
    assert read_dist_info_variant(install(wheel, tmp_path / "site-packages")) is None


def test_installed_null_variant(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "tinyvar-0.1.0-py3-none-any-null.whl", wheel_json("null"))
    variant = read_dist_info_variant(install(wheel, tmp_path / "site-packages"))
    assert variant == VariantDescription.null()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            json.dumps(fixture_json("variantlib.json")),
            "must list exactly one label, got 3",
        ),  # index
        (json.dumps(wheel_json("cu128", {"nvidia": {"x": []}})), "variants.cu128.nvidia.x: exp"),
        ("{", "invalid JSON at line 1, column 2"),  # truncated
    ],
)
def test_installed_errors(tmp_path: Path, content: str, message: str) -> None:
    dist_info = tmp_path / "tinyvar-0.1.0.dist-info"
    dist_info.mkdir()
    (dist_info / VARIANT_JSON).write_text(content)
    with pytest.raises(InvalidMetadata) as info:
        read_dist_info_variant(dist_info)
    assert str(info.value).startswith(f"{dist_info / VARIANT_JSON}: "), str(info.value)
    assert message in str(info.value)


def test_dist_info_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidMetadata, match=r"not a \.dist-info directory"):
        read_dist_info_variant(tmp_path / "missing.dist-info")
    file = _write(tmp_path / "file.dist-info", "")
    with pytest.raises(InvalidMetadata, match=r"file\.dist-info: not a \.dist-info directory"):
        read_dist_info_variant(file)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
