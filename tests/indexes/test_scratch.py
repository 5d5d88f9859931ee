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


def test_a_directory_being_set_up_when_its_command_was_killed_is_swept_at_once(
    tmp: Path,
) -> None:
    """Killed between creating its directory and locking it, a command leaves ``.new-<pid>-*``:
    the next command removes it as soon as that pid is gone, not an hour later; a live
    command's (or one whose pid is not known) stays."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    root = scratch_root()
    root.mkdir(mode=0o700)
    dead = root / f".new-{gone.stdout.strip()}-abc123"
    (dead / "staged").mkdir(parents=True)
    (dead / ".lock").write_bytes(b"")  # created, its lock released by the kill
    alive = root / f".new-{os.getpid()}-def456"
    alive.mkdir()
    unknown = root / ".new-ghi789"  # an older name without a pid: the hour still applies
    unknown.mkdir()
    with scratch_dir("install") as mine:
        assert not dead.exists()
        assert alive.is_dir()
        assert unknown.is_dir()
        assert mine.name.startswith(f"install-{os.getpid()}-")
    assert sorted(p.name for p in root.iterdir()) == sorted([alive.name, unknown.name])
