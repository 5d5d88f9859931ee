"""The plugin registers with conda's plugin manager through pluggy (every hook a conda hook
spec, with conda's signatures), yields conda's own dataclasses, feature-detects conda's fields,
and costs nothing at import."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conda_plugin.conftest import STANDIN, Conda


def test_every_hook_is_one_of_condas_and_registers_cleanly(conda: Conda) -> None:
    conda.manager.check_pending()  # a hookimpl without a conda spec would be reported here
    hooks = {impl.function.__name__ for caller in conda.manager.get_hookcallers(conda.hooks)
             for impl in caller.get_hookimpls() if impl.plugin is conda.hooks}  # fmt: skip
    assert hooks == {
        "conda_subcommands", "conda_health_checks", "conda_environment_exporters",
        "conda_post_commands", "conda_settings", "conda_virtual_packages",
    }  # fmt: skip


def test_the_results_are_condas_types_with_the_documented_fields(conda: Conda) -> None:
    (variant,) = conda.manager.get_hook_results("subcommands")
    assert (variant.name, variant.aliases, variant.configure_parser) == ("variant", ("vb",), None)
    check = conda.manager.get_health_checks()["variant-consistency"]
    assert check.fixer is not None
    assert "cuda-version" in (check.summary or "")
    (after,) = conda.manager.get_hook_results("post_commands")
    assert after.run_for == {"install", "update", "remove", "create", "env_create", "env_update"}
    settings = conda.manager.get_settings()
    assert sorted(settings) == [
        "variant_bridge_check_after_change", "variant_bridge_cuda_arch",
        "variant_bridge_extra_index_urls", "variant_bridge_find_links",
        "variant_bridge_index_url",
    ]  # fmt: skip
    # Not opted in: no virtual package of ours; conda's own are all there is.
    names = [p.name for p in conda.manager.get_hook_results("virtual_packages")]
    assert names == ["archspec", "cuda", "glibc", "linux", "unix"]


def test_settings_read_condarc_and_condas_variables(
    conda: Conda, monkeypatch: pytest.MonkeyPatch
) -> None:
    from variant_bridge.conda_plugin.settings import CUDA_ARCH, flag, sources

    assert (flag(CUDA_ARCH), sources()) == (False, sources().__class__())
    conda.reset(condarc_plugins={"variant_bridge_index_url": "https://example.org/simple/",
                                 "variant_bridge_find_links": ("/wheels",)})  # fmt: skip
    monkeypatch.setenv("CONDA_PLUGINS_VARIANT_BRIDGE_CUDA_ARCH", "true")
    spec = sources()
    assert (spec.index_url, spec.find_links, flag(CUDA_ARCH)) == (
        "https://example.org/simple/", ("/wheels",), True,
    )  # fmt: skip


def test_fields_older_condas_lack_are_left_out(
    conda: Conda, monkeypatch: pytest.MonkeyPatch
) -> None:
    """conda before 26.x: subcommands without aliases, health checks without a fixer, no
    environment exporters at all. The same plugin still registers and works."""
    types = sys.modules["conda.plugins.types"]

    @dataclasses.dataclass
    class OldSubcommand:
        name: str
        summary: str
        action: object
        configure_parser: object = None

    @dataclasses.dataclass
    class OldHealthCheck:
        name: str
        action: object

    monkeypatch.setattr(types, "CondaSubcommand", OldSubcommand)
    monkeypatch.setattr(types, "CondaHealthCheck", OldHealthCheck)
    monkeypatch.delattr(types, "CondaEnvironmentExporter")
    monkeypatch.delattr(types, "EnvironmentFormat")
    (variant,) = conda.manager.get_hook_results("subcommands")
    assert isinstance(variant, OldSubcommand)
    (check,) = conda.manager.get_hook_results("health_checks")
    assert isinstance(check, OldHealthCheck)
    # (conda's built-in stand-ins imported the type before; ours look it up and find none)
    exporters = conda.manager.get_hook_results("environment_exporters")
    assert [e.name for e in exporters if e.name.startswith("variant-")] == []


def test_importing_the_hooks_loads_nothing_heavy() -> None:
    # conda imports the hooks module on every start (`conda --help` included).
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(STANDIN)!r})\n"
        "import conda.plugins.types  # conda has loaded its own plugin types already\n"
        "before = set(sys.modules)\n"
        "import variant_bridge.conda_plugin.hooks\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, cwd=Path(__file__).parent)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout)
    assert loaded == [
        "variant_bridge", "variant_bridge._version", "variant_bridge.conda_plugin",
        "variant_bridge.conda_plugin.hooks",
    ]  # fmt: skip
