"""Scratch directories: a killed command's are swept by the next one, a running one's are not."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from variant_bridge.indexes.scratch import scratch_dir, scratch_root

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")

HOLD = """
import sys, time
from variant_bridge.indexes.scratch import scratch_dir
with scratch_dir("install") as path:
    (path / "staged.whl").write_bytes(b"x")
    print(path, flush=True)
    time.sleep(60)
"""


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _holder(tmp: Path) -> tuple[subprocess.Popen[str], Path]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD], stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def _kill(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait()
    assert process.stdout is not None
    process.stdout.close()


def test_a_killed_commands_directory_is_swept_a_running_ones_is_not(tmp: Path) -> None:
    killed, left = _holder(tmp)
    _kill(killed)  # SIGKILL: no cleanup ran
    assert (left / "staged.whl").is_file()
    running, live = _holder(tmp)  # the next command sweeps it
    try:
        assert not left.exists()
        with scratch_dir("downloads") as mine:
            assert mine.parent == scratch_root() == tmp / f"variant-bridge-{os.getuid()}"
            assert not left.exists()  # swept
            assert live.is_dir()  # still in use
        assert not mine.exists()
    finally:
        _kill(running)


def test_a_root_others_could_write_to_is_not_used(tmp: Path) -> None:
    root = scratch_root()
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    planted = root / "install-1-x"
    planted.mkdir()
    with scratch_dir("install") as path:
        assert path.parent != root  # a plain temporary directory instead
    assert planted.is_dir()  # and nothing there is touched
