"""AMD GPU names both ways: ``gfx942`` <-> ``__amdgpu_arch`` ``9.4.2`` (semantics.md §3a).

LLVM names an AMDGPU processor ``gfx`` + the ISA's major in decimal + its minor and stepping as
ONE hexadecimal digit each, while conda's ``__amdgpu_arch`` writes all three in decimal
(rattler): ``gfx90a`` is ``9.0.10``, ``gfx1151`` is ``11.5.1``. Pure: no table is read here; the
prefix comes from ``amd.yaml``.

>>> isa_of("gfx90a")
(9, 0, 10)
>>> gfx_name((9, 4, 2))
'gfx942'
"""

from __future__ import annotations

import re

from variant_bridge._patterns import Lazy

__all__ = ["ISA_SHAPE", "Isa", "gfx_name", "isa_of", "isa_text", "parse_isa"]

Isa = tuple[int, int, int]

# The major has no leading zero and at most 3 digits; minor and stepping one hex digit each.
_GFX = Lazy(r"([1-9][0-9]{0,2})([0-9a-f])([0-9a-f])", re.ASCII)
ISA_SHAPE = Lazy(r"(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})", re.ASCII)
"""``__amdgpu_arch``'s version: ``major.minor.stepping``, decimal (what rattler accepts)."""
_DIGIT = 16  # minor and stepping are one hex digit in a gfx name


def isa_of(name: str, prefix: str = "gfx") -> Isa | None:
    """The ISA a gfx name stands for (``gfx90a`` -> ``(9, 0, 10)``); ``None`` when *name* is not
    ``{prefix}{major}{hex minor}{hex stepping}`` (feature suffixes like ``:xnack+`` and generic
    targets like ``gfx9-generic`` are not processor names)."""
    if not name.startswith(prefix):
        return None
    match = _GFX.fullmatch(name[len(prefix) :])
    if match is None:
        return None
    return int(match[1]), int(match[2], _DIGIT), int(match[3], _DIGIT)


def gfx_name(isa: Isa, prefix: str = "gfx") -> str | None:
    """The gfx name of an ISA (``(11, 5, 1)`` -> ``gfx1151``); ``None`` when a minor or stepping
    does not fit one hex digit, so no processor name can say it."""
    major, minor, stepping = isa
    if major < 1 or not (0 <= minor < _DIGIT and 0 <= stepping < _DIGIT):
        return None
    return f"{prefix}{major}{minor:x}{stepping:x}"


def parse_isa(text: str) -> Isa | None:
    """``9.0.10`` -> ``(9, 0, 10)``; ``None`` unless three decimal numbers."""
    match = ISA_SHAPE.fullmatch(text.strip())
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3])


def isa_text(isa: Isa) -> str:
    return ".".join(map(str, isa))
