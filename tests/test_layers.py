"""The floor plan holds (docs/architecture.md): import-linter's contracts in pyproject.toml, checked
on the real import graph, cover every module, and the CLI and the facade start cheaply."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit

import variant_bridge

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(variant_bridge.__file__).resolve().parent
CONTRACTS = {
    c["id"]: c
    for c in tomlkit.parse((ROOT / "pyproject.toml").read_text()).unwrap()["tool"]["importlinter"][
        "contracts"
    ]
}


def top_level_modules() -> set[str]:
    return {
        path.stem if path.is_file() else path.name
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").is_file()
    }


def layer_members(layer: str) -> list[str]:
    return [name.strip() for name in layer.replace("|", ":").split(":")]


def test_lint_imports_keeps_every_contract() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run(
        [str(lint), "--no-cache", "--no-logo"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert proc.stdout.count(" KEPT") == len(CONTRACTS)


def test_every_module_has_a_layer() -> None:
    # import-linter's `exhaustive` says the same; this names the module that is missing.
    layers = CONTRACTS["layers"]["layers"]
    listed = {m for layer in layers for m in layer_members(layer)}
    assert top_level_modules() == listed


def test_every_core_module_is_held_to_the_pure_core_rules() -> None:
    # Everything below the adapters (from the first root layer down) must be in `pure-core`.
    layers = CONTRACTS["layers"]["layers"]
    first_core = next(i for i, layer in enumerate(layers) if layer == "indexes") + 1
    core = {f"variant_bridge.{m}" for layer in layers[first_core:] for m in layer_members(layer)}
    assert core == set(CONTRACTS["pure-core"]["source_modules"])


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


@pytest.mark.parametrize(
    ("modules", "heavy"),
    [
        # `variant-bridge --help` must not pay for rattler, archspec or the YAML tables.
        (["variant_bridge.cli"], {"rattler", "archspec", "yaml", "conda"}),
        # The facade and the value types import without any of the heavy dependencies.
        (["variant_bridge"], {"rattler", "archspec", "yaml", "click", "packaging"}),
        (
            ["variant_bridge.properties", "variant_bridge.translate.supported"],
            {"rattler", "archspec", "yaml", "click"},
        ),
        # `install`/`select` from find-links: no py-rattler package (detection loads only its
        # extension), no email parser (METADATA headers are read by indexes._headers), no
        # pypi-simple, no HTTP stack until a URL is fetched.
        (
            [
                "variant_bridge.cli.install",
                "variant_bridge.jobs.install",
                "variant_bridge.jobs.context",
                "variant_bridge.jobs.select",
            ],
            {"rattler", "email", "pypi_simple", "yaml", "http", "urllib3", "requests"},
        ),
    ],
)
def test_heavy_imports_wait_until_needed(modules: list[str], heavy: set[str]) -> None:
    assert not loaded_after_import(modules) & heavy


def test_detection_loads_rattlers_extension_not_the_package() -> None:
    # `import rattler` imports all of py-rattler (solver, index, networking, ...); detecting the
    # machine needs its native extension only (detect/_rattler.py).
    code = (
        "import json, sys\n"
        "from variant_bridge.detect.machine import detect_virtual_packages\n"
        "found = detect_virtual_packages()\n"
        "print(json.dumps([bool(found), 'rattler' in sys.modules, 'rattler.rattler' in sys.modules]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [True, False, True]
    # The package imported afterwards in the same process reuses the loaded extension.
    code = code + "\nimport rattler; print(len(rattler.VirtualPackage.detect()) > 0)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "True"


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
