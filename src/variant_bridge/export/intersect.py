"""One version spec that means what several specs on one package mean together (their
intersection), for the host requirements of an export.

conda merges the lines of an environment.yml that name the same package by joining their version
specs with ``,``; since ``,`` binds tighter than ``|``, ``__cuda_arch >=8.0,<9|>=9.0,<10`` and
``__cuda_arch >=7.5,<8|>=9.0,<10`` merge into ``>=7.5,<8|>=9.0,<10,>=8.0,<9|>=9.0,<10``, which
admits a 7.5 GPU the first wheel does not run on. So the export writes one spec
per package: the intersection, computed here over numeric versions (drivers, compute
capabilities, glibc, levels) as unions of intervals, and written back in conda's syntax
(``>=9.0,<10``; alternatives joined by ``|``). A spec outside that grammar (a build string, a
``!=``, a non-numeric version) is not merged: ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Intersection", "intersect"]

_TERM_RE = re.compile(r"(?P<op>>=|<=|==|>|<|=)?(?P<version>[0-9]+(?:\.[0-9]+)*)(?P<star>\.\*)?")

Key = tuple[int, ...]


def _key(version: str) -> Key:
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()  # conda: 12 == 12.0
    return tuple(parts)


@dataclass(frozen=True)
class _Bound:
    version: str
    inclusive: bool

    @property
    def key(self) -> Key:
        return _key(self.version)


@dataclass(frozen=True)
class _Interval:
    low: _Bound | None  # None: unbounded
    high: _Bound | None

    def is_empty(self) -> bool:
        if self.low is None or self.high is None:
            return False
        if self.low.key != self.high.key:
            return self.low.key > self.high.key
        return not (self.low.inclusive and self.high.inclusive)

    def __and__(self, other: _Interval) -> _Interval:
        return _Interval(_max_low(self.low, other.low), _min_high(self.high, other.high))

    def text(self) -> str:
        low, high = self.low, self.high
        if low is not None and high is not None and low.key == high.key:
            return f"=={low.version}"
        parts = []
        if low is not None:
            parts.append((">=" if low.inclusive else ">") + low.version)
        if high is not None:
            parts.append(("<=" if high.inclusive else "<") + high.version)
        return ",".join(parts) or "*"


def _max_low(a: _Bound | None, b: _Bound | None) -> _Bound | None:
    if a is None or b is None:
        return a or b
    if a.key != b.key:
        return a if a.key > b.key else b
    return a if not a.inclusive else b


def _min_high(a: _Bound | None, b: _Bound | None) -> _Bound | None:
    if a is None or b is None:
        return a or b
    if a.key != b.key:
        return a if a.key < b.key else b
    return a if not a.inclusive else b


def _term(text: str) -> _Interval | None:
    if text.strip() in ("", "*"):
        return _Interval(None, None)
    match = _TERM_RE.fullmatch(text.strip())
    if match is None:
        return None
    op, version = match["op"] or "==", match["version"]
    if match["star"]:
        if op not in ("==", "="):
            return None
        parts = [int(p) for p in version.split(".")]
        upper = ".".join(map(str, [*parts[:-1], parts[-1] + 1]))
        return _Interval(_Bound(version, True), _Bound(upper, False))
    if op in ("==", "="):
        return _Interval(_Bound(version, True), _Bound(version, True))
    if op.startswith(">"):
        return _Interval(_Bound(version, op == ">="), None)
    return _Interval(None, _Bound(version, op == "<="))


def _union(spec: str) -> list[_Interval] | None:
    """*spec* (a version spec, ``>=8.0,<9|>=9.0,<10``) as intervals; ``None`` outside the
    grammar."""
    found: list[_Interval] = []
    for alternative in spec.split("|"):
        interval = _Interval(None, None)
        for term in alternative.split(","):
            one = _term(term)
            if one is None:
                return None
            interval = interval & one
        if not interval.is_empty():
            found.append(interval)
    return found


def _merged(intervals: list[_Interval]) -> list[_Interval]:
    """Sorted, with overlapping or touching intervals joined (``[8,9) | [9,10)`` -> ``[8,10)``)."""

    def start(i: _Interval) -> tuple[int, Key, int]:
        return (0, (), 0) if i.low is None else (1, i.low.key, 0 if i.low.inclusive else 1)

    out: list[_Interval] = []
    for interval in sorted(intervals, key=start):
        if out and _touches(out[-1], interval):
            last = out[-1]
            high = (
                None
                if last.high is None or interval.high is None
                else _max_high(last.high, interval.high)
            )
            out[-1] = _Interval(last.low, high)
        else:
            out.append(interval)
    return out


def _max_high(a: _Bound, b: _Bound) -> _Bound:
    if a.key != b.key:
        return a if a.key > b.key else b
    return a if a.inclusive else b


def _touches(a: _Interval, b: _Interval) -> bool:
    """Whether *b* (starting at or after *a*) overlaps or continues *a*."""
    if a.high is None or b.low is None:
        return True
    if a.high.key != b.low.key:
        return a.high.key > b.low.key
    return a.high.inclusive or b.low.inclusive


@dataclass(frozen=True)
class Intersection:
    """The spec that means all of them; ``empty`` when no version satisfies every one."""

    spec: str
    empty: bool = False


def intersect(specs: Sequence[str]) -> Intersection | None:
    """The intersection of version *specs* on one package, as one conda version spec;
    ``None`` when one of them is outside the grammar (see the module docstring)."""
    result: list[_Interval] | None = None
    for spec in specs:
        union = _union(spec)
        if union is None:
            return None
        result = union if result is None else [a & b for a in result for b in union]
        result = [i for i in result if not i.is_empty()]
    if result is None:
        return None
    if not result:
        return Intersection("", empty=True)
    return Intersection("|".join(i.text() for i in _merged(result)))
