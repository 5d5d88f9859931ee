"""The ``solve`` use case: one conda solve over conda packages and variant wheels.

The wheels of the ``--find-links`` / ``--index-url`` sources are indexed on the fly into a
temporary channel (:mod:`variant_bridge.jobs.index`, records pointing at the files where they
are), put first in channel priority, and solved with the user's channels for the environment's
virtual packages (:mod:`variant_bridge.solve.solver`). Each chosen wheel says why: its rank as
``select`` ranks it for the solved toolkit, and the record that carried it. Optionally the
result is installed (conda packages with ``rattler.install``, wheels with the hash-checked
uv/pip install into the prefix's Python) and written as a pixi.lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from variant_bridge._values import value
from variant_bridge.environment import Environment, Source, Toolkit
from variant_bridge.errors import SolveError
from variant_bridge.indexes import Candidate, Downloads, IndexSource
from variant_bridge.indexes.transport import Transport
from variant_bridge.jobs.index import Gathered, IndexRequest, gather, records_of
from variant_bridge.priority import Encoding
from variant_bridge.properties import VariantDescription
from variant_bridge.ranking import Judgement, Priorities, VariantRanker
from variant_bridge.solve.channel import write_channel
from variant_bridge.solve.records import Release, ReleaseRecords
from variant_bridge.solve.solver import SolvedPackage, solve_specs
from variant_bridge.translate import supported_properties
from variant_bridge.translate.evidence import judge_toolkit, toolkit_bound

__all__ = ["ChosenWheel", "SolveRequest", "SolveResult", "solve"]

_NAME_RE = re.compile(r"\s*([A-Za-z0-9_][A-Za-z0-9_.-]*)")


@value
class SolveRequest:
    """What to solve, where from, and what to do with the result.

    :param channels: local conda channels (directories), in priority order after the wheels.
    :param sources: where variant wheels come from (find-links: every project; simple indexes:
        the projects the specs name).
    :param env: the environment whose virtual packages the solve uses (its ``platform`` too).
    :param prefix: install the result there (conda packages, then the wheels).
    :param lockfile: write the result there as a pixi.lock.
    :param require_hashes: installing refuses a remote wheel whose index lists no sha256 (the
        trust gate of ``install``; ``False``: ``--no-require-hashes``).
    """

    specs: tuple[str, ...]
    env: Environment
    channels: tuple[Path, ...] = ()
    sources: tuple[IndexSource, ...] = ()
    encoding: Encoding = Encoding.CELLS
    prefix: Path | None = None
    lockfile: Path | None = None
    installer: str | None = None
    require_hashes: bool = True


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
    supported = supported_properties(env)
    bound = toolkit_bound(supported)

    def judge(description: VariantDescription) -> Judgement | None:
        evidence = records.toolkits.get(description.label)
        refused = judge_toolkit(evidence, bound) if evidence is not None else None
        return Judgement(refused, compatible=False) if refused is not None else None

    ranker = VariantRanker(supported, Priorities.of(release.metadata), judge=judge)
    ranked = ranker.rank(release.metadata.variants)
    said = next((r.reason for r in ranked if r.label == label), "")
    evidence = records.toolkits.get(label)
    toolkit = f"; {evidence.summary()}" if evidence is not None and evidence.evidence else ""
    return f"{label}: {said}{toolkit}; {record}"


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
) -> list[ChosenWheel]:
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
    found = []
    for package in sorted(solved, key=lambda p: (p.wheel is None or p.wheel.label is None, p.name)):
        if not package.is_wheel:
            continue
        entry = by_url.get(package.url)
        if entry is None:  # pragma: no cover - a wheel record of a user channel
            raise SolveError(
                f"{package.url}: a wheel from a conda channel cannot be installed here"
            )
        candidate, one, records = entry
        wheel = next(w for w in one.release.wheels if w.url == package.url)
        why = _why(package, one.release, records, solved_env)
        found.append(
            ChosenWheel(package, candidate, candidate.label, why, wheel.requires_dist, wheel.sha256)
        )
    return found


def solve(request: SolveRequest, downloads: Downloads | None = None) -> SolveResult:
    """Index the wheel sources, solve, and install or lock when asked (the ``solve`` command).

    :raises SolveError: an invalid spec, a channel without repodata, no solution, a lock file
        that cannot be written. :raises InstallError: see :mod:`variant_bridge.install`.
    """
    names = spec_names(request.specs)
    if request.lockfile is not None and not request.lockfile.absolute().parent.is_dir():
        raise SolveError(
            f"--lockfile {request.lockfile}: {request.lockfile.absolute().parent} is not a "
            "directory"
        )
    platform = request.env.platform
    with tempfile.TemporaryDirectory(prefix="variant-bridge-solve-") as scratch, \
            contextlib.ExitStack() as stack:  # fmt: skip
        if downloads is None:  # a library call: a temporary directory, no cache
            downloads = stack.enter_context(Downloads.temporary(transport=Transport()))
        wheel_channel = Path(scratch) / "wheels-channel"
        index = IndexRequest(
            wheel_channel, platform, request.sources, projects=names if _remote(request) else (),
            encoding=request.encoding, copy=False, index_conda=False,
        )  # fmt: skip
        gathered, notes = gather(index, downloads) if request.sources else ([], [])
        releases = records_of(gathered, index)
        records = [r for release in releases for r in release.records]
        write_channel(wheel_channel, platform, records,
                      projects={r.project for r in releases}, index_conda=False)  # fmt: skip
        solved = solve_specs(
            request.specs, [wheel_channel, *request.channels], platform=platform,
            virtual_packages=request.env.virtual_packages,
        )  # fmt: skip
        wheels = _chosen(solved, gathered, releases, request.env)
        conda = tuple(p for p in solved if not p.is_wheel)
        result = SolveResult(
            request.specs, platform, conda, tuple(wheels), tuple(releases), notes=tuple(notes)
        )
        if request.prefix is not None:
            _install(result, request, downloads)
            result = dataclasses.replace(result, installed=request.prefix)
        if request.lockfile is not None:
            _lock(result, request)
            result = dataclasses.replace(result, lockfile=request.lockfile)
    return result


def _install(result: SolveResult, request: SolveRequest, downloads: Downloads) -> None:
    """Conda packages first (the prefix's Python among them, or already there), then every
    chosen wheel at once into that Python, hash-checked (nothing of the wheels is installed on
    a mismatch)."""
    from variant_bridge.detect.interpreter import resolve_target_python
    from variant_bridge.indexes.trust import hash_to_compare
    from variant_bridge.install import install, plan_install
    from variant_bridge.solve.prefix import install_conda

    assert request.prefix is not None
    for wheel in result.wheels:  # refused before the prefix is touched, not halfway
        hash_to_compare(wheel.candidate, require_hashes=request.require_hashes)
    install_conda([p.record for p in result.conda], request.prefix,
                  _conda_specs(request.specs, result.wheels))  # fmt: skip
    if not result.wheels:
        return
    python = resolve_target_python(None, Environment(result.platform), prefix=request.prefix)
    plan = plan_install(
        [w.candidate for w in result.wheels], python=python,
        installer="uv" if request.installer == "uv" else "pip" if request.installer else None,
        platform=result.platform, require_hashes=request.require_hashes,
    )  # fmt: skip
    install(plan, downloads=downloads)


def _lock(result: SolveResult, request: SolveRequest) -> None:
    from variant_bridge.solve.lock import LockedWheel, write_lock

    assert request.lockfile is not None
    wheels = [
        LockedWheel(p.name, p.version, w.candidate.url, w.sha256, w.requires_dist)
        for w in result.wheels
        for p in (w.package,)
    ]
    write_lock(
        request.lockfile, request.env, conda=[p.record for p in result.conda], wheels=wheels,
        channels=[c.as_uri() for c in request.channels],
    )  # fmt: skip


def _remote(request: SolveRequest) -> bool:
    from variant_bridge.indexes import SimpleIndex

    return any(isinstance(s, SimpleIndex) for s in request.sources)


def _conda_specs(specs: Sequence[str], wheels: Sequence[ChosenWheel]) -> list[str]:
    """The requested specs that name conda packages (recorded as requested in conda-meta)."""
    wheel_names = {w.package.name for w in wheels}
    return [s for s, n in zip(specs, spec_names(specs), strict=True) if n not in wheel_names]


def releases_by_project(result: SolveResult) -> Mapping[str, ReleaseRecords]:
    return {r.project: r for r in result.releases}
