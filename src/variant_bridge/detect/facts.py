"""Declared facts: ``--target K=V``, ``CONDA_OVERRIDE_*`` and the provider's ``NV_*`` variables.

A *fact* is one virtual package (``cuda`` -> ``__cuda``) or one property of the target
(``platform``, ``python``). Which virtual packages can be declared, and the variables that declare
them, come from the mapping tables' ``overrides`` (semantics.md §1-2). Values are checked here, in
pure Python, with the shapes of :mod:`variant_bridge.virtual_packages` that ``translate
--from-conda`` uses too: rattler accepts nonsense such as ``CONDA_OVERRIDE_CUDA=abc`` and fails on
``١٢.٨`` or numbers past 64 bits with a message that blames detection.

An empty ``--target`` or ``CONDA_OVERRIDE_*`` value declares the virtual package *absent* (CEP 30);
an empty provider variable is *unset*, as in the provider (which tests its truthiness), and
``none`` declares the package absent. The provider's GPU variable also takes the CMake spelling
(``90``, ``120``). For ``platform`` and ``python`` an empty value means "not declared".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from variant_bridge import _archspec
from variant_bridge._values import value
from variant_bridge.environment import Source
from variant_bridge.errors import InvalidTarget, quote
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.virtual_packages import (
    TOOLKIT_SHAPE,
    VERSION_SHAPES,
    check_platform,
    did_you_mean,
)

__all__ = [
    "Fact",
    "check_value",
    "conda_override_facts",
    "fact_virtual_package",
    "normalize_sm_arch",
    "parse_targets",
    "provider_override_facts",
    "target_facts",
    "target_keys",
    "target_toolkit",
]

# pixi's friendly spellings of two keys.
_KEY_ALIASES = {"macos": "osx", "windows": "win"}
_PYTHON = re.compile(r"[0-9]{1,4}\.[0-9]{1,4}(?:\.[0-9]{1,4})?", re.ASCII)
_PYTHON_EXPECTED = "a Python version like 3.12"
_ARCHSPEC_EXPECTED = "an archspec microarchitecture name like haswell, or 0 for unknown"
# ASCII only: `\d` would take `٩٠` and hand rattler a version it cannot parse.
_CMAKE_ARCH = re.compile(r"([0-9]{1,2})([0-9])", re.ASCII)
# What `variant-bridge env` writes for "no CUDA": uv's provider rejects the value and switches
# itself off, so reading it as "absent" keeps the bridge and uv agreeing.
_PROVIDER_NONE = "none"


@value
class Fact:
    """One declared fact about a virtual package.

    :param name: the virtual package, e.g. ``__cuda``.
    :param value: its version (the *build* for ``__archspec``), or ``None`` when declared absent.
    :param source: where it was declared: ``--target``, or the variable.
    :param raw: the text as the user wrote it (for messages).
    """

    name: str
    value: str | None
    source: Source
    raw: str = ""


def _virtual_packages(tables: MappingTables) -> dict[str, str]:
    """Fact key -> virtual package (``cuda`` -> ``__cuda``): those the tables can override, in
    the order ``detect`` documents them."""
    return {o.virtual_package.removeprefix("__"): o.virtual_package for o in tables.overrides}


def _toolkit_keys(tables: MappingTables) -> dict[str, str]:
    """Fact key -> toolkit package (``cuda_version`` -> ``cuda-version``, ``cudatoolkit``)."""
    return {name.replace("-", "_"): name for name in tables.nvidia.toolkit_packages}


def target_keys(tables: MappingTables | None = None) -> tuple[str, ...]:
    """The ``--target`` keys: the virtual packages, the toolkit packages (``cuda_version``),
    then ``platform`` and ``python``."""
    tables = tables or load_tables()
    return (*_virtual_packages(tables), *_toolkit_keys(tables), "platform", "python")


def fact_virtual_package(fact: Fact) -> tuple[str, str, str]:
    """``(name, version, build)`` of a present fact (``__archspec`` carries its value as build)."""
    assert fact.value is not None
    if fact.name == "__archspec":
        return (fact.name, "1", fact.value)
    return (fact.name, fact.value, "0")


def check_value(name: str, value: str, *, where: str, empty_hint: bool = False) -> str:
    """Check *value* for virtual package *name* (``__cuda``), or ``platform`` / ``python``;
    return it stripped (``""`` stays ``""``: absent).

    :param where: how the user wrote the key, e.g. ``--target cuda`` or ``CONDA_OVERRIDE_CUDA``.
    :param empty_hint: mention that an empty value declares the package absent.
    :raises InvalidTarget: one line, e.g.
        ``--target cuda='abc': expected a CUDA version like 12.8``.
    """
    text = value.strip()
    if not text:
        return ""
    if name == "__archspec":
        return _check_archspec(text, where=where, original=value)
    if name == "platform":
        return check_platform(value, where=where)
    if name == "python":
        if _PYTHON.fullmatch(text):
            return text
        raise InvalidTarget(f"{where}={quote(value)}: expected {_PYTHON_EXPECTED}")
    if name == "toolkit":
        if TOOLKIT_SHAPE.matches(text):
            return text
        raise InvalidTarget(f"{where}={quote(value)}: expected {TOOLKIT_SHAPE.expected}")
    shape = VERSION_SHAPES[name]
    if shape.matches(text):
        return text
    hint = f" (or empty to declare no {shape.noun})" if empty_hint else ""
    raise InvalidTarget(f"{where}={quote(value)}: expected {shape.expected}{hint}")


def _check_archspec(text: str, *, where: str, original: str) -> str:
    if text == "0":  # CEP 30: only the platform's architecture is known
        return text
    names = _archspec.families()
    if text in names:
        return text
    fixed = text.replace("-", "_").lower()
    suggestion = f" (did you mean {fixed!r}?)" if fixed in names else did_you_mean(text, names)
    raise InvalidTarget(f"{where}={quote(original)}: expected {_ARCHSPEC_EXPECTED}{suggestion}")


def parse_targets(
    items: Mapping[str, str] | Iterable[str], *, tables: MappingTables | None = None
) -> dict[str, str]:
    """Parse and check ``--target K=V`` items (or a mapping) into ``{key: value}``.

    Keys are canonical (:func:`target_keys`; ``macos``, ``windows`` and ``__cuda``-style names
    are accepted as aliases). A virtual-package key with an empty value is kept with value ``""``:
    it declares the package absent. ``platform`` and ``python`` with an empty value are dropped.

    :raises InvalidTarget: malformed item, unknown key, invalid value, or one key given twice
        with different values.
    """
    tables = tables or load_tables()
    virtual = _virtual_packages(tables)
    toolkits = _toolkit_keys(tables)
    keys = target_keys(tables)
    result: dict[str, str] = {}
    for raw_key, raw_value in _pairs(items, keys):
        key = raw_key.strip().lower().replace("-", "_").removeprefix("__")
        key = _KEY_ALIASES.get(key, key)
        if key not in keys:
            raise InvalidTarget(
                f"--target {quote(raw_key.strip())}: unknown key; expected one of "
                + ", ".join(keys)
                + did_you_mean(raw_key.strip().lower(), keys)
            )
        kind = "toolkit" if key in toolkits else virtual.get(key, key)
        value = check_value(kind, raw_value, where=f"--target {key}")
        if key in result and result[key] != value:
            raise InvalidTarget(
                f"--target {key} given twice with different values: {result[key]!r} and {value!r}"
            )
        result[key] = value
    given = [key for key in toolkits if key in result]
    if len(given) > 1:
        raise InvalidTarget(f"--target {' and '.join(given)}: declare one toolkit")
    return {
        key: value for key, value in result.items() if value or key in virtual or key in toolkits
    }


def target_toolkit(
    targets: Mapping[str, str], *, tables: MappingTables | None = None
) -> tuple[str, str] | None:
    """``(package, version)`` of a toolkit declared among parsed *targets* (``version`` is ``""``
    when declared absent); ``None`` when none is declared."""
    for key, package in _toolkit_keys(tables or load_tables()).items():
        if key in targets:
            return package, targets[key]
    return None


def _pairs(
    items: Mapping[str, str] | Iterable[str], keys: tuple[str, ...]
) -> list[tuple[str, str]]:
    if isinstance(items, Mapping):
        return [(str(k), str(v)) for k, v in items.items()]
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidTarget(
                f"--target {quote(item)}: expected KEY=VALUE with KEY one of {', '.join(keys)}"
            )
        pairs.append((key, value))
    return pairs


def target_facts(
    targets: Mapping[str, str], *, tables: MappingTables | None = None
) -> dict[str, Fact]:
    """The virtual-package facts among parsed *targets*, keyed by virtual package name."""
    virtual = _virtual_packages(tables or load_tables())
    return {
        virtual[key]: Fact(virtual[key], value or None, Source.TARGET, raw=value)
        for key, value in targets.items()
        if key in virtual
    }


def conda_override_facts(
    environ: Mapping[str, str], *, tables: MappingTables | None = None
) -> dict[str, Fact]:
    """Facts declared by ``CONDA_OVERRIDE_*`` in *environ*, keyed by virtual package name.

    :raises InvalidTarget: e.g. ``CONDA_OVERRIDE_CUDA='abc': expected a CUDA version like 12.8
        (or empty to declare no CUDA)``.
    """
    facts: dict[str, Fact] = {}
    for override in (tables or load_tables()).overrides:
        raw = environ.get(override.conda)
        if raw is None:
            continue
        name = override.virtual_package
        value = check_value(name, raw, where=override.conda, empty_hint=True)
        facts[name] = Fact(name, value or None, Source.override(override.conda), raw=raw)
    return facts


def normalize_sm_arch(value: str, *, variable: str) -> str:
    """``9.0`` -> ``9.0``; CMake style ``90`` -> ``9.0``, ``120`` -> ``12.0``.

    :raises InvalidTarget: anything else, named by *variable*.
    """
    text = value.strip()
    if VERSION_SHAPES["__cuda_arch"].matches(text):
        return text
    match = _CMAKE_ARCH.fullmatch(text)
    if match:
        return f"{int(match[1])}.{match[2]}"
    raise InvalidTarget(
        f"{variable}={quote(value)}: expected a compute capability like 9.0 (or 90)"
    )


def provider_override_facts(
    environ: Mapping[str, str], *, tables: MappingTables | None = None
) -> dict[str, Fact]:
    """Facts declared by the NVIDIA provider's own variables (``NV_VARIANT_PROVIDER_FORCE_*``).

    :raises InvalidTarget: a value that is not a CUDA version / compute capability.
    """
    nvidia = (tables or load_tables()).nvidia
    facts: dict[str, Fact] = {}
    for override in nvidia.overrides:
        raw = environ.get(override.provider or "", "")
        if override.provider is None or not raw.strip():
            continue
        name, source = override.virtual_package, Source.override(override.provider)
        if raw.strip().lower() == _PROVIDER_NONE:
            facts[name] = Fact(name, None, source, raw=raw)
        elif name == nvidia.arch_package:
            arch = normalize_sm_arch(raw, variable=override.provider)
            # The provider offers no sm_arch below its lowest GPU; `variant-bridge env` writes
            # 0.0 for "CUDA but no known GPU architecture".
            major, minor = (int(n) for n in arch.split("."))
            present = (major, minor) >= nvidia.lowest_arch
            facts[name] = Fact(name, arch if present else None, source, raw=raw)
        else:
            value = check_value(name, raw, where=override.provider)
            facts[name] = Fact(name, value, source, raw=raw)
    return facts
