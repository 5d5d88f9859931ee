"""The ``matrix`` use case: one declared (or derived) matrix, both ecosystems' files generated.

The matrix comes from a declaration (``[tool.variant-bridge.matrix]`` in pyproject.toml, or a
standalone TOML file with the same keys at the top), or is derived from the conda side
(``--from-conda``) or the wheel side (``--from-wheels``). :func:`run_matrix` computes the build
order and every artifact as text; :func:`write_artifacts` writes them to a folder, refusing to
replace a different file unless forced, each file atomically.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from variant_bridge.build_matrix import (
    LowerBoundPolicy,
    Matrix,
    ProviderChoice,
    family_notes,
    family_text,
    matrix_from_conda,
    matrix_from_wheels,
    matrix_table,
    toolkit_notes,
)
from variant_bridge.build_order import BuildOrder, build_order
from variant_bridge.cuda_archs import ArchLists
from variant_bridge.errors import ReleaseInputError
from variant_bridge.maintainer import matrix_inputs, outputs
from variant_bridge.maintainer._files import load_toml
from variant_bridge.maintainer.conda_inputs import one_package, read_raw_builds
from variant_bridge.maintainer.conda_side import conda_builds
from variant_bridge.maintainer.wheels import read_wheel_side
from variant_bridge.release import CondaBuild

if TYPE_CHECKING:
    from variant_bridge.indexes import Downloads

__all__ = [
    "ARTIFACTS",
    "MatrixRequest",
    "MatrixResult",
    "load_matrix",
    "run_matrix",
    "write_artifacts",
]

ARTIFACTS = (
    "variants-yaml",
    "recipe",
    "pyproject",
    "make-variant",
    "scikit-build",
    "variants-json",
    "matrix",
)
"""What ``--emit`` prints (and ``-o`` writes), in order."""


@dataclass(frozen=True, slots=True)
class MatrixRequest:
    """Where the matrix comes from, and the choices a derived one needs."""

    declaration: Path | None = None
    from_conda: tuple[Path, ...] = ()
    from_wheels: str | None = None
    from_pinning: Path | None = None
    """conda-forge-pinning's ``conda_build_config.yaml``: its CUDA axis."""
    migrations: tuple[Path, ...] = ()
    """conda-forge migrations applied to :attr:`from_pinning`."""
    from_dfg: Path | None = None
    """A RAPIDS dependency-file-generator ``dependencies.yaml``."""
    file_key: str | None = None
    """The ``files`` entry of :attr:`from_dfg` (default: the one with a cuda axis)."""
    project: str | None = None
    version: str | None = None
    arch_lists: tuple[str, ...] = ()
    lower_bound: LowerBoundPolicy | None = None
    providers: ProviderChoice | None = None
    platform: str = "linux-64"
    plain_wheel: str = "build/{label}/*.whl"


@dataclass(frozen=True, slots=True)
class MatrixResult:
    matrix: Matrix
    order: BuildOrder
    artifacts: Mapping[str, tuple[str, str]] = field(hash=False)
    """Artifact -> (file name, text)."""
    notes: tuple[str, ...] = ()
    """Why an artifact is missing, and other remarks."""


def _declared(path: Path) -> Matrix:
    data = load_toml(path)
    where = str(path)
    tool = data.get("tool", {})
    table = tool.get("variant-bridge", {}).get("matrix") if isinstance(tool, dict) else None
    if table is None and path.name == "pyproject.toml":
        raise ReleaseInputError(f"{where}: no [tool.variant-bridge.matrix] table")
    if table is None:  # a standalone matrix file: the table's keys at the top
        return Matrix.from_table(data, where=where)
    if not isinstance(table, dict):
        raise ReleaseInputError(f"{where}: [tool.variant-bridge.matrix] must be a table")
    project = data.get("project", {})
    return Matrix.from_table(
        table, where=where, project=project if isinstance(project, dict) else {}
    )


def _one_platform(
    builds: Sequence[CondaBuild], platform: str
) -> tuple[tuple[CondaBuild, ...], tuple[str, ...]]:
    """The builds of *platform* when the files hold several (a whole ``.ci_support``), and a
    note naming the others; every build when they are of one platform."""
    platforms = sorted({b.platform for b in builds})
    if len(platforms) <= 1:
        return tuple(builds), ()
    kept = tuple(b for b in builds if b.platform == platform)
    if not kept:
        raise ReleaseInputError(
            f"no conda build for {platform} (the files build for {', '.join(platforms)}): "
            "pass --platform"
        )
    others = ", ".join(p for p in platforms if p != platform)
    note = (
        f"the matrix of {platform}: the builds for {others} are left out (one matrix per "
        "platform; pass --platform for another)"
    )
    return kept, (note,)


def _other_tools(request: MatrixRequest) -> Matrix:
    """The matrix conda-forge's pinning (with migrations) or a dependency-file-generator file
    stands for: its builds read as conda variants, then as a derived matrix."""
    if request.from_pinning is not None:
        raws, notes = matrix_inputs.read_pinning(
            request.from_pinning, request.migrations, request.platform
        )
        source = ", ".join(str(p) for p in (request.from_pinning, *request.migrations))
    else:
        assert request.from_dfg is not None
        raws, notes = matrix_inputs.read_dfg(request.from_dfg, request.file_key, request.platform)
        source = str(request.from_dfg)
    builds = conda_builds(
        raws, arch_lists=ArchLists.parse(request.arch_lists), platform=request.platform
    )
    matrix = matrix_from_conda(
        builds,
        lower_bound=request.lower_bound or "toolkit",
        name=request.project,
        version=request.version,
        source=source,
    )
    return replace(matrix, notes=(*notes, *matrix.notes))


def load_matrix(request: MatrixRequest, downloads: Downloads | None = None) -> Matrix:
    """The matrix the request names (exactly one source).

    :param downloads: the command's (``jobs.context.open_downloads``), through which
        ``--from-wheels`` is read; only that source needs them, and it refuses to run without.
    :raises ReleaseInputError: no source or several, or a source that cannot be read.
    """
    given = [bool(request.declaration), bool(request.from_conda), bool(request.from_wheels),
             bool(request.from_pinning), bool(request.from_dfg)]  # fmt: skip
    if sum(given) != 1:
        raise ReleaseInputError(
            "give one matrix: a declaration file, --from-conda, --from-wheels, --from-pinning "
            "or --from-dfg"
        )
    if request.migrations and request.from_pinning is None:
        raise ReleaseInputError("--migration applies to conda-forge's pinning: pass --from-pinning")
    if request.file_key is not None and request.from_dfg is None:
        raise ReleaseInputError("--file-key names a files entry of --from-dfg")
    if request.declaration is not None:
        matrix = _declared(request.declaration)
    elif request.from_pinning is not None or request.from_dfg is not None:
        matrix = _other_tools(request)
    elif request.from_conda:
        raws = one_package(
            read_raw_builds(request.from_conda, (), request.platform), None, request.project
        )
        builds = conda_builds(
            raws, arch_lists=ArchLists.parse(request.arch_lists), platform=request.platform
        )
        names = sorted({r.name for r in raws if r.name})
        versions = sorted({r.version for r in raws if r.version})
        builds, skipped = _one_platform(builds, request.platform)
        matrix = matrix_from_conda(
            builds,
            lower_bound=request.lower_bound or "toolkit",
            name=request.project or (names[0] if len(names) == 1 else None),
            version=request.version or (versions[0] if len(versions) == 1 else None),
            source=", ".join(str(p) for p in request.from_conda),
        )
        matrix = replace(matrix, notes=(*matrix.notes, *skipped))
    else:
        assert request.from_wheels is not None
        if downloads is None:  # a caller's mistake: no job makes a transport of its own
            raise ValueError("--from-wheels is read through the command's downloads: pass them")
        side = read_wheel_side(
            request.from_wheels, project=request.project, version=request.version,
            downloads=downloads,
        )  # fmt: skip
        matrix = matrix_from_wheels(side, platform=request.platform)
    if request.providers is not None:
        matrix = replace(matrix, providers=request.providers)
    if request.lower_bound is not None and request.declaration is not None:
        matrix = replace(matrix, lower_bound=request.lower_bound)
    return matrix


def _names(items: Sequence[str], most: int = 8) -> str:
    """``a, b, … (12 in all)``: a list in a message, never longer than *most* items."""
    shown = ", ".join(items[:most])
    return shown + (f", … ({len(items)} in all)" if len(items) > most else "")


def _wheel_artifacts(matrix: Matrix, request: MatrixRequest) -> dict[str, tuple[str, str]]:
    nulls = [b.label for b in matrix.wheel_builds() if b.is_null]
    if len(nulls) > 1:
        raise ReleaseInputError(
            f"builds {_names(nulls)} are all the null variant on the wheel side (no CUDA, "
            "x86-64 level or priority tells them apart)"
        )
    name = matrix.name or "project"
    json_name = (
        f"{name}-{matrix.version}-variants.json" if matrix.version else "expected-variants.json"
    )
    lines = outputs.make_variant_lines(matrix, plain_wheel=request.plain_wheel)
    return {
        "pyproject": (
            "pyproject-variant.toml",
            outputs.toml_text({"variant": outputs.pyproject_variant(matrix)}, matrix),
        ),
        "make-variant": ("make-variants.sh", outputs.shell_script(lines, matrix)),
        "scikit-build": ("scikit-build-overrides.toml", outputs.scikit_build_text(matrix)),
        "variants-json": (json_name, outputs.json_text(outputs.variants_json(matrix))),
    }


def run_matrix(request: MatrixRequest, downloads: Downloads | None = None) -> MatrixResult:
    """The matrix, its build order and every artifact.

    :param downloads: see :func:`load_matrix` (needed for ``--from-wheels`` only).
    :raises ReleaseInputError, InvalidArchList: bad input (one line naming it).
    """
    matrix = load_matrix(request, downloads)
    order = build_order(matrix)
    artifacts: dict[str, tuple[str, str]] = {
        "variants-yaml": ("variants.yaml", outputs.variants_yaml(matrix, order)),
        "recipe": ("recipe-requirements.yaml", outputs.recipe_requirements(matrix, order)),
    }
    notes: list[str] = [*matrix.notes, *family_notes(matrix), *toolkit_notes(matrix)]
    try:
        artifacts.update(_wheel_artifacts(matrix, request))
    except ReleaseInputError as e:
        notes.append(f"no wheel-side files: {e}")
    artifacts["matrix"] = ("variant-matrix.toml", outputs.matrix_toml(matrix_table(matrix), matrix))
    return MatrixResult(
        matrix, order, {k: artifacts[k] for k in ARTIFACTS if k in artifacts}, tuple(notes)
    )


def _write(path: Path, text: str) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if path.name.endswith(".sh"):
            os.chmod(temporary, 0o755)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_artifacts(result: MatrixResult, directory: Path, *, force: bool = False) -> list[Path]:
    """Write every artifact into *directory* (created when missing).

    :raises ReleaseInputError: a file there with other content and no *force* (checked for every
        file before any is written).
    """
    if directory.exists() and not directory.is_dir():
        raise ReleaseInputError(f"{directory!s}: not a folder")
    targets = [(directory / name, text) for name, text in result.artifacts.values()]
    if not force:
        for path, text in targets:
            if path.exists() and path.read_text(encoding="utf-8", errors="replace") != text:
                raise ReleaseInputError(
                    f"{path!s} exists with other content; pass --force to replace it"
                )
    directory.mkdir(parents=True, exist_ok=True)
    for path, text in targets:
        _write(path, text)
    return [path for path, _ in targets]


def report_json(result: MatrixResult, request: MatrixRequest) -> dict[str, Any]:
    """The matrix, its build numbers and what each build needs, as ``--json`` prints it."""
    matrix, order = result.matrix, result.order
    return {
        "name": matrix.name,
        "version": matrix.version,
        "platform": matrix.platform,
        "source": matrix.source,
        "builds": [
            {
                "label": b.label,
                "cuda": str(b.cuda) if b.cuda else None,
                "driver": str(b.driver) if b.driver else None,
                "sm_arch": list(b.archs.sm_arch) if b.archs else [],
                "rocm": f"{b.rocm[0]}.{b.rocm[1]}" if b.rocm else None,
                "gfx_arch": list(b.gfx),
                "x86_64_level": b.x86_64_level,
                "glibc": f"{b.glibc[0]}.{b.glibc[1]}" if b.glibc else None,
                "priority": b.priority,
                "python": list(b.python or matrix.python),
                "conda": dict(b.conda),
                "family": family_text(matrix.family(b)) or None,
                "build_number": order.numbers[b.label],
                "properties": [str(p) for p in b.description().properties],
                "run_requirements": outputs.run_requirements(matrix, b),
                "run_constraints": outputs.run_constraints(b),
            }
            for b in matrix.builds
        ],
        "order": list(order.order),
        "families": [{"family": f, "order": list(o)} for f, o in order.families],
        "conflicts": [
            {
                "first": c.first,
                "second": c.second,
                "first_wins_on": c.first_wins_on,
                "second_wins_on": c.second_wins_on,
            }
            for c in order.conflicts
        ],
        "machines": order.machines,
        "notes": list(result.notes),
        "artifacts": {kind: name for kind, (name, _) in result.artifacts.items()},
    }
