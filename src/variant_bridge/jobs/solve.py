"""The ``solve`` use case: one conda solve over conda packages and variant wheels.

The wheels of the command context's sources are indexed on the fly into a temporary channel
(:mod:`variant_bridge.jobs.index`, records pointing at the files where they are; every download
through the context's one ``Downloads``) and solved with the user's channels for the context's
target environment's virtual packages (:mod:`variant_bridge.solve.solver`). As pixi does, the
conda channels come first (strict priority: a name a conda channel has is taken from it, the
wheels give the rest); ``prefer_wheels`` puts the wheels first. A user channel written by
``index`` (conda packages and ``v3.whl`` records) works the same: its wheel records are
installed from their URL, checked against their sha256 (:mod:`._channel_wheels`). Each chosen
wheel says why: its rank as ``select`` ranks it for the solved toolkit, and the record that
carried it; the packages of one GPU stack share one toolkit (the records tie them), and a CPU
build beside a present driver is a warning. Optionally the result is installed (conda packages
with ``rattler.install``, wheels with the hash-checked uv/pip install into the prefix's Python)
and written as a pixi.lock.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from variant_bridge._values import value
from variant_bridge.environment import Environment, Source, SourceKind, Toolkit
from variant_bridge.errors import ConflictingOptions, SolveError
from variant_bridge.indexes import Candidate, Downloads
from variant_bridge.jobs._channel_wheels import channel_wheel
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.index import Gathered, IndexRequest, gather, records_of
from variant_bridge.jobs.specs import Misuse
from variant_bridge.mappings import load_tables
from variant_bridge.markers import VariantValues, variant_lines
from variant_bridge.priority import Encoding
from variant_bridge.properties import VariantDescription
from variant_bridge.ranking import Judgement, Priorities, RankedVariant, VariantRanker
from variant_bridge.solve.channel import write_channel
from variant_bridge.solve.records import Release, ReleaseRecords
from variant_bridge.solve.solver import SolvedPackage, solve_specs
from variant_bridge.translate import supported_properties
from variant_bridge.translate.evidence import (
    judge_wheel_toolkit,
    toolkit_bound,
    toolkit_evidence,
    wheel_toolkit,
)
from variant_bridge.translate.gpus import CudaBuild, cuda_fallback

if TYPE_CHECKING:
    from variant_bridge.solve.lock import LockedWheel

__all__ = ["ChosenWheel", "SolveRequest", "SolveResult", "lock_sources", "locked_wheels", "solve"]

_NAME_RE = re.compile(r"\s*([A-Za-z0-9_][A-Za-z0-9_.-]*)")


@value
class SolveRequest:
    """What to solve, and what to do with the result (where the wheels come from: the context's
    sources, find-links every project, simple indexes the projects the specs name; the virtual
    packages and platform: its target's; hashes required to install: its fetch spec's).

    :param channels: local conda channels (directories), in priority order; the wheels of the
        sources come after them (before them with *prefer_wheels*).
    :param into: install the result there (conda packages, then the wheels).
    :param write_lock: write the result there as a pixi.lock.
    :param allow_mix: packages of one GPU stack may take builds of different toolkits.
    """

    specs: tuple[str, ...]
    channels: tuple[Path, ...] = ()
    encoding: Encoding = Encoding.CELLS
    into: Path | None = None
    write_lock: Path | None = None
    installer: str | None = None
    prefer_wheels: bool = False
    allow_mix: bool = False


@value
class ChosenWheel:
    """A wheel of the solution, the file it is, and why the solver took it."""

    package: SolvedPackage
    candidate: Candidate
    label: str | None
    reason: str
    requires_dist: tuple[str, ...] = ()
    sha256: str = ""
    """The file's sha256 as indexing read it (the lock records it)."""


@value
class SolveResult:
    """The solution and what was done with it."""

    specs: tuple[str, ...]
    platform: str
    conda: tuple[SolvedPackage, ...]
    wheels: tuple[ChosenWheel, ...]
    releases: tuple[ReleaseRecords, ...] = ()
    installed: Path | None = None
    lockfile: Path | None = None
    notes: tuple[str, ...] = ()
    manifest: Path | None = None
    """The pixi.toml written or updated beside the lock."""
    warnings: tuple[str, ...] = ()
    """CPU builds chosen beside a present CUDA driver (what excluded every CUDA build), and
    GPU stacks that share no toolkit (with ``allow_mix``)."""

    @property
    def toolkit(self) -> str | None:
        """The solved ``cuda-version``, if any."""
        return next((p.version for p in self.conda if p.name == "cuda-version"), None)


def spec_names(specs: Sequence[str]) -> tuple[str, ...]:
    """The package names of conda specs (``torch >=2.9`` -> ``torch``)."""
    names = []
    for spec in specs:
        match = _NAME_RE.match(spec)
        if match is None:
            raise SolveError(f"invalid conda spec {spec!r}: expected NAME [VERSION [BUILD]]")
        names.append(match[1])
    return tuple(names)


def _ranked(release: Release, records: ReleaseRecords, env: Environment) -> Sequence[RankedVariant]:
    """The release's variants as ``select`` ranks them in *env* (its toolkit judged by the
    shared rule)."""
    assert release.metadata is not None
    supported = supported_properties(env)
    bound = toolkit_bound(supported)

    def judge(description: VariantDescription) -> Judgement | None:
        evidence = records.toolkits.get(description.label)
        said = wheel_toolkit(description, evidence)
        refused = judge_wheel_toolkit(description.label, said, bound)
        return Judgement(refused, compatible=False) if refused is not None else None

    ranker = VariantRanker(supported, Priorities.of(release.metadata), judge=judge)
    return ranker.rank(release.metadata.variants)


def _why(
    package: SolvedPackage,
    release: Release,
    records: ReleaseRecords,
    env: Environment,
) -> str:
    """``select``'s words for the chosen variant in the solved environment, and the record."""
    label = package.wheel.label if package.wheel is not None else None
    record = f"record {package.build} (build number {package.build_number})"
    if label is None:
        return f"not a variant wheel; {record}"
    if release.metadata is None:
        return f"variant {label}; {record}"
    said = next((r.reason for r in _ranked(release, records, env) if r.label == label), "")
    evidence = records.toolkits.get(label)
    description = release.metadata.variant(label)
    kit = wheel_toolkit(description, evidence) if description is not None else None
    toolkit = f"; {kit.summary()}" if kit is not None else ""
    return f"{label}: {said}{toolkit}; {record}"


def _fallback(
    package: SolvedPackage, release: Release, records: ReleaseRecords, env: Environment
) -> str | None:
    """The warning for a CPU build chosen beside a present driver (as ``select`` says it)."""
    metadata = release.metadata
    if metadata is None or env.cuda is None:
        return None
    namespace = load_tables().nvidia.namespace
    label = package.wheel.label if package.wheel is not None else None
    chosen = metadata.variant(label) if label is not None else None
    if chosen is not None and namespace in chosen.namespaces:
        return None
    builds = []
    for ranked in _ranked(release, records, env):
        description = ranked.description
        if namespace not in description.namespaces:
            continue
        if ranked.compatible:
            return None  # a CUDA build was possible: the solve chose otherwise (its stack)
        kit = wheel_toolkit(description, records.toolkits.get(description.label))
        floor = toolkit_evidence(description, ()).toolkit
        builds.append(CudaBuild(description.label, kit, floor, ranked.reason))
    title = f"{release.project} {release.version}"
    return cuda_fallback(title, chosen, builds, driver=env.cuda, toolkit=env.toolkit)


def _solved_environment(env: Environment, conda: Sequence[SolvedPackage]) -> Environment:
    kit = next((p for p in conda if p.name == "cuda-version"), None)
    if kit is None:
        return env
    return dataclasses.replace(env, toolkit=Toolkit("cuda-version", kit.version, Source.FROM_CONDA))


def _chosen(
    solved: Sequence[SolvedPackage],
    gathered: Sequence[Gathered],
    releases: Sequence[ReleaseRecords],
    env: Environment,
    downloads: Downloads,
) -> tuple[list[ChosenWheel], list[str]]:
    """Every wheel of the solution, and the warnings of CPU builds chosen beside a driver."""
    by_url: dict[str, tuple[Candidate, Gathered, ReleaseRecords]] = {}
    for one, records in zip(gathered, releases, strict=True):
        wheels = {w.url: w for w in one.release.wheels}
        for url, candidate in one.candidates:
            wheel = wheels[url]
            # The candidate keeps the hash its index listed (none: the trust gate refuses it
            # unless --no-require-hashes); the hash indexing computed goes to the lock only.
            checked = dataclasses.replace(candidate, variant=wheel.variant)
            by_url[url] = (checked, one, records)
    conda = [p for p in solved if not p.is_wheel]
    solved_env = _solved_environment(env, conda)
    found: list[ChosenWheel] = []
    warnings: list[str] = []
    for package in sorted(solved, key=lambda p: (p.wheel is None or p.wheel.label is None, p.name)):
        if not package.is_wheel:
            continue
        entry = by_url.get(package.url)
        if entry is None:  # a wheel record of a user channel (one `index` wrote)
            got = channel_wheel(package, downloads)
            found.append(ChosenWheel(package, got.candidate, got.candidate.label, got.reason,
                                     got.requires_dist, got.sha256))  # fmt: skip
            continue
        candidate, one, records = entry
        wheel = next(w for w in one.release.wheels if w.url == package.url)
        why = _why(package, one.release, records, solved_env)
        found.append(
            ChosenWheel(package, candidate, candidate.label, why, wheel.requires_dist, wheel.sha256)
        )
        fallback = _fallback(package, one.release, records, solved_env)
        if fallback is not None:
            warnings.append(fallback)
    return found, warnings


def _mixes(wheels: Sequence[ChosenWheel], gathered: Sequence[Gathered]) -> list[str]:
    """A CPU build of a package that has CUDA builds, beside the CUDA build of a package it
    requires: the records tie the CUDA builds of one stack, and a CPU build escapes the ties
    only when none of its CUDA builds shares the required package's toolkit."""
    namespace = load_tables().nvidia.namespace
    has_cuda = {
        g.release.project
        for g in gathered
        if g.release.metadata is not None
        and any(namespace in d.namespaces for d in g.release.metadata.variants)
    }
    chosen = {w.package.name: w for w in wheels}

    def cuda(wheel: ChosenWheel) -> bool:
        variant = wheel.candidate.variant
        return variant is not None and namespace in variant.namespaces

    found = []
    for wheel in wheels:
        name, version = wheel.package.name, wheel.package.version
        if cuda(wheel) or name not in has_cuda:
            continue
        for depend in wheel.package.depends:
            other = chosen.get(depend.split()[0])
            if other is not None and cuda(other):
                mine = wheel.label or "the non-variant wheel"
                found.append(
                    f"{name} {version} takes its CPU build ({mine}) beside "
                    f"{other.package.name} {other.package.version} {other.label}: no CUDA build "
                    f"of {name} shares {other.package.name}'s toolkit here"
                )
    return found


def solve(request: SolveRequest, ctx: Context) -> SolveResult:
    """Index the context's wheel sources, solve for its target, and install or lock when asked
    (the ``solve`` command).

    :raises SolveError: an invalid spec, a channel without repodata, no solution, a lock file
        that cannot be written. :raises InstallError: see :mod:`variant_bridge.install`.
    """
    specs = _with_cuda(request.specs, ctx)
    names = spec_names(specs)
    lock = request.write_lock
    if lock is not None and not lock.absolute().parent.is_dir():
        raise SolveError(f"--write-lock {lock}: {lock.absolute().parent} is not a directory")
    env = ctx.target.env
    platform = env.platform
    with tempfile.TemporaryDirectory(prefix="variant-bridge-solve-") as scratch:
        wheel_channel = Path(scratch) / "wheels-channel"
        index = IndexRequest(
            wheel_channel, projects=names if ctx.sources.indexes else (),
            encoding=request.encoding, copy=False, index_conda=False,
            allow_mix=request.allow_mix,
        )  # fmt: skip
        gathered, notes = gather(index, ctx) if ctx.sources else ([], [])
        releases = records_of(gathered, index, platform)
        records = [r for release in releases for r in release.records]
        write_channel(wheel_channel, platform, records,
                      projects={r.project for r in releases}, index_conda=False)  # fmt: skip
        # pixi's rule: conda packages first, the wheels for what no conda channel has.
        channels = [*request.channels, wheel_channel]
        if request.prefer_wheels:
            channels = [wheel_channel, *request.channels]
        solved = solve_specs(
            specs, channels, platform=platform, virtual_packages=env.virtual_packages
        )
        wheels, warnings = _chosen(solved, gathered, releases, env, ctx.downloads)
        mixes = _mixes(wheels, gathered)
        if mixes and not request.allow_mix:
            raise SolveError("; ".join(mixes) + "; pass --allow-mix to solve it anyway")
        conda = tuple(p for p in solved if not p.is_wheel)
        result = SolveResult(
            tuple(specs), platform, conda, tuple(wheels), tuple(releases), notes=tuple(notes),
            warnings=tuple(warnings + mixes),
        )  # fmt: skip
        if request.into is not None:
            _install(result, request, ctx)
            result = dataclasses.replace(result, installed=request.into)
        if lock is not None:
            manifest = _lock(result, request, ctx)
            result = dataclasses.replace(result, lockfile=lock, manifest=manifest)
    return result


def _with_cuda(specs: Sequence[str], ctx: Context) -> list[str]:
    """The specs, with ``cuda-version X.Y.*`` when ``--cuda X.Y`` asked for that toolkit.

    :raises ConflictingOptions: a spec names ``cuda-version`` too.
    """
    toolkit = ctx.target.env.toolkit
    if toolkit is None or toolkit.source.kind is not SourceKind.REQUESTED:
        return list(specs)
    if toolkit.package in spec_names(specs):
        raise ConflictingOptions(
            Misuse.CUDA_AND_TOOLKIT,
            f"--cuda {toolkit.version} and a {toolkit.package} spec both ask for the toolkit; "
            "give one",
        )
    return [*specs, f"{toolkit.package} {toolkit.version}.*"]


def _install(result: SolveResult, request: SolveRequest, ctx: Context) -> None:
    """Conda packages first (the prefix's Python among them, or already there), then every
    chosen wheel at once into that Python, hash-checked (nothing of the wheels is installed on
    a mismatch)."""
    from variant_bridge.detect.interpreter import resolve_target_python
    from variant_bridge.indexes.trust import hash_to_compare
    from variant_bridge.install import install, plan_install
    from variant_bridge.platform_tags import PythonSource
    from variant_bridge.solve.prefix import install_conda

    prefix = request.into
    assert prefix is not None
    require_hashes = ctx.fetch.require_hashes
    for wheel in result.wheels:  # refused before the prefix is touched, not halfway
        hash_to_compare(wheel.candidate, require_hashes=require_hashes)
    # Never the running interpreter: the wheels belong in the prefix's, or nowhere.
    install_conda([p.record for p in result.conda], prefix,
                  _conda_specs(result.specs, result.wheels),
                  needs_python=bool(result.wheels))  # fmt: skip
    if not result.wheels:
        return
    python = resolve_target_python(None, Environment(result.platform), prefix=prefix)
    if python.source is not PythonSource.PREFIX:
        raise SolveError(
            f"installed the conda packages into {prefix}, but it has no bin/python to "
            "install the wheels with: they were not installed"
        )
    plan = plan_install(
        [w.candidate for w in result.wheels], python=python,
        installer="uv" if request.installer == "uv" else "pip" if request.installer else None,
        platform=result.platform, require_hashes=require_hashes,
    )  # fmt: skip
    install(plan, downloads=ctx.downloads)


def _lock(result: SolveResult, request: SolveRequest, ctx: Context) -> Path:
    """Write the pixi.lock (variant wheels as plain-named copies beside it, every entry with its
    hash, the indexes and find-links used) and the pixi.toml beside it; returns the manifest."""
    from variant_bridge.jobs.lock_manifest import write_lock_manifest
    from variant_bridge.solve.lock import write_lock

    lock = request.write_lock
    assert lock is not None
    lock_dir = lock.absolute().parent
    wheels = locked_wheels(result, ctx, lock_dir)
    index_urls, find_links = lock_sources(ctx, lock_dir)
    write_lock(
        lock, ctx.target.env, conda=[p.record for p in result.conda], wheels=wheels,
        channels=[c.as_uri() for c in request.channels], indexes=index_urls,
        find_links=find_links,
    )  # fmt: skip
    return write_lock_manifest(lock, ctx.target.env, index_urls, find_links, ctx.downloads)


def locked_wheels(
    result: SolveResult, ctx: Context, lock_dir: Path, *, folder: str | None = None
) -> list[LockedWheel]:
    """The solution's wheels as a lock beside *lock_dir* names them: variant wheels as
    plain-named copies in *folder* (default ``variant-wheels/``), fetched and hash-checked
    through the context's downloads; plain wheels by path or URL. Each wheel's requirements
    are locked with its variant markers decided (``'nvidia' in variant_namespaces``)."""
    from variant_bridge.indexes import url_to_path
    from variant_bridge.solve.lock import COPIES_DIR, LockedWheel, place_wheel

    wheels = []
    for wheel in result.wheels:
        candidate = wheel.candidate
        file = None  # a remote plain wheel: locked by its URL
        if candidate.url.startswith("file:"):
            file = url_to_path(candidate.url)
        elif wheel.label is not None:
            file = ctx.downloads.get(candidate)  # copied beside the lock: fetched, hash-checked
        values = VariantValues.of(candidate.variant)
        if candidate.label is not None and candidate.variant is None:
            values = VariantValues(label=candidate.label)
        location, sha256 = place_wheel(
            candidate.filename, candidate.url, file, wheel.sha256, lock_dir,
            folder=folder or COPIES_DIR, values=values,
        )  # fmt: skip
        wheels.append(
            LockedWheel(
                wheel.package.name,
                wheel.package.version,
                location,
                sha256,
                # decided for the variant: a lock's requirements are PEP 508, which has no
                # variant_namespaces (rattler refuses the lock), and they are this file's
                tuple(variant_lines(wheel.requires_dist, values)),
                candidate.requires_python,
            )
        )
    return wheels


def lock_sources(ctx: Context, lock_dir: Path) -> tuple[list[str], list[str]]:
    """The indexes and the find-links locations a lock beside *lock_dir* records."""
    from variant_bridge.indexes import FindLinks, SimpleIndex

    index_urls = [s.url for s in ctx.sources if isinstance(s, SimpleIndex)]
    find_links = [
        _lock_place(s.location, lock_dir) for s in ctx.sources if isinstance(s, FindLinks)
    ]
    return index_urls, find_links


def _lock_place(location: str, lock_dir: Path) -> str:
    """A find-links location as a lock names it: a path relative to the lock when inside its
    folder, else absolute; URLs as they are."""
    from variant_bridge.indexes import url_to_path

    if "://" in location and not location.startswith("file:"):
        return location
    path = (url_to_path(location) if location.startswith("file:") else Path(location)).absolute()
    try:
        return f"./{path.relative_to(lock_dir).as_posix()}"
    except ValueError:
        return str(path)


def _conda_specs(specs: Sequence[str], wheels: Sequence[ChosenWheel]) -> list[str]:
    """The requested specs that name conda packages (recorded as requested in conda-meta)."""
    wheel_names = {w.package.name for w in wheels}
    return [s for s, n in zip(specs, spec_names(specs), strict=True) if n not in wheel_names]


def releases_by_project(result: SolveResult) -> Mapping[str, ReleaseRecords]:
    return {r.project: r for r in result.releases}
