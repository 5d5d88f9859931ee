"""A new pixi manifest parses as its data, with the header and comments it promises."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from tests.export.snapshots import NUMPY, TORCH_ORIGIN, model, pixi_model
from variant_bridge.errors import ExportError
from variant_bridge.export.build import Pinning
from variant_bridge.export.model import IndexOptions
from variant_bridge.export.pixi_toml.render import (
    MIN_PIXI,
    is_marked,
    notes,
    platform_entry,
    render,
    to_dict,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomlkit as tomllib  # tomlkit.loads returns a dict-like document


def loads(text: str) -> dict[str, object]:
    return dict(tomllib.loads(text))


def test_a_new_manifest_reads_back_as_its_data() -> None:
    m = pixi_model(index_options=IndexOptions("https://idx.example/simple", (), ("/srv/wheels",)))
    assert loads(render(m)) == to_dict(m)


def test_every_entry_of_a_new_manifest_is_marked_as_the_exports() -> None:
    text = render(pixi_model())
    entries = [ln for ln in text.splitlines() if " = " in ln and not ln.startswith("#")]
    assert entries
    for line in entries:
        assert is_marked(line.partition("  # ")[2]), line


def test_a_new_manifest() -> None:
    data = to_dict(pixi_model())
    # a rich platform (pixi >= 0.71) with the driver and GPU floors: torch's PTX range can be
    # stated that way
    assert data["workspace"] == {
        "name": "env",
        "channels": ["conda-forge"],
        "platforms": [{"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}}],
        "requires-pixi": f">={MIN_PIXI}",
    }
    assert "system-requirements" not in data
    assert data["dependencies"] == {
        "cuda-version": {"version": "==12.6", "build": "h0_3"},
        "libcublas": {"version": "==12.6.77", "build": "h0_0"},
        "python": {"version": "==3.12.7", "build": "h0_0_cpython"},
    }
    assert data["pypi-dependencies"] == {"numpy": "==2.1.0", "torch": {"url": TORCH_ORIGIN.url}}
    assert data["activation"] == {
        "env": {
            "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.6",
            "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0",
            "VARIANT_BRIDGE_EXPORTED_PINS": (
                "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.6 "
                "NV_VARIANT_PROVIDER_FORCE_SM_ARCH=9.0"
            ),
        }
    }


def test_plain_platforms_get_system_requirements_and_no_gpu_pin() -> None:
    """[system-requirements] has no GPU: uv is pinned only to what the manifest declares."""
    data = to_dict(pixi_model(), rich=False)
    assert data["workspace"]["platforms"] == ["linux-64"]
    assert "requires-pixi" not in data["workspace"]
    assert data["system-requirements"] == {"cuda": "12.6"}
    assert data["activation"] == {
        "env": {
            "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.6",
            "VARIANT_BRIDGE_EXPORTED_PINS": "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.6",
        }
    }


@pytest.mark.parametrize(
    ("pin", "python", "numpy"),
    [
        ("exact", {"version": "==3.12.7", "build": "h0_0_cpython"}, "==2.1.0"),
        ("version", "==3.12.7", "==2.1.0"),
        ("none", "*", "*"),
    ],
)
def test_pin_modes_apply_to_the_exports_entries(pin: str, python: object, numpy: str) -> None:
    data = to_dict(pixi_model(pinning=Pinning(pin)))  # type: ignore[arg-type]
    assert data["dependencies"]["python"] == python
    assert data["pypi-dependencies"]["numpy"] == numpy
    # whatever the mode, the toolkit and the variant wheel stay pinned
    assert data["dependencies"]["cuda-version"] in (
        {"version": "==12.6", "build": "h0_3"},
        "12.6.*",
    )
    assert data["pypi-dependencies"]["torch"] == {"url": TORCH_ORIGIN.url}


def test_a_gpu_range_with_an_upper_bound_is_said_not_declared_lossily() -> None:
    # QA: `arch = "8.0"` was declared for a wheel with kernels for 8.x only; pixi admits any
    # newer GPU (an H100) against it. By default the manifest declares what pixi can state (the
    # driver floor) and says the rest; the strict mode refuses.
    m = model()  # torch cu126 has kernels for 9.x only: __cuda_arch >=9.0,<10
    text = render(m)
    # the floors pixi can state are declared; the upper bound is said
    assert loads(text)["workspace"]["platforms"] == [
        {"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}}
    ]
    assert "#   __cuda_arch >=9.0,<10  <- torch 2.9.0 [cu126]" in text
    assert "# Not enforced by what is declared (pixi cannot state them;" in text
    [note] = notes(m, rich=True)
    assert note.startswith("torch 2.9.0 [cu126] needs __cuda_arch >=9.0,<10, which its platform")
    [note] = notes(m, rich=False)
    assert note.startswith("torch 2.9.0 [cu126] needs __cuda_arch >=9.0,<10, which")
    with pytest.raises(ExportError) as info:
        render(model(strict_host_requirements=True))
    message = str(info.value)
    assert "torch 2.9.0 [cu126] needs __cuda_arch >=9.0,<10" in message
    assert "without --strict-host-requirements" in message
    # --no-host-requirements: what the conda packages need, the header the wheels' range
    text = render(model(host_requirements=False, strict_host_requirements=True))
    no_host = model(host_requirements=False)
    assert platform_entry(no_host) == {"platform": "linux-64", "cuda": "12"}
    assert "#   __cuda_arch >=9.0,<10  <- torch 2.9.0 [cu126]" in text
    assert "not declared, --no-host-requirements; pixi does not check them" in text


def test_a_cpu_requirement_is_said_or_refused_for_pixi() -> None:
    from variant_bridge.environment import PythonDistribution
    from variant_bridge.properties import VariantDescription

    v3 = PythonDistribution(
        "fastlib",
        "1.0",
        variant=VariantDescription.parse("v3: x86_64 :: level :: v3"),
        location="/env/lib/python3.12/site-packages/fastlib-1.0.dist-info",
    )
    options = {"env": {"python_packages": (v3,)}, "pinning": Pinning(allow_unpinned=True)}
    [note] = notes(model(**options), rich=False)  # type: ignore[arg-type]
    assert note.startswith("fastlib 1.0 [v3] needs a CPU microarchitecture (__archspec)")
    with pytest.raises(ExportError, match=r"fastlib 1.0 \[v3\] needs a CPU microarchitecture"):
        render(model(**options, strict_host_requirements=True))  # type: ignore[arg-type]


def test_local_paths_inside_the_manifests_folder_are_relative() -> None:
    from variant_bridge.export.origins import WheelOrigin

    local = WheelOrigin(
        "torch",
        "2.9.0",
        "cu126",
        "file:///proj/wheels/torch-2.9.0-py3-none-any-cu126.whl",
        "ef" * 32,
        "direct_url.json",
    )
    m = pixi_model(origins=(local,), index_options=IndexOptions(find_links=("/proj/wheels",)))
    inside = to_dict(replace(m, base_dir="/proj"))
    assert inside["pypi-dependencies"]["torch"] == {
        "path": "./wheels/torch-2.9.0-py3-none-any-cu126.whl"
    }
    assert inside["pypi-options"]["find-links"] == [{"path": "./wheels"}]
    outside = to_dict(replace(m, base_dir="/elsewhere"))
    assert outside["pypi-options"]["find-links"] == [{"path": "/proj/wheels"}]


def test_no_builds_and_history_give_plain_version_specs() -> None:
    assert to_dict(model(pinning=Pinning("version")))["dependencies"]["python"] == "==3.12.7"
    deps = to_dict(model(requested_specs=("python=3.12", "conda-forge::numpy >=2", "rich")))
    assert deps["dependencies"] == {
        "python": "3.12.*",
        "numpy": {"version": ">=2", "channel": "conda-forge"},
        "rich": "*",
        "cuda-version": "12.6.*",
    }


def test_a_local_wheel_is_a_path_and_its_hash_a_comment() -> None:
    from variant_bridge.export.origins import WheelOrigin

    local = WheelOrigin(
        "torch",
        "2.9.0",
        "cu126",
        "file:///srv/wheels/torch-2.9.0-py3-none-any-cu126.whl",
        "ef" * 32,
        "direct_url.json",
    )
    m = pixi_model(origins=(local,))
    assert to_dict(m)["pypi-dependencies"]["torch"] == {
        "path": "/srv/wheels/torch-2.9.0-py3-none-any-cu126.whl"
    }
    line = next(ln for ln in render(m).splitlines() if ln.startswith("torch ="))
    assert line.endswith(f"# variant-bridge: variant cu126, sha256={'ef' * 32}")


def test_no_cuda_no_rich_platform_and_no_pixi_minimum() -> None:
    m = model(env={"toolkit": None, "python_packages": (NUMPY,), "virtual_packages": ()})
    assert platform_entry(m) == "linux-64"
    assert "requires-pixi" not in to_dict(m)["workspace"]


def test_the_header_claims_variant_wheels_only_when_there_are_some() -> None:
    plain = render(model(env={"python_packages": (NUMPY,)}))
    assert "were chosen for this bridged view" not in plain  # QA: said with no variant wheel
    assert "has no variant wheels; the bridged view when it was exported:" in plain
    assert "The variant wheels in [pypi-dependencies] were chosen" in render(pixi_model())


def test_the_header_says_what_the_wheels_expect_and_what_pins_it() -> None:
    assert (
        "# The variant wheels also expect (not added as dependencies): cuda-version >=12.6,<13 "
        "(pinned in [dependencies]: cuda-version=12.6=h0_3)"
    ) in render(model()).splitlines()
