"""The provider plugins' answers: the bridged view per namespace, the vocabulary, failures.

How an installer sees them (variantlib's loader, its subprocess) is tested in
test_variantlib_loader.py; here the functions behind the plugin methods are called in-process.
"""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from variant_bridge.detect import detect_environment
from variant_bridge.providers import (
    NAMESPACES,
    PLUGIN_APIS,
    Aarch64Plugin,
    AmdPlugin,
    BridgedView,
    FeatureConfig,
    FeatureConfigType,
    NvidiaPlugin,
    PluginType,
    X8664Plugin,
)
from variant_bridge.translate import supported_properties

GPU = {"CONDA_OVERRIDE_CUDA": "12.9", "CONDA_OVERRIDE_CUDA_ARCH": "8.6"}


@pytest.fixture
def view() -> BridgedView:
    """A fresh view for each test: what one plugin process would hold."""
    return BridgedView()


def supported_configs(namespace: str, *, environ: dict[str, str]) -> list[FeatureConfig]:
    return BridgedView().supported_configs(namespace, environ=environ)


def all_configs(namespace: str) -> list[FeatureConfig]:
    return BridgedView().all_configs(namespace)


def values(configs: list[FeatureConfigType], name: str) -> list[str]:
    return next((c.values for c in configs if c.name == name), [])


@pytest.mark.parametrize(
    ("environ", "lower_first", "lower_last", "sm_first"),
    [
        (GPU, "12.9", "11", "86_real"),  # driver policy without a prefix: provider shape
        ({**GPU, "CONDA_OVERRIDE_CUDA": "13.0"}, "13.0", "11", "86_real"),  # override ignored
        ({**GPU, "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "11.8"}, "12.9", "11", "86_real"),
        (
            {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.4"},
            "12.4",
            "11",
            None,
        ),  # NV_* lost
    ],
)
def test_nvidia_answers_from_overrides(
    environ: dict[str, str], lower_first: str, lower_last: str, sm_first: str | None
) -> None:
    configs = supported_configs("nvidia", environ=environ)
    lower = values(configs, "cuda_version_lower_bound")
    assert (lower[0], lower[-1]) == (lower_first, lower_last)
    assert (values(configs, "sm_arch") or [None])[0] == sm_first


def test_nvidia_follows_the_prefix_toolkit(prefix_126: Path) -> None:
    configs = supported_configs("nvidia", environ={**GPU, "CONDA_PREFIX": str(prefix_126)})
    lower = values(configs, "cuda_version_lower_bound")
    assert lower == ["12.6", "12.5", "12.4", "12.3", "12.2", "12.1", "12.0", "12"]
    assert values(configs, "cuda_version_upper_bound")[-1] == "12.10"  # above driver and toolkit


def test_answers_equal_detect_and_translate(prefix_126: Path) -> None:
    environ = {**GPU, "CONDA_PREFIX": str(prefix_126)}
    expected = supported_properties(detect_environment(env=environ)).as_dict()
    for namespace in NAMESPACES:
        got = {c.name: c.values for c in supported_configs(namespace, environ=environ)}
        assert got == expected.get(namespace, {}), namespace


@pytest.mark.parametrize(
    ("feature", "multi_value"),
    [
        ("cuda_version_lower_bound", False),  # single value per wheel
        ("sm_arch", True),  # a wheel lists several GPU architectures
    ],
)
def test_multi_value_follows_the_provider(feature: str, multi_value: bool) -> None:
    for configs in (supported_configs("nvidia", environ=GPU), all_configs("nvidia")):
        config = next(c for c in configs if c.name == feature)
        assert config.multi_value is multi_value


@pytest.mark.parametrize(
    "environ",
    [
        {},  # no GPU on this machine: nvidia unsupported
        {"CONDA_OVERRIDE_CUDA": ""},  # declared absent
        {"CONDA_OVERRIDE_CUDA": "12.9"},  # no __cuda_arch: no sm_arch
        {**GPU},
        {**GPU, "CONDA_OVERRIDE_ARCHSPEC": "x86_64_v2"},
        {**GPU, "CONDA_OVERRIDE_ARCHSPEC": "icelake"},
    ],
)
def test_no_namespace_without_cuda_and_every_value_is_valid(environ: dict[str, str]) -> None:
    for namespace in NAMESPACES:
        valid = {c.name: set(c.values) for c in all_configs(namespace)}
        for config in supported_configs(namespace, environ=environ):
            assert config.name in valid, (namespace, config.name)
            assert set(config.values) <= valid[config.name], (namespace, config.name)
    if not environ.get("CONDA_OVERRIDE_CUDA"):
        assert supported_configs("nvidia", environ=environ) == []


def test_x86_64_follows_the_archspec_override() -> None:
    configs = supported_configs("x86_64", environ={"CONDA_OVERRIDE_ARCHSPEC": "haswell"})
    assert values(configs, "level") == ["v3", "v2", "v1"]
    assert values(configs, "avx2") == ["on"]
    assert values(configs, "avx512f") == []


def test_all_configs_cover_the_provider_vocabulary() -> None:
    nvidia = {c.name: c.values for c in all_configs("nvidia")}
    assert list(nvidia) == ["cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch"]
    assert len(nvidia["cuda_version_lower_bound"]) == 5 * 22  # majors 11..15: 21 minors + major
    assert {"11.0", "15.20", "12", "12.9"} <= set(nvidia["cuda_version_upper_bound"])
    assert {"50_real", "129_real", "90_virtual", "120_virtual"} <= set(nvidia["sm_arch"])
    x86 = {c.name: c.values for c in all_configs("x86_64")}
    assert x86["level"] == ["v4", "v3", "v2", "v1"]
    assert {"avx2", "avx512f", "sse4_2"} <= set(x86)
    arm = {c.name: c.values for c in all_configs("aarch64")}
    assert {"8a", "8.2a", "9.0a"} <= set(arm["version"])
    assert {"sve2", "asimd"} <= set(arm)


def test_unknown_namespace_is_refused() -> None:
    with pytest.raises(ValueError, match="no variant-bridge plugin for namespace 'intel'"):
        all_configs("intel")  # no conda counterpart: the bridge answers nothing for it


@pytest.mark.parametrize(
    ("environ", "reason"),
    [
        ({"CONDA_OVERRIDE_CUDA": "abc"}, "CONDA_OVERRIDE_CUDA='abc'"),  # crashed the installer
        ({"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.x"}, "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"),
        ({"CONDA_PREFIX": "/nonexistent/env"}, "/nonexistent/env"),  # unreadable prefix
    ],
)
def test_failures_answer_nothing_with_one_line(
    view: BridgedView, environ: dict[str, str], reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert view.supported_configs("nvidia", environ={**GPU, **environ}) == []
    assert view.supported_configs("nvidia", environ={**GPU, **environ}) == []  # asked twice
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("variant-bridge provider nvidia: ")
    assert reason in err[0]


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the x86_64 namespace")
@pytest.mark.parametrize(
    ("variable", "off", "on"),
    [
        ("CONDA_OVERRIDE_CUDA", "nvidia", "x86_64"),
        ("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "nvidia", "x86_64"),
        ("CONDA_OVERRIDE_ARCHSPEC", "x86_64", "nvidia"),
    ],
)
def test_an_invalid_override_switches_off_only_its_namespace_and_says_so(
    view: BridgedView, variable: str, off: str, on: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``CONDA_OVERRIDE_CUDA=abc`` used to switch off every namespace, x86_64 included; now the
    namespaces it does not speak for answer as if it were unset, and the one it does says why."""
    environ = {**GPU, variable: "abc"}
    assert view.supported_configs(on, environ=environ) != []
    assert view.supported_configs(off, environ=environ) == []
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"variant-bridge provider {off}: {variable}='abc': expected ")
    assert line.endswith(f"no {off} variant is supported, so the null or non-variant wheel wins")


def test_an_invalid_variable_of_the_whole_environment_switches_off_every_namespace(
    view: BridgedView, capsys: pytest.CaptureFixture[str]
) -> None:
    environ = {**GPU, "CONDA_OVERRIDE_GLIBC": "x"}
    for namespace in ("nvidia", "x86_64"):
        assert view.supported_configs(namespace, environ=environ) == []
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "variant-bridge provider nvidia",
        "variant-bridge provider x86_64",
    ]
    assert all("CONDA_OVERRIDE_GLIBC='x'" in line for line in lines)


def test_success_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    assert supported_configs("nvidia", environ=GPU)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("namespace", "plugin"),
    [
        ("nvidia", NvidiaPlugin),
        ("amd", AmdPlugin),
        ("x86_64", X8664Plugin),
        ("aarch64", Aarch64Plugin),
    ],
)
def test_plugin_classes_meet_the_protocol(namespace: str, plugin: type) -> None:
    assert isinstance(plugin, PluginType)
    assert plugin.all_properties_compatible is False  # machine-dependent: no build-requires
    assert PLUGIN_APIS[namespace] == f"variant_bridge.providers.plugins:{plugin.__name__}"
    configs = plugin.get_all_configs()
    assert isinstance(configs, list)
    assert all(isinstance(c, FeatureConfigType) and isinstance(c.values, list) for c in configs)
