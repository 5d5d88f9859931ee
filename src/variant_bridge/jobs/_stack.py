"""One GPU stack, one CUDA toolkit: packages of a tree that build on each other agree on it.

After the tree is resolved, the *CUDA packages* in it (a release with variants of the ``nvidia``
namespace, or an installed one kept) that require one another form a *stack* (torchvision ->
torch -> nvidia-cublas). Each build a package could take (the compatible ones, in rank order)
has a toolkit by the shared rule (:func:`~variant_bridge.translate.evidence.wheel_toolkit`:
pins, else the label, else the lower bound) or is a CPU build (the null variant, a plain wheel).
A stack agrees when one toolkit :meth:`~variant_bridge.translate.evidence.WheelToolkit.matches`
every chosen build (or every chosen build is a CPU build).

The toolkit of a stack is its *anchor*'s: the member with the strongest evidence of its own (pins,
then a label saying a minor, then a floor, then a major), of equals the one the most members
require, then the first in the tree. When the chosen builds disagree, the anchor's compatible
builds are tried in its own order, and the first toolkit every member has a compatible build
for wins; no such toolkit is a conflict. :func:`plan_stacks` says, for every member that must be
chosen again, which toolkit it follows (:class:`Follow`); ``select`` re-resolves the tree with
those preferences (docs/semantics.md §6.6). Pure: the choices in, the plan out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from variant_bridge._values import value
from variant_bridge.jobs._choice import PackageChoice
from variant_bridge.jobs._follow import Follow, Option, StackToolkit, is_cuda
from variant_bridge.jobs._tree import Need
from variant_bridge.mappings import MappingTables
from variant_bridge.properties import VariantDescription
from variant_bridge.translate.evidence import wheel_toolkit

__all__ = ["StackConflict", "StackPlan", "plan_stacks", "requirements_of"]


@value
class _Member:
    project: str
    title: str
    """``torch 2.9.0``."""
    options: tuple[Option, ...]
    """The compatible builds, the chosen one first."""
    rejected: tuple[str, ...]
    """CUDA builds the target refused, with why (for a conflict's words)."""
    index: int


@value
class StackConflict:
    """Packages that require one another and share no CUDA toolkit."""

    projects: tuple[str, ...]
    reason: str
    """Which packages, and what each could take."""

    @property
    def message(self) -> str:
        """The error without ``--allow-mix``."""
        return f"{self.reason}; pass --allow-mix to keep each package's own choice"


@value
class StackPlan:
    """What the stacks of a tree need: the packages to choose again, and the conflicts."""

    follows: Mapping[str, Follow]
    conflicts: tuple[StackConflict, ...] = ()


def _options(choice: PackageChoice, namespace: str, tables: MappingTables) -> tuple[Option, ...]:
    if choice.installed is not None:
        description = choice.installed.variant
        cuda = is_cuda(description, namespace)
        toolkit = wheel_toolkit(description, tables=tables) if description and cuda else None
        label = choice.installed.variant_label
        return (Option(label, toolkit, cuda),)
    found: list[Option] = []
    for verdict in choice.selection.verdicts:
        if not verdict.compatible:
            continue
        description = verdict.variant.description if verdict.variant is not None else None
        found.append(_option(verdict.label, description, choice, namespace, tables))
    return tuple(found)


def _option(
    label: str | None,
    description: VariantDescription | None,
    choice: PackageChoice,
    namespace: str,
    tables: MappingTables,
) -> Option:
    read = choice.toolkits.get(label or "")
    toolkit = read.toolkit if read is not None else None
    if toolkit is None and description is not None and not description.is_null:
        toolkit = wheel_toolkit(description, tables=tables)
    cuda = is_cuda(description, namespace) or (toolkit is not None and label is not None)
    return Option(label, toolkit if cuda else None, cuda)


def _rejected(choice: PackageChoice, namespace: str) -> tuple[str, ...]:
    return tuple(
        v.reason
        for v in choice.selection.verdicts
        if not v.compatible and v.variant is not None and is_cuda(v.variant.description, namespace)
    )


def _members(
    choices: Sequence[PackageChoice], namespace: str, tables: MappingTables
) -> dict[str, _Member]:
    members: dict[str, _Member] = {}
    for index, choice in enumerate(choices):
        if choice.failed:
            continue
        publishes_cuda = any(
            is_cuda(v.variant.description, namespace)
            for v in choice.selection.verdicts
            if v.variant is not None
        ) or (choice.installed is not None and is_cuda(choice.installed.variant, namespace))
        if not publishes_cuda:
            continue
        options = _options(choice, namespace, tables)
        if not options:
            continue
        project = choice.files.project
        title = f"{project} {choice.files.version}"
        rejected = _rejected(choice, namespace)
        members[project] = _Member(project, title, options, rejected, index)
    return members


def _components(
    members: Mapping[str, _Member], requires: Mapping[str, set[str]]
) -> list[list[str]]:
    """Members joined by requirements (either way), each component in tree order."""
    linked: dict[str, set[str]] = {name: set() for name in members}
    for name in members:
        for other in requires.get(name, ()):
            if other in members and other != name:
                linked[name].add(other)
                linked[other].add(name)
    seen: set[str] = set()
    found: list[list[str]] = []
    for name in sorted(members, key=lambda n: members[n].index):
        if name in seen:
            continue
        todo, group = [name], []
        while todo:
            one = todo.pop()
            if one in seen:
                continue
            seen.add(one)
            group.append(one)
            todo.extend(sorted(linked[one]))
        found.append(sorted(group, key=lambda n: members[n].index))
    return found


def _dependents(name: str, group: Sequence[str], requires: Mapping[str, set[str]]) -> int:
    """How many members of *group* require *name*, directly or through others."""
    count, todo, seen = 0, [name], {name}
    while todo:
        one = todo.pop()
        for other in group:
            if other not in seen and one in requires.get(other, ()):
                seen.add(other)
                count += 1
                todo.append(other)
    return count


def _label(member: _Member, option: Option) -> str:
    return f"{member.title} {option.label or 'plain wheel'}"


def _conflict(group: Sequence[_Member], requires: Mapping[str, set[str]]) -> StackConflict:
    """Which packages cannot share a toolkit, and what each of them could take."""
    titles = {m.project: m.title for m in group}
    edges = [
        f"{m.title} requires {titles[other]}"
        for m in group
        for other in sorted(requires.get(m.project, set()) & titles.keys())
    ]
    parts = []
    for member in group:
        can = ", ".join(str(o) for o in member.options)
        refused = f" [refused: {'; '.join(member.rejected)}]" if member.rejected else ""
        parts.append(f"{member.title} can take {can}{refused}")
    reason = (
        f"{', '.join(edges)}, but no CUDA toolkit fits {' and '.join(titles.values())}: "
        f"{'; '.join(parts)}"
    )
    return StackConflict(tuple(titles), reason)


@value
class _Candidate:
    """A toolkit the stack could share, and the anchor's build that gives it."""

    toolkit: StackToolkit
    anchor: str
    """``torch 2.9.0 cuda12.6``."""
    project: str | None = None
    """The anchor's project; ``None`` when an earlier round settled the toolkit."""
    option: Option | None = None


def _candidates(
    group: Sequence[_Member], requires: Mapping[str, set[str]], previous: Mapping[str, Follow]
) -> list[_Candidate]:
    names = [m.project for m in group]
    settled = {n: previous[n] for n in names if n in previous}
    if settled:
        toolkits = {f.toolkit for f in settled.values()}
        if len(toolkits) > 1:
            return []  # stacks settled apart now share a package: no one toolkit
        first = next(iter(settled.values()))
        return [_Candidate(first.toolkit, first.anchor)]
    anchor = min(
        group,
        key=lambda m: (m.options[0].strength, -_dependents(m.project, names, requires), m.index),
    )
    # An anchor on a CUDA build never drops to its CPU build so that the stack agrees: that
    # would be a silent downgrade (the packages that cannot follow are a conflict instead).
    options = [o for o in anchor.options if o.cuda or not anchor.options[0].cuda]
    return [
        _Candidate(option.stack(), _label(anchor, option), anchor.project, option)
        for option in options
    ]


def _follow(
    member: _Member,
    group: Sequence[_Member],
    candidate: _Candidate,
    requires: Mapping[str, set[str]],
) -> Follow | None:
    """What *member* must follow under *candidate*, or ``None`` (it keeps its choice)."""
    if member.project == candidate.project:  # the anchor: moves only when its first cannot do
        if candidate.option is member.options[0]:
            return None
        others = ", ".join(m.title for m in group if m is not member)
        return Follow(
            candidate.toolkit, candidate.anchor, False, f"{others} cannot follow its first choice"
        )
    names = {m.project for m in group}
    requires_member = bool(requires.get(member.project, set()) & names)
    if requires_member or not member.options[0].agrees(candidate.toolkit):
        return Follow(candidate.toolkit, candidate.anchor, requires_member)
    return None


def _plan_group(
    group: Sequence[_Member],
    requires: Mapping[str, set[str]],
    previous: Mapping[str, Follow],
) -> dict[str, Follow] | StackConflict:
    for candidate in _candidates(group, requires, previous):
        if not all(any(o.agrees(candidate.toolkit) for o in m.options) for m in group):
            continue
        follows: dict[str, Follow] = {}
        for member in group:
            found = previous.get(member.project) or _follow(member, group, candidate, requires)
            if found is not None:
                follows[member.project] = found
        return follows
    return _conflict(group, requires)


def plan_stacks(
    choices: Sequence[PackageChoice],
    requires: Mapping[str, set[str]],
    *,
    previous: Mapping[str, Follow] | None = None,
    namespace: str,
    tables: MappingTables,
) -> StackPlan:
    """Which packages of the tree must be chosen again, and for which toolkit.

    :param requires: canonical project -> the projects its chosen build requires (the tree's).
    :param previous: the follows of an earlier round (kept: the tree is re-resolved with them).
    :param namespace: the CUDA namespace (``nvidia``).
    """
    previous = previous or {}
    members = _members(choices, namespace, tables)
    follows: dict[str, Follow] = {}
    conflicts: list[StackConflict] = []
    for names in _components(members, requires):
        if len(names) < 2:
            continue
        planned = _plan_group([members[n] for n in names], requires, previous)
        if isinstance(planned, StackConflict):
            conflicts.append(planned)
        else:
            follows.update(planned)
    return StackPlan(follows, tuple(conflicts))


def requirements_of(needs: Mapping[str, Iterable[Need]]) -> dict[str, set[str]]:
    """Project -> the projects it requires, from the tree's needs (each with its parent)."""
    found: dict[str, set[str]] = {}
    for project, stated in needs.items():
        for need in stated:
            if need.parent is not None:
                found.setdefault(need.parent.rsplit(" ", 1)[0], set()).add(project)
    return found
