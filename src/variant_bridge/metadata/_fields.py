"""Typed getters over decoded JSON and errors that build up their key path as they propagate.

The pattern of packaging's ``pylock.py``: a reader checks one level and raises :class:`Invalid`
with the key it was looking at; each enclosing reader adds its own key on the way out
(:meth:`Invalid.under`), and the entry point turns the whole path into the one-line
:class:`~variant_bridge.errors.InvalidMetadata` that names the source::

    variants.json: variants.cu128.nvidia.sm_arch[1]: invalid value 'SM90': must match [a-z0-9_.]+
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import NoReturn, TypeVar

from variant_bridge._patterns import Lazy
from variant_bridge.errors import quote

__all__ = [
    "Invalid",
    "JsonObject",
    "Path",
    "boolean",
    "describe",
    "format_path",
    "mapping",
    "name",
    "names",
    "only_keys",
    "optional",
    "q",
    "q_list",
    "required",
    "text",
    "under",
]

T = TypeVar("T")

Path = tuple[str | int, ...]
_PLAIN_KEY_RE = Lazy(r"[A-Za-z0-9_$-]+")


class Invalid(Exception):
    """A problem at :attr:`path` (relative to the reader that raised it, until the top)."""

    def __init__(self, message: str, *path: str | int) -> None:
        super().__init__(message)
        self.message = message
        self.path: Path = path

    def under(self, *keys: str | int) -> Invalid:
        """This error, seen from the table that holds *keys*."""
        self.path = (*keys, *self.path)
        return self


def fail(message: str, *path: str | int) -> NoReturn:
    raise Invalid(message, *path)


def q(value: object) -> str:
    """*value* quoted for a message, shortened past 80 characters (:func:`errors.quote`)."""
    return quote(value) if isinstance(value, str) else repr(value)


def q_list(values: Collection[object], *, most: int = 8) -> str:
    """``['a', 'b', … (12 in all)]``: each item quoted by :func:`q`, at most *most* shown."""
    items = list(values)
    shown = ", ".join(q(v) for v in items[:most])
    more = f", … ({len(items)} in all)" if len(items) > most else ""
    return f"[{shown}{more}]"


def format_path(path: Path) -> str:
    """``('variants', 'cu12.8', 'nvidia', 'a', 0)`` -> ``variants['cu12.8'].nvidia.a[0]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY_RE.fullmatch(part):
            text += f".{part}" if text else part
        else:  # a label like "cu12.8" would read as two keys when dotted
            text += f"[{q(part)}]"
    return text or "(top level)"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def describe(value: object) -> str:
    """``string '12.8'``: the JSON type and a short repr, for "expected X, got Y"."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{_json_type(value)} {text}"


class JsonObject(dict[str, object]):
    """A decoded JSON object that remembers keys the text repeated (``json`` keeps the last)."""

    __slots__ = ("duplicate_keys",)

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        duplicates: list[str] = []
        for key, _ in pairs:
            if key in seen:
                duplicates.append(key)
            seen.add(key)
        self.duplicate_keys = tuple(duplicates)


def mapping(value: object, what: str = "an object") -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        fail(f"expected {what}, got {describe(value)}")
    for key in value:
        if not isinstance(key, str):
            fail(f"keys must be strings, got {describe(key)}")
    duplicates: tuple[str, ...] = getattr(value, "duplicate_keys", ())
    if duplicates:
        fail("key appears more than once in this object", duplicates[0])
    return value


def only_keys(
    table: Mapping[str, object], allowed: Collection[str], *, schema: str, lenient: bool
) -> None:
    """Refuse keys outside *allowed*, unless a newer minor schema is read (*lenient*)."""
    if lenient:
        return
    for key in table:
        if key not in allowed:
            fail(
                f"unknown key in the {schema} schema (allowed here: {', '.join(sorted(allowed))})",
                key,
            )


def under(key: str | int, read: Callable[[object], T], value: object) -> T:
    """``read(value)``, its errors seen from the table that holds *key*."""
    try:
        return read(value)
    except Invalid as e:
        raise e.under(key) from None


def optional(table: Mapping[str, object], key: str, read: Callable[[object], T]) -> T | None:
    """``read`` of an optional key; JSON null reads as absent (variantlib and uv both do so)."""
    value = table.get(key)
    return None if value is None else under(key, read, value)


def required(table: Mapping[str, object], key: str) -> object:
    if key not in table:
        fail("required key is missing", key)
    return table[key]


def name(value: object, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str):
        fail(f"expected a {what} string, got {describe(value)}")
    if pattern.fullmatch(value) is None:
        fail(f"invalid {what} {q(value)}: must match {pattern.pattern}")
    return value


def text(value: object, what: str) -> str:
    if not isinstance(value, str):
        fail(f"expected {what} (a string), got {describe(value)}")
    return value


def boolean(value: object) -> bool:
    if not isinstance(value, bool):
        fail(f"expected true or false, got {describe(value)}")
    return value


def names(
    value: object,
    pattern: re.Pattern[str],
    what: str,
    *,
    min_items: int = 1,
    unique: bool = True,
) -> tuple[str, ...]:
    """An array of *what* strings matching *pattern*."""
    if not isinstance(value, list | tuple):
        fail(f"expected an array of {what}s, got {describe(value)}")
    items: list[str] = []
    for i, item in enumerate(value):
        try:
            items.append(name(item, pattern, what))
        except Invalid as e:
            raise e.under(i) from None
    if len(items) < min_items:
        fail(f"expected at least {min_items} {what}, got an empty array")
    if unique and len(set(items)) != len(items):
        for i, item in enumerate(items):
            if item in items[:i]:
                fail(f"duplicate {what} {q(item)}", i)
    return tuple(items)
