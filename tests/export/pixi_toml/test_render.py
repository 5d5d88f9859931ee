"""A new pixi manifest parses as its data, with the header and comments it promises."""

from __future__ import annotations

import sys

from tests.export.snapshots import NUMPY, TORCH_ORIGIN, model
from variant_bridge.export.model import IndexOptions
from variant_bridge.export.pixi_toml.render import MIN_PIXI, platform_entry, render, to_dict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomlkit as tomllib  # tomlkit.loads returns a dict-like document


def loads(text: str) -> dict[str, object]:
    return dict(tomllib.loads(text))


def test_a_new_manifest_reads_back_as_its_data() -> None:
    m = model(index_options=IndexOptions("https://idx.example/simple", (), ("/srv/wheels",)))
    assert loads(render(m)) == to_dict(m)


def test_a_new_manifest() -> None:
    data = to_dict(model())
    assert data["workspace"] == {
        "name": "env",
        "channels": ["conda-forge"],
        "platforms": [{"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}}],
        "requires-pixi": f">={MIN_PIXI}",
    }
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
        }
    }


def test_no_builds_and_history_give_plain_version_specs() -> None:
    assert to_dict(model(builds=False))["dependencies"]["python"] == "==3.12.7"
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
    m = model(origins=(local,))
    assert to_dict(m)["pypi-dependencies"]["torch"] == {
        "path": "/srv/wheels/torch-2.9.0-py3-none-any-cu126.whl"
    }
    line = next(ln for ln in render(m).splitlines() if ln.startswith("torch ="))
    assert line.endswith(f"# variant cu126, sha256={'ef' * 32}")


def test_no_cuda_no_rich_platform_and_no_pixi_minimum() -> None:
    m = model(env={"toolkit": None, "python_packages": (NUMPY,), "virtual_packages": ()})
    assert platform_entry(m) == "linux-64"
    assert "requires-pixi" not in to_dict(m)["workspace"]


def test_the_header_claims_variant_wheels_only_when_there_are_some() -> None:
    plain = render(model(env={"python_packages": (NUMPY,)}))
    assert "were chosen for this bridged view" not in plain  # QA: said with no variant wheel
    assert "has no variant wheels; the bridged view when it was exported:" in plain
    assert "The variant wheels in [pypi-dependencies] were chosen" in render(model())
