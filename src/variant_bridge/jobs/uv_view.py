"""What uv can see of a project's variant wheels, for ``variant-bridge run -- uv pip install ...``.

uv 0.13.9 (``--preview-features wheel-variants``) learns a release's variants only from the
index's ``{name}-{version}-variants.json``: a variant wheel whose label that file does not list
(or a release without the file) is invisible to it, and it installs the non-variant wheel (or
nothing) where ``variant-bridge select`` reads each wheel's own ``variant.json`` and would choose
a variant. :func:`invisible_variants` finds those cases for the packages a uv command names, on
the indexes and find-links it names, in uv's order of precedence, so that ``run`` can say so
instead of the two silently disagreeing. It is advice: a source that cannot be read is skipped
(uv reports it itself).

Two more things uv will do differently are said before it runs (docs/semantics.md §6.2):
:func:`unreadable_metadata` finds the ``*-variants.json`` (and wheels' ``variant.json``) that
uv's parser refuses (:func:`~variant_bridge.metadata.uv_dialect.uv_refuses`; the real v0.0.3 torch
file is one), and :func:`uv_disagreements` compares, package by package of the tree, what
``select`` chooses with what uv's own rules pick (its NVIDIA provider told only the driver and
GPU that ``env`` prints, the package's static priorities, no toolkit evidence, no labels, no
stack), naming both builds and the ``variant-bridge install`` command that installs select's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.errors import VariantBridgeError
from variant_bridge.indexes import (
    Downloads,
    FindLinks,
    IndexSource,
    IndexStrategy,
    ProjectListing,
    SimpleIndex,
)
from variant_bridge.indexes.variant_files import read_variants_files, variants_file_body
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.markers import unreadable_version

if TYPE_CHECKING:
    from variant_bridge.environment import Environment
    from variant_bridge.jobs.select import PackageChoice
    from variant_bridge.jobs.specs import EnvironmentSpec
    from variant_bridge.platform_tags import TargetPython
    from variant_bridge.uv_settings import UvSettings

__all__ = [
    "UvCommand",
    "invisible_variants",
    "parse_uv_command",
    "unreadable_metadata",
    "uv_disagreements",
    "uv_environment",
]

# uv's options that carry a value, by what they mean here (other options are skipped over).
_INDEX = ("--index",)
_EXTRA = ("--extra-index-url",)
_DEFAULT = ("--index-url", "-i", "--default-index")
_FIND_LINKS = ("--find-links", "-f")
_VALUED = frozenset({
    *_INDEX, *_EXTRA, *_DEFAULT, *_FIND_LINKS, "--index-strategy", "--python", "-p",
    "--requirements", "-r", "--constraints", "-c", "--overrides", "--python-version",
    "--python-platform", "--target", "--prefix", "--cache-dir", "--config-file", "--directory",
    "--project", "--preview-features", "--extra", "--group", "--color", "--keyring-provider",
    "--resolution", "--prerelease", "--exclude-newer", "--link-mode", "--reinstall-package",
    "--upgrade-package", "-P", "--output-file", "-o", "--torch-backend", "--config-setting",
    "-C", "--no-binary", "--only-binary", "--refresh-package", "--build-constraints", "-b",
})  # fmt: skip
_INSTALLING = (("pip", "install"), ("pip", "compile"))


@value
class UvCommand:
    """The parts of a ``uv pip install|compile`` command line that decide what uv looks at."""

    requirements: tuple[Requirement, ...]
    sources: Sources
    """Find-links, then indexes in uv's order of precedence, with uv's index strategy."""


def _options(args: Sequence[str]) -> Iterator[tuple[str, str | None]]:
    """``(option, value)`` pairs and ``("", positional)``; ``--opt=value`` split."""
    items = iter(args)
    for arg in items:
        if arg == "--":
            yield from (("", rest) for rest in items)
            return
        if arg.startswith("-") and arg != "-":
            name, eq, text = arg.partition("=")
            if eq:
                yield name, text
            elif name in _VALUED:
                yield name, next(items, None)
            else:
                yield name, None
        else:
            yield "", arg


def parse_uv_command(
    argv: Sequence[str], environ: Mapping[str, str] = os.environ
) -> UvCommand | None:
    """The requested packages and package sources of a uv install command; ``None`` for any
    other command, or one that names no package or no index/find-links of its own (PyPI alone
    is not consulted here)."""
    if not argv or os.path.basename(argv[0]).removesuffix(".exe") != "uv":
        return None
    positional = [v for k, v in _options(argv[1:]) if not k and v is not None]
    if tuple(positional[:2]) not in _INSTALLING:
        return None
    found: dict[str, list[str]] = {"index": [], "extra": [], "default": [], "links": []}
    strategy = IndexStrategy.FIRST_INDEX
    for key, text in _options(argv[1:]):
        if text is None:
            continue
        for names, slot in ((_INDEX, "index"), (_EXTRA, "extra"), (_DEFAULT, "default"),
                            (_FIND_LINKS, "links")):  # fmt: skip
            if key in names:
                found[slot].append(text)
        if key == "--index-strategy" and text == IndexStrategy.UNSAFE_BEST_MATCH.value:
            strategy = IndexStrategy.UNSAFE_BEST_MATCH
    found["extra"] += environ.get("UV_EXTRA_INDEX_URL", "").split()
    if not found["default"] and environ.get("UV_INDEX_URL"):
        found["default"].append(environ["UV_INDEX_URL"])
    requirements = tuple(r for r in map(_requirement, positional[2:]) if r is not None)
    try:
        sources: tuple[IndexSource, ...] = (
            *(FindLinks.parse(location) for location in found["links"]),
            # uv: --index first, then --extra-index-url, then the default index.
            *(SimpleIndex.parse(url) for url in [*found["index"], *found["extra"]]),
            *(SimpleIndex.parse(url) for url in found["default"][-1:]),
        )
    except VariantBridgeError:
        return None  # uv says what is wrong with it
    if not requirements or not sources:
        return None
    default = next((s for s in reversed(sources) if isinstance(s, SimpleIndex)), None)
    default = default if found["default"] else None
    return UvCommand(requirements, Sources(sources, strategy, default))


def _requirement(text: str) -> Requirement | None:
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None  # a path, a URL or a file: not a name to look up
    if unreadable_version(requirement.specifier) is not None:
        return None  # a 5,000-digit version: uv says what is wrong with it
    return None if requirement.url else requirement


def _unseen(
    listing: ProjectListing, version: Version, downloads: Downloads
) -> tuple[list[str], list[str]]:
    """The variant labels of *version*, and those its ``variants.json`` files do not list."""
    labels = sorted({
        w.filename.label for w in listing.listing.wheels_of(version) if w.filename.label
    })  # fmt: skip
    files = [f for v, f in listing.listing.variants_files if v == version]
    listed: set[str] = set()
    if files:
        metadata, _ = read_variants_files(files, downloads.transport)
        listed = set(metadata.labels) if metadata is not None else set()
    return labels, [label for label in labels if label not in listed]


def invisible_variants(
    command: UvCommand, *, downloads: Downloads, python: Version | None = None
) -> list[str]:
    """One note per requested package whose variant wheels uv cannot see.

    :param downloads: the command's fetching (its transport's deadlines, caps, log).
    :param python: the Python uv installs for (``requires-python``); default: the running one.
    """
    notes: list[str] = []
    if python is None:
        python = Version("{}.{}.{}".format(*sys.version_info[:3]))
    for requirement in command.requirements:
        try:
            listing = command.sources.listing(requirement.name, python=python, downloads=downloads)
            spec = requirement.specifier or SpecifierSet()
            version = next(listing.versions(spec, tags=None), None)
            if version is None:
                continue
            labels, unseen = _unseen(listing, version, downloads)
        except VariantBridgeError:
            continue
        if not unseen:
            continue
        project = listing.project
        what = (
            f"no {project}-{version}-variants.json"
            if unseen == labels
            else f"its {project}-{version}-variants.json does not list {', '.join(unseen)}"
        )
        notes.append(
            f"uv cannot see {project} {version}'s variant wheels {', '.join(unseen)} on "
            f"{listing.where}: {what}. uv installs another wheel (or none) where `variant-bridge "
            "select` reads each wheel's variant.json; use `variant-bridge install`, or publish "
            "the variants.json"
        )
    return notes


def _chosen_version(
    command: UvCommand, requirement: Requirement, downloads: Downloads, python: Version
) -> tuple[ProjectListing, Version] | None:
    """The listing of a requested project on the command's sources, and the version uv takes."""
    listing = command.sources.listing(requirement.name, python=python, downloads=downloads)
    version = next(listing.versions(requirement.specifier or SpecifierSet(), tags=None), None)
    return (listing, version) if version is not None else None


def _document_problem(body: bytes) -> str | None:
    from variant_bridge.metadata.uv_dialect import uv_refuses

    try:
        document = json.loads(body)
    except ValueError:
        return "it is not JSON"
    return uv_refuses(document)


def _wheel_problems(
    listing: ProjectListing, version: Version, downloads: Downloads
) -> list[tuple[str, str]]:
    """``(wheel, why)`` for the wheels (one per variant label) whose own ``variant.json`` uv's
    parser refuses."""
    from variant_bridge.indexes.members import VARIANT_JSON

    files = listing.files(version, SpecifierSet(f"=={version}"), downloads=downloads, tags=None)
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for candidate in files.variant_candidates:
        label = candidate.label
        if label is None or label in seen:
            continue
        seen.add(label)
        members = downloads.members(candidate)
        member = members.one(VARIANT_JSON) if members is not None else None
        why = _document_problem(member[1]) if member is not None else None
        if why is not None:
            found.append((f"{candidate.name}'s variant.json", why))
    return found


def unreadable_metadata(
    command: UvCommand, *, downloads: Downloads, python: Version | None = None
) -> list[str]:
    """One note per requested package whose variant metadata uv cannot read: the version uv
    would take has a ``*-variants.json`` (or, when those are readable, a wheel's
    ``variant.json``) that uv's parser refuses, so uv refuses that version (docs/uv.md)."""
    from variant_bridge.metadata.uv_dialect import UV_CHECKED

    notes: list[str] = []
    python = python or _running()
    for requirement in command.requirements:
        try:
            found = _chosen_version(command, requirement, downloads, python)
            if found is None:
                continue
            listing, version = found
            files = [f for v, f in listing.listing.variants_files if v == version]
            problems = [
                (f.filename, why)
                for f in files
                if (why := _document_problem(variants_file_body(f, downloads.transport)))
            ]
            if not problems:
                problems = _wheel_problems(listing, version, downloads)
        except VariantBridgeError:
            continue
        if problems:
            name, why = problems[0]
            notes.append(
                f"uv {UV_CHECKED} cannot read {name} ({listing.project} {version} on "
                f'{listing.where}): {why}. uv will refuse {listing.project} {version} ("could '
                'not be parsed"); install it with `variant-bridge install` instead, or publish '
                "that file in the dialect uv reads (docs/uv.md)"
            )
    return notes


def _running() -> Version:
    return Version("{}.{}.{}".format(*sys.version_info[:3]))


def uv_environment(env: Environment, settings: UvSettings) -> Environment:
    """*env* as uv's built-in NVIDIA provider sees it with *settings* applied: ``__cuda`` and
    ``__cuda_arch`` are the variables' values (``none``, or an arch below the provider's floor
    5.0: absent), and there is no toolkit (uv reads no conda-meta): the driver policy."""
    from variant_bridge.environment import Source, VirtualPackage
    from variant_bridge.mappings import load_tables
    from variant_bridge.uv_settings import DRIVER_VARIABLE, SM_ARCH_VARIABLE

    table = load_tables().nvidia
    values = settings.as_dict()
    driver, arch = values.get(DRIVER_VARIABLE), values.get(SM_ARCH_VARIABLE)
    gpu = (table.driver_package, table.arch_package)
    kept = [vp for vp in env.virtual_packages if vp.name not in gpu]
    if driver and driver != "none":
        told = Source.override(DRIVER_VARIABLE)
        kept.append(VirtualPackage(table.driver_package, driver, source=told))
        if arch and _at_least(arch, (5, 0)):
            told = Source.override(SM_ARCH_VARIABLE)
            kept.append(VirtualPackage(table.arch_package, arch, source=told))
    return dataclasses.replace(env, virtual_packages=tuple(kept), toolkit=None)


def _at_least(text: str, floor: tuple[int, int]) -> bool:
    parts = text.split(".")
    try:
        return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0) >= floor
    except ValueError:
        return False


def _uv_pick(
    choice: PackageChoice, env: Environment, python: TargetPython, listed: set[str]
) -> str | None:
    """The label uv picks of *choice*'s files (``None``: the plain wheel, or nothing): PEP 825
    ranking over its providers' view (the driver policy), the package's priorities, only the
    labels its ``*-variants.json`` lists (*listed*)."""
    from variant_bridge.platform_tags import target_tags
    from variant_bridge.ranking import Priorities, VariantRanker
    from variant_bridge.translate import supported_properties
    from variant_bridge.wheel_selection import select_wheel

    files = choice.files
    visible = tuple(
        c if c.label is None or c.label in listed else dataclasses.replace(c, variant=None)
        for c in files.candidates
    )
    ranker = VariantRanker(
        supported_properties(env, policy="driver"), Priorities.of(files.metadata)
    )
    picked = select_wheel(visible, ranker, target_tags(python, env)).selected
    return picked.label if picked is not None else None


def _install_command(
    command: UvCommand, choices: Sequence[PackageChoice], spec: EnvironmentSpec
) -> str:
    """``variant-bridge install`` of the requested packages at select's versions, from the uv
    command's sources, for the same environment."""
    pins = [f"{c.files.project}=={c.files.version}" for c in choices if c.requested]
    argv = ["variant-bridge", "install", *pins]
    sources = command.sources
    for links in sources.find_links:
        argv += ["-f", links.location]
    for index in sources.extra_indexes:
        argv += ["--extra-index-url", index.url]
    if sources.default is not None:
        argv += ["--index-url", sources.default.url]
    if spec.prefix is not None:
        argv += ["--prefix", str(spec.prefix)]
    for target in spec.targets:
        argv += ["-t", target]
    if spec.cuda is not None:
        argv += ["--cuda", spec.cuda]
    return shlex.join(argv)


def _why_ours(choice: PackageChoice) -> str:
    """``cuda12.6 (toolkit CUDA 12.6: ...; follows torch 2.9.0 cuda12.6 (CUDA 12.6))``."""
    selected = choice.selected
    assert selected is not None
    label = selected.label
    said = []
    toolkit = choice.toolkits.get(label or "")
    if toolkit is not None:
        said.append(toolkit.summary())
    if choice.follows is not None:
        said.append(choice.follows.reason())
    name = label or "the non-variant wheel"
    return f"{name} ({'; '.join(said)})" if said else name


def uv_disagreements(
    command: UvCommand, ctx: Context, settings: UvSettings, spec: EnvironmentSpec
) -> list[str]:
    """One note per package of the tree where uv's own pick (its NVIDIA provider told what
    *settings* say; static priorities; the labels its ``*-variants.json`` lists; no evidence)
    differs from ``select``'s, naming both builds, then the command that installs select's
    choice. Advice: a tree ``select`` cannot choose gives nothing here (``install`` says why).

    :param ctx: the command's context, its sources the uv command's.
    :param spec: the environment as given (for the command's ``--prefix``/``-t``/``--cuda``).
    """
    from variant_bridge.jobs.select import PackageRequest, select

    requests = tuple(PackageRequest(str(r), r) for r in command.requirements)
    try:
        choices = select(requests, ctx, allow_mix=True)
    except VariantBridgeError:
        return []
    env = uv_environment(ctx.target.env, settings)
    python, downloads = ctx.target.python, ctx.downloads
    notes: list[str] = []
    for choice in choices:
        chosen = choice.chosen
        if chosen is None or not choice.files.variant_candidates:
            continue
        try:
            version = Version(choice.files.version)
            listing = ctx.sources.listing(choice.files.project, python=python.version,
                                          downloads=downloads)  # fmt: skip
            next(listing.versions(SpecifierSet(f"=={version}"), tags=None), None)  # examined
            labels, unseen = _unseen(listing, version, downloads)
        except VariantBridgeError:
            continue
        label = _uv_pick(choice, env, python, set(labels) - set(unseen))
        if label == chosen.label:
            continue
        title = f"{choice.files.project} {choice.files.version}"
        theirs = label if label is not None else "the non-variant wheel (or none)"
        notes.append(
            f"uv will install {title} {theirs} where `variant-bridge select` chooses "
            f"{_why_ours(choice)}: uv's NVIDIA provider is told only the driver and the GPU, and "
            "reads neither the builds' pinned CUDA components, nor their labels, nor what the "
            "rest of the stack took"
        )
    if notes:
        notes.append(
            "to install what select chooses instead: " + _install_command(command, choices, spec)
        )
    return notes
