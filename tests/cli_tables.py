"""docs/cli.md's option tables, generated from the commands themselves (click).

Each ``## `variant-bridge NAME``` section's ``| option | meaning |`` table lists exactly the
command's options, in the order ``--help`` lists them, each spelled as click parses it (short
forms, then the long one with its metavar), then ``-h``/``--help``. The meanings are the docs':
a row keeps the meaning written for its option; an option without one gets a pointer to the
shared option groups (``## Shared options``, whose tables are generated from
``cli/_options.py`` the same way) or, for a command's own option, its ``--help`` text.
``tests/test_docs.py`` checks that the file is what this writes; refresh it with::

    .venv/bin/python -m tests.cli_tables
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import click

from variant_bridge.cli import _options, main

CLI_MD = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
HEADER = "| option | meaning |\n|---|---|\n"
HELP_ROW = ("--help", "`-h`, `--help`", "show the help and exit")
SHARED = "shared options"
# The tables of `## Shared options`: heading -> the options of that group, as declared.
GROUPS: dict[str, Callable[[], Sequence[click.Parameter]]] = {
    "### Sources": lambda: [make() for make in _options.source_options().options],
    "### Environment": lambda: [
        make() for make in _options.environment_options(python=True).options
    ],
    "### Fetching": lambda: [make() for make in _options.fetch_options(hashes=True).options],
}
_SECTION_RE = re.compile(r"^## `variant-bridge (\w+)`$", re.MULTILINE)
_TABLE_RE = re.compile(r"^\| option \| meaning \|\n\|---\|---\|\n((?:\|.*\n)*)", re.MULTILINE)
_CELL_RE = re.compile(r"^\| ((?:[^|\\]|\\.)*?) \| (.*) \|$")
_OPTION_RE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _ctx() -> click.Context:
    return click.Context(main)


def option_cell(param: click.Option, ctx: click.Context) -> str:
    """``-f``, ``--find-links DIR|URL`` as a table cell: short forms first, then the long one with
    what it takes (its metavar, or its choices)."""
    names = sorted(param.opts, key=lambda o: (o.startswith("--"), o))
    if param.is_flag:
        takes = ""
    elif isinstance(param.type, click.Choice) and param.metavar is None:
        takes = "|".join(map(str, param.type.choices))
    else:
        takes = param.make_metavar(ctx).removesuffix("...")
    cells = [f"`{n}`" for n in names[:-1]]
    cells.append(f"`{names[-1]} {takes}`".replace(" `", "`") if takes else f"`{names[-1]}`")
    return ", ".join(cells).replace("|", "\\|")


def _key(cell: str) -> str:
    """The option a row documents: its longest spelling."""
    found = _OPTION_RE.findall(cell.replace("\\|", "|"))
    return max(found, key=len) if found else cell


def _rows(body: str) -> dict[str, str]:
    """Existing meanings by option."""
    meanings: dict[str, str] = {}
    for line in body.splitlines():
        match = _CELL_RE.match(line)
        if match is not None:
            meanings[_key(match[1])] = match[2]
    return meanings


def _table(params: Iterable[click.Parameter], meanings: dict[str, str], own: bool) -> str:
    ctx = _ctx()
    lines = []
    for param in params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        cell = option_cell(param, ctx)
        key = _key(cell)
        meaning = meanings.get(key)
        if meaning is None:
            help_text = " ".join((param.help or "").split()).replace("|", "\\|")
            shared = not own and key in _shared_keys()
            meaning = f"see [{SHARED}](#shared-options)" if shared else help_text
        lines.append(f"| {cell} | {meaning} |")
    if not own:
        key, cell, meaning = HELP_ROW
        lines.append(f"| {cell} | {meanings.get(key, meaning)} |")
    return HEADER + "\n".join(lines) + "\n"


def _shared_keys() -> set[str]:
    ctx = _ctx()
    return {
        _key(option_cell(p, ctx))
        for make in GROUPS.values()
        for p in make()
        if isinstance(p, click.Option) and not p.hidden
    }


def _replace_table(section: str, params: Iterable[click.Parameter], *, own: bool) -> str:
    match = _TABLE_RE.search(section)
    if match is None:
        return section  # a section without an options table
    table = _table(params, _rows(match[1]), own)
    return section[: match.start()] + table + section[match.end() :]


def generate(text: str) -> str:
    """*text* (docs/cli.md) with every option table regenerated from the commands."""
    for heading, make in GROUPS.items():
        start = text.index(f"\n{heading}")
        end = text.index("\n#", start + 1)
        text = text[:start] + _replace_table(text[start:end], make(), own=True) + text[end:]
    ctx = _ctx()
    starts = [(m.start(), m[1]) for m in _SECTION_RE.finditer(text)]
    out, last = [], 0
    for index, (start, name) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(text)
        stop = text.find("\n## ", start + 1)
        end = min(end, stop if stop != -1 else len(text))
        command = main.get_command(ctx, name)
        assert command is not None, name
        out += [text[last:start], _replace_table(text[start:end], command.params, own=False)]
        last = end
    out.append(text[last:])
    return "".join(out)


def main_() -> int:
    text = CLI_MD.read_text()
    new = generate(text)
    if new != text:
        CLI_MD.write_text(new)
        print(f"rewrote the option tables of {CLI_MD}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
