"""Hostile inputs to ``check`` and ``matrix`` (issue 22): a FIFO, a device or a directory where a
file is expected, a file larger than the cap, YAML or TOML nested 3,000 deep or holding 5,000-digit
numbers. Each is one ``error:`` line, exit 1, at once: never a hang, never a traceback.

The FIFO cases run the installed command in a process of its own with a deadline: were a read to
block, the deadline would fail the test instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

SCRIPT = Path(sys.executable).with_name("variant-bridge")
DEADLINE = 60  # seconds: a failure guard for a blocked read, not a timing assertion
WHEELS = ("maint", "variant-repack", "torch-2.10.0-variants.json")

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=DEADLINE,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def refused(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"error: {says}\n"


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "feedstock.yaml"
    os.mkfifo(path)
    return path


def test_a_fifo_as_conda_input_is_refused(fifo: Path, corpus: Path) -> None:
    wheels = corpus.joinpath(*WHEELS)
    refused(
        run("check", "--conda", fifo, "--wheels", wheels), f"{fifo}: a FIFO, not a regular file"
    )
    refused(run("matrix", "--from-conda", fifo), f"{fifo}: a FIFO, not a regular file")


def test_a_fifo_inside_a_ci_support_folder_is_refused(tmp_path: Path, corpus: Path) -> None:
    folder = tmp_path / ".ci_support"
    folder.mkdir()
    os.mkfifo(folder / "linux_64_.yaml")
    wheels = corpus.joinpath(*WHEELS)
    refused(
        run("check", "--conda", folder, "--wheels", wheels),
        f"{folder / 'linux_64_.yaml'}: a FIFO, not a regular file",
    )


def test_fifos_as_wheel_side_declaration_and_recipe_inputs(tmp_path: Path, corpus: Path) -> None:
    ci = corpus / "maint" / "pytorch-cpu"
    toml = tmp_path / "decl.toml"
    os.mkfifo(toml)
    refused(run("check", "--conda", ci, "--wheels", toml), f"{toml}: a FIFO, not a regular file")
    refused(run("matrix", toml), f"{toml}: a FIFO, not a regular file")
    refused(run("matrix", "--from-wheels", toml), f"{toml}: a FIFO, not a regular file")
    variants = tmp_path / "torch-1.0-variants.json"
    os.mkfifo(variants)
    refused(
        run("check", "--conda", ci, "--wheels", variants), f"{variants}: a FIFO, not a regular file"
    )
    recipe = tmp_path / "recipe" / "recipe.yaml"
    recipe.parent.mkdir()
    recipe.write_text("package: {name: x, version: '1'}\n")
    os.mkfifo(recipe.parent / "variants.yaml")
    refused(
        run("check", "--conda", recipe, "--wheels", corpus.joinpath(*WHEELS)),
        f"{recipe.parent / 'variants.yaml'}: a FIFO, not a regular file",
    )


def test_dev_zero_and_directories(tmp_path: Path, corpus: Path) -> None:
    zero = tmp_path / "z.yaml"
    zero.symlink_to("/dev/zero")
    refused(run("matrix", "--from-conda", zero), f"{zero}: a character device, not a regular file")
    refused(
        run("check", "--conda", corpus / "maint" / "pytorch-cpu", "--wheels", "/dev/zero"),
        "/dev/zero: a character device, not a regular file",
    )
    folder = tmp_path / "matrix.toml"
    folder.mkdir()
    refused(run("matrix", folder), f"{folder}: a directory, not a regular file")


def test_every_read_has_a_cap(cli: Cli, tmp_path: Path) -> None:
    big = tmp_path / "variants-big.yaml"
    with big.open("wb") as f:  # sparse: 65 MiB announced, nothing written
        f.truncate(65 * 1024 * 1024)
    result = cli("matrix", "--from-conda", str(big))
    assert result.exit_code == 1
    assert result.stderr == f"error: {big}: larger than 64 MiB\n"


DEEP = "[" * 3000 + "]" * 3000
HUGE = "9" * 5000


YAML_CASES = {
    "deep.yaml": (
        f"cuda_compiler_version: {DEEP}\n",
        "not a YAML variant configuration (line 1): exceeded maximum nesting depth",
    ),
    "block.yaml": (
        "\n".join(" " * i + f"k{i}:" for i in range(3000)) + " 1\n",
        "not a YAML variant configuration (line 1000): exceeded maximum nesting depth",
    ),
    "huge.yaml": (
        f"cuda_compiler_version:\n- {HUGE}\n",
        "not a YAML variant configuration: a number longer than 4300 digits",
    ),
}


@pytest.mark.parametrize("name", sorted(YAML_CASES))
def test_hostile_yaml_is_one_line(cli: Cli, tmp_path: Path, corpus: Path, name: str) -> None:
    text, says = YAML_CASES[name]
    path = tmp_path / name
    path.write_text(text)
    for args in (
        ("check", "--conda", str(path), "--wheels", str(corpus.joinpath(*WHEELS))),
        ("matrix", "--from-conda", str(path)),
    ):
        result = cli(*args)
        assert result.exit_code == 1
        assert result.stderr == f"error: {path}: {says}\n"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (f"[tool.variant-bridge.matrix]\nx = {DEEP}\n", "not TOML: nested too deeply"),
        (f"[tool.variant-bridge.matrix]\nx = {HUGE}\n",
         "not TOML: a number longer than 4300 digits"),
    ],
)  # fmt: skip
def test_hostile_toml_is_one_line(
    cli: Cli, tmp_path: Path, corpus: Path, text: str, says: str
) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    result = cli("matrix", str(path))
    assert (result.exit_code, result.stderr) == (1, f"error: {path}: {says}\n")
    result = cli("check", "--conda", str(corpus / "maint" / "pytorch-cpu"), "--wheels", str(path))
    assert (result.exit_code, result.stderr) == (1, f"error: {path}: {says}\n")


def test_a_glibc_version_no_number_can_hold(cli: Cli, tmp_path: Path, corpus: Path) -> None:
    """A real cupy .ci_support file whose quoted ``c_stdlib_version`` is a 5,000-digit number:
    one line naming it (it was an internal error in the fuzz run's ``check``)."""
    ci = corpus / "maint" / "cupy-13.6.0" / ".ci_support"
    source = (
        ci / "linux_64_cuda_compilercuda-nvcccuda_compiler_version12.9python3.12.____cpython.yaml"
    )
    path = tmp_path / source.name
    text = source.read_text()
    assert "c_stdlib_version:\n- '2.17'" in text
    path.write_text(
        text.replace("c_stdlib_version:\n- '2.17'", f"c_stdlib_version:\n- '{HUGE}.17'")
    )
    result = cli("check", "--conda", str(path), "--wheels", str(corpus.joinpath(*WHEELS)))
    assert result.exit_code == 1, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {path}")
    assert "c_stdlib_version '99999" in line
    assert line.endswith("is no glibc version like 2.17")
    assert "unexpected" not in line


def test_a_declared_glibc_no_number_can_hold(cli: Cli, tmp_path: Path) -> None:
    """The same in a matrix declaration's ``glibc``: one line naming it."""
    path = tmp_path / "pyproject.toml"
    path.write_text(
        '[project]\nname = "x"\nversion = "1.0"\n[tool.variant-bridge.matrix]\n'
        f'[[tool.variant-bridge.matrix.build]]\ncuda = "12.9"\nglibc = "{HUGE}.17"\n'
    )
    result = cli("matrix", str(path))
    assert result.exit_code == 1, result.stderr
    (line,) = result.stderr.splitlines()
    assert "glibc '99999" in line
    assert line.endswith("is no version like 2.17")


def test_a_dfg_python_no_number_can_hold(cli: Cli, tmp_path: Path, corpus: Path) -> None:
    """cudf's real dependencies.yaml with one ``py`` of its matrices a 5,000-digit number: the
    Pythons are ordered, then that one is refused naming it (ordering them was an internal
    error)."""
    text = (corpus / "maint" / "cudf-25.12" / "dependencies.yaml").read_text()
    assert 'py: "3.11"' in text
    path = tmp_path / "dependencies.yaml"
    path.write_text(text.replace('py: "3.11"', f'py: "3.{HUGE}"'))
    result = cli("matrix", "--from-dfg", str(path), "--project", "x", "--version", "1.0")
    assert result.exit_code == 1, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {path} (files.all, cuda ")
    assert line.endswith("(5002 characters) is no Python version like 3.12")
