"""The project as users get it: the built wheel and sdist, the rattler-build recipe (rendered with
py-rattler-build for every platform users have) and the dev environment.

The wheel is built offline (``python -m build --no-isolation`` with the test venv's hatchling), so
this runs with no network, like the rest of the suite; CI's packaging step (``.ci/package``)
builds isolated, installs with ``uv tool install`` and runs the same checks
(:mod:`tests.integration.dists`).
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import tomlkit
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from tests.integration.dists import check_sdist, check_wheel, declared_entry_points, same_wheel
from variant_bridge.mappings import TABLE_FILES as MAPPING_FILES

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT: dict[str, Any] = tomlkit.loads((ROOT / "pyproject.toml").read_text()).unwrap()
PROJECT = PYPROJECT["project"]
RECIPE = ROOT / "recipes" / "variant-bridge" / "recipe.yaml"

# PyPI name -> conda-forge name, where they differ (runtime and dev dependencies).
CONDA_NAMES = {"build": "python-build"}


def conda_name(pypi_name: str) -> str:
    name = str(canonicalize_name(pypi_name))
    return CONDA_NAMES.get(name, name)


def pyproject_requirements(requirements: list[str]) -> dict[str, SpecifierSet]:
    parsed = (Requirement(text) for text in requirements)
    return {conda_name(r.name): r.specifier for r in parsed}


def conda_requirements(entries: list[str]) -> dict[str, SpecifierSet]:
    """``name >=1,<2`` (a conda match spec with a plain version range) -> name and specifiers."""
    result = {}
    for entry in entries:
        name, _, spec = entry.strip().partition(" ")
        result[name] = SpecifierSet(spec.replace(" ", ""))
    return result


def render(text: str, context: dict[str, Any]) -> str:
    """The tiny part of rattler-build's Jinja that the recipe uses: ``${{ variable }}``."""
    return re.sub(r"\$\{\{\s*(\w+)\s*\}\}", lambda m: str(context.get(m[1], m[0])), text)


@pytest.fixture(scope="module")
def recipe() -> dict[str, Any]:
    raw = yaml.safe_load(RECIPE.read_text())
    return yaml.safe_load(render(RECIPE.read_text(), raw["context"]))


def build(out: Path, *what: str) -> Path:
    """``python -m build --no-isolation *what`` of the project into *out* (offline)."""
    pytest.importorskip("hatchling", reason="hatchling (test group) builds the wheel offline")
    command = [sys.executable, "-m", "build", *what, "--no-isolation", "--outdir", str(out)]
    proc = subprocess.run([*command, str(ROOT)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    (built,) = build(tmp_path_factory.mktemp("dist"), "--wheel").glob("variant_bridge-*.whl")
    return built


@pytest.mark.slow
def test_wheel_is_complete_and_carries_every_entry_point(wheel: Path) -> None:
    """Every script and entry-point group of pyproject.toml (the CLI, the pixi extension,
    variantlib's plugins, and conda's plugin group once it is declared), nothing from tests,
    metadata that validates with license, URLs, classifiers and the README."""
    assert check_wheel(wheel) == []
    scripts = declared_entry_points()["console_scripts"]
    assert scripts["pixi-variant"] == "variant_bridge.pixi_extension:run"


@pytest.mark.slow
def test_the_sdist_builds_the_same_wheel(wheel: Path, tmp_path: Path) -> None:
    # `python -m build` without --wheel: the sdist, then the wheel built from it.
    out = build(tmp_path, "--sdist", "--wheel")
    (sdist,) = out.glob("variant_bridge-*.tar.gz")
    (from_sdist,) = out.glob("variant_bridge-*.whl")
    assert check_sdist(sdist) == []
    assert same_wheel(from_sdist, wheel) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", MAPPING_FILES)
def test_wheel_ships_mapping_tables(wheel: Path, name: str) -> None:
    with zipfile.ZipFile(wheel) as zf:
        data = zf.read(f"variant_bridge/mappings/{name}")
    assert yaml.safe_load(data), f"{name} is empty in the wheel"


@pytest.mark.slow
def test_wheel_declares_console_script_and_dependencies(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = zf.read(f"{dist_info}/entry_points.txt").decode()
        metadata = zf.read(f"{dist_info}/METADATA").decode()
    assert "variant-bridge = variant_bridge.__main__:main" in entry_points
    # conda loads the plugin through this group (docs/conda.md); its module ships in the wheel.
    assert "[conda]\nvariant-bridge = variant_bridge.conda_plugin.hooks" in entry_points
    assert "variant_bridge/conda_plugin/hooks.py" in names
    assert "variant_bridge/__main__.py" in names
    assert "variant_bridge/py.typed" in names
    requires = [
        line.split(": ", 1)[1]
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: ") and "extra ==" not in line
    ]
    assert pyproject_requirements(requires) == pyproject_requirements(PROJECT["dependencies"])
    assert "Provides-Extra: maintainer" in metadata


PLATFORMS = ("linux-64", "osx-arm64", "win-64")


@pytest.fixture(scope="module")
def rendered() -> dict[str, dict[str, Any]]:
    """The recipe as py-rattler-build renders it for each platform (one noarch output each)."""
    rb = pytest.importorskip("rattler_build", reason="py-rattler-build (test group)")
    outputs = {}
    for platform in PLATFORMS:
        config = rb.RenderConfig(platform=rb.PlatformConfig(target_platform=platform))
        (item,) = rb.Stage0Recipe.from_file(str(RECIPE)).render(rb.VariantConfig(), config)
        outputs[platform] = item.recipe.to_dict()
    return outputs


@pytest.mark.parametrize("platform", PLATFORMS)
def test_recipe_renders_for_every_platform(
    rendered: dict[str, dict[str, Any]], platform: str
) -> None:
    recipe = rendered[platform]
    assert (recipe["package"]["name"], recipe["package"]["version"]) == (
        PROJECT["name"],
        PROJECT["version"],
    )
    assert recipe["build"]["noarch"] == "python"
    run = [entry for entry in recipe["requirements"]["run"] if not entry.startswith("python ")]
    assert conda_requirements(run) == pyproject_requirements(PROJECT["dependencies"])
    # The CLI and the pixi extension as executables; conda's and variantlib's entry points come
    # with the package's dist-info.
    scripts = [f"{name} = {target}" for name, target in PROJECT["scripts"].items()]
    assert recipe["build"]["python"]["entry_points"] == scripts
    assert "pixi-variant --help" in str(recipe["tests"])
    about = recipe["about"]
    assert (about["license"], about["license_file"]) == (
        PROJECT["license"],
        PROJECT["license-files"],
    )
    assert about["homepage"] == PROJECT["urls"]["Homepage"]


def test_recipe_run_requirements_match_pyproject(recipe: dict[str, Any]) -> None:
    run = [entry for entry in recipe["requirements"]["run"] if not entry.startswith("python ")]
    assert conda_requirements(run) == pyproject_requirements(PROJECT["dependencies"])


def test_recipe_constrains_the_optional_extras_as_pyproject(recipe: dict[str, Any]) -> None:
    # An extra is optional for conda users: run_constraints bound it without installing it.
    extras = [r for group in PROJECT["optional-dependencies"].values() for r in group]
    constraints = recipe["requirements"]["run_constraints"]
    assert conda_requirements(constraints) == pyproject_requirements(extras)
    # ... and the test group installs it, so CI runs the maintainer tests.
    assert set(pyproject_requirements(extras)) <= set(
        pyproject_requirements(PYPROJECT["dependency-groups"]["test"])
    )


def test_recipe_python_bound_matches_requires_python(recipe: dict[str, Any]) -> None:
    run = conda_requirements(recipe["requirements"]["run"])
    assert run["python"] == SpecifierSet(PROJECT["requires-python"])


def test_recipe_version_and_entry_point_match_pyproject(recipe: dict[str, Any]) -> None:
    assert recipe["package"]["name"] == PROJECT["name"]
    assert recipe["package"]["version"] == PROJECT["version"]
    assert recipe["source"]["path"] == "../.."
    assert recipe["build"]["noarch"] == "python"
    scripts = [f"{name} = {target}" for name, target in PROJECT["scripts"].items()]
    assert recipe["build"]["python"]["entry_points"] == scripts


def test_recipe_builds_with_the_pyproject_backend(recipe: dict[str, Any]) -> None:
    host = conda_requirements(
        [e for e in recipe["requirements"]["host"] if e.startswith("hatchling")]
    )
    assert host == pyproject_requirements(PYPROJECT["build-system"]["requires"])


def test_environment_yml_has_the_runtime_and_dev_dependencies() -> None:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["channels"] == ["conda-forge"]
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    (pip_section,) = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    declared = conda_requirements([d for d in conda if d != "pip" and not d.startswith("python ")])
    groups = PYPROJECT["dependency-groups"]
    wanted = pyproject_requirements(PROJECT["dependencies"] + groups["test"] + groups["lint"])
    from_pip = {conda_name(Requirement(p).name) for p in pip_section if not p.startswith("-")}
    # Every dependency is in exactly one place, with the same bounds when it is a conda one.
    assert set(declared) | from_pip == set(wanted)
    assert not set(declared) & from_pip
    assert {name: declared[name] for name in declared} == {name: wanted[name] for name in declared}
    assert "-e ." in pip_section
