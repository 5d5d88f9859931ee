"""The opt-in ``__cuda_arch`` virtual package: absent unless the setting asks; conda's override
conventions (``CONDA_OVERRIDE_CUDA_ARCH``, an empty value removes it, no detection when
overridden); the bridge's detection otherwise; never registered when another plugin provides
it; and ``conda variant`` reads it from conda. Without it, the GPU facts stock conda cannot know
are completed from the bridge's detection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conda_plugin.conftest import Conda
from variant_bridge.environment import Source, VirtualPackage

OPT_IN = "CONDA_PLUGINS_VARIANT_BRIDGE_CUDA_ARCH"


def _records(conda: Conda) -> dict[str, tuple[str, str]]:
    return {r.name: (r.version, r.build) for r in conda.manager.get_virtual_package_records()}


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """This machine's detection, as on a host with two GPUs (lowest compute capability 8.0);
    counts how often it runs."""
    from variant_bridge.detect import machine

    calls: list[int] = []

    def detect(*, cuda: str | None = None) -> tuple[VirtualPackage, ...]:
        calls.append(1)
        return (VirtualPackage("__cuda_arch", "8.0", "NVIDIA_A100", Source.DETECTED),)

    monkeypatch.setattr(machine, "detect_virtual_packages", detect)
    return calls


def test_absent_unless_opted_in(conda: Conda, gpu: list[int]) -> None:
    assert "__cuda_arch" not in _records(conda)
    assert gpu == []


def test_opted_in_the_bridges_detection_answers_lazily(
    conda: Conda, gpu: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OPT_IN, "true")
    (ours,) = [
        p for p in conda.manager.get_hook_results("virtual_packages") if p.name == "cuda_arch"
    ]
    assert gpu == []  # nothing detected until conda asks for the value
    assert _records(conda)["__cuda_arch"] == ("8.0", "NVIDIA_A100")
    assert ours.override_entity == "version"


@pytest.mark.parametrize(("given", "expected"), [("8.9", ("8.9", "0")), ("", None)])
def test_condas_override_conventions(
    conda: Conda, gpu: list[int], monkeypatch: pytest.MonkeyPatch, given: str, expected: Any
) -> None:
    monkeypatch.setenv(OPT_IN, "true")
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA_ARCH", given)
    assert _records(conda).get("__cuda_arch") == expected
    assert gpu == []  # an override decides without detecting


def test_the_condarc_override_and_setting_work_as_the_variables(
    conda: Conda, gpu: list[int]
) -> None:
    conda.reset(condarc_plugins={"variant_bridge_cuda_arch": True},
                override_virtual_packages={"cuda_arch": "9.0"})  # fmt: skip
    assert _records(conda)["__cuda_arch"] == ("9.0", "0")


def test_no_gpu_no_package(conda: Conda, monkeypatch: pytest.MonkeyPatch) -> None:
    from variant_bridge.detect import machine

    monkeypatch.setattr(machine, "detect_virtual_packages", lambda *, cuda=None: ())
    monkeypatch.setenv(OPT_IN, "true")
    assert "__cuda_arch" not in _records(conda)  # a machine without an NVIDIA GPU


@pytest.fixture
def other_provider(conda: Conda) -> None:
    """nvidia-virtual-packages, or a conda that ships __cuda_arch (conda/conda#16509)."""
    from conda.plugins.hookspec import hookimpl
    from conda.plugins.types import CondaVirtualPackage

    class NvidiaVirtualPackages:
        @hookimpl
        def conda_virtual_packages(self) -> Iterator[Any]:
            yield CondaVirtualPackage("cuda_arch", "7.5", "Tesla_T4", override_entity="version")

    conda.manager.register(NvidiaVirtualPackages())


@pytest.mark.usefixtures("other_provider")
def test_never_registered_when_another_plugin_provides_it(
    conda: Conda, gpu: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OPT_IN, "true")
    # Two registrations of one name would be conda's PluginError for every solve.
    assert _records(conda)["__cuda_arch"] == ("7.5", "Tesla_T4")
    assert gpu == []


def test_conda_variant_reads_it_from_conda_and_completes_it_otherwise(
    conda: Conda, gpu: list[int], monkeypatch: pytest.MonkeyPatch, prefix_126: Path
) -> None:
    conda.reset(override_virtual_packages={"cuda": "12.8"})

    def arch() -> tuple[str, str]:
        ran = conda.variant("detect", "-p", str(prefix_126), "--json")
        assert ran.code == 0, ran.err
        (found,) = [
            v for v in json.loads(ran.out)["virtual_packages"] if v["name"] == "__cuda_arch"
        ]
        return found["version"], found["source"]

    # Stock conda has no __cuda_arch plugin: the bridge's detection completes conda's facts.
    assert arch() == ("8.0", "detected")
    # Opted in, conda reports it (the same detection, conda's overrides applied).
    monkeypatch.setenv(OPT_IN, "true")
    assert arch() == ("8.0", "conda")
    conda.reset(override_virtual_packages={"cuda": "12.8", "cuda_arch": "9.0"})
    assert arch() == ("9.0", "conda")
