"""``conda variant ...``: the CLI's commands run inside conda, against conda's target.

conda hands the subcommand the rest of its argv. conda's own ``-n NAME`` / ``-p PATH`` are taken
out of it and resolved as conda resolves them (``determine_target_prefix``: the named
environment, the path, else the active environment, else base); the rest goes to the CLI's own
click group, unchanged, with a :class:`~variant_bridge.jobs.specs.PrefixHost` as click's context
object: its prefix is every command's default ``--prefix``, its virtual packages are conda's
(:mod:`.facts`). The plugin's settings (:mod:`.settings`) and conda's local channels fill the
source options' defaults. So the options, the output, ``--json`` and the exit codes are the
CLI's own (docs/cli.md), and nothing of the option parsing is written twice.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["PROG", "Target", "default_map", "execute", "split_target"]

PROG = "conda variant"
_LONG_NAME = "--name"
_SHORT = {"-n": "name", "-p": "path"}  # --prefix is the CLI's own option, meaning the same


class Target:
    """conda's ``-n`` / ``-p`` as given (the last of each, as argparse takes them)."""

    __slots__ = ("name", "path")

    def __init__(self) -> None:
        self.name: str | None = None
        self.path: str | None = None

    @property
    def given(self) -> bool:
        return self.name is not None or self.path is not None


def split_target(argv: Sequence[str]) -> tuple[list[str], Target]:
    """*argv* without conda's ``-n/--name NAME`` and ``-p PATH`` (before ``--``), and those."""
    rest: list[str] = []
    target = Target()
    items = list(argv)
    i = 0
    while i < len(items):
        item = items[i]
        if item == "--":
            rest += items[i:]
            break
        key: str | None = None
        value = ""
        if item in _SHORT or item == _LONG_NAME:
            key = _SHORT.get(item, "name")
            value = items[i + 1] if i + 1 < len(items) else ""
            i += 1
        elif item.startswith(_LONG_NAME + "="):
            key, value = "name", item.split("=", 1)[1]
        elif item[:2] in _SHORT and len(item) > 2 and not item.startswith("--"):
            key, value = _SHORT[item[:2]], item[2:]  # -nNAME, -pPATH
        if key is None:
            rest.append(item)
        else:
            setattr(target, key, value)
        i += 1
    return rest, target


def _command_name(args: Sequence[str]) -> str | None:
    """The CLI command *args* run (the first word that is no option), if any."""
    return next((a for a in args if not a.startswith("-")), None)


def _local_channels() -> tuple[str, ...]:
    """conda's configured channels that are local directories (what ``solve -c`` reads)."""
    from urllib.parse import unquote, urlsplit

    from conda.base.context import context

    found = []
    for channel in context.channels:
        text = str(channel)
        path = Path(unquote(urlsplit(text).path)) if text.startswith("file://") else Path(text)
        if path.is_absolute() and path.is_dir():
            found.append(str(path))
    return tuple(found)


def default_map(commands: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Option defaults for *commands* from conda: the plugin's source settings (``-f``,
    ``--index-url``, ``--extra-index-url``) and, for ``solve``, conda's local channels."""
    from variant_bridge.conda_plugin.settings import sources

    spec = sources()
    defaults: dict[str, Any] = {}
    if spec.find_links:
        defaults["find_links"] = spec.find_links
    if spec.index_url:
        defaults["index_url"] = (spec.index_url,)
    if spec.extra_index_urls:
        defaults["extra_index_urls"] = spec.extra_index_urls
    mapping = {name: dict(defaults) for name in commands}
    channels = _local_channels()
    if channels and "solve" in mapping:
        mapping["solve"]["channels"] = channels
    return {name: values for name, values in mapping.items() if values}


def _resolve(target: Target) -> Path:
    """The prefix conda would act on for this ``-n`` / ``-p``.

    :raises EnvironmentLocationNotFound: conda's own error, when the environment named is none
        (conda resolves an unknown name to where it would create it).
    """
    from argparse import Namespace

    from conda.base.context import context, determine_target_prefix
    from conda.exceptions import EnvironmentLocationNotFound

    given = Namespace(name=target.name, prefix=target.path)
    prefix = Path(determine_target_prefix(context, given))
    if target.given and not prefix.is_dir():
        raise EnvironmentLocationNotFound(str(prefix))
    return prefix


def _reads_an_environment(command: str | None) -> bool:
    import click

    from variant_bridge.cli import main

    found = main.get_command(click.Context(main), command) if command else None
    return found is not None and any(p.name == "prefix" for p in found.params)


def execute(argv: Sequence[str]) -> int:
    """Run ``conda variant ARGV``; the exit status is the CLI's (0, 1 for an error or a failed
    check, 2 for a usage error)."""
    import click

    from variant_bridge.cli import _native, main
    from variant_bridge.conda_plugin.facts import conda_virtual_packages
    from variant_bridge.jobs.specs import PrefixHost

    args, target = split_target(argv)
    command = _command_name(args)
    if target.given and not _reads_an_environment(command):
        what = f"{PROG} {command}" if command else PROG
        usage = f"Usage: {PROG} COMMAND [ARGS]...\nTry '{PROG} --help' for help.\n"
        print(f"{usage}\nError: {what} reads no environment: -n/-p do not apply", file=sys.stderr)
        return 2
    host = PrefixHost("conda", _resolve(target), target.given, conda_virtual_packages)
    names = main.list_commands(click.Context(main))
    # The CLI's group under conda's name: its examples spelled as conda users type them.
    group = copy.copy(main)
    group.help = (main.help or "").replace("variant-bridge ", f"{PROG} ")
    try:
        group.main(args=args, prog_name=PROG, obj=host, default_map=default_map(names))
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 0 if done.code is None else 1
        if _native.requested():  # after rattler's native work (cli/_native.py)
            _native.exit_now(code)
        return code
