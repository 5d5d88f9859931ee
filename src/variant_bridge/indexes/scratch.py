"""Per-command scratch directories that a killed command leaves behind only until the next one.

A command killed with ``kill -9`` runs no cleanup, so its temporary directories would stay
forever. Each scratch directory here lives under one per-user root (``$TMPDIR/variant-bridge-
<uid>``, mode 0700, refused unless it is a real directory owned by the user) and holds a lock
file its command keeps locked (``flock``) while it runs. The lock dies with the process, so the
next command removes every directory whose lock it can take: the leftovers of killed commands,
never a running command's. A directory is made as ``.new-<pid>-...`` and renamed once its lock
is held: one left by a command killed in between is removed as soon as that pid is gone. Where
``fcntl`` is missing (Windows) or the root is unusable, a plain temporary directory is used
(removed at exit, not swept).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["scratch_dir", "scratch_root", "sweep"]

_LOCK = ".lock"
_NEW = ".new-"
"""A directory being set up, ``.new-<pid>-<random>``: renamed to its final name once locked."""
_ABANDONED_NEW_S = 3600
"""A directory still being set up (no lock yet) this old was abandoned, whoever made it."""
_ATTEMPTS = 5


def scratch_root() -> Path:
    """``$TMPDIR/variant-bridge-<uid>``: where every command's scratch directories live."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"variant-bridge-{uid}"


def _usable_root(root: Path) -> bool:
    """Create *root* (0700) or accept it only if it is our own real directory (not a link)."""
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o700)
    try:
        info = root.lstat()
    except OSError:
        return False
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and owned and not (info.st_mode & 0o077)


def _try_lock(path: Path) -> int | None:
    """An open descriptor of *path* holding its exclusive lock; ``None`` when another holds it."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _abandoned(entry: Path) -> bool:
    """Whether the directory *entry*, still being set up (``.new-<pid>-...``), was abandoned: the
    process named by its pid is gone (killed between creating and locking it), or it is older
    than an hour (a pid reused since, a name without a pid)."""
    pid = entry.name.removeprefix(_NEW).partition("-")[0]
    if pid.isdigit() and len(pid) < 10 and not _running(int(pid)):
        return True
    try:
        return time.time() - entry.stat().st_mtime > _ABANDONED_NEW_S
    except OSError:
        return False


def _running(pid: int) -> bool:
    """Whether a process *pid* exists (a zombie counts: its parent has not reaped it yet)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's (EPERM): it exists
        return True
    return True


def _new_dir(root: Path, kind: str) -> tuple[Path, int] | None:
    """A fresh directory under *root* named for *kind* and this process, with its lock held
    (``None`` when none could be made: another command's sweep kept removing it)."""
    for _ in range(_ATTEMPTS):
        new = Path(tempfile.mkdtemp(prefix=f"{_NEW}{os.getpid()}-", dir=root))
        try:
            fd = _try_lock(new / _LOCK)
        except FileNotFoundError:  # swept meanwhile (by a command that saw our pid as gone)
            continue
        if fd is None:
            continue
        final = root / f"{kind}-{os.getpid()}-{new.name.rpartition('-')[2]}"
        try:
            new.rename(final)
        except FileNotFoundError:
            os.close(fd)
            continue
        return final, fd
    return None


def sweep(root: Path) -> list[Path]:
    """Remove the scratch directories under *root* left by commands that no longer run.

    :returns: the directories removed.
    """
    removed: list[Path] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if entry.is_symlink() or not entry.is_dir():
            continue
        if entry.name.startswith(_NEW):
            if _abandoned(entry):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
            continue
        try:
            fd = _try_lock(entry / _LOCK)
        except OSError:
            continue  # removed meanwhile, or not ours to open
        if fd is None:
            continue  # a running command's
        try:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def scratch_dir(kind: str) -> Iterator[Path]:
    """A fresh directory for this command, removed when the block ends (or by the next command
    when this one is killed). Leftovers of killed commands are swept first.

    :param kind: a word in the directory's name (``install``, ``downloads``).
    """
    root = scratch_root()
    try:
        import fcntl  # noqa: F401 - only to know whether locks exist here
    except ImportError:
        usable = False
    else:
        usable = _usable_root(root)
    if not usable:
        with tempfile.TemporaryDirectory(prefix=f"variant-bridge-{kind}-") as plain:
            yield Path(plain)
        return
    sweep(root)
    made = _new_dir(root, kind)
    if made is None:
        with tempfile.TemporaryDirectory(prefix=f"variant-bridge-{kind}-") as plain:
            yield Path(plain)
        return
    final, fd = made
    try:
        yield final
    finally:
        shutil.rmtree(final, ignore_errors=True)
        os.close(fd)
