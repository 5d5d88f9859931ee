"""Declared facts: ``--target K=V`` parsing and the value checks shared with override variables.

A *fact* is one virtual package (``cuda`` -> ``__cuda``) or one property of the target
(``platform``, ``python``). Values are checked here, in pure Python, with the shapes of
:mod:`variant_bridge.virtual_packages` that ``translate --from-conda`` uses too: rattler accepts
nonsense such as ``CONDA_OVERRIDE_CUDA=abc`` (it would export ``__cuda=abc``) and fails on
``١٢.٨`` or numbers past 64 bits with a message that blames detection.

An empty value declares the virtual package *absent* (like ``CONDA_OVERRIDE_CUDA=""``); for
``platform`` and ``python`` an empty value means "not declared" and is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from variant_bridge.environment import Source
from variant_bridge.errors import InvalidTarget, quote
from variant_bridge.virtual_packages import (
    KNOWN_PLATFORMS,
    VERSION_SHAPES,
    check_platform,
    did_you_mean,
)

__all__ = [
    "KNOWN_PLATFORMS",
    "TARGET_KEYS",
    "VIRTUAL_PACKAGE_KEYS",
    "Fact",
    "check_value",
    "fact_virtual_package",
    "parse_targets",
    "target_facts",
]

# Fact key -> virtual package name. Order is the order `detect` documents them in.
VIRTUAL_PACKAGE_KEYS: dict[str, str] = {
    "cuda": "__cuda",
    "cuda_arch": "__cuda_arch",
    "archspec": "__archspec",
    "glibc": "__glibc",
    "linux": "__linux",
    "osx": "__osx",
    "win": "__win",
}
TARGET_KEYS: tuple[str, ...] = (*VIRTUAL_PACKAGE_KEYS, "platform", "python")
_KEYS = ", ".join(TARGET_KEYS)

# pixi's friendly spellings and the raw virtual package names are accepted as key aliases.
_KEY_ALIASES = {
    "macos": "osx",
    "windows": "win",
    **{v[2:]: k for k, v in VIRTUAL_PACKAGE_KEYS.items()},
}

_PYTHON = re.compile(r"[0-9]{1,4}\.[0-9]{1,4}(?:\.[0-9]{1,4})?", re.ASCII)
_PYTHON_EXPECTED = "a Python version like 3.12"
_ARCHSPEC_EXPECTED = "an archspec microarchitecture name like haswell, or 0 for unknown"


@dataclass(frozen=True, slots=True)
class Fact:
    """One declared fact about a virtual package.

    :param name: the virtual package, e.g. ``__cuda``.
    :param value: its version (the *build* for ``__archspec``), or ``None`` when declared absent.
    :param source: where it was declared: ``--target``, or the variable's name.
    :param raw: the text as the user wrote it (for messages).
    """

    name: str
    value: str | None
    source: str
    raw: str = ""


def fact_virtual_package(fact: Fact) -> tuple[str, str, str]:
    """``(name, version, build)`` of a present fact (``__archspec`` carries its value as build)."""
    assert fact.value is not None
    if fact.name == "__archspec":
        return (fact.name, "1", fact.value)
    return (fact.name, fact.value, "0")


def check_value(key: str, value: str, *, where: str, empty_hint: bool = False) -> str:
    """Check *value* for fact *key*; return it stripped (``""`` stays ``""``: absent).

    :param where: how the user wrote the key, e.g. ``--target cuda`` or ``CONDA_OVERRIDE_CUDA``.
    :param empty_hint: mention that an empty value declares the package absent.
    :raises InvalidTarget: one line, e.g.
        ``--target cuda='abc': expected a CUDA version like 12.8``.
    """
    text = value.strip()
    if not text:
        return ""
    if key == "archspec":
        return _check_archspec(text, where=where, original=value)
    if key == "platform":
        return check_platform(value, where=where)
    if key == "python":
        if _PYTHON.fullmatch(text):
            return text
        raise InvalidTarget(f"{where}={quote(value)}: expected {_PYTHON_EXPECTED}")
    shape = VERSION_SHAPES[VIRTUAL_PACKAGE_KEYS[key]]
    if shape.matches(text):
        return text
    hint = f" (or empty to declare no {shape.noun})" if empty_hint else ""
    raise InvalidTarget(f"{where}={quote(value)}: expected {shape.expected}{hint}")


def _check_archspec(text: str, *, where: str, original: str) -> str:
    if text == "0":  # CEP 30: only the platform's architecture is known
        return text
    import archspec.cpu  # lazy: ~30 ms, only when an archspec value is declared

    names = archspec.cpu.TARGETS
    if text in names:
        return text
    fixed = text.replace("-", "_").lower()
    suggestion = f" (did you mean {fixed!r}?)" if fixed in names else did_you_mean(text, names)
    raise InvalidTarget(f"{where}={quote(original)}: expected {_ARCHSPEC_EXPECTED}{suggestion}")


def _canonical_key(raw: str) -> str | None:
    key = raw.strip().lower().replace("-", "_").removeprefix("__")
    key = _KEY_ALIASES.get(key, key)
    return key if key in TARGET_KEYS else None


def parse_targets(items: Mapping[str, str] | Iterable[str]) -> dict[str, str]:
    """Parse and check ``--target K=V`` items (or a mapping) into ``{key: value}``.

    Keys are canonical (:data:`TARGET_KEYS`; ``macos``, ``windows`` and ``__cuda``-style names are
    accepted as aliases). A virtual-package key with an empty value is kept with value ``""``: it
    declares the package absent. ``platform`` and ``python`` with an empty value are dropped.

    :raises InvalidTarget: malformed item, unknown key, invalid value, or one key given twice
        with different values.
    """
    pairs: list[tuple[str, str]] = []
    if isinstance(items, Mapping):
        pairs = [(str(k), str(v)) for k, v in items.items()]
    else:
        for item in items:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise InvalidTarget(
                    f"--target {quote(item)}: expected KEY=VALUE with KEY one of {_KEYS}"
                )
            pairs.append((key, value))
    result: dict[str, str] = {}
    for raw_key, raw_value in pairs:
        canonical = _canonical_key(raw_key)
        if canonical is None:
            raise InvalidTarget(
                f"--target {quote(raw_key.strip())}: unknown key; expected one of {_KEYS}"
                + did_you_mean(raw_key.strip().lower(), TARGET_KEYS)
            )
        key = canonical
        value = check_value(key, raw_value, where=f"--target {key}")
        if key in result and result[key] != value:
            raise InvalidTarget(
                f"--target {key} given twice with different values: {result[key]!r} and {value!r}"
            )
        result[key] = value
    for key in ("platform", "python"):
        if result.get(key) == "":
            del result[key]
    return result


def target_facts(targets: Mapping[str, str]) -> dict[str, Fact]:
    """The virtual-package facts among parsed *targets*, keyed by virtual package name."""
    facts: dict[str, Fact] = {}
    for key, value in targets.items():
        name = VIRTUAL_PACKAGE_KEYS.get(key)
        if name is not None:
            facts[name] = Fact(name, value or None, Source.TARGET, raw=value)
    return facts
