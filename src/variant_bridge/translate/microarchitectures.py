"""archspec's microarchitectures as a CPU table sees them: each one's generations and flags.

Microarchitecture facts come from archspec (imported lazily, computed once per table), never from
the tables: which names exist, their generic level or architecture version, their feature flags.
The forward translation reads a machine's profile; the reverse one collects the names that have a
property; both word an unknown value the same way (semantics.md §4).

A machine's profile comes from a snapshot of archspec's answers when that was generated from the
very database archspec would read now (:mod:`variant_bridge._archspec`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from variant_bridge import _archspec
from variant_bridge._values import value
from variant_bridge.errors import quote
from variant_bridge.mappings import CpuTable

if TYPE_CHECKING:
    from variant_bridge.properties import VariantProperty

__all__ = [
    "CpuProfile",
    "archspec_version",
    "flag_features",
    "generation_values",
    "names_with",
    "profile",
    "profiles",
    "snapshot_profiles",
    "unknown_reason",
    "value_reason",
]


@value
class CpuProfile:
    """What one microarchitecture supports: generation values (newest first) and flags."""

    name: str
    generic: str
    generations: tuple[str, ...]
    flags: tuple[str, ...]


def archspec_version() -> str:
    return _archspec.version()


def snapshot_profiles(
    table: CpuTable, *, environ: Mapping[str, str] = os.environ, database: Path | None = None
) -> Mapping[str, tuple[str, tuple[str, ...], tuple[str, ...]]] | None:
    """The snapshot's profiles for *table* when they are archspec's answers here and now (see
    :mod:`variant_bridge._archspec`) for this very table, else ``None``."""
    found = _archspec.snapshot(environ=environ, database=database)
    if found is None or found.TABLES.get(table.namespace) != repr(table):
        return None
    profiles: Mapping[str, tuple[str, tuple[str, ...], tuple[str, ...]]]
    profiles = found.PROFILES[table.namespace]
    return profiles


@functools.cache
def profiles(table: CpuTable) -> dict[str, CpuProfile]:
    """Every microarchitecture of the table's family, computed once from archspec."""
    import archspec.cpu

    return {
        name: _profile(table, target)
        for name, target in archspec.cpu.TARGETS.items()
        if target.family.name == table.archspec_family
    }


def _profile(table: CpuTable, target: Any) -> CpuProfile:
    """What archspec's *target* (of the table's family) supports."""
    import archspec.cpu

    generic = target.generic
    cap = archspec.cpu.TARGETS.get(table.archspec_name(table.max_value))
    if cap is not None and cap in generic.ancestors:
        generic = cap  # the provider ranks nothing above its max; cap like it does
    chain = [generic, *sorted(generic.ancestors, key=lambda a: -len(a.ancestors))]
    generations = tuple(
        v
        for v in (table.value_for(t.name) for t in chain if t.vendor == "generic")
        if v is not None
    )
    flags = tuple(f for f in flag_features(table) if f in target)
    return CpuProfile(target.name, generic.name, generations, flags)


@functools.cache
def flag_features(table: CpuTable) -> tuple[str, ...]:
    """Every flag feature: the provider's order first, then every other archspec flag of the
    table's family, sorted."""
    import archspec.cpu

    from variant_bridge.properties import FEATURE_RE

    known: set[str] = set()
    for t in archspec.cpu.TARGETS.values():
        if t.family.name == table.archspec_family:
            known |= set(t.features)
    extra = sorted(
        f
        for f in known - set(table.flag_order)
        if FEATURE_RE.fullmatch(f) and f != table.generation_feature
    )
    return (*table.flag_order, *extra)


@functools.cache
def profile(table: CpuTable, name: str) -> CpuProfile | str:
    """What microarchitecture *name* supports, or why it cannot be used (only *name*'s profile
    is computed, once: detection needs one, and all of them cost ~4 ms)."""
    known = snapshot_profiles(table)
    if known is not None and name in known:
        generic, generations, flags = known[name]
        return CpuProfile(name, generic, generations, flags)
    import archspec.cpu

    target = archspec.cpu.TARGETS.get(name)
    if target is not None and target.family.name == table.archspec_family:
        return _profile(table, target)
    if target is None:
        import difflib  # lazy: only on the error path

        close = difflib.get_close_matches(name, list(archspec.cpu.TARGETS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"{quote(name)} is not a microarchitecture archspec {archspec_version()} knows{hint}"
    return (
        f"{quote(name)} is an {target.family.name} microarchitecture, not {table.archspec_family}"
    )


def value_reason(table: CpuTable, prop: VariantProperty) -> str | None:
    """Why *prop*'s value is no value of its feature kind (a flag is only ever ``on``)."""
    if prop.feature != table.generation_feature and prop.value != table.flag_value:
        return f"CPU flag features take the value {table.flag_value!r}, not {quote(prop.value)}"
    return None


def names_with(table: CpuTable, prop: VariantProperty) -> tuple[str, ...]:
    """The microarchitectures that support *prop*, sorted."""
    if prop.feature == table.generation_feature:
        return tuple(sorted(n for n, p in profiles(table).items() if prop.value in p.generations))
    return tuple(sorted(n for n, p in profiles(table).items() if prop.feature in p.flags))


@functools.cache
def generation_values(table: CpuTable) -> tuple[str, ...]:
    """Every generation value, newest first: the provider's chain from its maximum down."""
    top = table.archspec_name(table.max_value)
    ranked = sorted(profiles(table).values(), key=lambda p: (p.name != top, -len(p.generations)))
    return tuple(dict.fromkeys(v for p in ranked for v in p.generations))


def unknown_reason(table: CpuTable, prop: VariantProperty) -> str:
    """Why no microarchitecture accepts *prop* (a value outside the vocabulary)."""
    if prop.feature == table.generation_feature:
        known = ", ".join(generation_values(table))
        return f"{quote(prop.value)} is not an {table.namespace} {prop.feature} (known: {known})"
    return (
        f"no {table.namespace} microarchitecture archspec {archspec_version()} knows has the "
        f"feature {quote(prop.feature)}"
    )
