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
from variant_bridge.errors import ConflictingOptions, InvalidTarget, SelectionError, quote
from variant_bridge.jobs._choice import (
    Choosing,
    Duplicate,
    PackageChoice,
    RequiredBy,
    cpu_fallback,
)
from variant_bridge.jobs._follow import Follow
from variant_bridge.jobs._releases import Releases
from variant_bridge.jobs._stack import StackPlan, plan_stacks, requirements_of
from variant_bridge.jobs._tree import Need, Resolved, resolve_tree
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.specs import Misuse
from variant_bridge.jobs.toolkits import VariantToolkit
from variant_bridge.markers import unreadable_version

__all__ = [
    "Duplicate",
    "Follow",
    "PackageChoice",
    "PackageRequest",
    "RequiredBy",
    "VariantToolkit",
    "cpu_fallback",
    "parse_request",
    "parse_requests",
    "select",
]

STACK_ROUNDS = 4
"""Resolutions of one tree at most while its stacks settle on one toolkit each (each round only
adds preferences, so a tree whose builds do not change dependencies settles in two)."""


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
            f"invalid package request {quote(text)}: expected NAME or NAME==VERSION"
        ) from e
    bad = unreadable_version(requirement.specifier)
    if bad is not None:
        raise InvalidTarget(
            f"invalid package request {quote(text)}: {quote(bad)} is not a PEP 440 version"
        )
    if requirement.url or requirement.marker:
        raise InvalidTarget(
            f"invalid package request {quote(text)}: URLs and markers are not supported; use "
            "--find-links or --index-url"
        )
    if requirement.extras:
        raise InvalidTarget(
            f"invalid package request {quote(text)}: extras are not supported; request the "
            "package, then the extra's requirements by name"
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
    allow_mix: bool = False,
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
    :param allow_mix: packages of one GPU stack that share no CUDA toolkit keep their own
        choices (each says why on :attr:`PackageChoice.mixed`) instead of an error.

    One stack, one toolkit (semantics.md §6.6): after the tree is resolved, CUDA packages that
    require one another are chosen again for the toolkit of their stack's anchor
    (torchvision follows torch), and the tree is resolved again with that preference.
    :returns: one choice per package of the tree: the requested ones first, in request order,
        then the others in the order the tree reaches them.
    :raises ConflictingOptions: no source; :raises SelectionError: an unknown package,
        requirements that cannot all be met (each named with who stated it), a damaged file
        that could be the best match, or a stack sharing no CUDA toolkit (without
        *allow_mix*); :raises IndexReadError: an unreachable source.
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
    needs = [Need.of(r.requirement, r.text) for r in requests]
    tree = resolve_tree(needs, releases, follow=deps)
    choices = _choices(requests, tree, releases)
    follows: dict[str, Follow] = {}
    plan = _plan(choices, tree, follows, choosing)
    rounds = 1
    while not plan.conflicts and any(follows.get(p) != f for p, f in plan.follows.items()):
        if rounds == STACK_ROUNDS:
            names = ", ".join(sorted(plan.follows))
            raise SelectionError(
                f"the GPU stacks of the tree ({names}) did not settle on one CUDA toolkit in "
                f"{STACK_ROUNDS} resolutions; pin their versions (NAME==VERSION)"
            )
        follows.update(plan.follows)
        releases.follow(follows)  # those packages are chosen again for their stack's toolkit
        tree = resolve_tree(needs, releases, follow=deps)
        choices = _choices(requests, tree, releases)
        plan = _plan(choices, tree, follows, choosing)
        rounds += 1
    if plan.conflicts:
        if not allow_mix:
            raise SelectionError("; ".join(c.message for c in plan.conflicts))
        return _mixed(choices, plan)
    return choices


def _plan(
    choices: Sequence[PackageChoice], tree: Resolved, follows: dict[str, Follow], choosing: Choosing
) -> StackPlan:
    return plan_stacks(
        choices, requirements_of(tree.needs), previous=follows,
        namespace=choosing.tables.nvidia.namespace, tables=choosing.tables,
    )  # fmt: skip


def _choices(
    requests: Sequence[PackageRequest], tree: Resolved, releases: Releases
) -> tuple[PackageChoice, ...]:
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


def _mixed(choices: Sequence[PackageChoice], plan: StackPlan) -> tuple[PackageChoice, ...]:
    """The choices with each conflict said on its first member (``--allow-mix``)."""
    said = {c.projects[0]: c.reason for c in plan.conflicts}
    return tuple(
        replace(c, mixed=said[c.files.project]) if c.files.project in said else c for c in choices
    )


def _canonical(request: PackageRequest) -> str:
    return canonicalize_name(request.requirement.name)
