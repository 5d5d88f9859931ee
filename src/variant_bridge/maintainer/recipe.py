"""A rattler-build recipe rendered by py-rattler-build: one :class:`RawBuild` per variant.

Rendering evaluates the recipe's Jinja and selectors for each variant of its ``variants.yaml``
(the variant keeps only the keys the recipe uses); the build script's environment, staging
caches included, is where flash-attn-style recipes state ``TORCH_CUDA_ARCH_LIST`` or
``CUDAARCHS``. Only v1 recipes (``recipe.yaml``) render; conda-build's ``meta.yaml`` does not
(use its ``.ci_support`` files). Call :func:`render_recipe` in a child process from commands
(:mod:`._isolated`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from variant_bridge.errors import ReleaseInputError
from variant_bridge.maintainer._files import check_regular
from variant_bridge.maintainer.conda_side import RawBuild
from variant_bridge.maintainer.variant_config import first_line, import_rattler_build

__all__ = ["find_variant_files", "render_recipe", "script_env"]


def find_variant_files(recipe: Path) -> list[Path]:
    """The variant files beside a recipe, as rattler-build looks for them (one that is there
    but no regular file, a FIFO, is refused)."""
    found = [p for p in (recipe.parent / "variants.yaml",) if p.exists() or p.is_symlink()]
    for path in found:
        check_regular(path)
    return found


def script_env(build: Mapping[str, Any] | None) -> dict[str, str]:
    script = (build or {}).get("script")
    env = script.get("env") if isinstance(script, Mapping) else None
    if not isinstance(env, Mapping):
        return {}
    return {str(k): str(v) for k, v in env.items()}


def _env(recipe: Mapping[str, Any]) -> dict[str, str]:
    env: dict[str, str] = {}
    for cache in recipe.get("staging_caches") or ():
        if isinstance(cache, Mapping):
            env.update(script_env(cache.get("build")))
    env.update(script_env(recipe.get("build")))
    return env


def render_recipe(recipe: Path, variant_files: Sequence[Path], *, platform: str) -> list[RawBuild]:
    """Render *recipe* for every variant of *variant_files* (merged in order) on *platform*.

    :raises ReleaseInputError: py-rattler-build missing, a variant file or the recipe that does
        not parse or render (one line, naming the file).
    """
    rb = import_rattler_build("render a recipe")
    where = str(recipe)
    if recipe.name == "meta.yaml":
        raise ReleaseInputError(
            f"{where}: conda-build (v0) recipes do not render here; pass the feedstock's "
            ".ci_support/*.yaml files instead"
        )
    for path in (recipe, *variant_files):
        check_regular(path)
    jinja = rb.JinjaConfig(platform=rb.PlatformConfig(target_platform=platform))
    try:
        configs = [rb.VariantConfig.from_file_with_context(str(p), jinja) for p in variant_files]
    except Exception as e:  # py-rattler-build's own error classes
        raise ReleaseInputError(
            f"{where}: a variant file does not parse: {first_line(e)}"
        ) from None
    config = configs[0] if configs else rb.VariantConfig()
    for other in configs[1:]:
        config = config.merge(other)
    try:
        rendered = rb.Stage0Recipe.from_file(str(recipe)).render(
            config, rb.RenderConfig(platform=rb.PlatformConfig(target_platform=platform))
        )
    except Exception as e:
        raise ReleaseInputError(f"{where}: the recipe does not render: {first_line(e)}") from None
    builds = []
    for index, item in enumerate(rendered):
        data = item.recipe.to_dict()
        build = data.get("build") or {}
        package = data.get("package") or {}
        variant = {str(k): str(v) for k, v in item.variant.items()}
        builds.append(
            RawBuild(
                where=f"{where} (variant {index + 1})",
                variant=variant,
                env=_env(data),
                platform=variant.get("target_platform", platform),
                build_number=_int(build.get("number")),
                build_string=str(build["string"]) if build.get("string") else None,
                name=str(package["name"]) if package.get("name") else None,
                version=str(package["version"]) if package.get("version") else None,
            )
        )
    return builds


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None
