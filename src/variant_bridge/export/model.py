"""What an export says, independent of the file format: the :class:`ExportModel` and its parts.

:mod:`~variant_bridge.export.build` fills it from an environment snapshot;
:mod:`~variant_bridge.export.environment_yml` and :mod:`~variant_bridge.export.pixi_toml` only print
it. What each part means for the user: docs/share.md ("environment.yml", "pixi", "Installing
without wheel-variant support").
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from variant_bridge.environment import VirtualPackage
from variant_bridge.errors import InvalidWheelFilename
from variant_bridge.export.validate import is_url
from variant_bridge.filenames import WheelFilename

__all__ = [
    "VARIANT_FILENAMES_NOTE",
    "BridgedView",
    "CondaDependency",
    "ExportModel",
    "HostRequirement",
    "IndexOptions",
    "PipRequirement",
    "PlatformDeclaration",
    "filename_label",
    "is_variant_filename",
]


@dataclass(frozen=True, slots=True)
class CondaDependency:
    """One conda dependency line.

    :param spec: the MatchSpec text for environment.yml (``python=3.12.7=h0_0``).
    :param version: the version spec for pixi (``==3.12.7``, ``3.12.*``); ``None`` = any.
    :param build: the build string (pattern) for pixi, or ``None``.
    :param channel: the channel for pixi's ``channel = ...``, or ``None``.
    :param comment: why this line is there, when it is not an installed record.
    """

    name: str
    spec: str
    version: str | None = None
    build: str | None = None
    channel: str | None = None
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class HostRequirement:
    """A requirement on the machine implied by installed variant wheels.

    :param spec: the conda form (``__cuda >=12.8``), or the comment text when not expressible.
    :param rattler_spec: the form rattler and pixi match (a CEP 29 regex for ``__archspec``).
    :param wheels: the wheels that imply it (``torch 2.9.0 [cu128]``).
    :param expressible: whether conda can match :attr:`spec` as one dependency line.
    """

    spec: str
    rattler_spec: str
    wheels: tuple[str, ...]
    expressible: bool = True


@dataclass(frozen=True, slots=True)
class PipRequirement:
    """One line of the ``pip:`` section / one ``[pypi-dependencies]`` entry.

    :param url: the exact file the wheel was installed from (the faithful pin), or ``None``.
    :param copy: the absolute path of a byte-identical copy under the wheel's non-variant
        filename (``--wheels-dir``), which pip and uv accept; ``None`` when not copied.
    :param copy_relative: :attr:`copy` relative to the exported file's directory
        (``./wheels/x-1.0-py3-none-any.whl``), for pixi's ``{ path = ... }``.
    """

    name: str
    version: str
    url: str | None = None
    sha256: str | None = None
    label: str | None = None
    note: str | None = None
    copy: str | None = None
    copy_relative: str | None = None

    @property
    def is_direct(self) -> bool:
        return self.url is not None

    @property
    def reference(self) -> str:
        """The faithful pin: ``name @ URL#sha256=...`` of the original file (or ``name==v``)."""
        return self._line(self.url)

    @property
    def names_variant_file(self) -> bool:
        """Whether the pip line names a variant filename (``*-cu126.whl``), which only installers
        with wheel-variant support accept."""
        return self.copy is None and self.url is not None and is_variant_filename(self.url)

    def _line(self, url: str | None) -> str:
        if url is None:
            return f"{self.name}=={self.version}"
        fragment = f"#sha256={self.sha256}" if self.sha256 else ""
        return f"{self.name} @ {url}{fragment}"

    def __str__(self) -> str:
        """The pip line: the copy when there is one, else the faithful pin."""
        if self.copy is not None:
            return self._line(Path(self.copy).as_uri())
        return self.reference


VARIANT_FILENAMES_NOTE = (
    "the variant wheels are pinned by their variant filenames (name-version-...-LABEL.whl), which "
    "pip and uv without --preview-features wheel-variants refuse: install those lines with "
    "`uv pip install --preview-features wheel-variants`, or export with --wheels-dir DIR to pin "
    "byte-identical copies under names every installer accepts"
)
"""Said in the header and on stderr when a pip line names a variant filename."""


def filename_label(location: str | None) -> str | None:
    """The variant label of the wheel file a URL or path names (``...-cu126.whl`` -> ``cu126``);
    ``None`` for a non-variant wheel or anything else."""
    if not location:
        return None
    name = unquote(urlsplit(location).path.rsplit("/", 1)[-1])
    if not name.endswith(".whl"):
        return None
    try:
        return WheelFilename.parse(name).label
    except InvalidWheelFilename:
        return None


def is_variant_filename(url: str) -> bool:
    """Whether the file *url* names has a variant label (``...-cu126.whl``)."""
    return filename_label(url) is not None


@dataclass(frozen=True, slots=True)
class IndexOptions:
    """Where the PyPI packages come from, as given to ``export``."""

    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()

    def pip_lines(self) -> tuple[str, ...]:
        """pip requirement-file option lines (``--index-url U``, ...)."""
        lines = [f"--index-url {self.index_url}"] if self.index_url else []
        lines += [f"--extra-index-url {url}" for url in self.extra_index_urls]
        lines += [f"--find-links {_find_links_url(location)}" for location in self.find_links]
        return tuple(lines)

    def urls(self) -> tuple[str, ...]:
        """Every index and find-links URL given (local directories left out)."""
        indexes = ([self.index_url] if self.index_url else []) + list(self.extra_index_urls)
        return (*indexes, *(f for f in self.find_links if is_url(f)))

    def __bool__(self) -> bool:
        return bool(self.index_url or self.extra_index_urls or self.find_links)


def _find_links_url(location: str) -> str:
    """A local find-links directory as a ``file://`` URL, URLs unchanged.

    pip reads an option line of a requirements file with :func:`shlex.split`, so a bare
    ``/srv/my wheels`` would be two words; a percent-encoded URL is one, for pip and uv alike.
    """
    if is_url(location):
        return location
    path = Path(location)
    if path.is_absolute():
        return path.as_uri()
    return shlex.quote(location)  # relative: no URL form; quoted the way pip unquotes it


@dataclass(frozen=True, slots=True)
class BridgedView:
    """The facts the variant wheels were chosen for, with their sources."""

    platform: str
    driver: VirtualPackage | None
    toolkit: str | None
    cuda_arch: VirtualPackage | None
    archspec: VirtualPackage | None
    glibc: VirtualPackage | None

    def lines(self) -> tuple[str, ...]:
        def show(label: str, vp: VirtualPackage | None, *, build: bool = False) -> str:
            if vp is None:
                return f"{label}: none"
            text = f"{vp.name}={vp.version}" + (f"={vp.build}" if build else "")
            return f"{label}: {text} ({vp.source})"

        return (
            show("driver", self.driver),
            f"toolkit: {self.toolkit or 'none'}",
            show("GPU architecture", self.cuda_arch),
            show("CPU", self.archspec, build=True),
            show("C library", self.glibc),
        )


@dataclass(frozen=True, slots=True)
class PlatformDeclaration:
    """The virtual packages a pixi rich platform declares (``None``: not declared)."""

    subdir: str
    cuda: str | None = None
    cuda_arch: str | None = None
    archspec: str | None = None
    glibc: str | None = None

    @property
    def is_rich(self) -> bool:
        return any((self.cuda, self.cuda_arch, self.archspec, self.glibc))


@dataclass(frozen=True, slots=True)
class ExportModel:
    """Everything an exported file states, in output order."""

    name: str
    platform: str
    origin: str
    producer: str
    channels: tuple[str, ...]
    dependencies: tuple[CondaDependency, ...]
    host_requirements: tuple[HostRequirement, ...]
    pip: tuple[PipRequirement, ...]
    index_options: IndexOptions
    view: BridgedView
    platform_declaration: PlatformDeclaration
    toolkit_dependency: CondaDependency | None = None
    """The toolkit pin among :attr:`dependencies` (``cuda-version=12.6``), or ``None``."""
    activation_env: tuple[tuple[str, str], ...] = ()
    implied_specs: tuple[str, ...] = ()
    """Non-virtual specs the wheels imply (reported, not added)."""
    from_history: bool = False
    builds: bool = True
    notes: tuple[str, ...] = field(default=())
    wheels_dir: str | None = None
    """Where ``--wheels-dir`` copied the variant wheels (``None``: not copied)."""
