"""Stand-ins for conda's built-in plugins the bridge meets: virtual packages (with fixed values,
``__cuda`` only from ``CONDA_OVERRIDE_CUDA``: there is no GPU here) and conda's exporters, with
conda's format names, aliases and default file names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conda.auxlib import NULL
from conda.plugins.hookspec import hookimpl
from conda.plugins.types import (
    CondaEnvironmentExporter,
    CondaVirtualPackage,
    EnvironmentFormat,
)


@hookimpl
def conda_virtual_packages() -> Iterator[CondaVirtualPackage]:
    yield CondaVirtualPackage("unix", None, None)
    yield CondaVirtualPackage("linux", "6.1.0", None, override_entity="version")
    yield CondaVirtualPackage("glibc", "2.36", None, override_entity="version")
    yield CondaVirtualPackage("archspec", "1", "x86_64", override_entity="build")
    yield CondaVirtualPackage("cuda", lambda: NULL, None, override_entity="version")


def _unused(env: Any) -> str:
    return ""


@hookimpl
def conda_environment_exporters() -> Iterator[CondaEnvironmentExporter]:
    yield CondaEnvironmentExporter(
        "environment-yaml",
        ("yaml", "yml", "env.yml"),
        ("environment.yaml", "environment.yml"),
        export=_unused,
    )
    yield CondaEnvironmentExporter(
        "environment-json", ("json",), ("environment.json",), export=_unused
    )
    yield CondaEnvironmentExporter(
        "explicit",
        (),
        ("explicit.txt",),
        export=_unused,
        environment_format=EnvironmentFormat.lockfile,
    )
    yield CondaEnvironmentExporter(
        "requirements", ("reqs", "txt"), ("requirements.txt", "spec.txt"), export=_unused
    )
