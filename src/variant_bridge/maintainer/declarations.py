"""Wheel-side declarations: how a maintainer says which variant wheels a release has.

Two real shapes are read:

- wheelnext/variant-repack's configuration (``[variant_configs.<key>]`` with ``variant_label``
  and ``properties = [{namespace, feature, value}]``; an empty list is the null variant) with
  ``[metadata_configs.<project>].deps_add_list``: the ``Requires-Dist`` lines, with variant
  markers, added to every wheel, so each variant's pinned CUDA components are known;
- scikit-build-core's ``[[tool.scikit-build.overrides]]`` in pyproject.toml with ``variant``
  (``"ns :: feature :: value"`` strings), ``variant-label`` or ``null-variant = true``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from variant_bridge.errors import InvalidProperty, ReleaseInputError
from variant_bridge.maintainer._files import load_toml
from variant_bridge.maintainer.wheel_side import WheelTarget, evidence_for
from variant_bridge.properties import VariantDescription, VariantProperty
from variant_bridge.release import WheelSide, WheelVariant

__all__ = ["is_declaration", "read_declaration"]


def _overrides(data: Mapping[str, Any]) -> list[Any]:
    tool = data.get("tool", {})
    skbuild = tool.get("scikit-build", {}) if isinstance(tool, Mapping) else {}
    overrides = skbuild.get("overrides", []) if isinstance(skbuild, Mapping) else []
    return [
        o for o in overrides if isinstance(o, Mapping) and ("variant" in o or "null-variant" in o)
    ]


def is_declaration(path: Path) -> bool:
    """A TOML file holding one of the declarations above."""
    if path.suffix != ".toml" or not path.is_file():
        return False
    data = load_toml(path)
    return "variant_configs" in data or bool(_overrides(data))


def _repack_variant(key: str, table: Any, where: str) -> VariantDescription:
    if not isinstance(table, Mapping) or not isinstance(table.get("properties", []), list):
        raise ReleaseInputError(f"{where}: [variant_configs.{key}] needs a properties list")
    props = []
    for item in table.get("properties", []):
        if not isinstance(item, Mapping):
            raise ReleaseInputError(f"{where}: [variant_configs.{key}] has a malformed property")
        props.append(VariantProperty(str(item.get("namespace")), str(item.get("feature")),
                                     str(item.get("value"))))  # fmt: skip
    label = table.get("variant_label")
    return VariantDescription.of(props, str(label) if label is not None else None)


def _repack(data: Mapping[str, Any], where: str, project: str | None) -> WheelSide:
    configs = data.get("metadata_configs", {})
    names = list(configs) if isinstance(configs, Mapping) else []
    if project is None and len(names) > 1:
        raise ReleaseInputError(
            f"{where}: declares several projects ({', '.join(names)}); name one with --project"
        )
    name = project or (names[0] if names else None)
    found = {str(canonicalize_name(n)): n for n in names}
    entry = configs.get(found.get(str(canonicalize_name(name)), ""), {}) if name else {}
    lines = [str(x) for x in entry.get("deps_add_list", [])] if isinstance(entry, Mapping) else []
    variants = []
    for key, table in data["variant_configs"].items():
        description = _repack_variant(str(key), table, where)
        evidence, _ = evidence_for(description, lines, (), WheelTarget())
        variants.append(WheelVariant(description, evidence if lines else None))
    return WheelSide(tuple(variants), (where,), name)


def _skbuild(data: Mapping[str, Any], where: str) -> WheelSide:
    project = data.get("project", {})
    variants = []
    for override in _overrides(data):
        if override.get("null-variant"):
            variants.append(WheelVariant(VariantDescription.null()))
            continue
        values = override.get("variant", [])
        label = override.get("variant-label")
        props = [VariantProperty.parse(str(v)) for v in values]
        variants.append(WheelVariant(VariantDescription.of(props, label)))
    name = project.get("name") if isinstance(project, Mapping) else None
    version = project.get("version") if isinstance(project, Mapping) else None
    return WheelSide(tuple(variants), (where,), name, version)


def read_declaration(path: Path, *, project: str | None = None) -> WheelSide:
    """The variants a declaration file says a release has.

    :raises ReleaseInputError: not TOML, no declaration, a malformed property or label.
    """
    where = str(path)
    data = load_toml(path)
    try:
        if "variant_configs" in data:
            return _repack(data, where, project)
        if _overrides(data):
            return _skbuild(data, where)
    except InvalidProperty as e:
        raise ReleaseInputError(f"{where}: {e}") from None
    raise ReleaseInputError(
        f"{where}: no wheel variants declared (expected [variant_configs] or "
        "[[tool.scikit-build.overrides]] with variant = [...])"
    )
