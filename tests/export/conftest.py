"""The export world: a rattler-installed prefix whose site-packages uv filled with real wheels,
and the pixi.lock of the same solve.

- conda side: ``python 3.12.*``, ``libcublas``, ``cuda-version 12.6.*`` solved with
  ``__cuda=12.9`` against the session's local channel and installed by ``rattler.install``;
- PyPI side, installed by uv (``--preview-features wheel-variants``, driver forced to 12.6 and
  compute capability 9.0, as ``variant-bridge env`` would set them):
  ``tinyvar 1.0`` [cu126] from a find-links directory (uv writes no ``direct_url.json``),
  ``gpuext 0.3`` [cu126] from its file path (``direct_url.json`` with a ``file://`` URL and no
  hash) and the plain ``plainpkg 2.0`` from find-links;
- ``pixi.lock``: the same records plus the three wheels' URLs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.worlds.channel import Channel
from tests.worlds.lockfile import LockedPlatform, write_lockfile
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, site_packages, solve
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.export import ExportModel
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.export import ExportRequest, prepare_export
from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, SourceSpec

SPECS = ("python 3.12.*", "libcublas", "cuda-version 12.6.*")
SOLVE_VIRTUAL_PACKAGES = (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9", "__cuda_arch=9.0")
# The bridged view detection reports for the world (no GPU needed).
OVERRIDES = {
    "CONDA_OVERRIDE_CUDA": "12.9",
    "CONDA_OVERRIDE_CUDA_ARCH": "9.0",
    "CONDA_OVERRIDE_ARCHSPEC": "haswell",
    "CONDA_OVERRIDE_GLIBC": "2.36",
}
UV_FORCE = {
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.6",
    "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0",
}
UV = Path(sys.executable).with_name("uv")


@dataclass(frozen=True)
class ExportWorld:
    root: Path
    channel: Channel
    wheels: Path
    prefix: Path
    site: Path
    lockfile: Path
    records: tuple[Any, ...]
    installed: dict[str, Path] = field(default_factory=dict)
    """Distribution name -> the wheel file uv installed."""

    @property
    def record_set(self) -> set[tuple[str, str, str]]:
        return {(r.name.normalized, str(r.version), str(r.build)) for r in self.records}


def uv_install(site: Path, *args: str, offline: bool = True) -> None:
    env = {**os.environ, **UV_FORCE, "UV_NO_CACHE": "1"}
    command = [
        str(UV),
        "pip",
        "install",
        "--preview-features",
        "wheel-variants",
        "--no-deps",
        "--target",
        str(site),
        "--python",
        sys.executable,
        "--quiet",
        *args,
    ]
    if offline:
        command.append("--offline")
    subprocess.run(command, check=True, env=env, capture_output=True, text=True, timeout=120)


def installed_label(site: Path, name: str) -> str | None:
    """The label in the installed dist-info's ``variant.json`` (what uv picked)."""
    for dist_info in site.glob(f"{name}-*.dist-info"):
        path = dist_info / "variant.json"
        if path.is_file():
            return next(iter(json.loads(path.read_text())["variants"]))
    return None


def build_wheels(wheels: Path) -> dict[str, dict[str | None, Path]]:
    tinyvar = make_release(
        wheels,
        "tinyvar",
        "1.0",
        {
            "cu126": [
                "nvidia :: cuda_version_lower_bound :: 12.6",
                "nvidia :: sm_arch :: 80_real",
                "nvidia :: sm_arch :: 90_real",
            ],
            "cu128": ["nvidia :: cuda_version_lower_bound :: 12.8"],
            "null": [],
        },
    )
    gpuext = make_release(
        wheels, "gpuext", "0.3", {"cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"]}
    )
    plain = make_wheel(wheels, "plainpkg", "2.0")
    return {"tinyvar": tinyvar.wheels, "gpuext": gpuext.wheels, "plainpkg": {None: plain}}


def build_export_world(root: Path, channel: Channel) -> ExportWorld:
    records = tuple(solve([channel], SPECS, SOLVE_VIRTUAL_PACKAGES))
    prefix = install_prefix(records, root / "env", root / "pkgs", SPECS)
    site = site_packages(prefix)
    wheels = build_wheels(root / "wheels")
    gpuext = wheels["gpuext"]["cu126"]
    uv_install(
        site, "--find-links", str(root / "wheels"), "tinyvar==1.0", "plainpkg==2.0", str(gpuext)
    )
    assert installed_label(site, "tinyvar") == "cu126"
    assert installed_label(site, "gpuext") == "cu126"
    installed = {
        "tinyvar": wheels["tinyvar"]["cu126"],
        "gpuext": gpuext,
        "plainpkg": wheels["plainpkg"][None],
    }
    lockfile = write_lockfile(
        root / "pixi.lock",
        {
            "default": [
                LockedPlatform(
                    "linux-64",
                    records,
                    pypi=[
                        (n, v, installed[n].as_uri())
                        for n, v in (("gpuext", "0.3"), ("plainpkg", "2.0"), ("tinyvar", "1.0"))
                    ],
                )
            ]
        },
        channels=[channel.url],
    )
    return ExportWorld(root, channel, root / "wheels", prefix, site, lockfile, records, installed)


@pytest.fixture(scope="session")
def export_world(tmp_path_factory: pytest.TempPathFactory, cuda_channel: Channel) -> ExportWorld:
    return build_export_world(tmp_path_factory.mktemp("export-world"), cuda_channel)


@pytest.fixture
def world_copy(export_world: ExportWorld, tmp_path: Path) -> ExportWorld:
    """A private copy of the prefix (for tests that corrupt or extend it)."""
    prefix = tmp_path / "env"
    shutil.copytree(export_world.prefix, prefix, symlinks=True)
    return ExportWorld(
        export_world.root,
        export_world.channel,
        export_world.wheels,
        prefix,
        site_packages(prefix),
        export_world.lockfile,
        export_world.records,
        export_world.installed,
    )


@contextlib.contextmanager
def export_context(
    *,
    prefix: Path | None = None,
    lockfile: Path | None = None,
    sources: SourceSpec | None = None,
    environ: dict[str, str] = OVERRIDES,
) -> Iterator[Context]:
    """The context ``export`` runs with: the environment read with *environ*, no cache."""
    environment = EnvironmentSpec(prefix=prefix, lockfile=lockfile, environ=environ)
    with Context.open(sources, environment, FetchSpec(no_cache=True, environ=environ)) as ctx:
        yield ctx


def export_prefix(
    world: ExportWorld, *, environ: dict[str, str] = OVERRIDES, **options: Any
) -> ExportModel:
    """The export of *world*'s prefix, its wheels found in its find-links directory."""
    sources = SourceSpec(find_links=(str(world.wheels),))
    with export_context(prefix=world.prefix, sources=sources, environ=environ) as ctx:
        return prepare_export(ExportRequest(**options), ctx)
