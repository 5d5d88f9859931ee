"""The CLI's commands on a pixi workspace's environment, not a copy of them.

:func:`adapted` takes a command of :mod:`variant_bridge.cli` as it is (its options, its option
groups, its callback) and changes only where the environment comes from: ``--prefix`` and
``--lockfile`` are left out, ``-e/--environment`` names a workspace environment and
``--manifest-path`` the workspace. The command runs with a :class:`_Workspace` as click's context
object, a :class:`~variant_bridge.jobs.specs.Host`: when the command's option group builds its
:class:`~variant_bridge.jobs.specs.EnvironmentSpec`, it finds the workspace and completes the
spec with the environment's prefix, or its lock when it is not installed yet
(:func:`variant_bridge.jobs.workspace.workspace_spec`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from variant_bridge.jobs.specs import EnvironmentSpec

__all__ = [
    "DEFAULTS",
    "WORKSPACE_ENVIRONMENT",
    "adapted",
    "environment_option",
    "manifest_option",
]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULTS = "variant_bridge.pixi.defaults"
"""Key of :attr:`click.Context.meta`: ``(-e, --manifest-path)`` given before the command."""
WORKSPACE_ENVIRONMENT = "variant_bridge.pixi.environment"
"""Key of :attr:`click.Context.meta`: the :class:`WorkspaceEnvironment` the command runs on."""

# Options of the CLI's commands that name another environment than the workspace's; `add`
# installs into the installed environment, on this machine; `doctor` examines the environment's
# own interpreter.
_LEFT_OUT = frozenset({"prefix", "lockfile", "targets_file"})
_LEFT_OUT_OF = {"add": frozenset({"platform", "strict"}), "doctor": frozenset({"python"})}

_ENVIRONMENT_HELP = (
    "The environment to work on, as in pixi. Default: the one `pixi run`/`pixi shell` runs in "
    "($PIXI_ENVIRONMENT_NAME), else 'default'."
)
_MANIFEST_HELP = (
    "The path to pixi.toml, pyproject.toml, or the workspace folder. Default: "
    "$PIXI_PROJECT_MANIFEST, else the nearest one from the current folder upwards."
)

# What each adapted command does here, with examples in the extension's words (the CLI's help
# names --prefix and --lockfile).
_HELP = {
    "detect": """Show what the workspace environment supports: its virtual packages, its solved
    CUDA toolkit, and the wheel-variant properties they allow, most preferred first, each with
    where it came from; and what `doctor` finds there.

    \b
    Examples:
      pixi variant detect
      pixi variant detect -e cuda --json
      pixi variant detect -t cuda_arch=9.0""",
    "select": """Choose, for each package and its whole dependency tree, the wheel that agrees
    with the workspace environment (its solved cuda-version, this machine's driver and GPU), and
    say why for every file. Installs nothing (see `pixi variant add`).

    \b
    Examples:
      pixi variant select torch --index-url https://download.pytorch.org/whl/variant/
      pixi variant select gpulib -f ./wheels -e cuda --json""",
    "doctor": """Examine the workspace environment's PyPI side against its conda side and the
    machine: CUDA libraries installed twice (a conda package and a PyPI wheel), variant wheels
    whose build no longer agrees with the environment, nvidia-* wheels nothing requires. One line
    per finding, with the command that fixes it. Exit status 1 on a warning or worse.

    \b
    Examples:
      pixi variant doctor
      pixi variant doctor -e cuda --json""",
    "export": """Write the workspace environment as environment.yml, pixi.toml or pylock.toml,
    each variant wheel pinned to its exact file (see `variant-bridge export --help`).

    \b
    Examples:
      pixi variant export -o environment.yml
      pixi variant export -e cuda -f ./wheels -o pylock.toml""",
}


def _environment_param() -> click.Option:
    return click.Option(
        ["--environment", "-e", "environment"], metavar="<ENVIRONMENT>", help=_ENVIRONMENT_HELP
    )


def _manifest_param() -> click.Option:
    return click.Option(
        ["--manifest-path", "manifest_path"],
        metavar="<MANIFEST_PATH>",
        type=click.Path(path_type=Path),
        help=_MANIFEST_HELP,
    )


def _decorator(make: Callable[[], click.Option]) -> Callable[[F], F]:
    def decorate(function: F) -> F:
        params = function.__dict__.setdefault("__click_params__", [])
        params.append(make())
        return function

    return decorate


def environment_option() -> Callable[[F], F]:
    """``-e/--environment <ENVIRONMENT>`` as pixi spells it."""
    return _decorator(_environment_param)


def manifest_option() -> Callable[[F], F]:
    """``--manifest-path <MANIFEST_PATH>`` as pixi spells it."""
    return _decorator(_manifest_param)


def adapted(command: click.Command, name: str) -> click.Command:
    """*command* on the workspace's environment (module docstring)."""
    result = copy.copy(command)
    left_out = _LEFT_OUT | _LEFT_OUT_OF.get(name, frozenset())
    params: list[click.Parameter] = [
        _environment_param() if p.name == "environment" else p
        for p in command.params
        if p.name not in left_out
    ]
    # The command still receives them, as if not given (their defaults: no --prefix, ...).
    unset = {str(p.name): _not_given(p) for p in command.params if p.name in left_out}
    if not any(p.name == "environment" for p in params):
        params.append(_environment_param())
    result.params = [*params, _manifest_param()]
    if name in _HELP:
        result.help = _HELP[name]
    assert command.callback is not None
    result.callback = _on_workspace(command.callback, unset, installs=name == "add")
    return result


def _not_given(param: click.Parameter) -> Any:
    """What the command receives for *param* when it is not given."""
    if param.multiple:
        return ()
    return False if getattr(param, "is_flag", False) else None


def _on_workspace(
    callback: Callable[..., Any], unset: dict[str, Any], *, installs: bool
) -> Callable[..., Any]:
    """*callback* with the hook set: the command's environment option group (which takes
    ``-e``) builds its spec through :func:`_complete`."""

    @functools.wraps(callback)
    def run(**kwargs: Any) -> Any:
        ctx = click.get_current_context()
        default_environment, default_manifest = ctx.meta.get(DEFAULTS, (None, None))
        manifest_path = kwargs.pop("manifest_path", None) or default_manifest
        ctx.obj = _Workspace(manifest_path, default_environment, installs=installs)
        return callback(**unset, **kwargs)

    return run


class _Workspace:
    """The pixi workspace as the commands' :class:`~variant_bridge.jobs.specs.Host`: it fills
    each spec with the workspace environment (notes on stderr); a command that *installs* needs
    it installed."""

    def __init__(self, manifest_path: Path | None, default: str | None, *, installs: bool) -> None:
        self.manifest_path, self.default, self.installs = manifest_path, default, installs

    def fill(self, spec: EnvironmentSpec) -> EnvironmentSpec:
        from variant_bridge.jobs.workspace import (
            open_environment,
            require_installed,
            workspace_spec,
        )

        env = open_environment(
            manifest_path=self.manifest_path, environment=spec.environment or self.default
        )
        if self.installs:
            require_installed(env)
        click.get_current_context().meta[WORKSPACE_ENVIRONMENT] = env
        completed = workspace_spec(spec, env)
        for note in completed.notes:
            click.echo(f"note: {note}", err=True)
        return completed.spec
