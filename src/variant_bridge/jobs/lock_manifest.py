"""The pixi.toml beside a pixi.lock that ``solve --write-lock`` wrote, which the lock satisfies.

pixi re-solves a lock whose manifest asks for something else, so the manifest states what the lock
holds: its channels, every conda package pinned to the locked build, every wheel pinned to its
locked file (the variant wheels' plain-named copies), the indexes and find-links of the solve, and
a rich platform that declares exactly the virtual packages the lock's platform declares (under the
lock's platform name). It is the export of the lock (:mod:`variant_bridge.jobs.export`), written
new, or applied to the pixi.toml already there, changing only the export's own entries.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from variant_bridge.environment import Environment
from variant_bridge.errors import ExportError, SolveError
from variant_bridge.export import render, update_manifest, write_export
from variant_bridge.export.model import PlatformDeclaration
from variant_bridge.indexes import Downloads
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.export import ExportRequest, prepare_export
from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, SourceSpec
from variant_bridge.jobs.target import Target

__all__ = ["MANIFEST", "write_lock_manifest"]

MANIFEST = "pixi.toml"


def _declaration(env: Environment, subdir: str) -> PlatformDeclaration:
    """The rich platform entry that declares the lock platform's virtual packages."""
    facts = {vp.name: vp for vp in env.virtual_packages}

    def version(name: str) -> str | None:
        vp = facts.get(name)
        return vp.version if vp is not None else None

    archspec = facts.get("__archspec")
    return PlatformDeclaration(
        subdir,
        cuda=version("__cuda"),
        cuda_arch=version("__cuda_arch") if version("__cuda") else None,
        archspec=archspec.build if archspec is not None else None,
        glibc=version("__glibc"),
        name=subdir,
    )


def write_lock_manifest(
    lockfile: Path,
    env: Environment,
    index_urls: Sequence[str],
    find_links: Sequence[str],
    downloads: Downloads,
) -> Path:
    """Write (or update) the pixi.toml beside *lockfile*; returns its path.

    :param env: what the solve declared (the lock platform's virtual packages).
    :param find_links: as the lock names them (relative to its folder, absolute, or URLs).
    :param downloads: the solve's (the lock's wheels are its files: nothing is fetched again).
    :raises SolveError: the manifest cannot be read, edited or written (naming it).
    """
    folder = lockfile.absolute().parent
    links = tuple(f if "://" in f else os.path.normpath(folder / f) for f in find_links)
    request = ExportRequest(
        every_wheel=True,  # each wheel pinned to its locked file, as the lock has it
        producer="variant-bridge solve --write-lock",
        project_dir=folder,
    )
    manifest = folder / MANIFEST
    try:
        sources = Sources.of(SourceSpec(find_links=links, extra_index_urls=tuple(index_urls)))
        target = Target.of(EnvironmentSpec(lockfile=lockfile))
        model = prepare_export(request, Context(sources, downloads, target, FetchSpec()))
        model = replace(
            model,
            platform_declaration=_declaration(env, model.platform),
            strict_host_requirements=True,  # a rich platform entry, the lock's own
            base_dir=str(folder),
        )
        if manifest.exists():
            update_manifest(manifest, model)
        else:
            write_export(manifest, render(model, "pixi-toml"), force=False)
    except ExportError as e:
        raise SolveError(f"wrote {lockfile}, but not {manifest}: {e}") from e
    return manifest
