"""``Lazy``: a regular expression compiled by its first use instead of at import.

:func:`re.compile` runs re's parser and compiler, both Python: ~0.05-0.3 ms a pattern. A module
compiles its patterns once, at import, and a command imports many modules whose patterns it never
uses (a cold ``install --dry-run`` used 17 of the 50 its modules compiled). A module-level
``Lazy(r"...")`` costs nothing until a match needs it, then compiles once; each call after that
goes through one more method call (~0.1 us), so a pattern on a hot path is compiled as usual.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import AnyStr, Generic

__all__ = ["Lazy"]


class Lazy(Generic[AnyStr]):
    """``re.compile(pattern, flags)`` on first use; the matching methods of :class:`re.Pattern`
    that the modules use, with the same arguments and results."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern: AnyStr = pattern
        self.flags: int = flags
        self._compiled: re.Pattern[AnyStr] | None = None

    @property
    def compiled(self) -> re.Pattern[AnyStr]:
        """The compiled pattern (compiled now if it is the first use)."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
        return compiled

    def match(
        self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[AnyStr] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(
        self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[AnyStr] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def search(
        self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[AnyStr] | None:
        return self.compiled.search(string, pos, endpos)

    def findall(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> list[AnyStr]:
        found: list[AnyStr] = self.compiled.findall(string, pos, endpos)
        return found

    def sub(
        self,
        repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr],
        string: AnyStr,
        count: int = 0,
    ) -> AnyStr:
        return self.compiled.sub(repl, string, count)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Lazy):
            return (self.pattern, self.flags) == (other.pattern, other.flags)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.pattern, self.flags))

    def __repr__(self) -> str:
        return f"Lazy({self.pattern!r}, {self.flags})"
