"""Installed variant wheels whose build the environment no longer supports.

The rules are ``select``'s, applied to what is installed: the variant's properties against the
bridged supported properties (PEP 825: features AND-ed, values OR-ed; :class:`~variant_bridge.
ranking.VariantRanker` with the words of :func:`~variant_bridge.translate.explain_unsupported`),
and its CUDA toolkit evidence (its own pins and lower bound) against the environment's
``cuda-version`` (:func:`~variant_bridge.translate.evidence.installed_toolkit`). Only namespaces
the tables map are judged: a static namespace (torch's ``priority``) is supported by definition,
and one no table maps cannot be judged here.

A build that only the toolkit policy refuses still runs (it brings its own CUDA libraries): a
warning. One a fact of the machine excludes (a driver older than its lower bound, another GPU
architecture, a lower CPU level, another installed ABI) is an error; a fact that is merely
unknown (no ``__cuda_arch`` detected) is not counted as one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from itertools import groupby
from operator import attrgetter

from packaging.utils import canonicalize_name

from variant_bridge.environment import Environment, PythonDistribution
from variant_bridge.health.model import (
    Disagreement,
    Finding,
    FindingKind,
    Fix,
    Reason,
    ReasonKind,
    Severity,
)
from variant_bridge.mappings import MappingTables
from variant_bridge.properties import VariantDescription, VariantProperty
from variant_bridge.ranking import VariantRanker
from variant_bridge.translate.evidence import InstalledToolkit, installed_toolkit
from variant_bridge.translate.explain import explain_unsupported
from variant_bridge.translate.supported import SupportedProperties

__all__ = ["variant_findings"]

FixesFor = Callable[[PythonDistribution, Disagreement], tuple[Fix, ...]]
_feature_of = attrgetter("namespace", "feature")


def _judged(description: VariantDescription, tables: MappingTables) -> VariantDescription | None:
    """The part of *description* the tables map (``None``: nothing to judge)."""
    known = set(tables.namespaces)
    props = tuple(p for p in description.properties if p.namespace in known)
    return VariantDescription(props, description.label) if props else None


def _fact(prop: VariantProperty, tables: MappingTables) -> str | None:
    """The virtual package the tables derive *prop*'s feature from (``__cuda``...), if any."""
    if prop.namespace == tables.nvidia.namespace:
        feature = tables.nvidia.feature(prop.feature)
        return feature.virtual_package if feature is not None else None
    cpu = tables.cpu(prop.namespace)
    return cpu.virtual_package if cpu is not None else None


def _driver_verdict(
    description: VariantDescription | None,
    driver: Callable[[], SupportedProperties],
    env: Environment,
    tables: MappingTables,
) -> tuple[bool, bool]:
    """``(supported, contradicted)`` under the driver policy: every feature of *description*
    has a supported value; some feature has none although the fact it is read from is known (an
    ABI dependency's fact is what is installed: known)."""
    if description is None:
        return True, False
    supported, contradicted = True, False
    for _, group in groupby(description.properties, _feature_of):
        props = list(group)
        if any(driver().supports(p) for p in props):
            continue
        supported = False
        fact = _fact(props[0], tables)
        if fact is None or env.virtual_package(fact) is not None:
            contradicted = True
    return supported, contradicted


def _properties_reason(
    judged: VariantDescription | None, supported: SupportedProperties, tables: MappingTables
) -> Reason | None:
    if judged is None:
        return None
    explain = functools.partial(explain_unsupported, supported=supported, tables=tables)
    assessment = VariantRanker(supported, explain=explain).assess(judged)
    return None if assessment.compatible else Reason(ReasonKind.PROPERTIES, assessment.detail)


def _message(dist: PythonDistribution, label: str, reasons: Iterable[Reason]) -> str:
    said = "; ".join(r.text for r in reasons)
    return f"{dist.name} {dist.version} [{label}] no longer agrees with the environment: {said}"


def variant_findings(
    dists: Iterable[PythonDistribution],
    env: Environment,
    supported: SupportedProperties,
    driver: Callable[[], SupportedProperties],
    fixes: FixesFor,
    *,
    tables: MappingTables,
) -> tuple[Finding, ...]:
    """One finding per installed variant wheel (not the null variant) the environment disagrees
    with.

    :param supported: what the environment supports, under its CUDA policy.
    :param driver: the same under the driver policy (computed only when something disagrees).
    """
    found: list[Finding] = []
    for dist in dists:
        description = dist.variant
        if description is None or description.is_null:
            continue
        judged = _judged(description, tables)
        reasons = [r for r in (_properties_reason(judged, supported, tables),) if r is not None]
        toolkit: InstalledToolkit | None = installed_toolkit(dist, env, supported, tables=tables)
        if toolkit is not None and toolkit.refused is not None:
            reasons.append(Reason(ReasonKind.TOOLKIT, toolkit.refused))
        if not reasons:
            continue
        toolkit_only, contradicted = _driver_verdict(judged, driver, env, tables)
        built_for = toolkit.evidence.toolkit if toolkit is not None else None
        disagreement = Disagreement(
            dist.name, dist.version, description.label, tuple(reasons), not contradicted,
            toolkit_only, str(built_for) if built_for is not None else None, dist.direct_url,
            dist.sha256,
        )  # fmt: skip
        severity = Severity.ERROR if contradicted else Severity.WARNING
        found.append(
            Finding(
                FindingKind.DISAGREEING_VARIANT,
                severity,
                canonicalize_name(dist.name),
                _message(dist, description.label, reasons),
                disagreement,
                fixes(dist, disagreement),
            )
        )
    return tuple(found)
