"""Built conda packages (``.conda``, ``.tar.bz2``): the variant each was built for.

rattler-build records the variant in ``info/recipe/variant_config.yaml`` and the rendered recipe
(with the build script's environment) in ``info/recipe/rendered_recipe.yaml``; conda-build
records ``info/recipe/conda_build_config.yaml``. ``info/index.json`` gives the name, version,
build string and number and the subdir. Only the ``info`` section is read (py-rattler's
``PackageArchive``), never the payload. Commands call :func:`read_packages` in a child process
(:mod:`._isolated`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from variant_bridge.errors import ReleaseInputError
from variant_bridge.maintainer.conda_side import RawBuild
from variant_bridge.maintainer.recipe import script_env
from variant_bridge.maintainer.variant_config import STRUCTURAL_KEYS, first_line

__all__ = ["PACKAGE_SUFFIXES", "find_packages", "read_packages"]

PACKAGE_SUFFIXES = (".conda", ".tar.bz2")
_VARIANT_FILES = ("info/recipe/variant_config.yaml", "info/recipe/conda_build_config.yaml")
_RENDERED = "info/recipe/rendered_recipe.yaml"


def find_packages(path: Path) -> list[Path]:
    """*path* itself, or the packages anywhere under a directory (a channel, a build output)."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.name.endswith(PACKAGE_SUFFIXES))
    return [path]


def _yaml(data: bytes | None, where: str) -> Any:
    import yaml

    if data is None:
        return None
    try:
        return yaml.safe_load(data)
    except (yaml.YAMLError, RecursionError, ValueError):  # also too deep, or huge numbers
        raise ReleaseInputError(f"{where}: its recipe information is not YAML") from None


def _variant(data: Any) -> dict[str, str]:
    if not isinstance(data, Mapping):
        return {}
    out = {}
    for key, value in data.items():
        if key in STRUCTURAL_KEYS:
            continue
        # conda-build writes lists of one value; rattler-build plain values
        item = value[0] if isinstance(value, list) and len(value) == 1 else value
        if isinstance(item, (str, int, float)):
            out[str(key)] = str(item)
    return out


async def _read_one(path: Path) -> RawBuild:
    from rattler.package_streaming import PackageArchive

    where = str(path)
    try:
        archive = await PackageArchive.from_path(path)
        index = await archive.index_json()
        files = await archive.read_files([*_VARIANT_FILES, _RENDERED])
    except (OSError, ValueError, RuntimeError) as e:
        raise ReleaseInputError(f"{where}: not a readable conda package: {first_line(e)}") from None
    contents: Mapping[str, bytes | None] = files
    variant_data = next(
        (contents[name] for name in _VARIANT_FILES if contents.get(name) is not None), None
    )
    if variant_data is None:
        raise ReleaseInputError(
            f"{where}: the package records no variant (no {' or '.join(_VARIANT_FILES)})"
        )
    variant = _variant(_yaml(variant_data, where))
    rendered = _yaml(contents.get(_RENDERED), where) or {}
    recipe = rendered.get("recipe", {}) if isinstance(rendered, Mapping) else {}
    env = script_env(recipe.get("build") if isinstance(recipe, Mapping) else None)
    return RawBuild(
        where=where,
        variant=variant,
        env=env,
        platform=str(index.subdir) if index.subdir else None,
        build_number=int(index.build_number),
        build_string=str(index.build),
        name=str(index.name.normalized),
        version=str(index.version),
    )


def read_packages(paths: Iterable[Path]) -> list[RawBuild]:
    """The variant of each package (noarch ones too; the caller decides what to compare).

    :raises ReleaseInputError: a file that is no conda package or records no variant.
    """

    async def read_all() -> list[RawBuild]:
        return [await _read_one(path) for path in paths]

    return asyncio.run(read_all())
