"""The header block of a core metadata file (``METADATA``, PEP 566), read as ``email``'s
``compat32`` header parser reads it, without importing the ``email`` package (its parser,
policies and the modules they pull in cost more at start-up than reading a wheel does).

A header is ``Name: value``; a line starting with a space or tab continues the one before; the
block ends at the first empty line or the first line that is neither (the body follows). Names
compare case-insensitively; a value keeps its continuation lines (line breaks included) and loses
the whitespace after the colon, as ``compat32`` keeps and drops them.
"""

from __future__ import annotations

import re

__all__ = ["Headers"]

# email.feedparser's headerRE, without its "From " envelope line (no METADATA has one).
_HEADER_RE = re.compile(r"[\041-\071\073-\176]*:")
# Lines end at \r\n, \r or \n only (str.splitlines also splits at form feeds and more).
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


class Headers:
    """The headers of one document, in order."""

    __slots__ = ("_items",)

    def __init__(self, text: str) -> None:
        items: list[list[str]] = []
        open_ = False  # whether a continuation line continues the last header
        for line in _LINE_RE.findall(text):
            if line[:1] in (" ", "\t"):
                if open_:  # else skipped, as email skips it
                    items[-1][1] += line
                continue
            match = _HEADER_RE.match(line)
            if match is None:
                break  # the empty line that ends the block, or the body's first line
            name = match.group()[:-1]
            open_ = bool(name)
            if name:  # ": value" (no name) is skipped and ends the header before it
                items.append([name.lower(), line[match.end() :].lstrip(" \t")])
        self._items = [(name, value.rstrip("\r\n")) for name, value in items]

    def get(self, name: str) -> str | None:
        """The first value of *name*; ``None`` when absent."""
        key = name.lower()
        return next((value for found, value in self._items if found == key), None)

    def get_all(self, name: str) -> list[str]:
        """Every value of *name*, in order."""
        key = name.lower()
        return [value for found, value in self._items if found == key]
