"""The wheel and index test worlds are real: valid RECORDs, every dialect, and installers accept
them (uv picks the variant its NVIDIA provider is told to, pip the plain wheel)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.indexes.conftest import CU126, CU128, DIALECTS, FULL
from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel, module_name, write_variants_json
from variant_bridge.indexes.variant_files import read_wheel_variant_metadata
from variant_bridge.metadata import VariantMetadata, read_variant_json
from variant_bridge.metadata.schema import SCHEMA_URLS
from variant_bridge.properties import VariantDescription


def members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def test_record_lists_every_member_with_its_hash(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "Tiny-Var", "1.0", properties=CU126, requires=("numpy>=2",))
    files = members(wheel)
    record = files.pop("tiny_var-1.0.dist-info/RECORD").decode().splitlines()
    assert record[-1] == "tiny_var-1.0.dist-info/RECORD,,"
    listed = {}
    for line in record[:-1]:
        path, digest, size = line.split(",")
        listed[path] = (digest, int(size))
    expected = {
        path: (
            "sha256="
            + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(),
            len(data),
        )
        for path, data in files.items()
    }
    assert listed == expected
    assert "Requires-Dist: numpy>=2" in files["tiny_var-1.0.dist-info/METADATA"].decode()
    assert "Tag: py3-none-any" in files["tiny_var-1.0.dist-info/WHEEL"].decode()


@pytest.mark.parametrize(
    ("label", "properties", "filename_label"),
    [
        (None, (), None),  # a plain wheel
        ("null", (), "null"),  # the null variant
        ("cu128", CU128, "cu128"),  # an explicit label
        (None, CU126, VariantDescription.parse("; ".join(CU126)).hexdigest),  # variantlib's default
    ],
)
def test_labels(
    tmp_path: Path, label: str | None, properties: tuple[str, ...], filename_label: str | None
) -> None:
    wheel = make_wheel(
        tmp_path, "lab", "1.0", label=label, properties=properties, namespace_priorities=["nvidia"]
    )
    suffix = f"-{filename_label}" if filename_label else ""
    assert wheel.name == f"lab-1.0-py3-none-any{suffix}.whl"
    meta = read_wheel_variant_metadata(wheel)
    if filename_label is None:
        assert meta is None
        assert not any(n.endswith("variant.json") for n in members(wheel))
    else:
        assert meta is not None
        assert meta.labels == (filename_label,)
        assert (
            meta.variants[0].properties
            == VariantDescription.parse("; ".join(properties)).properties
        )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_variant_json_in_each_dialect(tmp_path: Path, dialect: str) -> None:
    wheel = make_wheel(tmp_path, "dia", "1.0", label="cu128", properties=CU128, dialect=dialect)  # type: ignore[arg-type]
    document = json.loads(members(wheel)["dia-1.0.dist-info/variant.json"])
    assert document["$schema"] == SCHEMA_URLS[dialect]  # type: ignore[index]
    meta = read_wheel_variant_metadata(wheel)
    assert meta is not None
    assert meta.dialect == dialect


def test_a_lone_null_variant_needs_namespaces(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="namespace_priorities"):
        make_wheel(tmp_path, "n", "1.0", label="null")
    assert list(tmp_path.iterdir()) == []


def test_nvidia_provider_is_the_one_uv_knows(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "nv", "1.0", label="cu128", properties=CU128)
    document = json.loads(members(wheel)["nv-1.0.dist-info/variant.json"])
    assert document["providers"] == {
        "nvidia": {
            "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
            "requires": ["nvidia-variant-provider>=0.0.1,<1.0.0"],
        }
    }


def test_same_inputs_same_bytes(tmp_path: Path) -> None:
    first = make_wheel(tmp_path / "a", "det", "1.0", label="cu128", properties=CU128).read_bytes()
    second = make_wheel(tmp_path / "b", "det", "1.0", label="cu128", properties=CU128).read_bytes()
    assert first == second


def _read(path: Path) -> VariantMetadata:
    return read_variant_json(path.read_bytes(), source=str(path))


def test_write_variants_json_from_some_wheels(tmp_path: Path) -> None:
    release = make_release(tmp_path, "rel", "2.0", FULL, variants_json=False)
    index_file = write_variants_json(
        tmp_path, "rel", "2.0", [release.wheels["cu128"], release.wheels["null"]]
    )
    assert index_file.name == "rel-2.0-variants.json"
    assert _read(index_file).labels == ("cu128", "null")


def test_make_release_writes_a_partial_index_file(tmp_path: Path) -> None:
    release = make_release(tmp_path, "rel", "2.0", FULL, variants_json=["cu126"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in release.paths)
    assert release.variants_json is not None
    assert _read(release.variants_json).labels == ("cu126",)
    assert set(release.wheels) == {"cu128", "cu126", "null", None}


def _install(installer: list[str], venv: Path, env: dict[str, str]) -> str:
    result = subprocess.run(installer, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    probe = f"import {module_name('tinyvar')} as m; print(m.VARIANT_LABEL)"
    return subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("forms", "driver", "expected"),
    [
        (("json", "html"), "12.6", "cu126"),  # uv reads our PEP 691 JSON and the variants.json
        (("html",), "12.9", "cu128"),  # ...and our PEP 503 HTML
    ],
)
def test_uv_installs_from_the_index_server(
    tmp_path: Path, forms: tuple[str, ...], driver: str, expected: str
) -> None:
    from uv import find_uv_bin

    uv = find_uv_bin()
    root = tmp_path / "files"
    make_release(root, "tinyvar", "1.0.0", FULL)
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    env = {
        **os.environ,
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": driver,
        "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0",
        "UV_CACHE_DIR": str(tmp_path / "cache"),
    }
    with IndexServer(root, forms=forms) as index:
        command = [uv, "pip", "install", "-p", str(venv / "bin" / "python"), "--index-url",
                   index.url, "--preview-features", "wheel-variants", "tinyvar"]  # fmt: skip
        assert _install(command, venv, env) == expected
    assert "/files/tinyvar-1.0.0-variants.json" in index.paths_requested()


@pytest.mark.slow
def test_pip_installs_the_plain_wheel(tmp_path: Path) -> None:
    from uv import find_uv_bin

    root = tmp_path / "files"
    make_release(root, "tinyvar", "1.0.0", FULL)
    venv = tmp_path / "venv"
    subprocess.run([find_uv_bin(), "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    # --isolated: a machine-wide pip.conf must not add other indexes to the test
    command = [sys.executable, "-m", "pip", "--isolated", "--python", str(venv / "bin" / "python"),
               "install", "-q", "--no-index", "--find-links", str(root), "tinyvar"]  # fmt: skip
    assert _install(command, venv, dict(os.environ)) == "None"
