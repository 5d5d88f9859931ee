"""The hooks conda calls (entry point group ``conda``; docs/conda.md).

conda imports this module on every start, ``conda --help`` included, and calls some hooks on
every command (the subcommands, the post-command hooks, the settings). So it imports only
conda's ``hookimpl`` (conda has loaded it already), each hook yields conda's own dataclasses
built by :mod:`._compat` (which knows the fields of the running conda), and every callable
handed to conda imports its module when conda calls it: nothing of the bridge (click, rattler,
the tables) loads until a hook does real work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, cast

from conda.plugins import hookimpl as _hookimpl

if TYPE_CHECKING:
    from argparse import Namespace

F = TypeVar("F", bound=Callable[..., Any])
hookimpl = cast("Callable[[F], F]", _hookimpl)  # conda's pluggy marker (conda is untyped)

__all__ = [
    "EXPORTERS",
    "HEALTH_CHECK",
    "POST_COMMAND",
    "RUN_AFTER",
    "SUBCOMMAND",
    "conda_environment_exporters",
    "conda_health_checks",
    "conda_post_commands",
    "conda_settings",
    "conda_subcommands",
    "conda_virtual_packages",
]

SUBCOMMAND = "variant"
"""``conda variant ...`` (alias ``conda vb`` where conda supports aliases)."""
HEALTH_CHECK = "variant-consistency"
"""``conda doctor variant-consistency`` (and ``--fix``)."""
POST_COMMAND = "variant-bridge-agreement"
RUN_AFTER = frozenset({"install", "update", "remove", "create", "env_create", "env_update"})
"""The conda commands after which the prefix's variant wheels are checked (conda's names:
``conda env create`` is ``env_create``; ``uninstall`` runs as ``remove``)."""
EXPORTERS = ("variant-environment-yaml", "variant-pixi-toml", "variant-pylock")
"""The ``conda export --format`` names (:mod:`.exporters` has their aliases and file names)."""


def _variant(argv: tuple[str, ...]) -> int:
    from variant_bridge.conda_plugin.subcommand import execute

    return execute(argv)


def _check(prefix: str, verbose: bool) -> None:
    from variant_bridge.conda_plugin.doctor import check

    check(prefix, verbose)


def _fix(prefix: str, args: Namespace, confirm: Callable[[str], None]) -> int:
    from variant_bridge.conda_plugin.doctor import fix

    return fix(prefix, args, confirm)


def _after_change(command: str) -> None:
    # A post-command hook that raises makes conda's own command fail (exit 1, a full report):
    # whatever happens here, conda's command has succeeded.
    try:
        from variant_bridge.conda_plugin.after_change import warn

        warn(command)
    except Exception:  # never conda's failure; after_change reports its own
        return


@hookimpl
def conda_subcommands() -> Iterator[Any]:
    from variant_bridge.conda_plugin import _compat

    yield _compat.subcommand(
        name=SUBCOMMAND,
        summary="Variant wheels (PEP 825) that agree with this environment: variant-bridge's "
        "commands against conda's target.",
        action=_variant,
        aliases=("vb",),
    )


@hookimpl
def conda_health_checks() -> Iterator[Any]:
    from variant_bridge.conda_plugin import _compat

    yield _compat.health_check(
        name=HEALTH_CHECK,
        action=_check,
        fixer=_fix,
        summary="PyPI variant wheels agree with cuda-version, the driver and the GPU; CUDA "
        "libraries are not installed twice; no orphaned nvidia-* wheels",
        fix="Re-select and reinstall the variant wheels that no longer agree (hash-checked)",
    )


@hookimpl
def conda_environment_exporters() -> Iterator[Any]:
    from variant_bridge.conda_plugin.exporters import exporters

    yield from exporters()


@hookimpl
def conda_post_commands() -> Iterator[Any]:
    from variant_bridge.conda_plugin import _compat

    yield _compat.post_command(name=POST_COMMAND, action=_after_change, run_for=set(RUN_AFTER))


@hookimpl
def conda_settings() -> Iterator[Any]:
    from variant_bridge.conda_plugin.settings import conda_settings as settings

    yield from settings()


@hookimpl
def conda_virtual_packages() -> Iterator[Any]:
    from variant_bridge.conda_plugin.cuda_arch import virtual_packages

    yield from virtual_packages()
