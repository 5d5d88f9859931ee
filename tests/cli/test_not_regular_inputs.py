"""A FIFO, a device or a directory where a command expects a file (issue 22): refused with one
line naming it, in every command, before anything reads it; never a hang.

The inputs are the real parts each command reads (a pixi workspace's manifest and lock, a
targets file, a wheel given by path, a ``*-variants.json`` beside it, a channel's
``repodata.json``, a prefix's history and dist-info files), each replaced by a FIFO or by a link
to ``/dev/zero``. The installed commands run in processes of their own with a deadline: were a
read to block, the deadline would fail the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.worlds.channel import Channel, base_packages, cuda_packages
from tests.worlds.pixi_workspace import PixiWorkspace, make_workspace
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, solve
from tests.worlds.wheels import make_release

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)"),
]

BIN = Path(sys.executable).parent
DEADLINE = 60  # seconds: a failure guard for a blocked read, not a timing assertion
KINDS = {"fifo": "a FIFO", "zero": "a character device"}


def run(program: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / program), *map(str, args)], capture_output=True, text=True,
        timeout=DEADLINE, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def make_special(path: Path, kind: str) -> Path:
    """Replace *path* (a file, or nothing yet) by a FIFO or a link to /dev/zero."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


def refused(done: subprocess.CompletedProcess[str], path: Path, kind: str) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ")
    assert f"{path}: {KINDS[kind]}, not a regular file" in line


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("kinds")
    wheels = root / "wheels"
    make_release(wheels, "tinyvar", "1.0", {
        "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"], "null": [],
    })  # fmt: skip
    channel = Channel(root / "channel").add([*cuda_packages(("12.6",)), *base_packages()])
    specs = ["cuda-version 12.6.*", "python"]
    records = solve([channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
    prefix = install_prefix(records, root / "env", root / "pkgs", specs)
    (prefix / "conda-meta" / "history").write_text("==> 2026-01-01 00:00:00 <==\n")
    return {"wheels": wheels, "channel": channel.path, "env": prefix}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> PixiWorkspace:
    return make_workspace(tmp_path_factory.mktemp("ws"), installed=())


def _copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copytree(source, target, symlinks=True)
    return target


Case = Callable[[dict[str, Path], PixiWorkspace, Path, str], tuple[Path, list[str | Path]]]


def _targets(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    path = make_special(tmp / "nodes.yaml", kind)
    return path, ["variant-bridge", "select", "tinyvar", "-f", w["wheels"], "--targets", path]


def _lock(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    path = make_special(tmp / "pixi.lock", kind)
    return path, ["variant-bridge", "detect", "--lockfile", path]


def _manifest(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    root = _copy(ws.root, tmp)
    path = make_special(root / "pixi.toml", kind)
    return path, ["pixi-variant", "detect", "--manifest-path", root]


def _workspace_lock(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    root = _copy(ws.root, tmp)
    path = make_special(root / "pixi.lock", kind)
    return path, ["pixi-variant", "detect", "--manifest-path", root / "pixi.toml"]


def _update(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    path = make_special(tmp / "pixi.toml", kind)
    return path, ["variant-bridge", "export", "--update", path, "--prefix", w["env"]]


def _wheel(command: str) -> Case:
    def case(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
        path = make_special(tmp / "tinyvar-1.0-py3-none-any.whl", kind)
        return path, ["variant-bridge", command, path, "-o", tmp / "out"]

    return case


def _variants_beside(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    wheels = _copy(w["wheels"], tmp)
    path = make_special(wheels / "tinyvar-1.0-variants.json", kind)
    wheel = wheels / "tinyvar-1.0-py3-none-any-cu126.whl"
    return path, ["variant-bridge", "index", wheel, "-o", tmp / "out"]


def _repodata(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    channel = _copy(w["channel"], tmp)
    path = make_special(channel / "noarch" / "repodata.json", kind)
    return path, ["variant-bridge", "solve", "cuda-version", "-c", channel, "--platform",
                  "linux-64"]  # fmt: skip


def _history(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    prefix = _copy(w["env"], tmp)
    path = make_special(prefix / "conda-meta" / "history", kind)
    return path, ["variant-bridge", "export", "--prefix", prefix, "-o", tmp / "environment.yml"]


def _metadata(w: dict[str, Path], ws: PixiWorkspace, tmp: Path, kind: str) -> Any:
    prefix = _copy(w["env"], tmp)
    info = prefix / "lib" / "python3.12" / "site-packages" / "straypkg-1.0.dist-info"
    info.mkdir(parents=True)
    path = make_special(info / "METADATA", kind)
    return path, ["variant-bridge", "detect", "--prefix", prefix]


CASES = {
    "select --targets FILE": _targets,
    "detect --lockfile FILE": _lock,
    "pixi-variant: the workspace's pixi.toml": _manifest,
    "pixi-variant: the workspace's pixi.lock": _workspace_lock,
    "export --update FILE": _update,
    "index WHEEL": _wheel("index"),
    "convert WHEEL": _wheel("convert"),
    "index: the *-variants.json beside a wheel": _variants_beside,
    "solve -c: the channel's repodata.json": _repodata,
    "export --prefix: conda-meta/history": _history,
    "detect --prefix: a dist-info's METADATA": _metadata,
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("case", list(CASES))
def test_refused_with_one_line_never_a_hang(
    world: dict[str, Path], workspace: PixiWorkspace, tmp_path: Path, case: str, kind: str
) -> None:
    path, argv = CASES[case](world, workspace, tmp_path, kind)
    program, *args = argv
    done = run(str(program), *args)
    if case == "export --update FILE":  # the writer's own refusal, which names the file too
        assert done.returncode == 1, done.stderr
        assert f"it is {KINDS[kind]}" in done.stderr
        return
    refused(done, path, kind)
