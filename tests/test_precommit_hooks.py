"""The pre-commit hooks the repository ships (.pre-commit-hooks.yaml): well formed, each entry is
the installed command, and the matrix hook fails when a generated file is out of date."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit
import yaml

ROOT = Path(__file__).resolve().parents[1]
HOOKS: list[dict[str, Any]] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
SCRIPTS = tomlkit.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
SCRIPT = Path(sys.executable).with_name("variant-bridge")


def test_hooks_are_well_formed() -> None:
    assert [h["id"] for h in HOOKS] == ["variant-bridge-check", "variant-bridge-matrix"]
    for hook in HOOKS:
        assert set(hook) >= {"id", "name", "entry", "language", "files"}
        assert hook["language"] == "python"  # pre-commit installs the repository with pip
        assert hook["pass_filenames"] is False  # the commands take their inputs as options
        assert hook["entry"].split()[0] in SCRIPTS
        re.compile(hook["files"])


@pytest.mark.parametrize(
    ("path", "hook"),
    [
        (".ci_support/linux_64_cuda_compiler_version12.9.yaml", "variant-bridge-check"),
        ("recipe/recipe.yaml", "variant-bridge-check"),
        ("dist/torch-2.10.0-variants.json", "variant-bridge-check"),
        ("pyproject.toml", "variant-bridge-matrix"),
        ("generated/variants.yaml", "variant-bridge-matrix"),
    ],
)
def test_the_files_that_trigger_each_hook(path: str, hook: str) -> None:
    (found,) = [h for h in HOOKS if h["id"] == hook]
    assert re.search(found["files"], path)


def test_the_matrix_hook_fails_on_a_stale_generated_file(tmp_path: Path) -> None:
    project = tmp_path / "vbdemo"
    shutil.copytree(ROOT / "docs" / "examples" / "vbdemo", project)
    (hook,) = [h for h in HOOKS if h["id"] == "variant-bridge-matrix"]
    command = [str(SCRIPT), *hook["entry"].split()[1:], "-o", "generated"]
    first = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr  # files written: pre-commit sees the changes
    again = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    assert again.returncode == 0  # up to date: the hook passes
    (project / "generated" / "variants.yaml").write_text("edited by hand\n")
    stale = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    assert stale.returncode == 1
    assert stale.stderr == (
        "error: generated/variants.yaml exists with other content; pass --force to replace it\n"
    )
