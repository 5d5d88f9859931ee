"""Layering, checked in fresh interpreters: the core imports without rattler, click or conda,
and the CLI imports nothing heavy until a command runs (start-up time matters, see bench/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import variant_bridge

PACKAGE = Path(variant_bridge.__file__).resolve().parent

# Layers 2 and 3 (architecture.md): everything else at the top of the package is layer 0 or 1.
UPPER_LAYERS = frozenset(
    {
        "__main__",
        "cli",
        "conda_plugin",
        "detect",
        "export",
        "indexes",
        "install",
        "maintainer",
        "metadata_io",
        "providers",
    }
)
# Must exist now; modules added later (select, ...) are found by scanning the package.
REQUIRED_CORE = (
    "variant_bridge",
    "variant_bridge.errors",
    "variant_bridge.properties",
    "variant_bridge.filenames",
    "variant_bridge.environment",
    "variant_bridge.translate.supported",
    "variant_bridge.metadata.model",
    "variant_bridge.metadata",
    "variant_bridge.mappings",
    "variant_bridge.translate",
)
BANNED_IN_CORE = ("rattler", "click", "conda")


def core_modules() -> list[str]:
    found = {
        f"variant_bridge.{path.stem if path.is_file() else path.name}"
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").is_file())
        and path.stem != "__init__"
        and (path.stem if path.is_file() else path.name) not in UPPER_LAYERS
    }
    return sorted(found | set(REQUIRED_CORE))


def loaded_after_import(modules: list[str]) -> set[str]:
    """Top-level names in sys.modules after importing *modules* in a fresh interpreter."""
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout))


def test_the_core_list_is_complete() -> None:
    # Guards the scan itself: a renamed layer-1 module must not silently drop out of the check.
    assert set(REQUIRED_CORE) <= set(core_modules())


@pytest.mark.parametrize("module", core_modules())
def test_core_module_imports_without_rattler_click_or_conda(module: str) -> None:
    loaded = loaded_after_import([module])
    assert not loaded & set(BANNED_IN_CORE), f"{module} pulls in {loaded & set(BANNED_IN_CORE)}"


def test_all_core_modules_together_import_without_rattler_click_or_conda() -> None:
    assert not loaded_after_import(core_modules()) & set(BANNED_IN_CORE)


def test_cli_defers_heavy_imports_until_a_command_runs() -> None:
    # `variant-bridge --help` must not pay for rattler, archspec or the YAML tables.
    loaded = loaded_after_import(["variant_bridge.cli"])
    assert "click" in loaded
    assert not loaded & {"rattler", "archspec", "yaml", "conda"}


@pytest.mark.parametrize("module", core_modules())
def test_public_modules_declare_all(module: str) -> None:
    imported = __import__(module, fromlist=["__all__"])
    assert isinstance(getattr(imported, "__all__", None), (list, tuple)), f"{module} has no __all__"


def test_python_dash_m_runs_the_cli() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "variant_bridge", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: variant-bridge [OPTIONS] COMMAND")
    assert "detect" in proc.stdout
    assert "translate" in proc.stdout
