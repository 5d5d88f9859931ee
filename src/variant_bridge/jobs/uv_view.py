"""What uv can see of a project's variant wheels, for ``variant-bridge run -- uv pip install ...``.

uv 0.13.9 (``--preview-features wheel-variants``) learns a release's variants only from the
index's ``{name}-{version}-variants.json``: a variant wheel whose label that file does not list
(or a release without the file) is invisible to it, and it installs the non-variant wheel (or
nothing) where ``variant-bridge select`` reads each wheel's own ``variant.json`` and would choose
a variant. :func:`invisible_variants` finds those cases for the packages a uv command names, on
the indexes and find-links it names, in uv's order of precedence, so that ``run`` can say so
instead of the two silently disagreeing. It is advice: a source that cannot be read is skipped
(uv reports it itself).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence

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
from variant_bridge.indexes.variant_files import read_variants_files
from variant_bridge.jobs.context import Sources

__all__ = ["UvCommand", "invisible_variants", "parse_uv_command"]

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
    return UvCommand(requirements, Sources(sources, strategy))


def _requirement(text: str) -> Requirement | None:
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None  # a path, a URL or a file: not a name to look up
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
