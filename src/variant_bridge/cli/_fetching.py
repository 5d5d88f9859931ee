"""The options of every command that fetches (``select``, ``install``, ``export``), in one place.

``--cache-dir``/``--no-cache`` choose the content-addressed cache, ``--quiet`` silences notes and
progress, ``--verbose`` lists every URL fetched, and ``install``'s ``--no-require-hashes`` lets a
file without a listed sha256 be installed. :meth:`FetchOptions.downloads` builds the command's one
:class:`~variant_bridge.indexes.Downloads` from them (its scratch directory removed when the
command ends, or by the next one); :meth:`FetchOptions.echo_notes` prints what it noted. A
progress bar is drawn on stderr only when stderr is a terminal.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

from variant_bridge._values import value

if TYPE_CHECKING:
    from variant_bridge.indexes import Downloads
    from variant_bridge.indexes.transport import ProgressFactory

__all__ = ["TIMEOUT_VARIABLE", "FetchOptions", "fetch_options"]

F = TypeVar("F", bound=Callable[..., Any])

TIMEOUT_VARIABLE = "VARIANT_BRIDGE_HTTP_TIMEOUT"
"""Seconds a request may take before the bytes it received add time (default 60)."""
_FIELDS = ("cache_dir", "no_cache", "quiet", "verbose", "require_hashes")


class _Bar:
    """``  name  3.1/12.0 MiB  26%`` redrawn in place on a terminal, at most 10 times a second."""

    def __init__(self, stream: IO[str], name: str, total: int | None) -> None:
        self.stream = stream
        self.name = name if len(name) <= 48 else f"…{name[-47:]}"
        self.total = total
        self.done = 0
        self._drawn = 0.0

    def update(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if now - self._drawn >= 0.1:
            self._drawn = now
            self._draw()

    def _draw(self) -> None:
        mib = 1024 * 1024
        if self.total:
            percent = self.done * 100 // self.total
            shown = f"{self.done / mib:.1f}/{self.total / mib:.1f} MiB  {percent}%"
        else:
            shown = f"{self.done / mib:.1f} MiB"
        self.stream.write(f"\r  {self.name}  {shown}\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


@value
class FetchOptions:
    """What :func:`fetch_options` parsed."""

    cache_dir: Path | None
    no_cache: bool
    quiet: bool
    verbose: bool
    require_hashes: bool = True

    def cache_root(self) -> Path | None:
        """The cache directory to use; ``None`` with ``--no-cache``."""
        from variant_bridge.indexes.cache import default_cache_dir

        if self.no_cache:
            return None
        return self.cache_dir if self.cache_dir is not None else default_cache_dir(os.environ)

    def _deadline(self) -> float:
        from variant_bridge.indexes.transport import DEADLINE_S

        text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
        if not text:
            return DEADLINE_S
        try:
            seconds = float(text)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds < 1e9:
            raise click.UsageError(
                f"${TIMEOUT_VARIABLE}={text[:40]!r}: expected a number of seconds, e.g. 60"
            )
        return seconds

    def downloads(self) -> Downloads:
        """The command's one :class:`Downloads`: wheels land in the cache (unless
        ``--no-cache``); its scratch directory (find-links copies, files without a hash, every
        wheel with ``--no-cache``) is removed when the command ends, or by the next command
        when this one is killed (:mod:`variant_bridge.indexes.scratch`)."""
        from variant_bridge.indexes import Downloads
        from variant_bridge.indexes.cache import Cache
        from variant_bridge.indexes.scratch import scratch_dir
        from variant_bridge.indexes.transport import Transport

        err = sys.stderr
        log: Callable[[str], None] | None = None
        if self.verbose:
            log = functools.partial(click.echo, err=True)
        progress: ProgressFactory | None = None
        if not self.quiet and err.isatty():
            progress = functools.partial(_Bar, err)
        transport = Transport(deadline=self._deadline(), log=log, progress=progress)
        root = self.cache_root()
        ctx = click.get_current_context()
        ctx.call_on_close(transport.close)  # kept-alive connections, prefetching threads
        scratch = ctx.with_resource(scratch_dir("downloads"))
        return Downloads(
            scratch, transport=transport, cache=Cache(root) if root is not None else None
        )

    def echo_notes(self, downloads: Downloads) -> None:
        """Print what fetching noted (``note:`` lines on stderr) unless ``--quiet``."""
        if self.quiet:
            return
        sys.stdout.flush()
        for note in downloads.notes:
            click.echo(f"note: {note}", err=True)


def fetch_options(*, hashes: bool = False) -> Callable[[F], F]:
    """Add the fetching options; the command receives ``fetch``.

    :param hashes: also ``--no-require-hashes`` (commands that install).
    """

    def decorate(function: F) -> F:
        options = [
            click.option(
                "--cache-dir",
                type=click.Path(file_okay=False, path_type=Path),
                metavar="DIR",
                help="The download cache (shared across commands). Default: "
                "$VARIANT_BRIDGE_CACHE_DIR, else the user cache directory "
                "(~/.cache/variant-bridge on Linux).",
            ),
            click.option(
                "--no-cache", is_flag=True, help="Neither read nor write the download cache."
            ),
            click.option(
                "--quiet", "-q", is_flag=True, help="No notes and no progress bar on stderr."
            ),
            click.option(
                "--verbose", "-v", is_flag=True, help="List every URL fetched, on stderr."
            ),
        ]
        if hashes:
            options.append(
                click.option(
                    "--no-require-hashes",
                    "no_require_hashes",
                    is_flag=True,
                    help="Install a remote file whose index lists no sha256 (unverified). "
                    "Default: refuse it.",
                )
            )

        @functools.wraps(function)
        def wrapper(**kwargs: Any) -> Any:
            if kwargs.get("quiet") and kwargs.get("verbose"):
                raise click.UsageError("--quiet and --verbose contradict each other")
            if kwargs.get("no_cache") and kwargs.get("cache_dir") is not None:
                raise click.UsageError("--no-cache and --cache-dir contradict each other")
            require = not kwargs.pop("no_require_hashes", False)
            values = {name: kwargs.pop(name) for name in _FIELDS if name in kwargs}
            kwargs["fetch"] = FetchOptions(**values, require_hashes=require)
            return function(**kwargs)

        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate
