"""``pixi variant ...``: the pixi extension, a thin shell beside the CLI (layer 3).

pixi runs any ``pixi-<name>`` executable it finds on ``PATH`` (or in ``$PIXI_HOME/bin``) as
``pixi <name> ...``, with the remaining arguments only. This is that executable,
``pixi-variant``: it finds the workspace itself (:mod:`variant_bridge.detect.workspace`) and runs
the CLI's own ``detect``, ``select``, ``doctor`` and ``export`` commands on the workspace's
environment (:mod:`._adapt`: their options without ``--prefix``/``--lockfile``, with pixi's
``-e/--environment`` and ``--manifest-path``), plus ``add`` (:mod:`.add`). Errors map to exit
codes as in the CLI (one ``error:`` line, exit 1; usage, exit 2).

Nothing heavy is imported until a command runs, so ``pixi variant --help`` stays fast.
"""

from __future__ import annotations

import gc
import importlib
from typing import Any

import click

from variant_bridge._version import __version__
from variant_bridge.cli import _Group
from variant_bridge.pixi_extension._adapt import DEFAULTS, environment_option, manifest_option

__all__ = ["PROG", "main", "run"]

PROG = "pixi variant"
"""How usage lines name the command: pixi runs ``pixi-variant`` for ``pixi variant``."""

# name -> (module, attribute) of the command; cli modules are adapted to the workspace.
_COMMANDS = {
    "add": ("variant_bridge.pixi_extension.add", "add"),
    "detect": ("variant_bridge.cli.detect", "detect"),
    "select": ("variant_bridge.cli.select", "select"),
    "doctor": ("variant_bridge.cli.doctor", "doctor"),
    "export": ("variant_bridge.cli.export", "export"),
}


class _Extension(_Group):
    """pixi's help layout (usage, text, commands, then options) over the CLI's group: lazy
    commands, errors mapped to exit codes in one place."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from variant_bridge.pixi_extension._adapt import adapted

        found = _COMMANDS.get(cmd_name)
        if found is None:
            return None
        command: click.Command = getattr(importlib.import_module(found[0]), found[1])
        return adapted(command, cmd_name)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        self.format_commands(ctx, formatter)
        click.Command.format_options(self, ctx, formatter)
        self.format_epilog(ctx, formatter)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        click.Command.format_options(self, ctx, formatter)


@click.group(
    "pixi-variant",
    cls=_Extension,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    options_metavar="[OPTIONS]",
    subcommand_metavar="<COMMAND>",
)
@environment_option()
@manifest_option()
@click.version_option(__version__, "-V", "--version", prog_name="pixi-variant")
@click.pass_context
def main(ctx: click.Context, environment: str | None, manifest_path: Any) -> None:
    """Variant wheels for a pixi workspace: choose the GPU wheels (PEP 825) that agree with an
    environment's solved cuda-version and this machine, install them into .pixi/envs/<env> and
    record them in the manifest so that `pixi install` keeps the same files.

    Runs as `pixi variant <COMMAND>` (pixi finds this pixi-variant executable on PATH) or as
    `pixi-variant <COMMAND>`. The workspace is found as pixi finds it: --manifest-path, else
    $PIXI_PROJECT_MANIFEST (under `pixi run`/`pixi shell`), else the nearest pixi.toml (or
    pyproject.toml with [tool.pixi]) from the current folder upwards. An environment not
    installed yet is read from pixi.lock.

    \b
    Examples:
      pixi variant detect
      pixi variant add torch --index-url https://download.pytorch.org/whl/variant/
      pixi variant add gpulib -f ./wheels -e cuda
      pixi variant select torch -e cuda --index-url https://download.pytorch.org/whl/variant/
      pixi variant doctor -e cuda
      pixi variant export -e cuda -o environment.yml
    """
    # Given before the command (`pixi variant -e cuda detect`), they are its defaults.
    ctx.meta[DEFAULTS] = (environment, manifest_path)


def run() -> None:
    """The ``pixi-variant`` executable: :data:`main` on this process's arguments."""
    try:
        main(prog_name=PROG)
    finally:
        gc.freeze()  # the process ends now: skip freeing every object (see cli.run)
