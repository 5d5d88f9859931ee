"""The check itself: every kind of finding for one environment, with fixes for its place."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType

from packaging.utils import canonicalize_name

from variant_bridge.environment import Environment, PythonDistribution
from variant_bridge.health.commands import reinstall_fix, toolkit_fix, uninstall_fix
from variant_bridge.health.libraries import library_findings
from variant_bridge.health.model import (
    Disagreement,
    Finding,
    FindingKind,
    Fix,
    HealthReport,
    LibraryCopies,
    Orphan,
    Place,
    Severity,
)
from variant_bridge.health.pairs import conda_copy
from variant_bridge.health.requirements import (
    RequirementGraph,
    is_cuda_wheel,
    needed_wheels,
    requirement_graph,
)
from variant_bridge.health.variants import variant_findings
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.markers import target_environment
from variant_bridge.platform_tags import TargetPython
from variant_bridge.translate.supported import SupportedProperties
from variant_bridge.virtual_packages import impossible_toolkit

__all__ = ["examine", "marker_environment"]

_NO_ORIGINS: Mapping[str, str] = MappingProxyType({})
_NO_GRAPH = RequirementGraph(MappingProxyType({}))


def marker_environment(env: Environment) -> dict[str, str]:
    """The PEP 508 marker values of *env*'s interpreter (its Python version left out when the
    environment does not say it: a marker using it then cannot be decided, never this machine's
    answer)."""
    environment = target_environment(env, TargetPython.parse(env.python or "0.0"))
    if env.python is None:
        del environment["python_version"]
    return environment


class _Examination:
    """One :func:`examine` call: the environment, where fixes act, and what is computed once."""

    def __init__(
        self,
        env: Environment,
        supported: SupportedProperties,
        place: Place | None,
        local_origins: Mapping[str, str],
        tables: MappingTables,
    ) -> None:
        self.env = env
        self.supported = supported
        self.place = place
        self.local_origins = local_origins
        self.tables = tables
        self.dependents: dict[str, tuple[PythonDistribution, ...]] = {}
        self._driver: SupportedProperties | None = None

    def driver(self) -> SupportedProperties:
        """What the environment supports under the driver policy (computed once, on demand)."""
        if self._driver is None:
            if self.supported.policy == "driver":
                self._driver = self.supported
            else:
                from variant_bridge.translate.forward import supported_properties

                self._driver = supported_properties(self.env, policy="driver", tables=self.tables)
        return self._driver

    def library_fixes(self, dist: PythonDistribution, copies: LibraryCopies) -> tuple[Fix, ...]:
        """A copy nothing requires goes; a mismatched one is fixed by re-selecting the variant
        packages that require it (their build then pins the toolkit's minor), else it goes; a
        required copy at the same minor needs nothing."""
        place = self.place
        if place is None:
            return ()
        users = self.dependents.get(copies.pypi, ())
        if not users:
            return (uninstall_fix(place, [dist]),)
        if copies.same:
            return ()
        variants = [d for d in users if d.variant_label is not None]
        if variants:
            return (reinstall_fix(place, variants, self.local_origins),)
        conda = f"{copies.conda} {copies.conda_version}"
        note = f"required by {', '.join(copies.required_by)}; conda's {conda} serves them instead"
        return (replace(uninstall_fix(place, [dist]), note=note),)

    def variant_fixes(self, dist: PythonDistribution, found: Disagreement) -> tuple[Fix, ...]:
        """Re-select the build; or, when only the toolkit policy refuses it, make conda's
        toolkit the one it was built for (when conda could solve that beside the driver)."""
        place = self.place
        if place is None:
            return ()
        fixes = [reinstall_fix(place, [dist], self.local_origins)]
        toolkit, cuda, built_for = self.env.toolkit, self.env.cuda, found.toolkit
        if found.toolkit_only and toolkit is not None and built_for is not None:
            driver = cuda.version if cuda is not None else None
            if impossible_toolkit(toolkit.package, built_for, driver) is None:
                fix = toolkit_fix(place, built_for, toolkit.package)
                if fix is not None:
                    fixes.append(fix)
        return tuple(fixes)


def examine(
    env: Environment,
    supported: SupportedProperties,
    place: Place | None,
    *,
    local_origins: Mapping[str, str] = _NO_ORIGINS,
    tables: MappingTables | None = None,
) -> HealthReport:
    """Everything wrong with *env*'s PyPI side, each finding with its fixes for *place*.

    :param supported: what *env* supports (``translate.supported_properties(env)``; its policy
        is the one the variant wheels are judged by).
    :param place: where fix commands act; ``None``: findings without fixes.
    :param local_origins: canonical name -> the local directory an installed wheel's recorded
        origin (``direct_url.json``, a ``file://`` URL) is in, for re-selection commands.
    """
    tables = tables if tables is not None else load_tables()
    dists = env.python_packages
    if not dists:
        return HealthReport(place, (), 0)
    run = _Examination(env, supported, place, local_origins, tables)
    cuda = [canonicalize_name(d.name) for d in dists if is_cuda_wheel(d.name, tables=tables)]
    copies = [canonicalize_name(d.name) for d in dists if conda_copy(d.name, env, tables)]
    wanted = {*cuda, *copies}
    graph = requirement_graph(dists, marker_environment(env), wanted) if wanted else _NO_GRAPH
    by_name: dict[str, PythonDistribution] = {canonicalize_name(d.name): d for d in dists}
    run.dependents = {n: tuple(by_name[u] for u in graph.dependents(n)) for n in copies}
    findings = [
        *variant_findings(dists, env, supported, run.driver, run.variant_fixes, tables=tables),
        *library_findings(dists, env, run.dependents, run.library_fixes, tables=tables),
        *_orphan_findings(dists, graph, cuda, place),
    ]
    findings.sort(key=lambda f: f.sort_key)
    return HealthReport(place, tuple(findings), len(dists), graph.problems)


def _orphan_findings(
    dists: Iterable[PythonDistribution],
    graph: RequirementGraph,
    cuda: Iterable[str],
    place: Place | None,
) -> list[Finding]:
    names = list(cuda)
    needed = needed_wheels(graph, names)
    orphans = [d for d in dists if canonicalize_name(d.name) in set(names) - needed]
    fixes = (uninstall_fix(place, orphans),) if place is not None and orphans else ()
    found = []
    for dist in orphans:
        message = f"nothing installed requires {dist.name} {dist.version} any more"
        detail = Orphan(dist.name, dist.version, dist.installer)
        found.append(
            Finding(
                FindingKind.ORPHANED_WHEEL,
                Severity.WARNING,
                canonicalize_name(dist.name),
                message,
                detail,
                fixes,
            )
        )
    return found
