"""How the shell shows fetching: ``--verbose`` lines and a progress bar on stderr (a
:class:`~variant_bridge.jobs.specs.Reporter`), and the notes fetching made.

The progress bar is drawn only when stderr is a terminal. The options themselves are
``cli/_options.py``'s :func:`~variant_bridge.cli._options.fetch_options`.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Iterable
from typing import IO

import click

from variant_bridge.jobs.specs import Reporter

__all__ = ["echo_notes", "reporter"]


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


def reporter() -> Reporter:
    """Each request's line on stderr; a progress bar when stderr is a terminal."""
    err = sys.stderr
    progress = functools.partial(_Bar, err) if err.isatty() else None
    return Reporter(log=functools.partial(click.echo, err=True), progress=progress)


def echo_notes(notes: Iterable[str]) -> None:
    """``note:`` lines on stderr, after what stdout has so far."""
    sys.stdout.flush()
    for note in notes:
        click.echo(f"note: {note}", err=True)
