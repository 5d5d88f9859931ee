"""The ``variant-bridge`` command line: a thin shell over the library (layer 3).

Each command parses its options, calls one library function and prints the result (text, or one
JSON object with ``--json``). Errors are mapped here, in one place: a :class:`VariantBridgeError`
becomes one ``error: ...`` line on stderr and exit status 1; click's usage errors exit 2; anything
unexpected is also one line (exit 1) unless ``VARIANT_BRIDGE_DEBUG=1`` asks for the traceback.

Heavy libraries (rattler, archspec, the mapping tables) are imported inside the commands, so
``variant-bridge --help`` stays fast.
"""

from __future__ import annotations

import errno
import gc
import importlib
import os
from typing import IO, Any

import click

from variant_bridge._version import __version__
from variant_bridge.errors import VariantBridgeError, clip, one_line

__all__ = ["DEBUG_VARIABLE", "CliError", "main", "run"]

DEBUG_VARIABLE = "VARIANT_BRIDGE_DEBUG"
"""Set to ``1`` to let exceptions propagate with their traceback."""


class CliError(click.ClickException):
    """A user-facing failure: printed as one ``error: ...`` line on stderr, exit status 1."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        # One line, always: multi-line library messages are joined so logs stay greppable, and
        # cut at errors.LINE_LIMIT characters.
        super().__init__(one_line(message))

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {self.format_message()}", file=file, err=file is None)


def _debug() -> bool:
    return os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")


# name -> (module under variant_bridge.cli, attribute), in the order `--help` lists them. A
# command's module is imported only when that command runs (or `--help` lists them all), so each
# command pays only for its own imports.
_COMMANDS = {
    "detect": ("detect", "detect"),
    "translate": ("translate", "translate"),
    "select": ("select", "select"),
    "install": ("install", "install"),
    "doctor": ("doctor", "doctor"),
    "env": ("env", "env"),
    "run": ("env", "run"),
    "export": ("export", "export"),
    "check": ("check", "check"),
    "matrix": ("matrix", "matrix"),
    "index": ("index", "index"),
    "solve": ("solve", "solve"),
    "convert": ("convert", "convert"),
}


class _Group(click.Group):
    """The command group: commands load lazily, and exceptions map to exit codes in one place."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*_COMMANDS, *(name for name in self.commands if name not in _COMMANDS)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = _COMMANDS.get(cmd_name)
        if found is None:  # one registered with add_command (a plugin, a test)
            return super().get_command(ctx, cmd_name)
        module = importlib.import_module(f"variant_bridge.cli.{found[0]}")
        command: click.Command = getattr(module, found[1])
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        # click's own control flow (usage errors, --help, Ctrl-C) keeps its meaning; Exit and
        # Abort derive from RuntimeError, so they must be let through before `Exception`.
        except click.UsageError as e:
            # click's own messages quote what was given whole ('xml' is not one of ...).
            # Final in click's stubs; cut in place, so BadParameter keeps its "Invalid value for".
            e.message = one_line(e.message)  # type: ignore[misc]
            raise
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except VariantBridgeError as e:
            if _debug():
                raise
            raise CliError(str(e) or type(e).__name__) from e
        except OSError as e:
            # A closed pipe (`variant-bridge detect --json | head`) is handled by click itself.
            if e.errno == errno.EPIPE or _debug():
                raise
            raise CliError(
                f"{e.strerror or e}" + (f": {e.filename!r}" if e.filename else "")
            ) from e
        except Exception as e:
            if _debug():
                raise
            raise CliError(
                f"unexpected {type(e).__name__}: {clip(str(e), limit=300)} "
                f"(this is a bug in variant-bridge; set {DEBUG_VARIABLE}=1 for the traceback)"
            ) from e


@click.group(
    "variant-bridge",
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "-V", "--version", prog_name="variant-bridge")
def main() -> None:
    """Bridge wheel-variant properties (PEP 825) and conda virtual packages.

    See what a conda/pixi environment supports, as wheel-variant properties; choose and install
    the variant wheel that agrees with it; make uv agree with it; translate properties to conda
    specs; export a mixed environment to environment.yml or pixi.toml.

    \b
    Examples:
      variant-bridge detect
      variant-bridge detect --prefix "$CONDA_PREFIX" --json
      variant-bridge detect --target cuda=12.8 --target cuda_arch=9.0
      variant-bridge translate "nvidia :: cuda_version_lower_bound :: 12.8"
      variant-bridge translate --from-conda __cuda=12.9 cuda-version=12.6
      variant-bridge select torch --index-url https://download.pytorch.org/whl/variant/
      variant-bridge install mypkg -f ./wheels --prefix "$CONDA_PREFIX"
      variant-bridge doctor --prefix "$CONDA_PREFIX"
      variant-bridge run -- uv pip install --preview-features wheel-variants torch
      variant-bridge export --format pixi-toml -o pixi.toml
    """


def run() -> None:
    """The ``variant-bridge`` executable (and ``python -m variant_bridge``): :data:`main` on this
    process's arguments; the exit status is the command's.

    The process ends right after the command, so nothing it built needs freeing: freezing the
    garbage collector first (:func:`gc.freeze`) lets the interpreter skip tracing and freeing
    every module's objects on the way out, ~10 ms of a cold ``detect --json``; when no other
    thread runs, it ends without that teardown at all (cli/_native.py). (Tests call :data:`main`
    in-process, where that would keep garbage alive; only the executable does it.)
    """
    try:
        main(prog_name="variant-bridge")
    except SystemExit as done:
        # After rattler's native work (index, solve, convert), end without the interpreter's
        # finalization, which can crash py-rattler 0.28 (cli/_native.py).
        from variant_bridge.cli import _native

        if _native.requested():
            _native.exit_now(done.code)
        # Any other command: once it has returned and runs no other thread, end without the
        # teardown of every module's objects (cli/_native.py).
        if _native.alone():
            _native.exit_now(done.code, exit_functions=True)
        raise
    finally:
        gc.freeze()
