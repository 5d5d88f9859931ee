"""The ``select`` use case: the dependency tree of the requested packages, each package's wheel
chosen to agree with the environment.

It reads as the spec's steps over two abstractions (the shape of pypa/installer's ``install()``):
the command's :class:`~variant_bridge.jobs.context.Context` gives the sources (each package's
files and variant metadata), the one :class:`~variant_bridge.indexes.Downloads` and the target;
:mod:`._choice` chooses one release's wheel by the bridged rules (the pure core ranks and
chooses); the chosen wheel's ``Requires-Dist`` (variant markers decided for it) are resolved the
same way, the whole tree by :mod:`._tree` (resolvelib) over :mod:`._releases`. Inputs arrive
checked (:func:`parse_requests`, :meth:`Context.open
<variant_bridge.jobs.context.Context.open>`). See docs/semantics.md §6.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.environment import PythonDistribution
from variant_bridge.errors import ConflictingOptions, InvalidTarget
from variant_bridge.jobs._choice import (
    Choosing,
    Duplicate,
    PackageChoice,
    RequiredBy,
)
from variant_bridge.jobs._releases import Releases
from variant_bridge.jobs._tree import Need, resolve_tree
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.specs import Misuse
from variant_bridge.jobs.toolkits import VariantToolkit

__all__ = [
    "Duplicate",
    "PackageChoice",
    "PackageRequest",
    "RequiredBy",
    "VariantToolkit",
    "parse_request",
    "parse_requests",
    "select",
]


@value
class PackageRequest:
    """One requested package, as typed and as parsed."""

    text: str
    requirement: Requirement


def parse_request(text: str) -> Requirement:
    """``torch``, ``torch==2.9.0`` or ``torch>=2.8``; markers and URLs are refused.

    :raises InvalidTarget: naming the request and the expected form.
    """
    try:
        requirement = Requirement(text)
    except InvalidRequirement as e:
        raise InvalidTarget(
            f"invalid package request {text!r}: expected NAME or NAME==VERSION"
        ) from e
    if requirement.url or requirement.marker:
        raise InvalidTarget(
            f"invalid package request {text!r}: URLs and markers are not supported; use "
            "--find-links or --index-url"
        )
    if requirement.extras:
        raise InvalidTarget(
            f"invalid package request {text!r}: extras are not supported; request the package, "
            "then the extra's requirements by name"
        )
    return requirement


def parse_requests(texts: Iterable[str]) -> tuple[PackageRequest, ...]:
    """Each request parsed once; a project may be requested once.

    :raises InvalidTarget: a malformed request, or a project named twice.
    """
    requests = tuple(PackageRequest(text, parse_request(text)) for text in texts)
    seen: set[str] = set()
    for request in requests:
        name = canonicalize_name(request.requirement.name)
        if name in seen:
            raise InvalidTarget(f"{request.requirement.name!r} is requested more than once")
        seen.add(name)
    return requests


def select(
    requests: Sequence[PackageRequest],
    ctx: Context,
    *,
    fetch_chosen: bool = False,
    deps: bool = True,
    installed: Iterable[PythonDistribution] | None = None,
) -> tuple[PackageChoice, ...]:
    """Resolve the dependency tree of *requests* for the context's target, choosing every
    package's wheel from its sources.

    Every package reached, requested or not, gets its wheel by the same bridged rules: the
    version (the highest that every requirement on it allows and the tree agrees with), then
    the variant. Each variant the target's properties allow is judged by its CUDA toolkit
    evidence too (semantics.md §8): one core metadata read per variant, PEP 658 when the index
    advertises it, else HTTP range requests; no wheel is downloaded to choose. Remote wheels
    whose variant metadata or requirements must be read from them land in ``ctx.downloads``,
    where ``install`` finds them.

    :param fetch_chosen: download a chosen remote wheel to read its requirements when the index
        offers neither PEP 658 metadata nor range requests (without it, the dependencies of such
        a wheel stay unknown: its :attr:`PackageChoice.requirements` is ``None``).
    :param deps: resolve the dependencies too (``False``: the requested packages only).
    :param installed: what the target interpreter has installed; ``None``: what the target
        counts without asking it (:attr:`~variant_bridge.jobs.target.Target.installed`). A
        dependency found there that satisfies every requirement on it is kept (see
        :mod:`._releases`).
    :returns: one choice per package of the tree: the requested ones first, in request order,
        then the others in the order the tree reaches them.
    :raises ConflictingOptions: no source; :raises SelectionError: an unknown package,
        requirements that cannot all be met (each named with who stated it), or a damaged file
        that could be the best match; :raises IndexReadError: an unreachable source.
    """
    if not ctx.sources:
        raise ConflictingOptions(
            Misuse.NO_SOURCE, "Give at least one --find-links DIR or --index-url URL."
        )
    choosing = Choosing.of(ctx.target, ctx.downloads, fetch_chosen=fetch_chosen)
    have = ctx.target.installed if installed is None else installed
    releases = Releases(
        ctx.sources,
        choosing,
        requested=frozenset(_canonical(r) for r in requests),
        installed={canonicalize_name(d.name): d for d in have},
    )
    tree = resolve_tree([Need.of(r.requirement, r.text) for r in requests], releases, follow=deps)
    choices: list[PackageChoice] = []
    for project, version in tree.versions.items():
        needs = tree.needs[project]
        spec = SpecifierSet()
        for need in needs:
            spec &= need.specifier
        choice = releases.choice(project, version, spec)
        named = next((r.text for r in requests if _canonical(r) == project), project)
        required_by = tuple(RequiredBy(n.text, n.parent) for n in needs)
        extras = tuple(sorted(tree.extras.get(project, ())))
        choices.append(replace(choice, request=named, required_by=required_by, extras=extras))
    return tuple(choices)


def _canonical(request: PackageRequest) -> str:
    return canonicalize_name(request.requirement.name)
