"""``conda export --format variant-...``: the bridge's environment.yml, pixi.toml and
pylock.toml, under names no exporter of conda or conda-lockfiles uses, built from the
environment conda passes (its virtual packages included)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conda_plugin.conftest import Conda, GpuWorld


def _register_lockfiles(conda: Conda) -> None:
    conda.manager.register(importlib.import_module("conda.plugins.lockfiles"))


def _environment(prefix: Path, platform: str = "linux-64", **vps: str) -> Any:
    from conda.models.environment import Environment
    from conda.models.records import PackageRecord

    records = [PackageRecord.virtual_package(f"__{name}", v, None) for name, v in vps.items()]
    return Environment(platform=platform, name="env", prefix=str(prefix), virtual_packages=records)


def test_no_name_alias_or_file_name_clashes_with_conda_or_conda_lockfiles(conda: Conda) -> None:
    _register_lockfiles(conda)
    mapping = conda.manager.get_exporter_format_mapping()  # a clash would raise PluginError
    ours = {key: e.name for key, e in mapping.items() if e.name.startswith("variant-")}
    assert ours == {
        "variant-environment-yaml": "variant-environment-yaml",
        "variant-yaml": "variant-environment-yaml",
        "variant-yml": "variant-environment-yaml",
        "variant-pixi-toml": "variant-pixi-toml",
        "variant-pixi": "variant-pixi-toml",
        "variant-pylock": "variant-pylock",
        "variant-pylock-toml": "variant-pylock",
    }
    detect = conda.manager.detect_environment_exporter
    assert [detect(f).name for f in ("pixi.toml", "pylock.toml", "pylock.gpu.toml",
                                     "variant-environment.yml", "environment.yml", "pixi.lock",
                                     "conda-lock.yml")] == [
        "variant-pixi-toml", "variant-pylock", "variant-pylock", "variant-environment-yaml",
        "environment-yaml", "rattler-lock-v6", "conda-lock-v1",
    ]  # fmt: skip


@pytest.fixture
def claiming(conda: Conda) -> None:
    """Another plugin claiming ``pylock`` (a name), ``variant-pixi`` (one of our aliases) and
    ``pylock.toml`` (one of our file names), as a future conda-pypi might."""
    from conda.plugins.hookspec import hookimpl
    from conda.plugins.types import CondaEnvironmentExporter

    class Other:
        @hookimpl
        def conda_environment_exporters(self) -> Iterator[Any]:
            yield CondaEnvironmentExporter("pylock", ("variant-pixi",), ("pylock.toml",),
                                           export=lambda env: "")  # fmt: skip

    conda.manager.register(Other())


@pytest.mark.usefixtures("claiming")
def test_what_another_plugin_claims_is_left_out_instead_of_breaking_conda_export(
    conda: Conda,
) -> None:
    mapping = conda.manager.get_exporter_format_mapping()
    assert mapping["variant-pixi"].name == "pylock"  # theirs; ours kept its name
    assert mapping["variant-pixi-toml"].aliases == ()
    assert mapping["variant-pylock"].default_filenames == ("pylock.*.toml",)
    assert conda.manager.detect_environment_exporter("pylock.toml").name == "pylock"


@pytest.mark.slow
def test_the_environment_yml_is_the_bridges_with_condas_virtual_packages(
    conda: Conda, gpu_world: GpuWorld
) -> None:
    exporter = conda.manager.get_environment_exporter_by_format("variant-yaml")
    text = exporter.export(_environment(gpu_world.prefix, cuda="12.9", glibc="2.36"))
    assert text.startswith(
        "# Produced by conda export --format variant-environment-yaml (variant-bridge "
    )
    assert "#   driver: __cuda=12.9 (conda)" in text
    assert "#   toolkit: cuda-version=12.6 (conda-meta)" in text
    assert "  - cuda-version=12.6=h0_3" in text
    assert "  - __cuda >=12.6  # gpulib 1.0 [cu126]" in text
    assert "gpulib-1.0-py3-none-any-cu126.whl" in text  # to stdout: the variant file itself


@pytest.mark.slow
def test_without_virtual_packages_in_the_environment_condas_plugin_manager_answers(
    conda: Conda, gpu_world: GpuWorld
) -> None:
    conda.reset(override_virtual_packages={"cuda": "12.8"})
    exporter = conda.manager.get_environment_exporter_by_format("variant-pixi-toml")
    text = exporter.export(_environment(gpu_world.prefix))  # conda export leaves them empty
    assert "#   driver: __cuda=12.8 (conda)" in text
    assert "[pypi-dependencies]" in text


@pytest.mark.slow
def test_with_condas_file_the_wheels_are_copied_beside_it(
    conda: Conda, gpu_world: GpuWorld, tmp_path: Path
) -> None:
    from conda import CondaError

    out = tmp_path / "share" / "pylock.toml"
    out.parent.mkdir()
    conda.args(file=str(out))
    exporter = conda.manager.detect_environment_exporter("pylock.toml")
    environment = _environment(gpu_world.prefix, cuda="12.9")
    # A pylock.toml pins every wheel: nvidia-cublas-cu12 (installed as a dependency, no origin
    # recorded) must be looked up, in the sources the plugin's settings name.
    with pytest.raises(CondaError, match=r"cannot pin wheel nvidia-cublas-cu12 12\.6\.4\.1: .*"
                       "in conda, name them with `conda config --append "
                       "plugins.variant_bridge_find_links DIR`"):  # fmt: skip
        exporter.export(environment)
    conda.reset(condarc_plugins={"variant_bridge_find_links": (str(gpu_world.wheels),)})
    conda.args(file=str(out))
    exporter = conda.manager.detect_environment_exporter("pylock.toml")
    text = exporter.export(environment)
    assert out.read_text() == text  # what conda then writes there again, unchanged
    copies = sorted(p.name for p in (out.parent / "variant-wheels").iterdir())
    assert copies == ["gpulib-1.0-py3-none-any.whl"]  # the cu126 file under a plain name
    assert 'path = "./variant-wheels/gpulib-1.0-py3-none-any.whl"' in text
    assert "nvidia_cublas_cu12-12.6.4.1-py3-none-any.whl" in text


def test_failures_are_one_conda_error(conda: Conda, tmp_path: Path) -> None:
    from conda import CondaError

    pylock = conda.manager.get_environment_exporter_by_format("variant-pylock")
    with pytest.raises(CondaError, match=r"^--format variant-pylock needs --file FILE") as caught:
        pylock.export(_environment(tmp_path))
    assert type(caught.value).__name__ == "CondaVariantError"
    yaml = conda.manager.get_environment_exporter_by_format("variant-environment-yaml")
    with pytest.raises(CondaError, match="cannot be extrapolated to osx-arm64"):
        yaml.export(_environment(tmp_path, platform="osx-arm64"))
    with pytest.raises(CondaError) as missing:
        yaml.export(_environment(tmp_path / "missing"))
    message = str(missing.value)
    assert message.startswith("conda export --format variant-environment-yaml: ")
    assert str(tmp_path / "missing") in message
    assert "\n" not in message


@pytest.mark.slow
@pytest.mark.parametrize("cuda", ["9" * 5000, "abc"])
def test_a_virtual_package_conda_reports_that_is_no_version_is_one_conda_error(
    conda: Conda, gpu_world: GpuWorld, cuda: str
) -> None:
    """``CONDA_OVERRIDE_CUDA`` (here ``override_virtual_packages``) set to no CUDA version: one
    line naming it, as ``-t cuda=abc`` is refused (a 5,000-digit driver was an internal error
    in the fuzz run; ``abc`` was taken as a driver)."""
    from conda import CondaError

    conda.reset(override_virtual_packages={"cuda": cuda})
    exporter = conda.manager.get_environment_exporter_by_format("variant-pixi-toml")
    with pytest.raises(CondaError) as caught:
        exporter.export(_environment(gpu_world.prefix))
    message = str(caught.value)
    assert message.startswith(
        "conda export --format variant-pixi-toml: conda's virtual package __cuda="
    )
    assert message.endswith(
        ": expected a CUDA version like 12.8 (check CONDA_OVERRIDE_* and override_virtual_packages)"
    )
    assert "this is a bug" not in message
    assert len(message) < 400
