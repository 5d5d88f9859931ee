"""Matrices other tools keep, read into the conda builds ``matrix`` derives a matrix from.

- **conda-forge's global pinning** (conda-forge-pinning's ``conda_build_config.yaml``) plus its
  **migrations** (``migrations/cuda130.yaml``): the pinning pins hundreds of keys a recipe takes
  by name; only its CUDA axis is a build axis of a CUDA package: ``cuda_compiler_version`` and
  the keys zipped with it (``c_stdlib_version``, the compilers), with ``cuda_compiler`` and
  ``python``. Its selectors are evaluated for the platform with ``CF_CUDA_ENABLED=True`` (what
  conda-smithy sets for a recipe using the CUDA compiler) by py-rattler-build, in a child
  process; a migration's keys are applied as conda-smithy does (``key_add`` appends to the
  pinning's values, zipped keys alike; otherwise they replace them).
- **RAPIDS' dependency-file-generator** (``dependencies.yaml``): a ``files`` entry's ``matrix``
  axes ``cuda`` and ``arch`` (``x86_64`` -> linux-64), Python from its ``py`` axis or the ``py``
  values its included dependencies list, and the glibc its ``sysroot_<subdir>==X.Y`` package
  pins. It knows no SM lists and no CPU build.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from variant_bridge.errors import ReleaseInputError
from variant_bridge.maintainer._files import check_regular, load_yaml, read_input
from variant_bridge.maintainer._isolated import run_isolated
from variant_bridge.maintainer.conda_side import RawBuild
from variant_bridge.maintainer.variant_config import (
    STRUCTURAL_KEYS,
    expand,
    first_line,
    import_rattler_build,
)
from variant_bridge.mappings import load_tables

__all__ = ["MIGRATOR_KEY", "apply_migration", "read_dfg", "read_pinning", "read_pinning_files"]

CUDA_KEY = "cuda_compiler_version"
MIGRATOR_KEY = "__migrator"
_MIGRATION_META = (MIGRATOR_KEY, "migrator_ts")
_KEPT = ("cuda_compiler", "c_stdlib")
"""Keys beside the CUDA zip group a CUDA package's builds share."""
CUDA_ENABLED = ("CF_CUDA_ENABLED", "True")

Values = dict[str, list[str]]


def _top_level_key(line: str) -> str | None:
    match = re.match(r"([A-Za-z_][\w.-]*)\s*:", line)
    return match[1] if match else None


def _without_meta(text: str) -> str:
    """A migration's text without its ``__migrator`` and ``migrator_ts`` blocks (the variant
    keys stay, selectors and all, for py-rattler-build)."""
    kept, skipping = [], False
    for line in text.splitlines():
        key = _top_level_key(line)
        if key is not None:
            skipping = key in _MIGRATION_META
        if not skipping:
            kept.append(line)
    return "\n".join(kept) + "\n"


def read_pinning_files(
    paths: Sequence[Path], platform: str
) -> list[tuple[Values, list[list[str]]]]:
    """Each file's values and zip groups as py-rattler-build evaluates them for *platform*, with
    ``CF_CUDA_ENABLED=True`` (run in a child process by :func:`read_pinning`: it sets the
    variable there); a migration's ``__migrator`` block is left out first."""
    rb = import_rattler_build("read conda-forge's pinning")
    os.environ[CUDA_ENABLED[0]] = CUDA_ENABLED[1]
    jinja = rb.JinjaConfig(platform=rb.PlatformConfig(target_platform=platform))
    out = []
    for path in paths:
        text = read_input(path).decode("utf-8", "replace")
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "conda_build_config.yaml"
            copy.write_text(_without_meta(text), encoding="utf-8")
            try:
                config = rb.VariantConfig.from_conda_build_config(str(copy), jinja)
            except Exception as e:  # py-rattler-build's own classes: one line says why
                raise ReleaseInputError(
                    f"{path}: not a conda_build_config: {first_line(e)}"
                ) from None
        values = {
            str(k): [str(v) for v in vs]
            for k, vs in config.to_dict().items()
            if k not in STRUCTURAL_KEYS
        }
        out.append((values, [list(group) for group in config.zip_keys or ()]))
    return out


def apply_migration(values: Values, migration: Values, operation: str | None) -> Values:
    """The pinning's values with a migration's applied: ``key_add`` appends each key's values
    (zipped keys alike, so the zip stays whole); any other operation replaces them."""
    out = {k: list(v) for k, v in values.items()}
    for key, added in migration.items():
        if operation == "key_add" and key in out:
            out[key] = out[key] + list(added)
        else:
            out[key] = list(added)
    return out


def _operation(path: Path) -> str | None:
    data = load_yaml(path, what="a conda-forge migration")
    meta = data.get(MIGRATOR_KEY) if isinstance(data, Mapping) else None
    if not isinstance(meta, Mapping):
        raise ReleaseInputError(f"{path}: not a conda-forge migration (no {MIGRATOR_KEY} block)")
    operation = meta.get("operation")
    return str(operation) if operation is not None else None


def read_pinning(
    pinning: Path, migrations: Sequence[Path], platform: str
) -> tuple[list[RawBuild], tuple[str, ...]]:
    """The CUDA axis of conda-forge's pinning (with *migrations* applied) on *platform*: one
    raw build per row of the zip group holding ``cuda_compiler_version`` and per Python.

    :raises ReleaseInputError: a file that is no pinning or migration, or a pinning without
        ``cuda_compiler_version``.
    """
    for path in (pinning, *migrations):
        check_regular(path)
    operations = [_operation(m) for m in migrations]
    (values, zips), *applied = run_isolated(read_pinning_files, [pinning, *migrations], platform)
    for (migration, _), operation in zip(applied, operations, strict=True):
        values = apply_migration(values, migration, operation)
    if CUDA_KEY not in values:
        raise ReleaseInputError(f"{pinning}: no {CUDA_KEY}: not conda-forge's pinning")
    group = next((g for g in zips if CUDA_KEY in g), [CUDA_KEY])
    axis = {k: values[k] for k in group if k in values}
    axis.update({k: values[k][:1] for k in _KEPT if k in values})
    rows = expand(axis, [[k for k in group if k in values]], where=str(pinning))
    pythons = values.get("python", [])
    raws = [
        RawBuild(
            f"{pinning} ({CUDA_KEY} {row[CUDA_KEY]})",
            {**row, **({"python": python} if python else {}), "target_platform": platform},
            platform=platform,
        )
        for row in rows
        for python in (pythons or [""])
    ]
    zipped = ", ".join(k for k in axis if k not in (CUDA_KEY, *_KEPT)) or "nothing"
    names = ", ".join(m.name for m in migrations)
    note = (
        f"conda-forge's pinning for {platform} with {CUDA_ENABLED[0]}={CUDA_ENABLED[1]}"
        + (f" and the migration{'s' * (len(migrations) > 1)} {names}" if migrations else "")
        + f": its CUDA axis ({CUDA_KEY} zipped with {zipped}) and python; its other "
        f"{len(values) - len(axis) - ('python' in values)} keys are pins a recipe takes by "
        "name, not build axes"
    )
    return raws, (note,)


# -- RAPIDS dependency-file-generator ---------------------------------------------------------


def _strings(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(v) for v in items if isinstance(v, (str, int, float)) and not isinstance(v, bool)]


def _dfg_file(data: Mapping[str, Any], path: Path, file_key: str | None) -> tuple[str, Any]:
    files = data.get("files")
    if not isinstance(files, Mapping) or not isinstance(data.get("dependencies"), Mapping):
        raise ReleaseInputError(
            f"{path}: not a dependency-file-generator file (expected 'files' and 'dependencies')"
        )
    with_cuda = {
        str(k): v for k, v in files.items()
        if isinstance(v, Mapping) and isinstance(v.get("matrix"), Mapping)
        and "cuda" in v["matrix"]
    }  # fmt: skip
    if file_key is not None:
        if file_key not in with_cuda:
            known = ", ".join(sorted(with_cuda)) or "none"
            raise ReleaseInputError(
                f"{path}: files.{file_key} has no matrix with a cuda axis (those with one: {known})"
            )
        return file_key, with_cuda[file_key]
    axes = {tuple(_strings(v["matrix"]["cuda"])) for v in with_cuda.values()}
    if not with_cuda:
        raise ReleaseInputError(f"{path}: no files entry has a matrix with a cuda axis")
    if len(axes) > 1:
        raise ReleaseInputError(
            f"{path}: files {', '.join(sorted(with_cuda))} have different cuda axes: name one "
            "with --file-key"
        )
    key = sorted(with_cuda)[0]
    return key, with_cuda[key]


def _matrices(data: Mapping[str, Any], includes: list[str]) -> list[tuple[Mapping[str, Any], Any]]:
    """(matrix, packages) of every entry of the included dependency lists (``common`` entries
    with an empty matrix)."""
    found: list[tuple[Mapping[str, Any], Any]] = []
    dependencies = data.get("dependencies") or {}
    for name in includes:
        entry = dependencies.get(name) if isinstance(dependencies, Mapping) else None
        if not isinstance(entry, Mapping):
            continue
        for common in entry.get("common") or []:
            if isinstance(common, Mapping):
                found.append(({}, common.get("packages")))
        for specific in entry.get("specific") or []:
            for item in (specific.get("matrices") or []) if isinstance(specific, Mapping) else []:
                if isinstance(item, Mapping):
                    matrix = item.get("matrix")
                    found.append(
                        (matrix if isinstance(matrix, Mapping) else {}, item.get("packages"))
                    )
    return found


def _python_order(version: str) -> tuple[int, ...]:
    """Sort ``3.9`` before ``3.10``; a part no Python has (not 1-4 ASCII digits: a 5,000-digit
    one) sorts first, and is refused where the version is read."""
    return tuple(
        int(x) if x.isascii() and x.isdigit() and len(x) <= 4 else -1 for x in version.split(".")
    )


def read_dfg(
    path: Path, file_key: str | None, platform: str
) -> tuple[list[RawBuild], tuple[str, ...]]:
    """The builds a dependency-file-generator ``files`` entry's matrix stands for on *platform*.

    :raises ReleaseInputError: no such file entry, no cuda axis, or a matrix that does not build
        for *platform*.
    """
    data = load_yaml(path, what="a dependency-file-generator file")
    if not isinstance(data, Mapping):
        raise ReleaseInputError(f"{path}: not a dependency-file-generator file")
    key, entry = _dfg_file(data, path, file_key)
    matrix = entry["matrix"]
    cudas = _strings(matrix["cuda"])
    info = load_tables().platform.subdirs.get(platform)
    machines = list(info.machines) if info is not None else []
    arches = _strings(matrix.get("arch", []))
    if arches and not set(arches) & set(machines):
        raise ReleaseInputError(
            f"{path}: files.{key} builds for arch {', '.join(arches)}, not {platform}: pass "
            "--platform"
        )
    includes = _strings(entry.get("includes", []))
    entries = _matrices(data, includes)
    pythons = _strings(matrix.get("py", [])) or sorted(
        {p for m, _ in entries for p in _strings(m.get("py", []))},
        key=_python_order,
    )
    sysroot = re.compile(rf"sysroot_{re.escape(platform)}\s*==?\s*([0-9]+\.[0-9]+)")
    glibc = sorted({
        match[1]
        for m, packages in entries
        if not _strings(m.get("arch", [])) or set(_strings(m.get("arch", []))) & set(machines)
        for package in _strings(packages or [])
        if (match := sysroot.match(package))
    })  # fmt: skip
    raws = [
        RawBuild(
            f"{path} (files.{key}, cuda {cuda})",
            {
                "cuda_compiler_version": cuda,
                "target_platform": platform,
                **({"c_stdlib_version": glibc[0]} if len(glibc) == 1 else {}),
                **({"python": python} if python else {}),
            },
            platform=platform,
        )
        for cuda in cudas
        for python in (pythons or [""])
    ]
    said = f"glibc {glibc[0]} from sysroot_{platform}" if len(glibc) == 1 else "no glibc"
    note = (
        f"dependency-file-generator's files.{key} matrix for {platform}: cuda "
        f"{', '.join(cudas)}; Python {', '.join(pythons) or 'unknown'}; {said}; it names no SM "
        "list (pass --arch-list) and no CPU build"
    )
    return raws, (note,)
