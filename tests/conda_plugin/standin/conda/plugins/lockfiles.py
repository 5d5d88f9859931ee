"""A stand-in for the conda-lockfiles plugin's exporters (0.2.2: their names, aliases and file
names), to check that the bridge's names clash with none of them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from conda.plugins.hookspec import hookimpl
from conda.plugins.types import CondaEnvironmentExporter, EnvironmentFormat


def _unused(envs: Iterable[Any]) -> str:
    return ""


@hookimpl
def conda_environment_exporters() -> Iterator[CondaEnvironmentExporter]:
    lock = EnvironmentFormat.lockfile
    yield CondaEnvironmentExporter(
        "conda-lock-v1",
        ("conda-lock",),
        ("conda-lock.yml", "conda-lock.yaml"),
        multiplatform_export=_unused,
        environment_format=lock,
    )
    yield CondaEnvironmentExporter(
        "rattler-lock-v6",
        ("pixi", "pixi-lock-v6"),
        ("pixi.lock",),
        multiplatform_export=_unused,
        environment_format=lock,
    )
