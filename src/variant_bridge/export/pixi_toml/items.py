"""The item-level edits of a manifest update (tomlkit): which entries carry the export's marker,
adding and rewriting them without touching the text around them, and reading values back as
plain data."""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.items import AoT, Array, Comment, InlineTable, Item, Table, Whitespace

from variant_bridge.errors import ExportError
from variant_bridge.export.pixi_toml.render import is_marked, marked, table_lines, toml_value

__all__ = [
    "TABLES",
    "add_all_marked",
    "add_marked",
    "as_written",
    "has_comments",
    "is_owned",
    "plain",
    "set_marked",
    "table_at",
    "toml_item",
]

TABLES = (Table, InlineTable, Container)
"""What a TOML table can be in tomlkit: a table, an inline table, the document."""


def is_owned(table: Any, key: str) -> bool:
    """Whether *key* of *table* carries the export's marker."""
    item = table.item(key) if hasattr(table, "item") else None
    return isinstance(item, Item) and not isinstance(item, Table) and is_marked(item.trivia.comment)


def _mark(item: Item, note: str | None) -> None:
    comment = f"# {marked(note)}"
    if item.trivia.comment != comment:
        item.trivia.comment = comment
        item.trivia.comment_ws = item.trivia.comment_ws or "  "


def add_marked(table: Any, key: str, value: Any, note: str | None = None) -> None:
    table[key] = toml_item(value)
    _mark(table.item(key), note)


def add_all_marked(table: Any, entries: dict[str, Any], notes: dict[str, str]) -> None:
    """Add every entry of *entries* to *table*, marked, after its last entry.

    One parse of all the new lines, then appended in one pass: tomlkit's own per-key insert
    rescans the table and shifts its index for every key, which made a 5,000-record update
    quadratic (issue 22). The result is what the per-key adds give: the new lines after the
    table's last entry or comment, before the blank lines that close it.
    """
    if not entries:
        return
    container = table.value if isinstance(table, Table) else table
    if not isinstance(container, Container) or any(
        isinstance(item, (Table, AoT)) for _, item in container.body
    ):
        for key, value in entries.items():  # sub-tables inside: let tomlkit place each key
            add_marked(table, key, value, notes.get(key))
        return
    snippet = "\n".join(table_lines("t", entries, notes)[1:]) + "\n"
    new = tomlkit.parse(snippet).body
    body = container.body
    closing = []
    while body and body[-1][0] is None and isinstance(body[-1][1], Whitespace):
        closing.append(body.pop())  # keyless: the key index does not move
    if body and not body[-1][1].trivia.trail.endswith("\n"):
        body[-1][1].trivia.trail += "\n"
    container.parsing(True)  # while parsing, tomlkit appends without rescanning
    try:
        for new_key, item in new:
            if new_key is not None:
                container.append(new_key, item)
    finally:
        container.parsing(False)
    body.extend(reversed(closing))


def set_marked(table: Any, key: str, value: Any, note: str | None = None) -> None:
    """Rewrite the export's entry *key* (its exact text kept when the value is unchanged)."""
    current = table.item(key)
    if plain(current) != value:
        trivia = current.trivia
        table[key] = toml_item(value)
        new = table.item(key)
        new.trivia.indent, new.trivia.comment_ws = trivia.indent, trivia.comment_ws
        new.trivia.trail = trivia.trail
    _mark(table.item(key), note)


def plain(value: Any) -> Any:
    return value.unwrap() if isinstance(value, Item) else value


def as_written(item: Any) -> str:
    """The value as the user wrote it."""
    return item.as_string().strip() if isinstance(item, Item) else repr(item)


def has_comments(table: Any) -> bool:
    body = table.value.body if isinstance(table, Table) else getattr(table, "body", [])
    return any(isinstance(item, Comment) for _, item in body)


def table_at(parent: Any, key: str, *, path: str, prefix: str, super_table: bool = False) -> Any:
    if key not in parent:
        parent[key] = tomlkit.table(is_super_table=super_table)
        return parent[key]
    value = parent[key]
    if not isinstance(value, TABLES):
        found = "an array" if isinstance(value, (list, Array)) else f"a {type(value).__name__}"
        raise ExportError(f"cannot update {path!r}: {prefix}{key} must be a table, found {found}")
    return value


def toml_item(value: Any) -> Any:
    """A tomlkit value spelled as a new manifest spells it (``{ path = "..." }``): dicts become
    inline tables, lists arrays."""
    if isinstance(value, (dict, list)):
        return tomlkit.parse(f"v = {toml_value(value)}\n").item("v")
    return value
