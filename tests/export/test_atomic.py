"""Atomic writes: the old file survives any failure byte for byte, and no temporary is left."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from variant_bridge.errors import HashMismatch, NotRegularFileError
from variant_bridge.export import _atomic as atomic
from variant_bridge.export._atomic import CHUNK_SIZE, write_atomic

OLD = b"name: old\n" * 10
NEW = "name: new\n" * (3 * CHUNK_SIZE // 10)  # several chunks, so a failure can hit mid-write


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_writes_a_new_file_with_the_umask_mode(tmp_path: Path) -> None:
    target = tmp_path / "environment.yml"
    old_umask = os.umask(0o022)
    try:
        write_atomic(target, NEW)
    finally:
        os.umask(old_umask)
    assert target.read_text() == NEW
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert leftovers(tmp_path) == []


def test_replacing_keeps_the_mode_of_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "pixi.toml"
    target.write_bytes(OLD)
    target.chmod(0o600)  # a private manifest must not become world-readable
    write_atomic(target, NEW)
    assert target.read_text() == NEW
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_no_overwrite_refuses_and_leaves_the_file(tmp_path: Path) -> None:
    target = tmp_path / "environment.yml"
    target.write_bytes(OLD)
    with pytest.raises(FileExistsError):
        write_atomic(target, NEW, overwrite=False)
    assert target.read_bytes() == OLD
    assert leftovers(tmp_path) == []


def test_no_overwrite_catches_a_file_that_appears_during_the_write(tmp_path: Path) -> None:
    # The up-front check passes; another process creates the file before the final step.
    target = tmp_path / "environment.yml"

    def racing(_temporary: Path, written: int) -> None:
        if written >= CHUNK_SIZE and not target.exists():
            target.write_bytes(OLD)

    with pytest.raises(FileExistsError):
        write_atomic(target, NEW, overwrite=False, after_chunk=racing)
    assert target.read_bytes() == OLD  # the other writer's file is not clobbered
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("fail_after", "error"),
    [
        (CHUNK_SIZE, OSError(errno.ENOSPC, "No space left on device")),  # disk full mid-write
        (2 * CHUNK_SIZE, OSError(errno.EIO, "Input/output error")),  # I/O error later on
        (CHUNK_SIZE, KeyboardInterrupt()),  # Ctrl-C while writing
    ],
)
def test_a_failure_mid_write_leaves_the_old_file_byte_for_byte(
    tmp_path: Path, fail_after: int, error: BaseException
) -> None:
    target = tmp_path / "environment.yml"
    target.write_bytes(OLD)
    before = target.stat()

    def fail(temporary: Path, written: int) -> None:
        assert temporary.parent == tmp_path  # same directory, so the rename stays atomic
        if written >= fail_after:
            raise error

    with pytest.raises(type(error)):
        write_atomic(target, NEW, after_chunk=fail)
    assert target.read_bytes() == OLD
    assert target.stat().st_ino == before.st_ino  # not even replaced by a copy
    assert leftovers(tmp_path) == []


def test_a_symlink_is_followed_and_survives(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_bytes(OLD)
    link = tmp_path / "pixi.toml"
    link.symlink_to(real)
    write_atomic(link, NEW)
    assert link.is_symlink()
    assert real.read_text() == NEW


def test_an_unwritable_directory_is_an_oserror_and_changes_nothing(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    target = tmp_path / "environment.yml"
    target.write_bytes(OLD)
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(PermissionError):
            write_atomic(target, NEW)
    finally:
        tmp_path.chmod(0o700)
    assert target.read_bytes() == OLD


def special(tmp_path: Path, kind: str) -> Path:
    """A target that exists and is not a regular file."""
    path = tmp_path / "environment.yml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "link-to-fifo":
        os.mkfifo(tmp_path / "pipe")
        path.symlink_to(tmp_path / "pipe")
    return path


@pytest.mark.parametrize(
    ("kind", "overwrite", "what"),
    [
        ("fifo", True, "a FIFO"),  # `-o /dev/full --force` replaced the device with a file
        ("fifo", False, "a FIFO"),  # refused as what it is, not as "exists; pass --force"
        ("link-to-fifo", True, "a FIFO"),  # checked after resolving symbolic links
        ("directory", True, "a directory"),
    ],
)
def test_a_target_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, kind: str, overwrite: bool, what: str
) -> None:
    target = special(tmp_path, kind)
    before = os.stat(target).st_mode
    with pytest.raises(NotRegularFileError) as info:
        write_atomic(target, NEW, overwrite=overwrite)
    assert info.value.kind.startswith(what)
    assert os.stat(target).st_mode == before  # still the FIFO / directory it was
    assert leftovers(tmp_path) == []


def test_copy_is_byte_identical_and_returns_the_hash(tmp_path: Path) -> None:
    import hashlib

    source = tmp_path / "a-1.0-py3-none-any-cu126.whl"
    source.write_bytes(OLD * 10_000)  # several chunks
    target = tmp_path / "copies" / "a-1.0-py3-none-any.whl"
    target.parent.mkdir()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert atomic.copy_atomic(source, target, sha256=digest.upper()) == digest
    assert target.read_bytes() == source.read_bytes()


def test_a_copy_with_the_wrong_hash_changes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "wheel.whl"
    source.write_bytes(b"new bytes")
    target = tmp_path / "copy.whl"
    target.write_bytes(OLD)
    with pytest.raises(HashMismatch) as info:
        atomic.copy_atomic(source, target, sha256="00" * 32)
    assert info.value.expected == "00" * 32
    assert target.read_bytes() == OLD
    assert leftovers(tmp_path) == []


def test_a_fifo_is_never_read_as_a_copy_source(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFileError):
        atomic.copy_atomic(tmp_path / "pipe", tmp_path / "copy.whl")
    assert not (tmp_path / "copy.whl").exists()
