"""What a command is asked to run with, as given: plain values, no click, nothing checked yet.

A shell (the CLI's option groups in ``cli/_options.py``, a conda plugin, a pixi extension, a
library caller) fills these three and hands them to
:meth:`variant_bridge.jobs.context.Context.open`, which checks each input once and decides the
sources, the fetching and the target (docs/library.md):

- :class:`SourceSpec`: where wheels come from (``--find-links``, ``--index-url``,
  ``--extra-index-url``, ``--index-strategy``);
- :class:`EnvironmentSpec`: the environment and interpreter the wheels are for (``--prefix`` or
  ``--lockfile`` with ``--environment``, ``--platform``, ``--target``, ``--strict``,
  ``--cuda-policy``, ``--python``), or facts a host supplies (a conda plugin's virtual packages);
- :class:`FetchSpec`: how the network is reached (``--cache-dir``/``--no-cache``, ``--quiet``,
  ``--verbose``, the deadline, ``--no-require-hashes``), with a :class:`Reporter` that a shell
  renders;
- :class:`Host`: what an application that runs the commands inside itself (conda, for ``conda
  variant``) decided, filled into every :class:`EnvironmentSpec` where the user gave nothing.

This module imports nothing heavy: every command's options are built from it at start-up.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from variant_bridge._values import value

if TYPE_CHECKING:
    from variant_bridge.environment import CudaPolicy, VirtualPackage
    from variant_bridge.indexes.transport import ProgressFactory

__all__ = [
    "INDEX_STRATEGIES",
    "TIMEOUT_VARIABLE",
    "EnvironmentSpec",
    "FetchSpec",
    "Host",
    "Misuse",
    "PrefixHost",
    "Reporter",
    "SourceSpec",
]

TIMEOUT_VARIABLE = "VARIANT_BRIDGE_HTTP_TIMEOUT"
"""Seconds a request may take before the bytes it received add time (default 60)."""

IndexStrategyName = Literal["first-index", "unsafe-best-match"]
INDEX_STRATEGIES: tuple[IndexStrategyName, ...] = ("first-index", "unsafe-best-match")
"""uv's ``--index-strategy`` names (:class:`~variant_bridge.indexes.IndexStrategy`)."""


class Misuse(enum.Enum):
    """Inputs of a spec that cannot be used together, or not at all (raised as
    :class:`~variant_bridge.errors.ConflictingOptions` with this kind: a usage error, exit 2)."""

    NO_SOURCE = "no source"
    PYTHON_TWICE = "--python and --target python="
    QUIET_AND_VERBOSE = "--quiet and --verbose"
    CACHE_DIR_AND_NO_CACHE = "--cache-dir and --no-cache"
    BAD_DEADLINE = "deadline"
    INDEX_URL_TWICE = "--index-url twice"
    INDEX_NEEDS_PROJECT = "index without --project"
    TARGET_TWICE = "the host's target and --prefix or --lockfile"
    TARGETS_AND_ENVIRONMENT = "--targets with --prefix, --lockfile, --platform or --target"
    CUDA_AND_TOOLKIT = "--cuda and a solved cuda-version"


@value
class SourceSpec:
    """Where wheels come from, as typed. :meth:`Sources.of
    <variant_bridge.jobs.context.Sources.of>` checks each location once and orders them as uv
    does: every find-links location, every extra index (earlier first), then the index."""

    find_links: tuple[str, ...] = ()
    """Directories, ``file://`` URLs or ``http(s)://`` pages of wheels (``-f``)."""
    index_url: str | None = None
    """The PEP 503 / 691 index consulted after the extra ones (``--index-url``)."""
    extra_index_urls: tuple[str, ...] = ()
    """More indexes, taking precedence over :attr:`index_url` (``--extra-index-url``)."""
    strategy: IndexStrategyName = "first-index"
    """Which indexes are consulted for a project (``--index-strategy``)."""

    def __bool__(self) -> bool:
        return bool(self.find_links or self.index_url or self.extra_index_urls)


@value
class EnvironmentSpec:
    """The environment (and interpreter) a command works for, as given.

    Exactly one of the places to read: a conda :attr:`prefix` (``None`` with no
    :attr:`lockfile`: ``$CONDA_PREFIX`` unless :attr:`conda_prefix` is off), a pixi
    :attr:`lockfile` and its :attr:`environment`, or nothing (this machine, or the declared
    :attr:`platform`). :attr:`targets` declare facts; :attr:`virtual_packages` replace this
    machine's detection with what a host knows (a conda plugin passes conda's own, each with
    its :class:`~variant_bridge.environment.Source`, e.g. ``Source.supplied("conda")``).
    """

    prefix: Path | None = None
    lockfile: Path | None = None
    environment: str | None = None
    platform: str | None = None
    targets: tuple[str, ...] = ()
    """``KEY=VALUE`` declarations (``--target``)."""
    strict: bool = False
    """Use no fact of this machine: nothing detected, and the target Python must be known."""
    cuda_policy: CudaPolicy | None = None
    cuda: str | None = None
    """``--cuda``: the CUDA toolkit (``12.6``) the whole tree is built for where the environment
    has no solved ``cuda-version``; the toolkit policy then applies to it."""
    python: str | None = None
    """``--python``: a version or an interpreter; ``None``: the environment's, else the running
    one."""
    interpreter: bool = True
    """The wheels are for the target's interpreter (``select``, ``install``, ``export``):
    with :attr:`strict`, it may not be the running one. ``False``: only the environment counts
    (``solve``, where the Python comes from the solve)."""
    conda_prefix: bool = True
    """``$CONDA_PREFIX`` is the default prefix; ``False``: start from nothing (``solve``)."""
    virtual_packages: tuple[VirtualPackage, ...] | None = None
    """This machine's virtual packages as a host supplies them, instead of rattler's
    detection (``--target`` and the override variables still win)."""
    environ: Mapping[str, str] | None = None
    """The process environment read (``CONDA_PREFIX``, ``CONDA_OVERRIDE_*``,
    ``NV_VARIANT_PROVIDER_FORCE_*``); ``None``: :data:`os.environ`."""


@runtime_checkable
class Host(Protocol):
    """An application that runs the commands inside itself (``conda variant``, ``pixi
    variant``), passed as click's context object: it completes each command's
    :class:`EnvironmentSpec` with what it knows (its target environment, its facts)."""

    def fill(self, spec: EnvironmentSpec) -> EnvironmentSpec:
        """*spec* completed with the host's target and facts where the user gave none.

        :raises ConflictingOptions: the user named what the host already names.
        """
        ...


@value
class PrefixHost:
    """A :class:`Host` whose target is a prefix (the conda plugin's ``conda variant``): the
    environment it targets and the machine as it knows it, filled into each
    :class:`EnvironmentSpec` by :meth:`fill` where the user gave nothing of the kind."""

    name: str
    """Who supplied the facts (``conda``)."""
    prefix: Path | None = None
    """The environment the host targets (conda: ``-n``/``-p``, else the active environment,
    else base): the default of ``--prefix`` for the commands that read an environment."""
    explicit: bool = False
    """The user named :attr:`prefix` (conda's ``-n``/``-p``): naming the environment again with
    ``--prefix`` or ``--lockfile`` is a usage error instead of a silent choice."""
    virtual_packages: Callable[[], tuple[VirtualPackage, ...]] | None = None
    """This machine's virtual packages as the host knows them; asked only when a command reads
    this machine (not with ``strict``)."""

    def fill(self, spec: EnvironmentSpec) -> EnvironmentSpec:
        """*spec* with the host's target and facts where it has none.

        :raises ConflictingOptions: an :attr:`explicit` target and ``--prefix`` or
            ``--lockfile``.
        """
        from dataclasses import replace

        from variant_bridge.errors import ConflictingOptions

        named = spec.prefix is not None or spec.lockfile is not None
        if self.explicit and named:
            raise ConflictingOptions(
                Misuse.TARGET_TWICE,
                f"-n/-p and --prefix/--lockfile both name the environment; {self.name}'s "
                "-n/-p or the option, not both",
            )
        prefix, machine = spec.prefix, spec.virtual_packages
        if spec.conda_prefix and not named and self.prefix is not None:
            prefix = self.prefix
        if machine is None and not spec.strict and self.virtual_packages is not None:
            machine = self.virtual_packages()
        if prefix is spec.prefix and machine is spec.virtual_packages:
            return spec
        return replace(spec, prefix=prefix, virtual_packages=machine)


@value
class Reporter:
    """How a shell shows fetching: each request's line (shown with :attr:`FetchSpec.verbose`)
    and a progress display per large download (unless :attr:`FetchSpec.quiet`)."""

    log: Callable[[str], None] | None = None
    """Called with ``GET url`` for every request, redirect and retry."""
    progress: ProgressFactory | None = None
    """``(name, total bytes or None) -> Progress`` for downloads worth a progress display."""


@value
class FetchSpec:
    """How a command reaches the network and where files land, as given."""

    cache_dir: Path | None = None
    """The content-addressed cache; ``None``: ``$VARIANT_BRIDGE_CACHE_DIR``, else the user
    cache directory."""
    no_cache: bool = False
    """Neither read nor write the cache."""
    quiet: bool = False
    """No notes and no progress display."""
    verbose: bool = False
    """Every URL fetched is reported (:attr:`Reporter.log`)."""
    require_hashes: bool = True
    """Installing refuses a remote file whose index lists no sha256."""
    deadline: float | None = None
    """Seconds a request may take before the bytes it received add time; ``None``:
    ``$VARIANT_BRIDGE_HTTP_TIMEOUT``, else 60."""
    environ: Mapping[str, str] | None = None
    """Where the variables above are read; ``None``: :data:`os.environ`."""

    def variables(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ

    def check(self) -> float | None:
        """Refuse what contradicts itself; the deadline in seconds (``None``: the transport's
        default).

        :raises ConflictingOptions: ``quiet`` with ``verbose``, ``cache_dir`` with
            ``no_cache``, a deadline that is no positive number of seconds.
        """
        from variant_bridge.errors import ConflictingOptions

        if self.quiet and self.verbose:
            raise ConflictingOptions(
                Misuse.QUIET_AND_VERBOSE, "--quiet and --verbose contradict each other"
            )
        if self.no_cache and self.cache_dir is not None:
            raise ConflictingOptions(
                Misuse.CACHE_DIR_AND_NO_CACHE, "--no-cache and --cache-dir contradict each other"
            )
        if self.deadline is not None:
            seconds, said = self.deadline, f"a deadline of {self.deadline!r}"
        else:
            text = self.variables().get(TIMEOUT_VARIABLE, "").strip()
            if not text:
                return None
            try:
                seconds = float(text)
            except ValueError:
                seconds = -1.0
            said = f"${TIMEOUT_VARIABLE}={text[:40]!r}"
        if not 0 < seconds < 1e9:
            raise ConflictingOptions(
                Misuse.BAD_DEADLINE, f"{said}: expected a number of seconds, e.g. 60"
            )
        return seconds
