"""One command's context: its sources, its one way onto the network and its target, decided once.

Every command that fetches runs with a :class:`Context`, built at the edge from the three specs
of :mod:`.specs` by :meth:`Context.open` (the CLI's option groups fill them; so can a conda plugin,
a pixi extension or a library caller; docs/library.md)::

    with Context.open(SourceSpec(index_url=URL), EnvironmentSpec(prefix=P), FetchSpec()) as ctx:
        choices = select(parse_requests(["torch"]), ctx)

- :class:`Sources`: every location checked once, in uv's order of precedence, with the index
  strategy;
- one :class:`~variant_bridge.indexes.Downloads` (:func:`open_downloads`): the command's one
  transport (kept-alive connections, deadlines, caps, the reporter's lines and progress), the
  cache, a scratch directory; the transport is closed and the scratch directory removed when the
  block ends; so no file is fetched twice in one command;
- the :class:`~variant_bridge.jobs.target.Target`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from pathlib import Path
from typing import overload

from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.errors import ConflictingOptions
from variant_bridge.indexes import (
    Downloads,
    FindLinks,
    IndexSource,
    IndexStrategy,
    ProjectListing,
    SimpleIndex,
)
from variant_bridge.jobs.specs import (
    EnvironmentSpec,
    FetchSpec,
    Misuse,
    Reporter,
    SourceSpec,
)
from variant_bridge.jobs.target import Target

__all__ = ["Context", "Sources", "open_downloads"]


@value
class Sources:
    """Where wheels come from: each location checked once, in the order they are consulted
    (uv's: every find-links location, every ``--extra-index-url`` earlier first, then
    ``--index-url``), and which indexes the :attr:`strategy` consults for a project."""

    locations: tuple[IndexSource, ...] = ()
    strategy: IndexStrategy = IndexStrategy.FIRST_INDEX
    default: SimpleIndex | None = None
    """The ``--index-url`` index (uv's default index), the last of :attr:`locations`: what a
    file written for pip names ``--index-url`` (the others are extra indexes)."""

    def __bool__(self) -> bool:
        return bool(self.locations)

    def __iter__(self) -> Iterator[IndexSource]:
        return iter(self.locations)

    def __len__(self) -> int:
        return len(self.locations)

    @overload
    def __getitem__(self, index: int) -> IndexSource: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[IndexSource, ...]: ...
    def __getitem__(self, index: int | slice) -> IndexSource | tuple[IndexSource, ...]:
        return self.locations[index]

    def __str__(self) -> str:
        return ", ".join(s.name for s in self.locations)

    @property
    def indexes(self) -> tuple[SimpleIndex, ...]:
        """Every simple index, in the order consulted."""
        return tuple(s for s in self.locations if isinstance(s, SimpleIndex))

    @property
    def extra_indexes(self) -> tuple[SimpleIndex, ...]:
        """The indexes other than :attr:`default`, in the order consulted."""
        indexes = self.indexes
        return indexes[:-1] if self.default is not None else indexes

    @property
    def find_links(self) -> tuple[FindLinks, ...]:
        return tuple(s for s in self.locations if isinstance(s, FindLinks))

    @classmethod
    def of(cls, spec: SourceSpec) -> Sources:
        """*spec*'s locations, each checked once and named by the option that carried it.

        :raises InvalidTarget: a malformed URL (naming ``--index-url`` or
            ``--extra-index-url``).
        """
        links = [FindLinks.parse(location) for location in spec.find_links]
        extra = [SimpleIndex.parse(u, option="--extra-index-url") for u in spec.extra_index_urls]
        main = SimpleIndex.parse(spec.index_url, option="--index-url") if spec.index_url else None
        located: list[IndexSource] = [*links, *extra, *([main] if main is not None else [])]
        return cls(tuple(located), IndexStrategy(spec.strategy), main)

    @classmethod
    def of_inputs(
        cls, inputs: Sequence[str], *, projects: Sequence[str] = ()
    ) -> tuple[Sources, tuple[Path, ...]]:
        """The positional inputs of ``index`` and ``convert``: a URL (``http(s)://``,
        ``file://``) is a simple index, a path ending in ``.whl`` a wheel file, any other path a
        find-links directory (every project in it). Sources in the order given, every one read
        (each was named: ``unsafe-best-match``).

        :raises ConflictingOptions: an index without *projects* (an index lists every project).
        :raises InvalidTarget: a malformed URL.
        """
        locations: list[IndexSource] = []
        files: list[Path] = []
        for text in inputs:
            if "://" in text:
                if not projects:
                    raise ConflictingOptions(
                        Misuse.INDEX_NEEDS_PROJECT,
                        f"{text}: an index URL needs --project NAME (an index lists every "
                        "project).",
                    )
                locations.append(SimpleIndex.parse(text, option="an index URL"))
            elif text.endswith(".whl"):
                files.append(Path(text))
            else:
                locations.append(FindLinks.parse(text))
        return cls(tuple(locations), IndexStrategy.UNSAFE_BEST_MATCH), tuple(files)

    def listing(self, project: str, *, python: Version, downloads: Downloads) -> ProjectListing:
        """Every file of *project* from the locations the strategy consults (one
        :class:`~variant_bridge.indexes.ProjectListing`)."""
        return ProjectListing(
            project,
            self.locations,
            python=python,
            strategy=self.strategy,
            transport=downloads.transport,
        )


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def cache_root(spec: FetchSpec) -> Path | None:
    """The cache directory *spec* asks for; ``None`` with ``no_cache``."""
    from variant_bridge.indexes.cache import default_cache_dir

    if spec.no_cache:
        return None
    return spec.cache_dir if spec.cache_dir is not None else default_cache_dir(spec.variables())


@contextlib.contextmanager
def open_downloads(spec: FetchSpec, reporter: Reporter | None = None) -> Iterator[Downloads]:
    """The command's one :class:`~variant_bridge.indexes.Downloads`: wheels land in the cache
    (unless ``no_cache``); its scratch directory (find-links copies, files without a hash, every
    wheel without a cache) is removed when the block ends, or by the next command when this one
    is killed (:mod:`variant_bridge.indexes.scratch`).

    The block owns the command's one :class:`~variant_bridge.indexes.Transport`: every job below
    is handed it (through the downloads) and none makes its own; it is closed when the block
    ends (its kept-alive connections, its prefetching threads, before the scratch directory
    goes), whether the command ended well or not.

    :param reporter: where ``verbose`` lines go (default: stderr) and the progress display
        (default: none).
    :raises ConflictingOptions: see :meth:`FetchSpec.check`.
    """
    from variant_bridge.indexes.cache import Cache
    from variant_bridge.indexes.scratch import scratch_dir
    from variant_bridge.indexes.transport import Transport

    deadline = spec.check()
    reporter = reporter or Reporter()
    log: Callable[[str], None] | None = None
    if spec.verbose:
        log = reporter.log or _stderr_line
    progress = None if spec.quiet else reporter.progress
    if deadline is None:
        transport = Transport(log=log, progress=progress)
    else:
        transport = Transport(deadline=deadline, log=log, progress=progress)
    root = cache_root(spec)
    with scratch_dir("downloads") as scratch, transport:
        yield Downloads(
            scratch, transport=transport, cache=Cache(root) if root is not None else None
        )


@value
class Context:
    """What a command runs with, decided once at the edge (see the module docstring)."""

    sources: Sources
    downloads: Downloads
    """The command's only way onto the network (and the files it fetched)."""
    target: Target
    fetch: FetchSpec = field(default_factory=FetchSpec)
    """As asked: :attr:`~FetchSpec.require_hashes` for installing, :attr:`~FetchSpec.quiet`
    for notes."""

    @property
    def notes(self) -> tuple[str, ...]:
        """What fetching noted, for the shell to show (none when ``quiet``)."""
        return () if self.fetch.quiet else tuple(self.downloads.notes)

    @classmethod
    @contextlib.contextmanager
    def open(
        cls,
        sources: SourceSpec | Sources | None = None,
        environment: EnvironmentSpec | Target | None = None,
        fetch: FetchSpec | None = None,
        *,
        reporter: Reporter | None = None,
    ) -> Iterator[Context]:
        """Check every input once, then decide: the fetch options (pure), the sources (URLs),
        the target (detection, the interpreter; a ready :class:`Target` is taken as it is), and
        the downloads (a scratch directory until the block ends). ``None`` is the spec's
        default: no sources, this machine (or ``$CONDA_PREFIX``), the default fetching.

        :raises ConflictingOptions: inputs that contradict each other (a usage error).
        :raises InvalidTarget, DetectionError: see :meth:`Target.of`.
        """
        fetch = fetch or FetchSpec()
        fetch.check()
        checked = sources if isinstance(sources, Sources) else Sources.of(sources or SourceSpec())
        if not isinstance(environment, Target):
            environment = Target.of(environment or EnvironmentSpec())
        target = environment
        with open_downloads(fetch, reporter) as downloads:
            yield cls(checked, downloads, target, fetch)
