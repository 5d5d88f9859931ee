"""Every option group the commands share, declared once (uv's flattened ``IndexArgs``, conda's
``add_parser_*``): each group adds its options to a command and hands it one plain value from
:mod:`variant_bridge.jobs.specs` (no click in it), built by one generic decorator,
:class:`OptionGroup`. A group means the same in every command that takes it: the same names,
repeatability and defaults.

- :func:`source_options` -> ``sources: SourceSpec``: ``-f/--find-links``, ``--index-url`` (once),
  ``--extra-index-url``, ``--index-strategy``;
- :func:`environment_options` -> ``environment: EnvironmentSpec``: ``--prefix`` / ``--lockfile``
  / ``-e`` (read an environment), ``--platform``, ``-t/--target``, ``--strict``, ``--cuda``, and
  where the command has them ``--cuda-policy`` and ``--python``; a host running the commands
  (``conda variant``, ``pixi variant``) passes a :class:`~variant_bridge.jobs.specs.Host` as
  click's context object, whose target and facts fill the spec where the user gave none;
- :func:`fetch_options` -> ``fetch: FetchSpec``: ``--cache-dir``, ``--no-cache``, ``-q``, ``-v``,
  and for commands that install ``--no-require-hashes``;
- :func:`output_option`, :func:`targets_option`, :data:`priority_option`,
  :data:`no_deps_option`, :data:`allow_mix_option`, :data:`remove_leftovers_option`: single
  options several commands share.

A spec that contradicts itself (:class:`~variant_bridge.errors.ConflictingOptions`, raised where
the spec is checked, here or in the job) is the command's usage error: exit 2 with its usage line.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

import click

from variant_bridge.environment import CUDA_POLICIES
from variant_bridge.errors import ConflictingOptions, quote
from variant_bridge.jobs.specs import (
    INDEX_STRATEGIES,
    EnvironmentSpec,
    FetchSpec,
    Host,
    Misuse,
    SourceSpec,
)

__all__ = [
    "PRIORITIES",
    "OptionGroup",
    "allow_mix_option",
    "channel_options",
    "environment_options",
    "fetch_options",
    "no_deps_option",
    "output_option",
    "priority_option",
    "project_option",
    "remove_leftovers_option",
    "source_options",
    "targets_option",
    "usage_errors",
]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """Options that contradict each other (found where they are checked, once) become the
    running command's usage error: exit 2, with its usage line."""
    try:
        yield
    except ConflictingOptions as e:
        from variant_bridge.detect import Conflict  # only on this error path

        words = {
            Conflict.PREFIX_AND_LOCKFILE: (
                "--prefix and --lockfile cannot be used together; pick one."
            ),
            Conflict.ENVIRONMENT_WITHOUT_LOCKFILE: (
                "--environment needs --lockfile (it names a pixi.lock environment)."
            ),
        }
        text = words.get(e.kind, str(e)) if isinstance(e.kind, Conflict) else str(e)
        raise click.UsageError(text, click.get_current_context(silent=True)) from e


class OptionGroup(Generic[T]):
    """Options that a command receives as one value: ``into=build(**their values)``.

    :param into: the keyword the command receives.
    :param build: makes the value from the options' values (by parameter name); may raise
        :class:`ConflictingOptions`.
    :param options: makes each option, in the order ``--help`` lists them (fresh objects for
        every command, so no command shares click state with another).
    """

    def __init__(
        self,
        into: str,
        build: Callable[..., T],
        options: tuple[Callable[[], click.Parameter], ...],
    ) -> None:
        self.into = into
        self.build = build
        self.options = options

    def __call__(self, function: F) -> F:
        params = [make() for make in self.options]
        names = [str(p.name) for p in params if p.expose_value]

        @functools.wraps(function)
        def wrapper(**kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in names}
            with usage_errors():
                kwargs[self.into] = self.build(**values)
                return function(**kwargs)

        # click collects decorators' options bottom-up and reverses them; wraps() shares the
        # function's list, which the options below this group are already in.
        held: list[click.Parameter] = wrapper.__dict__.setdefault("__click_params__", [])
        held.extend(reversed(params))
        return cast("F", wrapper)


# -- sources ------------------------------------------------------------------------------------


def _find_links() -> click.Parameter:
    return click.Option(
        ["--find-links", "-f", "find_links"],
        multiple=True,
        metavar="DIR|URL",
        help="A directory (or file:// URL, or http(s):// page) of wheels and *-variants.json "
        "files (repeatable); merged with the index consulted for a project.",
    )


def _index_url() -> click.Parameter:
    return click.Option(
        ["--index-url", "index_url"],
        multiple=True,  # given twice is a usage error, not the last one silently
        metavar="URL",
        help="A PEP 503 / PEP 691 simple index, e.g. https://example.org/simple/ (once); "
        "consulted after every --extra-index-url, as uv does.",
    )


def _extra_index_urls() -> click.Parameter:
    return click.Option(
        ["--extra-index-url", "extra_index_urls"],
        multiple=True,
        metavar="URL",
        help="More simple indexes (repeatable); as uv, they take precedence over --index-url, "
        "earlier ones first.",
    )


def _index_strategy() -> click.Parameter:
    return click.Option(
        ["--index-strategy", "index_strategy"],
        type=click.Choice(INDEX_STRATEGIES),
        default="first-index",
        show_default=True,
        help="Which indexes are consulted for a project, as uv: only the first that has it, or "
        "every index merged (the best version wins wherever it is).",
    )


def _sources(
    find_links: tuple[str, ...],
    index_url: tuple[str, ...],
    extra_index_urls: tuple[str, ...],
    index_strategy: Any,
) -> SourceSpec:
    if len(index_url) > 1:
        raise ConflictingOptions(
            Misuse.INDEX_URL_TWICE,
            "--index-url names the one main index; pass more indexes with --extra-index-url "
            "(repeatable; they take precedence over --index-url)",
        )
    return SourceSpec(find_links, index_url[0] if index_url else None, extra_index_urls,
                      index_strategy)  # fmt: skip


def source_options() -> OptionGroup[SourceSpec]:
    """Where wheels come from; the command receives ``sources: SourceSpec``."""
    return OptionGroup(
        "sources", _sources, (_find_links, _index_url, _extra_index_urls, _index_strategy)
    )


# -- the environment ----------------------------------------------------------------------------


def _prefix() -> click.Parameter:
    return click.Option(
        ["--prefix"],
        metavar="DIR",
        # Not file_okay=False: that made a file exit 2 with usage text while a missing
        # directory exits 1; detection says what is wrong with either, in one line.
        type=click.Path(path_type=Path),
        help="A conda prefix to read (conda-meta and site-packages). Default: $CONDA_PREFIX, "
        "if set.",
    )


def _lockfile() -> click.Parameter:
    return click.Option(
        ["--lockfile"],
        metavar="FILE",
        type=click.Path(path_type=Path),  # likewise: a directory is detection's error
        help="A pixi.lock to read instead of a prefix.",
    )


def _environment() -> click.Parameter:
    return click.Option(
        ["--environment", "-e"],
        metavar="NAME",
        help="The pixi.lock environment (with --lockfile). Default: 'default'.",
    )


def _platform() -> click.Parameter:
    return click.Option(
        ["--platform"],
        metavar="SUBDIR",
        help="The conda platform, e.g. linux-64, osx-arm64. Default: this machine's.",
    )


def _targets() -> click.Parameter:
    return click.Option(
        ["--target", "-t", "targets"],
        multiple=True,
        metavar="KEY=VALUE",
        help=(
            "Declare a fact instead of detecting it (repeatable). KEY: cuda, cuda_arch, "
            "amdgpu, amdgpu_arch, archspec, glibc, linux, osx, win, cuda_version, "
            "cudatoolkit, rocm_version, device_ip, python, platform (e.g. cuda=12.8, "
            "cuda_arch=9.0, amdgpu_arch=gfx942, archspec=haswell, glibc=2.28, "
            "platform=linux-64); an empty VALUE declares the virtual package absent; "
            "cuda_version=12.6 (or cudatoolkit=11.8) declares the solved toolkit, "
            "rocm_version=6.4 the ROCm runtime, device_ip=20.1.0 Intel GPU IPs; "
            "cuda_arch=8.0,9.0 declares several GPUs, each of which must run the "
            "chosen wheel. Wins over CONDA_OVERRIDE_* and detection."
        ),
    )


def _strict() -> click.Parameter:
    return click.Option(
        ["--strict"],
        is_flag=True,
        help=(
            "Use no fact of this machine: virtual packages are the declared ones over pixi's "
            "platform defaults (nothing is detected), and a platform or target Python that "
            "would be this machine's is an error."
        ),
    )


def _cuda_policy() -> click.Parameter:
    return click.Option(
        ["--cuda-policy", "cuda_policy"],
        type=click.Choice(CUDA_POLICIES),
        help=(
            "toolkit: nvidia values must also agree with the solved cuda-version; driver: only "
            "with the driver (__cuda), as uv and the NVIDIA provider do. Default: toolkit when "
            "one is solved."
        ),
    )


def _check_cuda(ctx: click.Context, param: click.Parameter, given: str | None) -> str | None:
    import re

    if given is not None and re.fullmatch(r"[1-9][0-9]?\.[0-9]{1,2}", given) is None:
        raise click.BadParameter(
            f"{quote(given)}: expected a CUDA MAJOR.MINOR, e.g. 12.6", ctx, param
        )
    return given


def _cuda() -> click.Parameter:
    return click.Option(
        ["--cuda"],
        metavar="X.Y",
        callback=_check_cuda,
        help=(
            "The CUDA toolkit to build the whole tree for where the environment has no solved "
            "cuda-version (uv users, CI builders): builds needing a newer one are refused, and "
            "every GPU stack takes that toolkit's builds. A solved cuda-version that differs is "
            "a usage error."
        ),
    )


def _python() -> click.Parameter:
    return click.Option(
        ["--python", "python"],
        metavar="PY",
        help="The target interpreter: a path or a version like 3.12. Default: the prefix's "
        "python if it has one, else the running one.",
    )


def _moved(old: str, new: str) -> Callable[[], click.Parameter]:
    """A hidden option that only says its new name (a usage error when given)."""

    def refuse(ctx: click.Context, param: click.Parameter, given: object) -> None:
        if given is not None:
            raise click.UsageError(f"{old} reads an environment in the other commands; here, "
                                   f"use {new}", ctx)  # fmt: skip

    def make() -> click.Parameter:
        return click.Option(
            [old, f"_moved_{old.strip('-')}"], hidden=True, expose_value=False, callback=refuse
        )

    return make


def _environment_spec(**given: Any) -> EnvironmentSpec:
    spec = EnvironmentSpec(**given)
    # A host running the commands inside itself (`conda variant`, `pixi variant`) passes its Host
    # as click's context object: its target and facts fill what the user did not give.
    ctx = click.get_current_context(silent=True)
    host = ctx.find_object(Host) if ctx is not None else None  # type: ignore[type-abstract]
    return spec if host is None else host.fill(spec)


def environment_options(
    *,
    cuda_policy: bool = True,
    python: bool = False,
    reads: bool = True,
    moved: Mapping[str, str] | None = None,
) -> OptionGroup[EnvironmentSpec]:
    """The environment the command works for; the command receives ``environment:
    EnvironmentSpec``.

    :param python: also ``--python`` (commands that choose wheels for an interpreter).
    :param reads: ``--prefix``, ``--lockfile`` and ``-e`` read an environment; ``False``: the
        command starts from nothing but the platform and the declared facts (``solve``:
        ``$CONDA_PREFIX`` is not read, and the Python comes from its solve).
    :param moved: old option names this command used for something else -> the new name (a
        usage error saying so).
    """
    options: list[Callable[[], click.Parameter]] = []
    if reads:
        options += [_prefix, _lockfile, _environment]
    options += [_platform, _targets, _strict]
    if cuda_policy:
        options.append(_cuda_policy)
    options.append(_cuda)
    if python:
        options.append(_python)
    options += [_moved(old, new) for old, new in (moved or {}).items()]
    fixed: dict[str, Any] = {} if reads else {"conda_prefix": False, "interpreter": False}
    return OptionGroup("environment", functools.partial(_environment_spec, **fixed),
                       tuple(options))  # fmt: skip


# -- fetching -----------------------------------------------------------------------------------


def _cache_dir() -> click.Parameter:
    return click.Option(
        ["--cache-dir"],
        type=click.Path(file_okay=False, path_type=Path),
        metavar="DIR",
        help="The download cache (shared across commands). Default: $VARIANT_BRIDGE_CACHE_DIR, "
        "else the user cache directory (~/.cache/variant-bridge on Linux).",
    )


def _no_cache() -> click.Parameter:
    return click.Option(
        ["--no-cache"], is_flag=True, help="Neither read nor write the download cache."
    )


def _quiet() -> click.Parameter:
    return click.Option(
        ["--quiet", "-q"], is_flag=True, help="No notes and no progress bar on stderr."
    )


def _verbose() -> click.Parameter:
    return click.Option(
        ["--verbose", "-v"], is_flag=True, help="List every URL fetched, on stderr."
    )


def _no_require_hashes() -> click.Parameter:
    return click.Option(
        ["--no-require-hashes", "no_require_hashes"],
        is_flag=True,
        help="Install a remote file whose index lists no sha256 (unverified). Default: refuse it.",
    )


def _fetch_spec(
    cache_dir: Path | None,
    no_cache: bool,
    quiet: bool,
    verbose: bool,
    no_require_hashes: bool = False,
) -> FetchSpec:
    spec = FetchSpec(cache_dir, no_cache, quiet, verbose, require_hashes=not no_require_hashes)
    spec.check()  # contradictions are usage errors before anything runs
    return spec


def fetch_options(*, hashes: bool = False) -> OptionGroup[FetchSpec]:
    """How the command reaches the network; the command receives ``fetch: FetchSpec``.

    :param hashes: also ``--no-require-hashes`` (commands that install).
    """
    options = (_cache_dir, _no_cache, _quiet, _verbose)
    return OptionGroup("fetch", _fetch_spec, options + ((_no_require_hashes,) if hashes else ()))


# -- single shared options ----------------------------------------------------------------------

PRIORITIES = ("cells", "rank")


def priority_option(function: F) -> F:
    """``--priority cells|rank``: how variant priority is written into conda records."""
    return click.option(
        "--priority",
        type=click.Choice(PRIORITIES),
        default="cells",
        show_default=True,
        help="How variant priority is written: cells (one record per __cuda_arch interval, "
        "agrees with select on every GPU) or rank (one build number per label; GPU-dependent "
        "orders are reported as conflicts).",
    )(function)


def project_option(function: F) -> F:
    """``--project NAME`` (repeatable; the command receives ``projects``): the projects read
    from index URLs given as inputs (an index lists every project), and a filter for the rest."""
    return click.option(
        "--project",
        "projects",
        multiple=True,
        metavar="NAME",
        help="Only this project (repeatable); required for index URLs.",
    )(function)


def no_deps_option(function: F) -> F:
    """``--no-deps``: the named packages only."""
    return click.option(
        "--no-deps",
        "no_deps",
        is_flag=True,
        help="Only the packages named: do not resolve their dependencies.",
    )(function)


def allow_mix_option(function: F) -> F:
    """``--allow-mix``: packages of one GPU stack that share no CUDA toolkit keep their own
    choices (a warning) instead of an error."""
    return click.option(
        "--allow-mix",
        "allow_mix",
        is_flag=True,
        help="When packages that require one another share no CUDA toolkit (torchvision has no "
        "build for torch's), keep each one's own choice with a warning instead of failing.",
    )(function)


def remove_leftovers_option(function: F) -> F:
    """``--remove-leftovers``: remove the CUDA wheels nothing requires after the install
    (``install``, ``pixi variant add``)."""
    return click.option(
        "--remove-leftovers",
        "remove_leftovers",
        is_flag=True,
        help="Also remove the CUDA wheels (nvidia-*) nothing requires after the install (what "
        "replaced builds required, now or before). Default: list those this install leaves, "
        "with the command that removes them.",
    )(function)


def output_option(
    *,
    metavar: str,
    what: str,
    into: str = "output",
    required: bool = False,
    directory: bool | None,
) -> Callable[[F], F]:
    """``-o/--output``: where the command writes its result (one meaning everywhere; *what*
    says what is written there). *directory*: a folder, a file, or ``None``: either (the
    command says which it takes)."""
    return click.option(
        "--output",
        "-o",
        into,
        required=required,
        metavar=metavar,
        type=click.Path(
            path_type=Path, dir_okay=directory is not False, file_okay=directory is not True
        ),
        help=f"Where the result goes: {what}.",
    )


def targets_option(*, what: str) -> Callable[[F], F]:
    """``--targets FILE`` (the command receives ``targets_file``): a cluster's node classes, each
    its own declared target (docs/clusters.md); *what* says what the command does per class. It
    excludes the options that describe one environment (checked with the environment spec)."""
    return click.option(
        "--targets",
        "targets_file",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="FILE",
        help=f"A targets file (YAML) naming a cluster's node classes: {what} "
        "(docs/clusters.md). Not with --prefix, --lockfile, --platform or --target.",
    )


def channel_options(*, output_help: str) -> Callable[[F], F]:
    """``-o/--output CHANNEL`` (required; the command receives ``channel``) and ``--subdir
    SUBDIR``, as ``index`` and ``convert`` take them."""
    output = output_option(
        metavar="CHANNEL", what=output_help, into="channel", required=True, directory=True
    )
    subdir = click.option(
        "--subdir",
        metavar="SUBDIR",
        help="The conda platform the records (and packages) are for; convert puts pure wheels "
        "in noarch. Default: this machine's.",
    )

    def decorate(function: F) -> F:
        return output(subdir(function))

    return decorate
