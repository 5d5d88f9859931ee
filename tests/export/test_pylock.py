"""pylock.toml (PEP 751) for the PyPI part: every wheel a file, the variant in [tool]."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest
from packaging.pylock import Pylock

from tests.export.snapshots import TORCH_ORIGIN, model
from variant_bridge.errors import ExportError
from variant_bridge.export import pylock
from variant_bridge.export.build import Pinning
from variant_bridge.export.model import ExportModel
from variant_bridge.export.origins import WheelOrigin

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomlkit as tomllib

NUMPY_ORIGIN = WheelOrigin(
    "numpy",
    "2.1.0",
    None,
    "https://files.example/numpy-2.1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
    "cd" * 32,
    "direct_url.json",
    size=1234,
)


COPY = "/share/variant-wheels/torch-2.9.0-cp312-cp312-linux.whl"


def with_copies(exported: ExportModel) -> ExportModel:
    """*exported* as ``--wheels-dir`` leaves it: the variant wheel pinned by its copy."""
    pip = tuple(
        replace(p, copy=COPY, copy_relative="./variant-wheels/" + COPY.rsplit("/", 1)[1], size=9)
        if p.label
        else p
        for p in exported.pip
    )
    return replace(exported, pip=pip, base_dir="/share")


def locked() -> ExportModel:
    exported = model(origins=(TORCH_ORIGIN, NUMPY_ORIGIN), pinning=Pinning(every_wheel=True))
    return with_copies(exported)


def test_the_lock_reads_back_as_its_data_and_is_valid() -> None:
    text = pylock.render(locked())
    data = tomllib.loads(text)
    assert data == pylock.to_dict(locked())
    Pylock.from_dict(data).validate()
    assert text.startswith("# Produced by variant-bridge export\n")


def test_every_wheel_is_a_file_and_the_variant_is_in_the_tool_table() -> None:
    packages = {p["name"]: p for p in pylock.to_dict(locked())["packages"]}
    assert packages["numpy"] == {
        "name": "numpy",
        "version": "2.1.0",
        "wheels": [
            {
                "name": "numpy-2.1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
                "url": NUMPY_ORIGIN.url,
                "size": 1234,
                "hashes": {"sha256": "cd" * 32},
            }
        ],
    }
    torch = packages["torch"]
    # the copy under its non-variant name (packaging and uv refuse `...-cu126.whl`), relative
    assert torch["wheels"] == [
        {
            "name": "torch-2.9.0-cp312-cp312-linux.whl",
            "path": "./variant-wheels/torch-2.9.0-cp312-cp312-linux.whl",
            "size": 9,
            "hashes": {"sha256": "ab" * 32},
        }
    ]
    assert torch["tool"]["variant-bridge"] == {
        "label": "cu126",
        "properties": [
            "nvidia :: cuda_version_lower_bound :: 12.6",
            "nvidia :: sm_arch :: 90_real",
        ],
        "variant-file": "torch-2.9.0-cp312-cp312-linux-cu126.whl",
        "installed-from": TORCH_ORIGIN.url,
    }


def test_a_variant_filename_is_not_a_valid_lock() -> None:
    # what `--pin-filenames` would write: refused, never written
    exported = model(origins=(TORCH_ORIGIN, NUMPY_ORIGIN), pinning=Pinning(every_wheel=True))
    with pytest.raises(ExportError, match=r"Invalid wheel filename 'torch-2\.9\.0-cp312-cp312"):
        pylock.render(exported)


def test_a_wheel_without_a_file_is_refused_or_left_out() -> None:
    with pytest.raises(ExportError, match=r"cannot pin wheel numpy 2\.1\.0"):
        model(pinning=Pinning(every_wheel=True))  # numpy's origin was not looked up
    kept = with_copies(model(pinning=Pinning(every_wheel=True, allow_unpinned=True)))
    assert [p["name"] for p in pylock.to_dict(kept)["packages"]] == ["torch"]
    assert "numpy 2.1.0 is left out: no file to pin it to" in kept.notes
    assert "Left out (no file to pin; install them separately): numpy==2.1.0" in (
        pylock.render(kept)
    )


def test_an_invalid_lock_is_never_written() -> None:
    data = pylock.to_dict(locked())
    data["packages"][0]["wheels"][0].pop("hashes")
    with pytest.raises(ExportError, match="would not be valid"):
        pylock.check(data)


def test_an_environment_without_pypi_packages_has_nothing_to_lock() -> None:
    empty = model(env={"python_packages": ()}, origins=(), pinning=Pinning(every_wheel=True))
    assert empty.pip == ()
    with pytest.raises(ExportError, match="no PyPI package has a file to pin"):
        pylock.render(empty)
