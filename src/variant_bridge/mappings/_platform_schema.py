"""platform.yaml -> :class:`~variant_bridge.mappings.tables.PlatformTable`: subdirs, operating
systems and wheel platform-tag rules, each entry a record of readers (see ``_reading``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import Any

from variant_bridge.mappings._reading import (
    SUBDIR_RE,
    Opt,
    fail,
    fields,
    listed,
    mapping,
    optional,
    overrides,
    record,
    schema_version,
    strings,
    text,
    virtual_package,
)
from variant_bridge.mappings.tables import (
    OperatingSystem,
    PlatformTable,
    PlatformTagRule,
    SubdirInfo,
    TagAlias,
)

__all__ = ["platform_table"]


def _subdir(
    families: Collection[str], os_names: Collection[str] | None
) -> Callable[[str, Any], SubdirInfo]:
    def family(value: Any) -> str | None:
        name = optional(text(expected="an archspec family"))(value)
        if name is not None and families and name not in families:
            known = ", ".join(sorted(families))
            fail(f"{name!r} is not the archspec_family of any CPU table ({known}); use null")
        return name

    def read(name: str, value: Any) -> SubdirInfo:
        if SUBDIR_RE.fullmatch(name) is None:
            fail(f"invalid subdir name {name!r}: expected '<os>-<arch>'")

        def build(
            *, os: str, system: str, machines: tuple[str, ...], arch: str, cpu_family: str | None,
            platform_machine: str | None,
        ) -> SubdirInfo:  # fmt: skip
            lowered = tuple(m.lower() for m in machines)
            return SubdirInfo(name, os, system, lowered, arch, cpu_family, platform_machine)

        return record(
            build,
            os=text(choices=os_names),
            system=text(expected="a platform.system() name"),
            machines=strings(expected="a machine name"),
            arch=text(expected="an architecture name"),
            cpu_family=family,
            platform_machine=Opt(text(expected="a platform.machine() name")),
        )(value)

    return read


def _tag_alias(name: str, value: Any) -> TagAlias:
    def build(*, tag: str, arches: tuple[str, ...] | None) -> TagAlias:
        return TagAlias(name, tag, None if arches is None else frozenset(arches))

    return record(
        build,
        tag=text(expected="a platform tag prefix"),
        arches=optional(strings(expected="an architecture")),
    )(value)


def _regex(value: Any) -> str:
    pattern = text(expected="a regular expression")(value)
    try:
        re.compile(pattern)
    except re.error as e:
        fail(f"invalid regular expression {pattern!r}: {e}")
    return pattern


def _tag_rule(
    os_names: Collection[str] | None, subdirs: Collection[str] | None
) -> Callable[[str, Any], PlatformTagRule]:
    def subdir(value: Any) -> str:
        name = text(SUBDIR_RE, "a subdir")(value)
        if subdirs is not None and name not in subdirs:
            fail(f"unknown subdir {name!r} (not under subdirs)")
        return name

    arches = optional(mapping(lambda _, v: listed(subdir, "subdirs")(v)))

    def read(name: str, value: Any) -> PlatformTagRule:
        def build(
            *,
            pattern: str,
            os: str | None,
            libc: str | None,
            virtual_package: str | None,
            arches: Any,
        ) -> PlatformTagRule:
            groups = set(re.compile(pattern).groupindex)
            if libc == "glibc" and virtual_package is None:
                fail(
                    "a glibc rule needs the virtual package that carries the glibc version",
                    "virtual_package",
                )
            if virtual_package is not None and not {"major", "minor"} <= groups:
                fail(
                    "a rule with a virtual_package needs (?P<major>) and (?P<minor>) groups",
                    "pattern",
                )
            if arches is not None and "arch" not in groups:
                fail("arches need a (?P<arch>) group in the pattern", "arches")
            mapped = None if arches is None else MappingProxyType(arches)
            return PlatformTagRule(name, pattern, os, libc, virtual_package, mapped)

        return record(
            build,
            pattern=_regex,
            os=optional(text(choices=os_names)),
            libc=optional(text(choices=("glibc", "musl"))),
            virtual_package=optional(virtual_package),
            arches=arches,
        )(value)

    return read


def _keys(section: object) -> tuple[str, ...] | None:
    return tuple(map(str, section)) if isinstance(section, Mapping) else None


def platform_table(families: Collection[str]) -> Callable[[Any], PlatformTable]:
    """*families*: the CPU tables' archspec families (read even from broken CPU files, so that
    one broken CPU table neither hides nor invents problems here)."""

    def read(value: Any) -> PlatformTable:
        # Sections name each other by their raw keys, so that a problem in one entry does not
        # hide (or invent) problems in the entries that name it.
        doc = value if isinstance(value, Mapping) else {}
        os_names, subdirs = _keys(doc.get("os")), _keys(doc.get("subdirs"))

        def build(*, schema: int, subdirs: Any, os: Any, platform_tags: Any) -> PlatformTable:
            return PlatformTable(
                subdirs=MappingProxyType(subdirs),
                operating_systems=MappingProxyType(os),
                tag_aliases=MappingProxyType(platform_tags["aliases"]),
                tag_rules=tuple(platform_tags["rules"].values()),
            )

        return record(
            build,
            schema=schema_version,
            subdirs=mapping(_subdir(families, os_names)),
            os=mapping(
                lambda _, v: record(
                    OperatingSystem,
                    name=text(expected="a name for messages"),
                    overrides=overrides,
                    sys_platform=Opt(text(expected="a sys.platform value")),
                    os_name=Opt(text(expected="an os.name value")),
                )(v)
            ),
            platform_tags=record(
                fields,
                aliases=mapping(_tag_alias),
                rules=mapping(_tag_rule(os_names, subdirs)),
            ),
        )(value)

    return read
