"""The target interpreter, the wheel tags it accepts on an environment's platform, and why a
wheel's tags do not fit.

Tags are computed for the *target* (its version, ABI and the environment's platform and
``__glibc``), not for the interpreter variant-bridge runs on, so selecting for a pixi.lock of
another platform or a prefix with another Python works. Which subdir has which OS and
architecture, and the legacy manylinux names, are the mapping tables' ``platform.yaml``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.environment import Environment
from variant_bridge.errors import InvalidTarget, quote
from variant_bridge.filenames import WheelFilename
from variant_bridge.mappings import MappingTables, PlatformTable, load_tables

__all__ = [
    "CondaPlatform",
    "PythonSource",
    "TargetPython",
    "conda_platform",
    "platform_tags",
    "tag_mismatch",
    "target_tags",
]


class PythonSource(enum.Enum):
    """Where the target interpreter came from; the value is how output names it."""

    OPTION = "--python"
    """Given: a version (tags only) or an interpreter, probed."""
    PREFIX = "prefix"
    """The prefix's own interpreter (``bin/python``)."""
    ENVIRONMENT = "environment"
    """The version the prefix's records or the pixi.lock name, or ``--target python=``: no
    interpreter to run."""
    RUNNING = "running"
    """The interpreter variant-bridge runs on: a fact of this machine (``--strict`` refuses it)."""


@value
class TargetPython:
    """The target interpreter.

    :param version: its version, parsed once (:meth:`parse` from text).
    :param executable: the interpreter to install into; ``None`` when only its version is known
        (a pixi.lock, ``--python 3.12``).
    :param abiflags: ``t`` for a free-threaded CPython.
    :param source: where it came from (control flow reads this kind).
    :param origin: how output names where it came from when that says more than *source*
        (the lock read, ``PREFIX has no bin/python``).
    """

    version: Version
    executable: str | None = None
    implementation: str = "cpython"
    abiflags: str = ""
    source: PythonSource = PythonSource.RUNNING
    origin: str = ""

    @classmethod
    def parse(cls, text: str, **kwargs: Any) -> TargetPython:
        """A target whose version is *text* (``3.12``, ``3.12.4``); *kwargs* as the fields.

        :raises InvalidTarget: *text* is not a Python version.
        """
        try:
            version = Version(text)
        except ValueError:  # InvalidVersion, or a number past int()'s 4300 digits
            raise InvalidTarget(
                f"invalid Python version {quote(text)}: expected e.g. '3.12' or '3.12.4'"
            ) from None
        return cls(version, **kwargs)

    @property
    def major_minor(self) -> tuple[int, int]:
        release = (*self.version.release, 0)
        return release[0], release[1]

    def __str__(self) -> str:
        where = f" at {self.executable}" if self.executable else ""
        said = self.origin or self.source.value
        return f"Python {self.version}{self.abiflags}{where} ({said})"


def _linux_platforms(arch: str, env: Environment, table: PlatformTable) -> Iterator[str]:
    legacy = {alias.tag: alias for alias in table.tag_aliases.values()}
    glibc = env.glibc
    if glibc is not None:
        parts = glibc.version.split(".")
        if len(parts) >= 2 and parts[0] == "2" and parts[1].isdigit():
            for minor in range(int(parts[1]), 4, -1):
                yield f"manylinux_2_{minor}_{arch}"
                alias = legacy.get(f"manylinux_2_{minor}")
                if alias is not None and (alias.arches is None or arch in alias.arches):
                    yield f"{alias.name}_{arch}"
    yield f"linux_{arch}"


def platform_tags(env: Environment, *, tables: MappingTables | None = None) -> tuple[str, ...]:
    """Wheel platform tags the environment accepts, most preferred first.

    manylinux tags follow ``__glibc`` (none without it: conda has no musl virtual package);
    macOS tags follow ``__osx``.
    """
    table = (tables or load_tables()).platform
    info = table.subdirs.get(env.platform)
    arch = table.tag_arch(env.platform)
    if info is None or arch is None:
        return ()
    if info.os == "linux":
        return tuple(_linux_platforms(arch, env, table))
    if info.os == "osx":
        osx = env.virtual_package("__osx")
        parts = (osx.version if osx else "11.0").split(".")
        version = (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
        return tuple(mac_platforms(version, arch))
    if info.os == "win":
        return (f"win_{arch}",) if arch != "win32" else ("win32",)
    return ()


def target_tags(
    target: TargetPython, env: Environment, *, tables: MappingTables | None = None
) -> tuple[Tag, ...]:
    """The wheel tags of *target* on *env*'s platform, most preferred first."""
    major, minor = target.major_minor
    platforms = list(platform_tags(env, tables=tables))
    if target.implementation != "cpython":
        interpreter = f"{target.implementation[:2]}{major}{minor}"
        return tuple(compatible_tags((major, minor), interpreter, platforms))
    abi = f"cp{major}{minor}{target.abiflags}"
    return (
        *cpython_tags((major, minor), [abi], platforms),
        *compatible_tags((major, minor), f"cp{major}{minor}", platforms),
    )


# -- why a wheel's tags do not fit -------------------------------------------------------------


@value
class _Platform:
    """What a wheel platform tag says: its OS (as messages name it), its architecture, and the
    version of the OS (or libc) it needs, e.g. ``glibc >=2.28``."""

    system: str
    arch: str | None
    needs: str | None


def _read_platform(tag: str, table: PlatformTable) -> _Platform | None:
    """``manylinux2014_x86_64`` -> Linux, x86_64, ``glibc >=2.17``; ``None`` for a tag no rule
    reads (``any``, an unknown family)."""
    for alias in table.tag_aliases.values():
        if tag.startswith(alias.name + "_"):
            tag = alias.tag + tag[len(alias.name) :]
            break
    for rule in table.tag_rules:
        match = rule.regex.fullmatch(tag)
        if match is None:
            continue
        if rule.os is None:
            return None
        groups = match.groupdict()
        needs = None
        if rule.virtual_package is not None:
            what = "glibc" if rule.libc == "glibc" else table.operating_systems[rule.os].name
            needs = f"{what} >={int(groups['major'])}.{int(groups['minor'])}"
        return _Platform(
            table.operating_systems[rule.os].name, _arch(rule.arches, groups, table), needs
        )
    return None


@value
class CondaPlatform:
    """What a wheel platform tag means to conda: the subdirs it runs on and the virtual package
    (with its minimum version) it needs, e.g. ``manylinux_2_28_x86_64`` -> ``linux-64``,
    ``__glibc >=2.28``."""

    subdirs: tuple[str, ...]
    """Empty for ``any`` (every subdir)."""
    virtual_package: str | None
    version: tuple[int, int] | None = None
    libc: str | None = None

    @property
    def spec(self) -> str | None:
        """``__glibc >=2.28``, ``__osx >=11.0``, ``__linux``; ``None`` when nothing is needed."""
        if self.virtual_package is None:
            return None
        if self.version is None:
            return self.virtual_package
        return f"{self.virtual_package} >={self.version[0]}.{self.version[1]}"


def conda_platform(tag: str, *, tables: MappingTables | None = None) -> CondaPlatform | None:
    """The conda view of one wheel platform tag; ``None`` for a tag no rule of the tables
    reads (never guessed)."""
    table = (tables or load_tables()).platform
    for alias in table.tag_aliases.values():
        if tag.startswith(alias.name + "_"):
            tag = alias.tag + tag[len(alias.name) :]
            break
    for rule in table.tag_rules:
        match = rule.regex.fullmatch(tag)
        if match is None:
            continue
        if rule.os is None:
            return CondaPlatform((), None)
        groups = match.groupdict()
        arches = rule.arches or {}
        subdirs = (
            arches.get(groups.get("arch") or "", ())
            if rule.arches is not None
            else tuple(s for s, i in table.subdirs.items() if i.os == rule.os)
        )
        version = None
        if rule.virtual_package is not None:
            version = (int(groups["major"]), int(groups["minor"]))
            return CondaPlatform(tuple(subdirs), rule.virtual_package, version, rule.libc)
        # A tag of an OS without a versioned virtual package still needs that OS.
        return CondaPlatform(tuple(subdirs), f"__{rule.os}" if rule.libc is None else None,
                             None, rule.libc)  # fmt: skip
    return None


def _arch(
    arches: Mapping[str, tuple[str, ...]] | None,
    groups: Mapping[str, str | None],
    table: PlatformTable,
) -> str | None:
    """The tag's architecture by the name messages use (``amd64`` -> ``x86_64``): its subdir's,
    when it names one subdir; as the tag spells it otherwise (``universal2``, unknown ones)."""
    tag_arch = groups.get("arch")
    subdirs = (arches or {}).get(tag_arch or "", ())
    if len(subdirs) == 1:
        return table.subdirs[subdirs[0]].arch
    return tag_arch


def _join(items: Iterable[str]) -> str:
    return ", ".join(sorted(set(items)))


def tag_mismatch(
    wheel: WheelFilename, tags: Sequence[Tag], *, tables: MappingTables | None = None
) -> str:
    """Why none of *wheel*'s tags is among *tags* (the target's, most preferred first).

    e.g. ``no matching platform tag: wheel is cp312-cp312-manylinux_2_34_x86_64, target is
    cp312-cp312-manylinux_2_28_x86_64 (platform tag manylinux_2_34_x86_64 not accepted, needs
    glibc >=2.34)``.
    """
    text = f"{wheel.python_tag}-{wheel.abi_tag}-{wheel.platform_tag}"
    if not tags:
        return f"no matching platform tag: wheel is {text}, the target accepts no tags"
    expanded = wheel.tags
    if not {t.interpreter for t in expanded} & {t.interpreter for t in tags}:
        why = f"python tag {wheel.python_tag} not accepted"
    elif not {t.abi for t in expanded} & {t.abi for t in tags}:
        why = f"abi tag {wheel.abi_tag} not accepted"
    elif not {t.platform for t in expanded} & {t.platform for t in tags}:
        table = (tables or load_tables()).platform
        why = _platform_mismatch(
            wheel, {t.platform for t in expanded}, {t.platform for t in tags}, table
        )
    else:
        why = "this combination of tags not accepted"
    return f"no matching platform tag: wheel is {text}, target is {tags[0]} ({why})"


def _platform_mismatch(
    wheel: WheelFilename,
    wheel_platforms: set[str],
    target_platforms: set[str],
    table: PlatformTable,
) -> str:
    read = {p: _read_platform(p, table) for p in wheel_platforms | target_platforms}
    ours = [r for p in sorted(wheel_platforms) if (r := read[p]) is not None]
    theirs = [r for p in target_platforms if (r := read[p]) is not None]
    kinds = {(r.system, r.arch) for r in ours}
    target_kinds = {(r.system, r.arch) for r in theirs}
    # A glibc/macOS hint would mislead when no version of the OS makes the wheel fit.
    if kinds and target_kinds and not {k[0] for k in kinds} & {k[0] for k in target_kinds}:
        return f"built for {_join(k[0] for k in kinds)}, the target is " + _join(
            k[0] for k in target_kinds
        )
    if kinds and target_kinds and not kinds & target_kinds:
        return f"built for {_join(str(k[1]) for k in kinds)} CPUs, the target is " + _join(
            str(k[1]) for k in target_kinds
        )
    needs = [r.needs for r in ours if r.needs is not None]
    hint = f", needs {' or '.join(dict.fromkeys(needs))}" if needs else ""
    return f"platform tag {wheel.platform_tag} not accepted{hint}"
