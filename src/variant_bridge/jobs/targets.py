"""A cluster's node classes, each its own target, run through one command (docs/clusters.md).

A targets file (:mod:`variant_bridge.detect.targets_file`) names the classes of a cluster's nodes
and declares each one's facts. Here every class becomes a ready
:class:`~variant_bridge.jobs.target.Target` (declared facts over pixi's platform defaults, nothing
of this machine: ``strict``), and :func:`open_classes` gives each class a
:class:`~variant_bridge.jobs.context.Context` that differs only in its target: the sources, the
fetch options and the **one** :class:`~variant_bridge.indexes.Downloads` are the command's, so a
file two classes need is fetched once::

    with open_classes("nodes.yaml", SourceSpec(find_links=("wheels",)),
                      EnvironmentSpec(python="3.12")) as classes:
        for one in select_classes(parse_requests(["torch"]), classes):
            print(one.name, [c.chosen for c in one.choices])

``export`` (:mod:`.targets_export`) and ``solve --write-lock`` (:mod:`.targets_lock`) run the same
loop and write one file per class, or one manifest or lock with a platform per class.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TypeVar

from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.detect.targets_file import NodeClass, read_targets_file
from variant_bridge.errors import ConflictingOptions, InvalidTarget, VariantBridgeError, quote
from variant_bridge.indexes import Downloads, ProjectListing
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.select import PackageChoice, PackageRequest, select
from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, Misuse, Reporter, SourceSpec
from variant_bridge.jobs.target import Target

__all__ = [
    "ClassChoices",
    "NodeClasses",
    "NodeContext",
    "SharedSources",
    "check_alone",
    "each_class",
    "for_class",
    "node_targets",
    "open_classes",
    "select_classes",
]

T = TypeVar("T")

# The options that describe one environment, which each class describes itself.
_ENVIRONMENT_OPTIONS = (
    ("--prefix", "prefix"),
    ("--lockfile", "lockfile"),
    ("--environment", "environment"),
    ("--platform", "platform"),
    ("--target", "targets"),
)


@value
class NodeContext:
    """One class of nodes and the command's context for it (its target the class's)."""

    node: NodeClass
    ctx: Context

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def target(self) -> Target:
        return self.ctx.target


@value
class NodeClasses:
    """Every class of a targets file, in the file's order, with their contexts (one
    :class:`~variant_bridge.indexes.Downloads` shared by all)."""

    path: str
    classes: tuple[NodeContext, ...]
    shared: Context
    """The command's context (sources, downloads, fetch); its target is the first class's."""

    def __iter__(self) -> Iterator[NodeContext]:
        return iter(self.classes)

    def __len__(self) -> int:
        return len(self.classes)

    @property
    def notes(self) -> tuple[str, ...]:
        """What fetching noted, once for the command (none when ``quiet``)."""
        return self.shared.notes


@value
class ClassChoices:
    """What ``select`` chose for one class."""

    node: NodeClass
    target: Target
    choices: tuple[PackageChoice, ...]

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def failed(self) -> tuple[PackageChoice, ...]:
        return tuple(c for c in self.choices if c.failed)


@value
class SharedSources(Sources):
    """The command's sources, whose project listings every class shares: a project's pages and
    each release's ``*-variants.json`` are read once for all classes (per target Python)."""

    read: dict[tuple[str, Version], ProjectListing] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def sharing(cls, sources: Sources) -> SharedSources:
        return cls(sources.locations, sources.strategy, sources.default)

    def listing(self, project: str, *, python: Version, downloads: Downloads) -> ProjectListing:
        key = (canonicalize_name(project), python)
        found = self.read.get(key)
        if found is None:
            found = self.read[key] = Sources.listing(
                self, project, python=python, downloads=downloads
            )
        return found


def check_alone(environment: EnvironmentSpec) -> None:
    """``--targets`` describes each class itself: refuse the options that describe one
    environment (a usage error).

    :raises ConflictingOptions: naming the first such option given.
    """
    for option, attribute in _ENVIRONMENT_OPTIONS:
        if getattr(environment, attribute):
            raise ConflictingOptions(
                Misuse.TARGETS_AND_ENVIRONMENT,
                f"--targets describes each class itself; it cannot be combined with {option}",
            )


def node_targets(
    path: str | Path, environment: EnvironmentSpec | None = None
) -> tuple[tuple[NodeClass, Target], ...]:
    """Each class of the targets file at *path* as a ready target, in the file's order.

    A class's facts are declared over pixi's platform defaults and nothing of this machine is
    read (``strict``, no ``CONDA_OVERRIDE_*``). *environment* gives what every class shares:
    ``cuda_policy``, ``interpreter`` and ``python`` (``--python``: the target Python of the
    classes that declare none).

    :raises ConflictingOptions: *environment* also describes one environment (:func:`check_alone`).
    :raises InvalidTarget: the file is bad (naming the class and the key), or a class has no
        target Python where the wheels are chosen for one.
    """
    environment = environment or EnvironmentSpec()
    check_alone(environment)
    targets = read_targets_file(path)
    found = []
    for node in targets.classes:
        declared = "python" in node.targets
        if environment.interpreter and not declared and environment.python is None:
            raise InvalidTarget(
                f"{targets.path}: class {quote(node.name)}: no target Python: declare one in "
                'the class (python: "3.12") or pass --python'
            )
        spec = replace(
            environment,
            platform=node.platform,
            targets=tuple(f"{k}={v}" for k, v in node.targets.items() if k != "platform"),
            strict=True,
            python=None if declared else environment.python,
            conda_prefix=False,
            virtual_packages=None,
            environ={},
        )
        with for_class(targets.path, node.name):
            found.append((node, Target.of(spec)))
    return tuple(found)


@contextlib.contextmanager
def open_classes(
    path: str | Path,
    sources: SourceSpec | Sources | None = None,
    environment: EnvironmentSpec | None = None,
    fetch: FetchSpec | None = None,
    *,
    reporter: Reporter | None = None,
) -> Iterator[NodeClasses]:
    """The classes of the targets file at *path*, each with its context, all sharing one
    :class:`~variant_bridge.indexes.Downloads` (opened as :meth:`Context.open` opens it; its
    scratch directory is removed when the block ends). Checked in the order
    :meth:`Context.open` checks: the options that exclude each other, the fetch options, the
    sources, then the file and every class's target.

    :raises ConflictingOptions: see :func:`check_alone` and :meth:`FetchSpec.check`.
    :raises InvalidTarget: see :func:`node_targets`; a malformed URL.
    """
    environment = environment or EnvironmentSpec()
    fetch = fetch or FetchSpec()
    check_alone(environment)
    fetch.check()
    checked = sources if isinstance(sources, Sources) else Sources.of(sources or SourceSpec())
    checked = SharedSources.sharing(checked)
    targets = node_targets(path, environment)
    with Context.open(checked, targets[0][1], fetch, reporter=reporter) as shared:
        contexts = tuple(NodeContext(node, replace(shared, target=t)) for node, t in targets)
        yield NodeClasses(str(path), contexts, shared)


@contextlib.contextmanager
def for_class(path: str, name: str) -> Iterator[None]:
    """An error raised for one class names the file and the class (same type, same kind)."""
    try:
        yield
    except VariantBridgeError as e:
        text = f"{path}: class {quote(name)}: {e}"
        if str(e).startswith(f"{path}: class {quote(name)}"):
            raise
        raise _renamed(e, text) from e


def _renamed(error: VariantBridgeError, text: str) -> VariantBridgeError:
    """*error* with the message *text*: same class, same ``kind``; the error itself when its
    class takes other arguments."""
    if isinstance(error, ConflictingOptions):
        return ConflictingOptions(error.kind, text)
    try:
        renamed = type(error)(text)
    except TypeError:
        return error
    return renamed


def each_class(classes: NodeClasses, run: Callable[[NodeContext], T]) -> tuple[T, ...]:
    """*run* for every class, in the file's order; an error names its class."""
    results = []
    for one in classes:
        with for_class(classes.path, one.name):
            results.append(run(one))
    return tuple(results)


def select_classes(
    requests: Sequence[PackageRequest],
    classes: NodeClasses,
    *,
    deps: bool = True,
    fetch_chosen: bool = True,
) -> tuple[ClassChoices, ...]:
    """``select`` for every class: the tree of *requests* resolved for each class's target, one
    :class:`ClassChoices` per class in the file's order. A wheel two classes consider is read
    and fetched once (the shared downloads).

    :raises ConflictingOptions: no source. :raises SelectionError, IndexReadError: see
        :func:`~variant_bridge.jobs.select.select`, naming the class.
    """
    if not classes.shared.sources:
        raise ConflictingOptions(
            Misuse.NO_SOURCE, "Give at least one --find-links DIR or --index-url URL."
        )

    def run(one: NodeContext) -> ClassChoices:
        chosen = select(requests, one.ctx, fetch_chosen=fetch_chosen, deps=deps, installed=())
        return ClassChoices(one.node, one.target, chosen)

    return each_class(classes, run)
