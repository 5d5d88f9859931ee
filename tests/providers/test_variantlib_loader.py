"""Our plugins as an installer meets them: loaded by variantlib 0.2.2's own plugin loader, which
runs them in a subprocess of ``sys.executable`` (the venv, where variant-bridge is installed with
its ``variant_plugins`` entry points), then ranks a variants.json with their answers.

If the entry points are missing, the project was installed before they were added:
``.venv/bin/python -m pip install -e . --no-deps``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from variantlib.api import get_variants_by_priority
from variantlib.plugins import loader as variantlib_loader

from variant_bridge.providers import NAMESPACES, PLUGIN_APIS, BridgedView

pytestmark = pytest.mark.slow  # every ranking starts Python subprocesses

VARIANTLIB_SCHEMA = "https://variants-schema.wheelnext.dev/v0.2.0.json"


def variants_json(variants: dict[str, Any], namespaces: list[str]) -> dict[str, Any]:
    """A variantlib 0.2.2 index file whose providers are our plugins."""
    return {
        "$schema": VARIANTLIB_SCHEMA,
        "default-priorities": {"namespace": namespaces},
        "providers": {
            ns: {"requires": ["variant-bridge"], "plugin-api": PLUGIN_APIS[ns]} for ns in namespaces
        },
        "variants": variants,
    }


def lower(value: str) -> dict[str, list[str]]:
    return {"cuda_version_lower_bound": [value]}


# variants.md §6.2's file, plus a CUDA 12.9 and a CUDA 11.8 build.
CUDA = variants_json(
    {
        "39bc0ddc": {"nvidia": {**lower("12.6"), "sm_arch": ["80_real", "90_real"]}},
        "cu128": {"nvidia": lower("12.8")},
        "cu129": {"nvidia": lower("12.9")},
        "cu118": {"nvidia": lower("11.8")},
        "null": {},
    },
    ["nvidia"],
)


@pytest.fixture(autouse=True)
def _no_variantlib_cache() -> Iterator[None]:
    # variantlib caches plugin answers per process by (plugin, command) only, not by environment.
    variantlib_loader.VARIANT_PROVIDER_CACHE_TABLE.clear()
    yield
    variantlib_loader.VARIANT_PROVIDER_CACHE_TABLE.clear()


@pytest.fixture
def plugin_stderr(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the plugin subprocesses wrote on stderr (variantlib captures it and drops it on
    success): the real ``subprocess.run`` is called and its output recorded."""
    captured: list[str] = []
    real_run = subprocess.run

    def recording_run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        result: subprocess.CompletedProcess[bytes] = real_run(*args, **kwargs)
        if result.stderr:
            captured.append(result.stderr.decode())
        return result

    monkeypatch.setattr(variantlib_loader.subprocess, "run", recording_run)
    return captured


def ranked(document: dict[str, Any]) -> list[str]:
    return [v.label for v in get_variants_by_priority(variants_json=document)]


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"CUDA": "12.9", "CUDA_ARCH": "9.0"}, ["cu129", "cu128", "39bc0ddc", "cu118", "null"]),
        ({"CUDA": "12.9", "CUDA_ARCH": "7.5"}, ["cu129", "cu128", "cu118", "null"]),  # sm ignored
        ({"CUDA": "12.6", "CUDA_ARCH": "9.0"}, ["39bc0ddc", "cu118", "null"]),  # newer builds kept
        ({"CUDA": "11.8"}, ["cu118", "null"]),  # no arch: every sm_arch build refused
        ({"CUDA": ""}, ["null"]),  # empty override = no driver
    ],
)
def test_ranking_follows_conda_overrides(
    environ: dict[str, str], expected: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in environ.items():
        monkeypatch.setenv(f"CONDA_OVERRIDE_{key}", value)
    assert ranked(CUDA) == expected


def test_ranking_follows_the_conda_prefix_toolkit(
    prefix_126: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.9")
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA_ARCH", "9.0")
    assert ranked(CUDA)[0] == "cu129"  # the driver alone, as uv would
    variantlib_loader.VARIANT_PROVIDER_CACHE_TABLE.clear()
    monkeypatch.setenv("CONDA_PREFIX", str(prefix_126))
    # cuda-version 12.6 in the prefix: newer minors and the CUDA 11 build are refused.
    assert ranked(CUDA) == ["39bc0ddc", "null"]


def test_two_namespaces_ranked_in_one_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.9")
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA_ARCH", "9.0")
    monkeypatch.setenv("CONDA_OVERRIDE_ARCHSPEC", "haswell")
    document = variants_json(
        {
            "cu126_v3": {"nvidia": lower("12.6"), "x86_64": {"level": ["v3"]}},
            "v4": {"x86_64": {"level": ["v4"]}},
            "v3": {"x86_64": {"level": ["v3"]}},
            "avx2": {"x86_64": {"avx2": ["on"]}},
            "avx512": {"x86_64": {"avx512f": ["on"]}},
            "null": {},
        },
        ["nvidia", "x86_64"],
    )
    # haswell is x86-64-v3 with avx2 but no avx512f; nvidia comes first by default-priorities.
    assert ranked(document) == ["cu126_v3", "v3", "avx2", "null"]


@pytest.mark.parametrize(
    ("variable", "value", "reason"),
    [
        ("CONDA_OVERRIDE_CUDA", "abc", "CONDA_OVERRIDE_CUDA='abc'"),  # crashed the installer
        ("CONDA_PREFIX", "/nonexistent/env", "/nonexistent/env"),  # unreadable prefix
    ],
)
def test_detection_failure_lets_the_null_variant_win(
    variable: str,
    value: str,
    reason: str,
    plugin_stderr: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA_ARCH", "9.0")
    monkeypatch.setenv(variable, value)
    assert ranked(CUDA) == ["null"]  # no exception, nothing CUDA chosen
    lines = "".join(plugin_stderr).splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("variant-bridge provider nvidia: ")
    assert reason in lines[0]


def test_entry_points_name_the_namespaces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.9")
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA_ARCH", "8.6")
    with variantlib_loader.EntryPointPluginLoader() as found:
        assert set(NAMESPACES) <= set(found.namespaces), "reinstall: pip install -e . --no-deps"
        assert {ns: found.plugin_api_values[ns] for ns in NAMESPACES} == PLUGIN_APIS
        configs = found.get_supported_configs()
    got = {c.name: c.values for c in configs["nvidia"].configs}
    expected = {c.name: c.values for c in BridgedView().supported_configs("nvidia")}
    assert got == expected
    assert got["sm_arch"][0] == "86_real"


def test_all_configs_pass_variantlib_validation() -> None:
    with variantlib_loader.DictPluginLoader(dict(PLUGIN_APIS)) as loader:
        everything = loader.get_all_configs()  # raises when a plugin answers nothing
    assert set(everything) == set(NAMESPACES)
    sm_arch = next(c for c in everything["nvidia"].configs if c.name == "sm_arch")
    assert sm_arch.multi_value is True
