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
    pass

F = TypeVar("F", bound=Callable[..., Any])
hookimpl = cast("Callable[[F], F]", _hookimpl)  # conda's pluggy marker (conda is untyped)

__all__ = [
    "EXPORTERS",
    "SUBCOMMAND",
    "conda_environment_exporters",
    "conda_settings",
    "conda_subcommands",
]

SUBCOMMAND = "variant"
"""``conda variant ...`` (alias ``conda vb`` where conda supports aliases)."""
EXPORTERS = ("variant-environment-yaml", "variant-pixi-toml", "variant-pylock")
"""The ``conda export --format`` names (:mod:`.exporters` has their aliases and file names)."""


def _variant(argv: tuple[str, ...]) -> int:
    from variant_bridge.conda_plugin.subcommand import execute

    return execute(argv)


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
def conda_environment_exporters() -> Iterator[Any]:
    from variant_bridge.conda_plugin.exporters import exporters

    yield from exporters()


@hookimpl
def conda_settings() -> Iterator[Any]:
    from variant_bridge.conda_plugin.settings import conda_settings as settings

    yield from settings()
