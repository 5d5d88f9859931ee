"""docs/maintainers.md's examples, run as written on the real files they name.

Each console block marked ``<!-- verified: tests/test_maintainers_doc.py NAME -->`` is run by
bash, as a reader would paste it, in a folder where its file names are the real ones of the
corpus (``.ci_support/`` is pytorch-cpu-feedstock's final 2.10.0 folder, ...), with this venv's
``variant-bridge`` first on PATH. Its output must be the block's output (for an ``(excerpt)``:
its lines, in order, among the output's)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "maintainers.md"
MARK = re.compile(
    r"<!-- verified: tests/test_maintainers_doc\.py (?P<name>[\w-]+)(?P<excerpt> \(excerpt\))? -->"
    r"\n```console\n(?P<body>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)


def blocks() -> dict[str, tuple[bool, str]]:
    return {m["name"]: (bool(m["excerpt"]), m["body"]) for m in MARK.finditer(DOC.read_text())}


def commands(body: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for each ``$`` line of a block; a command goes on while
    its line ends with ``\\`` or ``do`` (a shell loop)."""
    found: list[tuple[str, list[str]]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            found[-1][1].append(lines[i])
            i += 1
            continue
        command = [lines[i][2:]]
        while command[-1].rstrip().endswith(("\\", "do")):
            i += 1
            command.append(lines[i])
        found.append(("\n".join(command), []))
        i += 1
    return found


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for name in [n for n in env if n.startswith(("CONDA_", "NV_VARIANT"))]:
        del env[name]
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def place(folder: Path, links: dict[str, Path]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, target in links.items():
        (folder / name).symlink_to(target)
    return folder


def check_block(name: str, cwd: Path) -> None:
    excerpt, body = blocks()[name]
    for command, expected in commands(body):
        done = run(command.split("  #", 1)[0], cwd)
        seen = (done.stdout + done.stderr).splitlines()
        if excerpt:
            position = 0
            for line in expected:
                assert line in seen[position:], f"{name}: {line!r} not in the output, in order"
                position = seen.index(line, position) + 1
        else:
            assert seen == expected, f"{name}: {command}"


def test_every_marked_block_is_tested() -> None:
    assert set(blocks()) == {
        "pytorch-linux-64", "pytorch-every-platform", "cupy", "demo-matrix", "refused",
    }  # fmt: skip


@pytest.mark.parametrize("name", ["pytorch-linux-64", "pytorch-every-platform"])
def test_pytorch_2_10_0_final(corpus: Path, tmp_path: Path, name: str) -> None:
    maint = corpus / "maint"
    folder = place(tmp_path, {
        ".ci_support": maint / "pytorch-cpu-2.10.0-final" / ".ci_support",
        "torch-2.10.0-variants.json": maint / "variant-repack" / "torch-2.10.0-variants.json",
    })  # fmt: skip
    check_block(name, folder)


def test_cupy_13_6_0(corpus: Path, tmp_path: Path) -> None:
    folder = place(tmp_path, {
        ".ci_support": corpus / "maint" / "cupy-13.6.0" / ".ci_support",
        "cupy-13.6.0-variants.json":
            corpus / "real/variants-index-test/v0.0.3/cupy/cupy-13.6.0-variants.json",
    })  # fmt: skip
    check_block("cupy", folder)


def test_the_demo_matrix(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs" / "examples" / "vbdemo", tmp_path / "vbdemo")
    check_block("demo-matrix", tmp_path / "vbdemo")


def test_matrices_that_must_be_refused(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        '[[build]]\nglibc = "2.17"\n\n[[build]]\ncuda = "12.6"\nsm = "9.0;10.0;12.0"\n'
    )
    (tmp_path / "bad-13.toml").write_text(
        '[[build]]\nglibc = "2.17"\n\n[[build]]\ncuda = "12.9"\nsm = "8.0"\n\n'
        '[[build]]\ncuda = "13.0"\nsm = "8.0"\nglibc = "2.17"\n'
    )
    check_block("refused", tmp_path)
