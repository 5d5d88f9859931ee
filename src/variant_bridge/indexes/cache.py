"""A content-addressed cache of downloaded wheels and of the members read from remote ones.

Files are kept by the sha256 the index advertised for them, so a cache entry is found only when
the index names that hash again, and a wheel taken from the cache is hashed again before use
(:class:`~variant_bridge.indexes.Downloads`): a damaged or altered entry is replaced, never
installed. The layout, under the root::

    wheels/sha256/ab/abcdef.../torch-2.9.0-...-cu128.whl   a whole wheel, under its own name
    members/sha256/ab/abcdef....json                        METADATA and variant.json read from
                                                            that wheel with range requests

Writes go to a temporary name in the same directory and are renamed into place, so commands
running side by side share the cache safely. The root is the user's cache directory
(:func:`default_cache_dir`: ``$VARIANT_BRIDGE_CACHE_DIR``, else the platform's convention, as
``platformdirs`` places it), or ``--cache-dir``; ``--no-cache`` uses none.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from variant_bridge._json import loads
from variant_bridge._patterns import Lazy
from variant_bridge.errors import IndexReadError

__all__ = ["CACHE_DIR_VARIABLE", "Cache", "default_cache_dir"]

CACHE_DIR_VARIABLE = "VARIANT_BRIDGE_CACHE_DIR"
"""Overrides the default cache directory (``--cache-dir`` overrides both)."""
_APP = "variant-bridge"
_SHA256_RE = Lazy(r"[0-9a-f]{64}")


def default_cache_dir(environ: Mapping[str, str], platform: str = sys.platform) -> Path:
    """Where the cache lives: ``$VARIANT_BRIDGE_CACHE_DIR``, else the platform's user cache
    directory (the rules of ``platformdirs.user_cache_dir``):
    ``%LOCALAPPDATA%\\variant-bridge\\Cache`` on Windows, ``~/Library/Caches/variant-bridge`` on
    macOS, ``$XDG_CACHE_HOME/variant-bridge`` (default ``~/.cache/variant-bridge``) elsewhere."""
    explicit = environ.get(CACHE_DIR_VARIABLE, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    if platform == "win32":
        local = environ.get("LOCALAPPDATA", "").strip()
        base = Path(local) if local else Path.home() / "AppData" / "Local"
        return base / _APP / "Cache"
    if platform == "darwin":
        return Path.home() / "Library" / "Caches" / _APP
    xdg = environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / _APP


# A partial download older than this was left by a killed command (a live one writes on); the
# next command that writes the same entry removes it.
_STALE_PART_SECONDS = 3600


def _drop_stale_parts(directory: Path) -> None:
    now = time.time()
    for part in directory.glob(".*.part"):
        with contextlib.suppress(OSError):
            if now - part.stat().st_mtime > _STALE_PART_SECONDS:
                part.unlink()


class Cache:
    """The cache under *root* (created when first written)."""

    __slots__ = ("root",)

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"Cache({str(self.root)!r})"

    def _wheel_dir(self, sha256: str) -> Path:
        return self.root / "wheels" / "sha256" / sha256[:2] / sha256

    def wheel(self, sha256: str, filename: str) -> Path | None:
        """The cached wheel with that (advertised) hash, unchecked; ``None`` when absent."""
        if not _SHA256_RE.fullmatch(sha256):
            return None
        path = self._wheel_dir(sha256) / filename
        return path if path.is_file() else None

    @contextlib.contextmanager
    def adding_wheel(self, sha256: str, filename: str) -> Iterator[tuple[Path, Path]]:
        """``(temporary, final)`` paths: write the temporary file, and it is renamed to the final
        one when the block ends without an error (removed otherwise).

        :raises IndexReadError: the cache directory cannot be written.
        """
        directory = self._wheel_dir(sha256)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            _drop_stale_parts(directory)
            fd, name = tempfile.mkstemp(prefix=f".{filename}.", suffix=".part", dir=directory)
        except OSError as e:
            raise IndexReadError(
                f"cannot write the cache {self.root}: {e.strerror or e} (pass --cache-dir DIR or "
                "--no-cache)"
            ) from e
        os.close(fd)
        temporary, final = Path(name), directory / filename
        try:
            yield temporary, final
            os.replace(temporary, final)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()

    def discard_wheel(self, sha256: str, filename: str) -> None:
        """Remove a damaged entry."""
        with contextlib.suppress(OSError):
            (self._wheel_dir(sha256) / filename).unlink()

    def _members_file(self, sha256: str) -> Path:
        return self.root / "members" / "sha256" / sha256[:2] / f"{sha256}.json"

    def members(self, sha256: str) -> tuple[dict[str, bytes], dict[str, int]] | None:
        """The members read earlier from the wheel with that hash, and the sizes of those that
        were too large to read; ``None`` when not cached (or unreadable: read again)."""
        if not _SHA256_RE.fullmatch(sha256):
            return None
        path = self._members_file(sha256)
        try:
            data = loads(path.read_bytes(), source=str(path), error=IndexReadError)
            files = {str(k): base64.b64decode(v) for k, v in data["files"].items()}
            too_large = {str(k): int(v) for k, v in data["too_large"].items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexReadError):
            return None
        return files, too_large

    def add_members(
        self, sha256: str, files: Mapping[str, bytes], too_large: Mapping[str, int]
    ) -> None:
        """Keep the members read from the wheel with that hash (best effort: a cache that
        cannot be written costs a read next time, never the command)."""
        if not _SHA256_RE.fullmatch(sha256):
            return
        path = self._members_file(sha256)
        document = {
            "files": {k: base64.b64encode(v).decode("ascii") for k, v in files.items()},
            "too_large": dict(too_large),
        }
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{sha256}.", suffix=".part", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(document, out)
            os.replace(name, path)
