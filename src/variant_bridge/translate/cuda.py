"""The ``nvidia`` namespace's values: their grammar and the provider's vocabulary.

A CUDA version value is ``M`` or ``M.N`` (canonical numbers); an ``sm_arch`` value is
CMake-style ``{M}{N}_real`` / ``{M}{N}_virtual`` (the last digit is the minor: ``90`` -> 9.0,
``120`` -> 12.0). The vocabulary is what the NVIDIA provider lists for any machine, in its order;
the forward translation keeps the values its bounds admit (semantics.md §3).
"""

from __future__ import annotations

import functools
import re
from typing import Literal

from variant_bridge._patterns import Lazy
from variant_bridge.errors import quote
from variant_bridge.mappings import NvidiaFeature, NvidiaTable
from variant_bridge.translate.supported import NvidiaValue

__all__ = ["fmt", "gpu_generation", "major_minor", "nvidia_value", "vocabulary"]

# Shapes (numbers of any length) say what a value looks like; values checked against the table
# are read with at most four digits a number, so no int() ever sees a huge number.
_NUM = r"(?:0|[1-9][0-9]*)"
_CUDA_SHAPE = Lazy(rf"{_NUM}(?:\.{_NUM})?")
_CUDA_VALUE = Lazy(r"(?P<major>0|[1-9][0-9]{0,3})(?:\.(?P<minor>0|[1-9][0-9]{0,3}))?")
_SM_SHAPE = Lazy(r"[1-9][0-9]*[0-9]_(?:real|virtual)")
_SM_VALUE = Lazy(r"(?P<major>[1-9][0-9]{0,3})(?P<minor>[0-9])_(?P<kind>real|virtual)")
_MAX_DIGITS = 4
_LEADING_VERSION_RE = re.compile(r"(?P<major>[0-9]{1,9})(?:\.(?P<minor>[0-9]{1,9}))?")


def major_minor(text: str) -> tuple[int, int] | None:
    """``12.8`` / ``12.8.90`` -> (12, 8); ``12`` -> (12, 0); anything else (numbers of more
    than 9 digits included) -> None."""
    match = _LEADING_VERSION_RE.match(text)
    if match is None or (match.end() < len(text) and text[match.end()] != "."):
        return None
    return int(match["major"]), int(match["minor"] or 0)


def fmt(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def nvidia_value(table: NvidiaTable, feature: NvidiaFeature, value: str) -> NvidiaValue | str:
    """*value* of *feature*, read; or why it is no value the NVIDIA provider defines.

    Values outside the table's vocabulary are refused, not rendered: a bound such as
    ``99999999999999999999.1`` would give a spec no conda client parses (rattler's numbers are
    64-bit). GPU majors have no upper limit in the table (the provider ranks any GPU's own
    generation), only the format's.
    """
    if feature.rule == "sm_arch":
        return _sm_value(table, value)
    if _CUDA_SHAPE.fullmatch(value) is None:
        return f"{quote(value)} is not a CUDA version like '12.8' or '12'"
    match = _CUDA_VALUE.fullmatch(value)
    major, minor = (int(match["major"]), int(match["minor"] or 0)) if match else (-1, -1)
    if major not in table.driver_majors or minor not in table.driver_minors:
        return (
            f"{quote(value)} is not a CUDA version the NVIDIA provider defines "
            f"(majors {table.driver_majors}, minors {table.driver_minors})"
        )
    return NvidiaValue("version", major, minor)


def _sm_value(table: NvidiaTable, value: str) -> NvidiaValue | str:
    if _SM_SHAPE.fullmatch(value) is None:
        return (
            f"{quote(value)} is not a CUDA architecture like '90_real' or '90_virtual' "
            "(major digits, one minor digit, _real or _virtual)"
        )
    match = _SM_VALUE.fullmatch(value)
    if match is None or (int(match["major"]), int(match["minor"])) < table.lowest_arch:
        return (
            f"{quote(value)} is not a CUDA architecture the NVIDIA provider defines "
            f"(compute capability {fmt(table.lowest_arch)} or newer, majors of at most "
            f"{_MAX_DIGITS} digits)"
        )
    kind: Literal["real", "virtual"] = "real" if match["kind"] == "real" else "virtual"
    return NvidiaValue(kind, int(match["major"]), int(match["minor"]))


@functools.cache
def vocabulary(table: NvidiaTable, feature: NvidiaFeature) -> tuple[tuple[str, NvidiaValue], ...]:
    """Every value the provider defines for *feature*, in its order: newest first, a major's
    minors before the major alone; ``sm_arch``: every real value, then every virtual one."""
    if feature.rule == "sm_arch":
        arches = [
            (major, minor)
            for major in range(table.arch_majors.high, table.arch_majors.low - 1, -1)
            for minor in range(table.arch_minors.high, table.arch_minors.low - 1, -1)
        ]
        return tuple(
            (f"{major}{minor}_{kind}", NvidiaValue(kind, major, minor))
            for kind in ("real", "virtual")
            for major, minor in arches
        )
    values: list[tuple[str, NvidiaValue]] = []
    minors = table.driver_minors
    for major in range(table.driver_majors.high, table.driver_majors.low - 1, -1):
        values += [
            (f"{major}.{minor}", NvidiaValue("version", major, minor))
            for minor in range(minors.high, minors.low - 1, -1)
        ]
        values.append((str(major), NvidiaValue("version", major, 0)))
    return tuple(values)


def gpu_generation(major: int) -> tuple[tuple[str, NvidiaValue], ...]:
    """The ``sm_arch`` values of one GPU generation, as the provider orders them for a GPU of
    that major: SASS from the highest minor down, then PTX of the generation."""
    real = [
        (f"{major}{minor}_real", NvidiaValue("real", major, minor)) for minor in range(9, -1, -1)
    ]
    return (*real, (f"{major}0_virtual", NvidiaValue("virtual", major, 0)))
