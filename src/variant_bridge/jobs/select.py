"""Choose, for each requested package, the wheel that agrees with the environment's conda view.

The data flow of ``select`` / ``install`` (architecture.md): candidates from find-links dirs and
simple indexes -> the bridged supported properties of the environment -> PEP 825 ranking with a
verdict for every file -> the CUDA libraries the chosen wheel would bring again beside the
prefix's conda copies.
"""

from __future__ import annotations

import functools
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from variant_bridge.environment import CudaPolicy, Environment
from variant_bridge.errors import InvalidTarget, InvalidWheelFilename, SelectionError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import Candidate, PackageFiles, find_candidates
from variant_bridge.indexes.download import download, fetch, url_to_path
from variant_bridge.indexes.urls import check_find_links, check_url
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.metadata.model import VariantMetadata
from variant_bridge.platform_tags import TargetPython, target_tags
from variant_bridge.properties import NULL_LABEL
from variant_bridge.select import Selection, VariantRanker, Verdict, select_wheel
from variant_bridge.translate import explain_unsupported, supported_properties
from variant_bridge.translate.supported import SupportedProperties

__all__ = [
    "Duplicate",
    "PackageChoice",
    "choose",
    "parse_request",
    "wheel_requirements",
]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A ``Requires-Dist`` of the chosen wheel whose library the conda prefix already has."""

    requirement: str
    """The requirement as the wheel states it, e.g. ``nvidia-cublas-cu12==12.6.4.1``."""
    pypi: str
    conda: str
    conda_version: str
    required_by: str

    @property
    def message(self) -> str:
        return (
            f"{self.required_by} requires {self.requirement} (PyPI), but the environment already "
            f"has {self.conda} {self.conda_version} (conda): the same CUDA library would load "
            "twice"
        )

    def to_json(self) -> dict[str, str]:
        return {
            "requirement": self.requirement,
            "pypi": self.pypi,
            "conda": self.conda,
            "conda_version": self.conda_version,
            "required_by": self.required_by,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class PackageChoice:
    """What was found and chosen for one requested package."""

    request: str
    files: PackageFiles
    selection: Selection[Candidate]
    duplicates: tuple[Duplicate, ...] = ()
    requirements: tuple[str, ...] | None = None
    """The chosen wheel's ``Requires-Dist`` (``None`` when it could not be read cheaply)."""

    @property
    def selected(self) -> Candidate | None:
        return self.selection.selected

    @property
    def chosen(self) -> Verdict[Candidate] | None:
        return self.selection.chosen

    def failure(self) -> str:
        """One line saying why nothing was chosen, listing every rejected file's reason."""
        reasons = "; ".join(f"{v.filename}: {v.reason}" for v in self.selection.verdicts)
        return f"no compatible wheel for {self.request} {self.files.version}: {reasons}"

    def to_json(self) -> dict[str, Any]:
        chosen = self.chosen
        selected: dict[str, Any] | None = None
        if chosen is not None:
            candidate = chosen.candidate
            variant = candidate.variant
            selected = {
                "filename": candidate.name,
                "label": candidate.label,
                "url": candidate.url,
                "sha256": candidate.sha256,
                "properties": [str(p) for p in variant.properties] if variant else [],
                "reason": chosen.reason,
            }
        return {
            "package": self.files.project,
            "version": self.files.version,
            "selected": selected,
            "candidates": [
                {
                    "filename": str(v.filename),
                    "label": v.label,
                    "compatible": v.compatible,
                    "rank": v.rank,
                    "reason": v.reason,
                }
                for v in self.selection.verdicts
            ],
            "skipped": [{"filename": name, "reason": why} for name, why in self.files.skipped],
            "duplicates": [d.to_json() for d in self.duplicates],
            # False when the chosen wheel's requirements could not be read without downloading
            # it (an index without PEP 658 metadata): `duplicates` is then not a clean bill.
            "requirements_checked": self.selected is None or self.requirements is not None,
        }


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


def _compatible_labels(
    metadata: VariantMetadata | None, supported: SupportedProperties
) -> frozenset[str]:
    if metadata is None:
        return frozenset()
    ranker = VariantRanker(
        supported, namespace_priorities=metadata.namespace_priorities, static=metadata.providers
    )
    return frozenset(d.label for d in metadata.variants if ranker.is_compatible(d))


def _check_unreadable(
    files: PackageFiles, selected: Candidate | None, supported: SupportedProperties
) -> None:
    """Refuse to choose around a damaged file of the chosen version that could have won.

    A corrupt file that could never beat the selection (a plain wheel when a variant was chosen,
    a variant the environment does not support) stays a ``skipped`` entry; one that might be the
    best match is an error, since choosing around it would install something worse silently.
    """
    chosen_label = selected.label if selected is not None else None
    compatible_labels: frozenset[str] | None = None  # ranked only when a damaged variant needs it
    for name, reason in files.skipped:
        if not reason.startswith("not a readable wheel"):
            continue
        try:
            wheel = WheelFilename.parse(name)
        except InvalidWheelFilename:
            continue
        if wheel.version != files.version:
            continue
        if wheel.label is None:  # non-variant wheels rank after every variant wheel
            harmless = chosen_label is not None
        elif wheel.label == NULL_LABEL:  # the null variant ranks after compatible variants
            harmless = chosen_label not in (None, NULL_LABEL)
        else:
            if compatible_labels is None:
                compatible_labels = _compatible_labels(files.metadata, supported)
            harmless = wheel.label not in compatible_labels
        if not harmless:
            raise SelectionError(
                f"{name} in {', '.join(files.sources)}: {reason}; replace or remove it "
                "(it may be the best match for this environment)"
            )


def wheel_requirements(
    candidate: Candidate, *, download_to: Path | None = None
) -> tuple[str, ...] | None:
    """``Requires-Dist`` of a wheel, read from a local file or a PEP 658 ``.metadata`` file.

    :param download_to: when given, a remote wheel without ``.metadata`` is downloaded (and
        hash-checked) there to be read; ``install`` passes its download directory, so the file
        is fetched once.
    :returns: ``None`` when the requirements cannot be read without downloading the wheel.
    """
    text: str | None = None
    local: Path | None = None
    if candidate.url.startswith("file:"):
        local = url_to_path(candidate.url)
    else:
        response = fetch(candidate.url + ".metadata", not_found_ok=True)
        if response is not None:
            text = response.body.decode("utf-8", "replace")
        elif download_to is not None:
            local = download(candidate, download_to)
    if local is not None:
        path = local
        try:
            with zipfile.ZipFile(path) as zf:
                name = next(
                    (
                        n
                        for n in zf.namelist()
                        if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
                    ),
                    None,
                )
                if name is not None:
                    text = zf.read(name).decode("utf-8", "replace")
        except (OSError, zipfile.BadZipFile):
            return None
    if text is None:
        return None
    headers = HeaderParser().parsestr(text)
    return tuple(headers.get_all("Requires-Dist") or ())


def _duplicates(
    requirements: Sequence[str], env: Environment, tables: MappingTables, required_by: str
) -> tuple[Duplicate, ...]:
    found: list[Duplicate] = []
    for line in requirements:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and "extra" in str(requirement.marker):
            continue
        mapping = tables.names.conda_for_pypi(requirement.name)
        if mapping is None or mapping.kind != "cuda-library":
            continue
        for conda_name in (mapping.conda, *mapping.also_conda):
            record = env.conda_package(conda_name)
            if record is not None:
                stated = line.split(";")[0].strip()
                pypi = canonicalize_name(requirement.name)
                found.append(Duplicate(stated, pypi, conda_name, record.version, required_by))
                break
    return tuple(found)


def choose(
    requests: Sequence[str],
    *,
    env: Environment,
    python: TargetPython,
    find_links: Sequence[str | os.PathLike[str]] = (),
    index_urls: Sequence[str] = (),
    policy: CudaPolicy | None = None,
    cache_dir: Path | None = None,
    supported: SupportedProperties | None = None,
    download_to: Path | None = None,
) -> tuple[PackageChoice, ...]:
    """Find and rank the wheels of every requested package for *env* and *python*.

    :param requests: ``NAME`` or ``NAME<specifier>`` strings.
    :param supported: the supported properties to rank with; ``None`` derives them from *env*
        with *policy* (semantics.md §3-4).
    :param download_to: where a chosen remote wheel may be downloaded to read its requirements
        (for the duplicate check) when the index has no PEP 658 metadata; ``None``: don't.
    :raises InvalidTarget: a malformed request; :raises SelectionError: an unknown package;
        :raises IndexReadError: an unreachable index (see :func:`find_candidates`).
    """
    if not find_links and not index_urls:
        raise InvalidTarget("no package source: pass --find-links DIR or --index-url URL")
    for url in index_urls:
        check_url(url, option="index URL")
    for location in find_links:
        check_find_links(os.fspath(location))
    requirements_ = [parse_request(text) for text in requests]
    seen: set[str] = set()
    for requirement in requirements_:
        name = canonicalize_name(requirement.name)
        if name in seen:
            raise InvalidTarget(f"{requirement.name!r} is requested more than once")
        seen.add(name)
    tables = load_tables()
    if supported is None:
        supported = supported_properties(env, policy=policy, tables=tables)
    explain = functools.partial(explain_unsupported, supported=supported, tables=tables)
    tags = target_tags(python, env)
    choices: list[PackageChoice] = []
    for text, requirement in zip(requests, requirements_, strict=True):
        files = find_candidates(
            requirement.name,
            find_links=find_links,
            index_urls=index_urls,
            version=str(requirement.specifier) or None,
            python_version=python.version,
            cache_dir=cache_dir,
            tags=tags,
        )
        if not files.candidates:
            raise SelectionError(f"no wheels for {text} in {', '.join(files.sources)}")
        metadata = files.metadata
        selection = select_wheel(
            files.candidates,
            filename=lambda c: c.filename,
            variant=lambda c: c.variant,
            supported=supported,
            tags=tags,
            namespace_priorities=metadata.namespace_priorities if metadata else (),
            static=metadata.providers if metadata else (),
            feature_priorities=metadata.feature_priorities if metadata else (),
            property_priorities=metadata.property_priorities if metadata else (),
            explain=explain,
            # The index layer knows *why* a label has no metadata; that says more than
            # "unknown label".
            problem=lambda c: c.problem,
        )
        _check_unreadable(files, selection.selected, supported)
        requirements: tuple[str, ...] | None = None
        duplicates: tuple[Duplicate, ...] = ()
        if selection.selected is not None:
            requirements = wheel_requirements(selection.selected, download_to=download_to)
            if requirements:
                duplicates = _duplicates(requirements, env, tables, selection.selected.name)
        choices.append(PackageChoice(text, files, selection, duplicates, requirements))
    return tuple(choices)
