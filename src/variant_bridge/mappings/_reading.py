"""The reading machinery of the mapping tables' schema: readers that raise key-path problems.

A reader takes a decoded YAML value and returns the typed value or raises :class:`Invalid` with
``(key path, message)`` pairs; :func:`record` declares a mapping's keys with a reader each and
collects the problems of every key, so the key path is built up as problems propagate (the
``context`` of packaging's ``PylockValidationError``, without stopping at the first).
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, NoReturn, TypeVar, cast

from variant_bridge._values import value
from variant_bridge.mappings.tables import IntRange, OverrideVariable
from variant_bridge.properties import FEATURE_RE, NAMESPACE_RE, VALUE_RE

__all__ = [
    "CONDA_NAME_RE",
    "SCHEMA",
    "SUBDIR_RE",
    "Invalid",
    "Opt",
    "Problems",
    "Reader",
    "boolean",
    "conda_name",
    "fail",
    "feature_name",
    "fields",
    "got",
    "int_range",
    "kind_of",
    "listed",
    "major_minor",
    "mapping",
    "namespace",
    "optional",
    "overrides",
    "property_value",
    "record",
    "schema_version",
    "strings",
    "template",
    "text",
]

_T = TypeVar("_T")
Reader = Callable[[Any], Any]

# Problems with key paths
# --------------------------------------------------------------------------------------------


class Invalid(Exception):
    """Problems in one value, as ``(key path relative to the value, message)`` pairs."""

    def __init__(self, problems: Iterable[tuple[str, str]]) -> None:
        super().__init__()
        self.problems = tuple(problems)


def fail(message: str, path: str = "") -> NoReturn:
    raise Invalid([(path, message)])


def _join(key: str, path: str) -> str:
    if not path:
        return key
    return key + path if path.startswith("[") else f"{key}.{path}"


class Problems:
    """Collects the problems of several values, each under its key (``[0]`` joins without a
    dot), and raises them together."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    def read(self, key: str, value: object, read: Callable[[Any], _T]) -> _T | None:
        """``read(value)``, or ``None`` with its problems recorded under *key*."""
        try:
            return read(value)
        except Invalid as e:
            self.problems += [(_join(key, path), message) for path, message in e.problems]
            return None

    def add(self, key: str, message: str) -> None:
        self.problems.append((key, message))

    def done(self) -> None:
        if self.problems:
            raise Invalid(self.problems)


def kind_of(value: object) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), repr(value)
    )


def got(value: object) -> str:
    return kind_of(value) if isinstance(value, (dict, list)) or value is None else repr(value)


# --------------------------------------------------------------------------------------------
# Readers: each returns the value or raises Invalid
# --------------------------------------------------------------------------------------------


@value
class Opt:
    """An optional key of a :func:`record`, *default* when absent."""

    read: Reader
    default: object = None


def record(build: Callable[..., _T], /, **fields: Reader | Opt) -> Callable[[Any], _T]:
    """A mapping with exactly these keys, each read by its reader; ``build(**values)`` makes the
    value once every key is valid (and may raise :class:`Invalid` for a cross-key rule)."""
    required = [key for key, reader in fields.items() if not isinstance(reader, Opt)]
    known = ", ".join(sorted(fields))

    def read(value: Any) -> _T:
        if not isinstance(value, Mapping):
            fail(f"expected a mapping, got {got(value)}")
        problems = Problems()
        problems.problems += [(k, "missing") for k in required if k not in value]
        problems.problems += [
            (str(k), f"unknown key (expected one of: {known})") for k in value if k not in fields
        ]
        values: dict[str, Any] = {}
        for key, reader in fields.items():
            if isinstance(reader, Opt):
                values[key] = problems.read(key, value[key], reader.read) if key in value else (
                    reader.default
                )  # fmt: skip
            elif key in value:
                values[key] = problems.read(key, value[key], reader)
        problems.done()
        return build(**values)

    return read


def text(
    pattern: re.Pattern[str] | None = None,
    expected: str = "a string",
    choices: Collection[str] | None = None,
) -> Callable[[Any], str]:
    if choices is not None:
        expected = "one of " + ", ".join(repr(c) for c in choices)

    def read(value: Any) -> str:
        ok = isinstance(value, str) and value != ""
        ok = ok and (pattern is None or pattern.fullmatch(value) is not None)
        if not ok or (choices is not None and value not in choices):
            fail(f"expected {expected}, got {got(value)}")
        return cast(str, value)

    return read


def optional(read: Callable[[Any], _T]) -> Callable[[Any], _T | None]:
    """*read*, with ``null`` allowed."""
    return lambda value: None if value is None else read(value)


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        fail(f"expected true or false, got {got(value)}")
    return value


def int_range(value: Any) -> IntRange:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
        or value[0] > value[1]
    ):
        fail(f"expected [low, high] with integers 0 <= low <= high, got {got(value)}")
    return IntRange(value[0], value[1])


def listed(
    read: Callable[[Any], _T], what: str, *, allow_empty: bool = False, unique: bool = False
) -> Callable[[Any], tuple[_T, ...]]:
    """A list whose items *read* reads (problems at ``[i]``); *what* names the items."""

    def read_list(value: Any) -> tuple[_T, ...]:
        if not isinstance(value, list) or (not value and not allow_empty):
            kind = "a list" if allow_empty else "a non-empty list"
            fail(f"expected {kind} of {what}, got {got(value)}")
        problems = Problems()
        items = [problems.read(f"[{i}]", item, read) for i, item in enumerate(value)]
        for i, item in enumerate(items):
            if unique and item is not None and item in items[:i]:
                problems.add(f"[{i}]", f"duplicate {item!r}")
        problems.done()
        return tuple(cast(_T, item) for item in items)

    return read_list


def strings(
    pattern: re.Pattern[str] | None = None, expected: str = "a string", *, allow_empty: bool = False
) -> Callable[[Any], tuple[str, ...]]:
    """A list of distinct strings."""
    return listed(text(pattern, expected), f"{expected}s", allow_empty=allow_empty, unique=True)


def mapping(read_item: Callable[[str, Any], _T]) -> Callable[[Any], dict[str, _T]]:
    """An open mapping: ``read_item(key, value)`` for each entry (problems under the key)."""

    def read(value: Any) -> dict[str, _T]:
        if not isinstance(value, Mapping):
            fail(f"expected a mapping, got {got(value)}")
        problems = Problems()
        items = {
            str(key): problems.read(str(key), item, functools.partial(read_item, str(key)))
            for key, item in value.items()
        }
        problems.done()
        return {key: cast(_T, item) for key, item in items.items()}

    return read


def template(
    allowed: Collection[str],
    *,
    required: Collection[str] = (),
    shape: re.Pattern[str] | None = None,
    shape_text: str = "",
) -> Callable[[Any], str]:
    """A ``str.format`` template whose placeholders are among *allowed*."""

    def read(value: Any) -> str:
        written = text(expected="a spec template")(value)
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(written) if f is not None]
        except ValueError as e:
            fail(f"invalid template {written!r}: {e}")
        bad = [f for f in fields if f not in allowed]
        if bad:
            names = ", ".join("{" + a + "}" for a in sorted(allowed)) or "none"
            fail(f"unknown placeholder {{{bad[0]}}} in {written!r} (allowed: {names})")
        for need in required:
            if need not in fields:
                fail(f"template {written!r} must contain {{{need}}}")
        if shape is not None and shape.fullmatch(written) is None:
            fail(f"expected {shape_text}, got {written!r}")
        return written

    return read


# --------------------------------------------------------------------------------------------
# Readers of values every table has
# --------------------------------------------------------------------------------------------

SCHEMA = 1


def schema_version(value: Any) -> int:
    """Every table's ``schema:`` key."""
    if value != SCHEMA:
        fail(f"expected {SCHEMA}, got {got(value)}")
    return SCHEMA


def major_minor(value: Any) -> tuple[int, int]:
    major, minor = text(re.compile(r"[0-9]+\.[0-9]+"), "a version 'M.N'")(value).split(".")
    return int(major), int(minor)


def fields(**values: Any) -> dict[str, Any]:
    """A :func:`record`'s build for a section that is no type of its own: its values, by key."""
    return values


virtual_package = text(re.compile(r"__[a-z0-9_]+"), "a string starting with '__'")
CONDA_NAME_RE = re.compile(r"[a-z0-9_][a-z0-9._-]*")
conda_name = text(CONDA_NAME_RE, "a conda package name")
namespace = text(NAMESPACE_RE, "a namespace")
feature_name = text(FEATURE_RE, "a feature name")
property_value = text(VALUE_RE, "a property value")
SUBDIR_RE = re.compile(r"[a-z0-9]+-[a-z0-9_]+")

overrides = listed(
    record(
        OverrideVariable,
        virtual_package=virtual_package,
        conda=text(
            re.compile(r"CONDA_OVERRIDE_[A-Z0-9_]+"),
            "a variable name starting with 'CONDA_OVERRIDE_'",
        ),
        provider=Opt(optional(text(re.compile(r"[A-Z][A-Z0-9_]*"), "an upper-case variable name"))),
    ),
    "overrides",
    allow_empty=True,
)
