"""The conda side from whatever the maintainer has: which reader each path needs.

- a folder holding conda packages (a channel, a build output) or a package file: built packages;
- ``recipe.yaml``: rendered with its variant files (``--variants``, else ``variants.yaml`` beside);
- ``variants.yaml`` / ``conda_build_config.yaml``: a source configuration (py-rattler-build);
- any other YAML file, or a folder of them (``.ci_support/``): rendered configurations.

Everything py-rattler-build or py-rattler reads runs in one child process
(:func:`~variant_bridge.maintainer._isolated.run_isolated`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from packaging.utils import canonicalize_name

from variant_bridge.errors import ReleaseInputError
from variant_bridge.maintainer._files import MAX_INPUT, MAX_PACKAGE, check_regular
from variant_bridge.maintainer._isolated import run_isolated
from variant_bridge.maintainer.conda_side import RawBuild
from variant_bridge.maintainer.packages import PACKAGE_SUFFIXES, find_packages, read_packages
from variant_bridge.maintainer.recipe import find_variant_files, render_recipe
from variant_bridge.maintainer.variant_config import (
    VariantConfigFile,
    is_source_config,
    read_rendered_config,
    read_source_config,
)

__all__ = ["read_rattler_inputs", "read_raw_builds"]

_YAML = (".yaml", ".yml")


def _rendered_files(folder: Path) -> list[Path]:
    """The YAML files of a folder (``.ci_support``); one that is no regular file (a FIFO named
    ``x.yaml``) is refused, not skipped: it may be what the maintainer meant."""
    found = sorted(p for p in folder.iterdir() if p.suffix in _YAML)
    for path in found:
        check_regular(path)
    return found


def _config_builds(config: VariantConfigFile) -> list[RawBuild]:
    return [
        RawBuild(f"{config.path}" + (f" (variant {i + 1})" if i else ""), variant)
        for i, variant in enumerate(config.variants())
    ]


def read_rattler_inputs(
    recipes: Sequence[tuple[Path, tuple[Path, ...]]],
    sources: Sequence[Path],
    packages: Sequence[Path],
    platforms: Sequence[str],
) -> list[RawBuild]:
    """What only py-rattler(-build) reads; run in a child process by :func:`read_raw_builds`.
    Recipes and variant configurations are evaluated for each of *platforms*."""
    raws: list[RawBuild] = []
    for platform in platforms:
        found: list[RawBuild] = []
        for recipe, variants in recipes:
            found += render_recipe(recipe, variants, platform=platform)
        for source in sources:
            found += _config_builds(read_source_config(source, platform=platform))
        if len(platforms) > 1:
            found = [replace(r, where=f"{r.where} for {platform}") for r in found]
        raws += [r if r.platform else replace(r, platform=platform) for r in found]
    if packages:
        raws += read_packages(packages)
    return raws


def read_raw_builds(
    paths: Sequence[Path], variants: Sequence[Path], platforms: str | Sequence[str]
) -> list[RawBuild]:
    """Every conda variant the *paths* describe (recipes and variant configurations evaluated
    for each of *platforms*; rendered files and packages say their own).

    :raises ReleaseInputError: a path that does not exist or holds nothing to read.
    """
    platforms = (platforms,) if isinstance(platforms, str) else tuple(platforms)
    recipes: list[tuple[Path, tuple[Path, ...]]] = []
    sources: list[Path] = []
    packages: list[Path] = []
    raws: list[RawBuild] = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise ReleaseInputError(f"{path!s}: no such file or folder")
        if path.is_dir():
            found = find_packages(path)
            for package in found:
                check_regular(package, limit=MAX_PACKAGE)
            rendered = _rendered_files(path)
            if found:
                packages += found
            elif rendered:
                for file in rendered:
                    raws += _config_builds(read_rendered_config(file))
            else:
                raise ReleaseInputError(
                    f"{path!s}: no conda packages and no .ci_support YAML files in it"
                )
            continue
        is_package = path.name.endswith(PACKAGE_SUFFIXES)
        check_regular(path, limit=MAX_PACKAGE if is_package else MAX_INPUT)
        if is_package:
            packages.append(path)
        elif path.name in ("recipe.yaml", "meta.yaml"):
            recipes.append((path, tuple(variants) or tuple(find_variant_files(path))))
        elif is_source_config(path):
            sources.append(path)
        else:
            raws += _config_builds(read_rendered_config(path))
    if recipes or sources or packages:
        raws += run_isolated(read_rattler_inputs, recipes, sources, packages, platforms)
    return raws


def one_package(
    raws: Sequence[RawBuild], wanted: str | None, project: str | None
) -> list[RawBuild]:
    """The packages of the release: all of one name (``--conda-name``, else the only name
    among them, else the wheels' project name)."""
    names = sorted({r.name for r in raws if r.name})
    if wanted is not None:
        kept = [r for r in raws if r.name is None or r.name == wanted]
        if not kept:
            raise ReleaseInputError(
                f"no conda package named {wanted!r} (found {', '.join(names) or 'none'})"
            )
        return kept
    if len(names) <= 1:
        return list(raws)
    if project is not None and str(canonicalize_name(project)) in names:
        return [r for r in raws if r.name in (None, str(canonicalize_name(project)))]
    raise ReleaseInputError(
        f"conda packages of several names ({', '.join(names)}): name the release's package "
        "(check --conda-name, matrix --project)"
    )
