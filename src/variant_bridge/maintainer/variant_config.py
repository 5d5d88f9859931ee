"""Conda variant configurations: read, expanded to concrete variants, written back.

Two kinds of file say what a conda release builds:

- a *rendered* configuration, conda-smithy's ``.ci_support/*.yaml`` (one CI job: every key a
  list, usually of one value, plus ``zip_keys`` and ``pin_run_as_build``); read here with PyYAML,
  no selector can appear in it;
- a *source* configuration, rattler-build's ``variants.yaml`` or conda-build's
  ``conda_build_config.yaml``, which may hold selectors (``if:``, ``# [linux]``): read by
  py-rattler-build's ``VariantConfig`` (:func:`read_source_config`, in the caller's process;
  jobs run it in a child, see :mod:`._isolated`).

:func:`expand` turns either into concrete variants with conda's ``zip_keys`` rule: keys of one zip
group advance together, everything else multiplies.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from variant_bridge.errors import ReleaseInputError, clip
from variant_bridge.maintainer._files import check_regular, load_yaml

__all__ = [
    "SOURCE_CONFIG_NAMES",
    "STRUCTURAL_KEYS",
    "VariantConfigFile",
    "expand",
    "first_line",
    "import_rattler_build",
    "is_source_config",
    "read_rendered_config",
    "read_source_config",
]

SOURCE_CONFIG_NAMES = frozenset(
    {"variants.yaml", "variants.yml", "conda_build_config.yaml", "conda_build_config.yml"}
)
"""File names read as source configurations (selectors allowed); any other YAML is rendered."""

STRUCTURAL_KEYS = frozenset({"zip_keys", "pin_run_as_build", "extend_keys", "ignore_version"})
"""Keys that shape the matrix rather than being variant values."""


@dataclass(frozen=True, slots=True)
class VariantConfigFile:
    """One variant configuration: its values (each a list of strings) and zip groups."""

    path: str
    values: Mapping[str, tuple[str, ...]]
    zip_keys: tuple[tuple[str, ...], ...] = ()

    def variants(self) -> list[dict[str, str]]:
        return expand(self.values, self.zip_keys, where=self.path)


def is_source_config(path: Path) -> bool:
    return path.name in SOURCE_CONFIG_NAMES


def _scalar(value: object) -> str | None:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _values(data: Mapping[str, Any], where: str) -> dict[str, tuple[str, ...]]:
    values: dict[str, tuple[str, ...]] = {}
    for key, raw in data.items():
        if key in STRUCTURAL_KEYS:
            continue
        items = raw if isinstance(raw, list) else [raw]
        texts = [_scalar(item) for item in items]
        if not items or any(t is None for t in texts):
            raise ReleaseInputError(
                f"{where}: {key!r} is not a list of plain values (strings or numbers); a "
                "selector needs a source configuration (variants.yaml) read by py-rattler-build"
            )
        values[str(key)] = tuple(t for t in texts if t is not None)
    return values


def _zip_keys(
    data: Mapping[str, Any], values: Mapping[str, Sequence[str]], where: str
) -> list[tuple[str, ...]]:
    raw = data.get("zip_keys") or []
    if raw and isinstance(raw[0], str):  # one group written flat
        raw = [raw]
    groups: list[tuple[str, ...]] = []
    for group in raw if isinstance(raw, list) else [None]:
        if not isinstance(group, list) or not all(isinstance(k, str) for k in group):
            raise ReleaseInputError(f"{where}: zip_keys must be a list of lists of key names")
        groups.append(tuple(group))
    return groups


def read_rendered_config(path: Path) -> VariantConfigFile:
    """A rendered configuration (a ``.ci_support`` file), checked.

    :raises ReleaseInputError: unreadable, not YAML, not a mapping of lists, bad ``zip_keys``.
    """
    where = str(path)
    data = load_yaml(path, what="a YAML variant configuration")
    if isinstance(data, dict) and "__migrator" in data:
        raise ReleaseInputError(
            f"{where}: a conda-forge migration, not a variant configuration: apply it to the "
            "pinning with matrix --from-pinning CONDA_BUILD_CONFIG --migration FILE"
        )
    if isinstance(data, dict) and isinstance(data.get("files"), dict) and "dependencies" in data:
        raise ReleaseInputError(
            f"{where}: a RAPIDS dependency-file-generator file, not a variant configuration: "
            "read its matrix with matrix --from-dfg FILE"
        )
    if not isinstance(data, dict) or not data:
        raise ReleaseInputError(
            f"{where}: expected a mapping of variant keys to lists of values (a .ci_support "
            "file or variants.yaml)"
        )
    values = _values(data, where)
    config = VariantConfigFile(str(path), values, tuple(_zip_keys(data, values, where)))
    config.variants()  # checks the zip groups now, at the edge
    return config


def expand(
    values: Mapping[str, Sequence[str]],
    zip_keys: Sequence[Sequence[str]] = (),
    *,
    where: str = "variant configuration",
) -> list[dict[str, str]]:
    """Every concrete variant: zipped keys advance together, the rest multiply (conda's rule).

    A zip group's keys absent from *values* are ignored (as conda-build does).

    :raises ReleaseInputError: keys of one zip group with different numbers of values.
    """
    axes: list[list[dict[str, str]]] = []
    zipped: set[str] = set()
    for group in zip_keys:
        present = [k for k in group if k in values]
        if not present:
            continue
        lengths = {k: len(values[k]) for k in present}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k} ({n})" for k, n in lengths.items())
            raise ReleaseInputError(
                f"{where}: the zipped keys need the same number of values: {shown}"
            )
        count = next(iter(lengths.values()))
        axes.append([{k: values[k][i] for k in present} for i in range(count)])
        zipped.update(present)
    for key, items in values.items():
        if key not in zipped:
            axes.append([{key: item} for item in items])
    variants = []
    for combination in itertools.product(*axes):
        merged: dict[str, str] = {}
        for part in combination:
            merged.update(part)
        variants.append(merged)
    return variants


def read_source_config(path: Path, *, platform: str) -> VariantConfigFile:
    """A ``variants.yaml`` / ``conda_build_config.yaml`` evaluated by py-rattler-build for
    *platform* (selectors applied).

    :raises ReleaseInputError: py-rattler-build missing, or the file is not a variant config.
    """
    rattler_build = import_rattler_build("read a variants.yaml")
    where = str(path)
    check_regular(path)
    try:
        jinja = rattler_build.JinjaConfig(
            platform=rattler_build.PlatformConfig(target_platform=platform)
        )
        if path.name.startswith("conda_build_config"):
            config = rattler_build.VariantConfig.from_conda_build_config(str(path), jinja)
        else:
            config = rattler_build.VariantConfig.from_file_with_context(str(path), jinja)
    except Exception as e:  # py-rattler-build raises its own classes; one line says why
        raise ReleaseInputError(
            f"{where}: not a valid variant configuration: {first_line(e)}"
        ) from None
    values = {
        str(k): tuple(str(v) for v in vs)
        for k, vs in config.to_dict().items()
        if k not in STRUCTURAL_KEYS
    }
    zip_keys = tuple(tuple(group) for group in config.zip_keys or ())
    return VariantConfigFile(str(path), values, zip_keys)


def first_line(error: Exception) -> str:
    """The useful line of a py-rattler-build error (its ``message``, else its first line)."""
    text = str(error).strip()
    for marker in ('message: "', "message: '"):
        if marker in text:
            return text.split(marker, 1)[1].split(marker[-1], 1)[0]
    return clip(text.splitlines()[0] if text else type(error).__name__, limit=200)


def import_rattler_build(purpose: str) -> Any:
    """py-rattler-build, imported on first use.

    :raises ReleaseInputError: naming what needed it and how to install it.
    """
    try:
        import rattler_build
    except ImportError:
        raise ReleaseInputError(
            f"py-rattler-build is needed to {purpose}: pip install 'variant-bridge[maintainer]'"
        ) from None
    return rattler_build
