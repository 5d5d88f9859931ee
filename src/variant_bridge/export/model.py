"""What an export says, independent of the file format: the :class:`ExportModel` and its parts.

:mod:`~variant_bridge.export.build` fills it from an environment snapshot;
:mod:`~variant_bridge.export.environment_yml` and :mod:`~variant_bridge.export.pixi_toml` only print
it. What each part means for the user: docs/share.md ("environment.yml", "pixi", "Installing
without wheel-variant support").
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from variant_bridge.environment import VirtualPackage
from variant_bridge.errors import InvalidWheelFilename
from variant_bridge.export.validate import is_url
from variant_bridge.filenames import WheelFilename

__all__ = [
    "PIN_MODES",
    "VARIANT_FILENAMES_NOTE",
    "BridgedView",
    "CondaDependency",
    "ExportModel",
    "HostRequirement",
    "IndexOptions",
    "PinMode",
    "PipRequirement",
    "PlatformDeclaration",
    "filename_label",
    "is_variant_filename",
    "relative_reference",
]

PinMode = Literal["exact", "version", "none"]
"""How the export pins the packages it owns (``--pin``): ``exact`` (version and build),
``version`` (``==version``), ``none`` (the name only). Variant wheels are always pinned to their
file and the CUDA toolkit to its ``major.minor``."""
PIN_MODES: tuple[PinMode, ...] = ("exact", "version", "none")


def relative_reference(path: str | os.PathLike[str], base: str | os.PathLike[str]) -> str:
    """*path* as pixi and pylock.toml write a local path relative to the file's directory *base*
    (``./wheels/x.whl``, ``../x.whl``); absolute when there is no relative path (other drive)."""
    try:
        relative = Path(os.path.relpath(path, base)).as_posix()
    except ValueError:
        return str(path)
    return relative if relative.startswith("../") else f"./{relative}"


def is_inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether *path* lies in *folder* (both taken as absolute, without resolving links)."""
    try:
        Path(os.path.abspath(path)).relative_to(os.path.abspath(folder))
    except ValueError:
        return False
    return True


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
    :param plugin: the conda plugin that provides its virtual package (``__cuda_arch``:
        ``nvidia-virtual-packages``); ``None`` when stock conda knows it. A default
        environment.yml states such a requirement in its header, not as a dependency.
    """

    spec: str
    rattler_spec: str
    wheels: tuple[str, ...]
    expressible: bool = True
    plugin: str | None = None


@dataclass(frozen=True, slots=True)
class PipRequirement:
    """One line of the ``pip:`` section / one ``[pypi-dependencies]`` entry.

    :param url: the exact file the wheel was installed from (the faithful pin), or ``None``.
    :param copy: the absolute path of the wheel's installable copy under its non-variant
        filename (``--wheels-dir``), which pip and uv accept; ``None`` when not copied.
    :param copy_sha256: the copy's sha256: :attr:`sha256` unless the copy's variant markers
        were decided (:mod:`variant_bridge.indexes.installable`), which changes its ``METADATA``.
    :param copy_relative: :attr:`copy` relative to the exported file's directory
        (``./wheels/x-1.0-py3-none-any.whl``), for pixi's ``{ path = ... }``.
    :param properties: the variant's properties (``nvidia :: sm_arch :: 90_real``).
    :param size: the wheel file's size in bytes, when known.
    """

    name: str
    version: str
    url: str | None = None
    sha256: str | None = None
    label: str | None = None
    note: str | None = None
    copy: str | None = None
    copy_relative: str | None = None
    copy_sha256: str | None = None
    properties: tuple[str, ...] = ()
    size: int | None = None
    any_version: bool = False
    """``--pin none``: a plain package written by name only."""
    found_in: str | None = None
    """The ``--find-links`` location or index URL the file was found in (as the export writes
    it: a local directory absolute); ``None`` for a direct reference (``direct_url.json``, a
    pixi.lock entry) or an unknown origin. A plain wheel found there is written
    ``name==version --hash=...``, resolved from it."""

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

    def _line(self, url: str | None, sha256: str | None = None) -> str:
        if url is None:
            return self.name if self.any_version else f"{self.name}=={self.version}"
        sha256 = sha256 or self.sha256
        fragment = f"#sha256={sha256}" if sha256 else ""
        return f"{self.name} @ {url}{fragment}"

    @property
    def copy_changed(self) -> bool:
        """Whether the copy's bytes differ from the original's (its variant markers decided)."""
        return self.copy_sha256 is not None and self.copy_sha256 != self.sha256

    @property
    def file_sha256(self) -> str | None:
        """The sha256 of the file the line names: the copy's when there is one."""
        return self.copy_sha256 or self.sha256 if self.copy is not None else self.sha256

    @property
    def copy_is_beside(self) -> bool:
        """Whether the copy lies in the exported file's folder (:attr:`copy_relative` is
        ``./...``), so the file can name it relatively."""
        return self.copy_relative is not None and self.copy_relative.startswith("./")

    def __str__(self) -> str:
        """The pip line: the copy when there is one, else the faithful pin.

        A copy in the file's folder is ``file:./DIR/NAME.whl#sha256=...``, the one relative form
        pip 23 accepts with a hash (``name @ file:./...`` it refuses); pip resolves it against
        the directory conda runs it in, the environment.yml's.
        """
        if self.copy_is_beside:
            fragment = f"#sha256={self.file_sha256}" if self.file_sha256 else ""
            return f"file:{self.copy_relative}{fragment}"
        if self.copy is not None:
            return self._line(Path(self.copy).as_uri(), self.file_sha256)
        return self.reference


VARIANT_FILENAMES_NOTE = (
    "the variant wheels are pinned by their variant filenames (name-version-...-LABEL.whl), which "
    "pip and uv without --preview-features wheel-variants refuse: install those lines with "
    "`uv pip install --preview-features wheel-variants`, or write the export to a file (-o FILE, "
    "without --pin-filenames) or pass --wheels-dir DIR to pin copies under names every installer "
    "accepts"
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
    amdgpu_arch: VirtualPackage | None = None
    """An AMD GPU (said only when there is one)."""
    rocm: str | None = None
    """The ROCm runtime, with its source (said only when there is one)."""

    def lines(self) -> tuple[str, ...]:
        def show(label: str, vp: VirtualPackage | None, *, build: bool = False) -> str:
            if vp is None:
                return f"{label}: none"
            text = f"{vp.name}={vp.version}" + (f"={vp.build}" if build else "")
            return f"{label}: {text} ({vp.source})"

        amd = (show("AMD GPU", self.amdgpu_arch),) if self.amdgpu_arch is not None else ()
        rocm = (f"ROCm runtime: {self.rocm}",) if self.rocm is not None else ()
        return (
            show("driver", self.driver),
            f"toolkit: {self.toolkit or 'none'}",
            show("GPU architecture", self.cuda_arch),
            *amd,
            *rocm,
            show("CPU", self.archspec, build=True),
            show("C library", self.glibc),
        )


@dataclass(frozen=True, slots=True)
class PlatformDeclaration:
    """The virtual packages a pixi rich platform declares (``None``: not declared).

    :param unenforceable: the wheels' host requirements that no pixi platform can state (an
        upper bound, a CPU requirement): pixi would admit hosts the wheel cannot run on.
    """

    subdir: str
    cuda: str | None = None
    cuda_arch: str | None = None
    archspec: str | None = None
    glibc: str | None = None
    unenforceable: tuple[HostRequirement, ...] = ()
    name: str | None = None
    """The platform entry's ``name`` (a lock's platform name); ``None``: pixi derives one."""
    raw: tuple[tuple[str, str], ...] = ()
    """Virtual packages pixi has no key for, as its raw ``__name = "version"`` entries
    (``__amdgpu_arch``): stored with the platform (and matched against a lock's), not checked
    against the host."""

    @property
    def is_rich(self) -> bool:
        return any((self.cuda, self.cuda_arch, self.archspec, self.glibc, self.raw))


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
    pin: PinMode = "exact"
    notes: tuple[str, ...] = field(default=())
    wheels_dir: str | None = None
    """Where ``--wheels-dir`` copied the variant wheels (``None``: not copied)."""
    base_dir: str | None = None
    """The directory of the written file (``None``: stdout): local paths inside it are written
    relative to it."""
    undeclared_host_requirements: tuple[HostRequirement, ...] = ()
    """The wheels' host requirements left out with ``--no-host-requirements`` (stated only in
    the header)."""
    installed_conda: tuple[tuple[str, str, str], ...] = ()
    """``(name, version, build)`` of every conda record, to judge a user's own specs."""
    strict_host_requirements: bool = False
    """Write every host requirement as a requirement, also those the receiving client cannot
    check by itself (environment.yml: virtual packages only a conda plugin provides; pixi: a
    platform that cannot state one is refused)."""

    def local_reference(self, path: str) -> str:
        """*path* relative to :attr:`base_dir` when it lies inside it (``./wheels``), else as
        given (absolute, or a URL)."""
        if is_url(path):
            return path
        if self.base_dir is not None and is_inside(path, self.base_dir):
            return relative_reference(path, self.base_dir)
        return path
