"""What an export says, independent of the file format: :func:`build_export` turns an environment
snapshot (plus its history and the origins of its variant wheels) into an :class:`ExportModel`;
``environment_yml`` and ``pixi_toml`` only print it.

Decisions (docs/share.md explains them to users):

- conda packages: every record as ``name=version=build`` (``name=version`` without builds), or
  only the user's requested specs (``--from-history``); the solved toolkit (``cuda-version``) is
  always pinned to its ``major.minor``.
- host requirements: the virtual-package specs the translator derives from the installed
  variant wheels' properties (``__cuda >=12.8``, ``__cuda_arch >=9.0,<10``). A CPU requirement
  whose conda form is a list of alternatives (``__archspec 1.* haswell`` OR ...) cannot be one
  line of an environment.yml, which ANDs its lines: it becomes conda-forge's
  ``_x86_64-microarch-level >=N`` when the channels are conda-forge's (or the package is
  installed), otherwise a comment. Non-virtual specs the wheels imply (``cuda-version >=12.8,<13``)
  are reported, not added: the toolkit is already pinned.
- pip: variant wheels as direct references with ``#sha256=``; other distributions ``name==version``.
  pip and uv (without their preview feature) refuse variant filenames, so that is said in the
  header, unless ``--wheels-dir`` copied the wheels under their non-variant names (``wheels_dir``
  module): the lines then name the copies, and the header keeps the faithful pins.
- pixi: the platform declares the lowest driver (and GPU architecture, CPU level, glibc) that
  satisfies both the wheels' host requirements and the pinned conda packages' own ``__*``
  dependencies, so a colleague with a newer driver matches the platform too; ``[activation.env]``
  gives uv the same declared values (not the exporting machine's).

Pure, apart from asking rattler whether a version satisfies a spec.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from variant_bridge.environment import (
    CondaRecord,
    Environment,
    PythonDistribution,
    Source,
    VirtualPackage,
)
from variant_bridge.errors import ExportError
from variant_bridge.export.history import spec_name
from variant_bridge.export.origins import WheelOrigin, variant_label
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.properties import VariantProperty

if TYPE_CHECKING:
    from variant_bridge.translate import CondaSpec

__all__ = [
    "VARIANT_FILENAMES_NOTE",
    "BridgedView",
    "CondaDependency",
    "ExportModel",
    "HostRequirement",
    "IndexOptions",
    "PipRequirement",
    "PlatformDeclaration",
    "build_export",
    "is_variant_filename",
    "normalize_channel",
    "order_channels",
    "requested_from_records",
]

_ANACONDA_ORG = re.compile(r"https?://conda\.anaconda\.org/(?P<name>[^/]+)/?")
_DEFAULTS = ("defaults", "pkgs/main", "pkgs/r", "repo.anaconda.com")
_LOWER_BOUND_RE = re.compile(r">=?\s*([0-9][0-9a-z.]*)")
_PIXI_DEFAULT_GLIBC = "2.28"
_CONDA_FORGE = "conda-forge"


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
            from pathlib import Path

            return self._line(Path(self.copy).as_uri())
        return self.reference


VARIANT_FILENAMES_NOTE = (
    "the variant wheels are pinned by their variant filenames (name-version-...-LABEL.whl), which "
    "pip and uv without --preview-features wheel-variants refuse: install those lines with "
    "`uv pip install --preview-features wheel-variants`, or export with --wheels-dir DIR to pin "
    "byte-identical copies under names every installer accepts"
)
"""Said in the header and on stderr when a pip line names a variant filename."""


def is_variant_filename(url: str) -> bool:
    """Whether the file *url* names has a variant label (``...-cu126.whl``)."""
    from urllib.parse import unquote, urlsplit

    from variant_bridge.errors import InvalidWheelFilename
    from variant_bridge.filenames import WheelFilename

    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if not name.endswith(".whl"):
        return False
    try:
        return WheelFilename.parse(name).label is not None
    except InvalidWheelFilename:
        return False


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
        from variant_bridge.export.validate import is_url

        indexes = ([self.index_url] if self.index_url else []) + list(self.extra_index_urls)
        return (*indexes, *(f for f in self.find_links if is_url(f)))

    def __bool__(self) -> bool:
        return bool(self.index_url or self.extra_index_urls or self.find_links)


def _find_links_url(location: str) -> str:
    """A local find-links directory as a ``file://`` URL, URLs unchanged.

    pip reads an option line of a requirements file with :func:`shlex.split`, so a bare
    ``/srv/my wheels`` would be two words; a percent-encoded URL is one, for pip and uv alike.
    """
    from pathlib import Path

    from variant_bridge.export.validate import is_url

    if is_url(location):
        return location
    path = Path(location)
    if path.is_absolute():
        return path.as_uri()
    import shlex

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
    activation_env: tuple[tuple[str, str], ...] = ()
    implied_specs: tuple[str, ...] = ()
    """Non-virtual specs the wheels imply (reported, not added)."""
    from_history: bool = False
    builds: bool = True
    notes: tuple[str, ...] = field(default=())
    wheels_dir: str | None = None
    """Where ``--wheels-dir`` copied the variant wheels (``None``: not copied)."""

    @property
    def toolkit_dependency(self) -> CondaDependency | None:
        for dep in self.dependencies:
            if dep.comment is not None and dep.comment.startswith("the solved CUDA toolkit"):
                return dep
        return None


# -- channels -------------------------------------------------------------------------------


def normalize_channel(channel: str) -> str:
    """``https://conda.anaconda.org/conda-forge/`` -> ``conda-forge``; other URLs lose a
    trailing ``/``; names stay."""
    text = channel.strip()
    match = _ANACONDA_ORG.fullmatch(text)
    if match is not None:
        return match["name"]
    return text.rstrip("/") if "://" in text else text


def order_channels(
    records: Iterable[CondaRecord], preferred: Sequence[str] = ()
) -> tuple[str, ...]:
    """Channels in priority order: *preferred* (a lock file's list, the history's ``-c``)
    first, then the records' other channels by how many packages they gave, then by name."""
    counts: dict[str, int] = {}
    for record in records:
        if record.channel:
            channel = normalize_channel(record.channel)
            counts[channel] = counts.get(channel, 0) + 1
    ordered = list(dict.fromkeys(normalize_channel(c) for c in preferred if c.strip()))
    rest = sorted((c for c in counts if c not in ordered), key=lambda c: (-counts[c], c))
    return tuple(ordered + rest)


# -- conda dependencies -----------------------------------------------------------------------


def _major_minor(version: str) -> str:
    parts = re.findall(r"[0-9]+", version)
    return ".".join([*parts, "0"][:2]) if parts else version


def _record_dependency(record: CondaRecord, *, builds: bool) -> CondaDependency:
    # str(): a lock reader may hand over rattler's own version/build objects.
    name, version, build = record.name, str(record.version), str(record.build)
    if builds:
        return CondaDependency(
            name, f"{name}={version}={build}", version=f"=={version}", build=build
        )
    return CondaDependency(name, f"{name}={version}", version=f"=={version}")


def _spec_dependency(spec: str) -> CondaDependency:
    from rattler import MatchSpec

    try:
        match = MatchSpec(spec)
    except Exception as e:
        raise ExportError(f"requested spec {spec!r} is not a conda match spec: {e}") from e
    name = spec_name(spec)
    channel = match.channel.name if match.channel is not None else None
    version = str(match.version) if match.version is not None else None
    build = str(match.build) if match.build is not None else None
    return CondaDependency(name, spec, version=version, build=build, channel=channel)


def _toolkit_dependency(env: Environment) -> CondaDependency | None:
    if env.toolkit is None:
        return None
    pin = _major_minor(env.toolkit.version)
    return CondaDependency(
        env.toolkit.package,
        f"{env.toolkit.package}={pin}",
        version=f"{pin}.*",
        comment=f"the solved CUDA toolkit ({env.toolkit.source})",
    )


def _dependencies(
    env: Environment, requested_specs: Sequence[str] | None, *, builds: bool
) -> tuple[CondaDependency, ...]:
    toolkit = _toolkit_dependency(env)
    if requested_specs is None:
        deps = [_record_dependency(r, builds=builds) for r in sorted(env.conda_packages, key=_key)]
        if toolkit is not None:
            deps = [
                _with_comment(d, toolkit.comment) if d.name == toolkit.name else d for d in deps
            ]
            if not any(d.name == toolkit.name for d in deps):
                deps.append(toolkit)
        return tuple(deps)
    deps = [_spec_dependency(s) for s in requested_specs]
    if toolkit is not None:
        # The explicit pin replaces whatever the user once asked for (`cuda-version >=12`).
        deps = [d for d in deps if d.name != toolkit.name] + [toolkit]
    return tuple(deps)


def _with_comment(dep: CondaDependency, comment: str | None) -> CondaDependency:
    return CondaDependency(dep.name, dep.spec, dep.version, dep.build, dep.channel, comment=comment)


def _key(record: CondaRecord) -> str:
    return record.name


# -- host requirements ------------------------------------------------------------------------


def _wheel_text(dist: PythonDistribution) -> str:
    label = variant_label(dist)
    return f"{dist.name} {dist.version}" + (f" [{label}]" if label else "")


def _level_number(value: str) -> int | None:
    digits = re.findall(r"[0-9]+", value)
    return int(digits[-1]) if digits else None


def _host_requirements(
    env: Environment, channels: Sequence[str]
) -> tuple[tuple[HostRequirement, ...], tuple[str, ...], tuple[str, ...]]:
    """Host requirements, non-virtual implied specs, and notes (unmapped properties)."""
    from variant_bridge.translate import to_conda_specs

    tables = load_tables()
    found: dict[str, HostRequirement] = {}
    implied: dict[str, None] = {}
    notes: list[str] = []
    installed = {r.name for r in env.conda_packages}

    def add(spec: str, rattler_spec: str, wheel: str, *, expressible: bool = True) -> None:
        known = found.get(spec)
        wheels = (*known.wheels, wheel) if known is not None else (wheel,)
        found[spec] = HostRequirement(spec, rattler_spec, tuple(dict.fromkeys(wheels)), expressible)

    for dist in env.python_packages:
        if dist.variant is None or not dist.variant.properties:
            continue
        wheel = _wheel_text(dist)
        translation = to_conda_specs(dist.variant.properties, tables=tables)
        for prop, reason in translation.unmapped:
            notes.append(f"{wheel}: {prop} has no conda counterpart ({reason})")
        for cs in translation.conda_specs:
            if cs.form == "any":
                if cs.spec.startswith("__"):
                    add(cs.spec, cs.spec, wheel)
                else:
                    implied.setdefault(cs.spec, None)
                    conflict = _conflict(env, cs.spec)
                    if conflict is not None:
                        notes.append(
                            f"{wheel} expects {cs.spec}, but the environment has {conflict}"
                        )
            elif cs.form == "rattler":
                alternatives = [
                    a.spec for a in translation.conda_specs if a.alternative_to == cs.spec
                ]
                conda_form = _cpu_conda_form(
                    dist.variant.properties,
                    cs.spec,
                    translation.by_property,
                    tables,
                    channels=channels,
                    installed=installed,
                )
                if len(alternatives) == 1:
                    add(alternatives[0], cs.spec, wheel)
                elif conda_form is not None:
                    add(conda_form, cs.spec, wheel)
                else:
                    names = ", ".join(a.rsplit(" ", 1)[-1] for a in alternatives)
                    add(
                        f"{_first_word(cs.spec)} build one of: {names}",
                        cs.spec,
                        wheel,
                        expressible=False,
                    )
    return tuple(found.values()), tuple(implied), tuple(notes)


def _conflict(env: Environment, spec: str) -> str | None:
    """The installed record that *spec* rejects (``cuda-version=12.6``), or ``None``."""
    record = env.conda_package(spec_name(spec))
    if record is None:
        return None
    from rattler import MatchSpec, PackageRecord
    from rattler.package import BuildString

    candidate = PackageRecord(
        record.name,
        str(record.version),
        BuildString(str(record.build)),
        record.build_number,
        record.subdir or env.platform,
    )
    try:
        matches = MatchSpec(spec).matches(candidate)
    except Exception:  # a spec rattler cannot read is reported elsewhere, not judged here
        return None
    return None if matches else f"{record.name}={record.version}"


def _first_word(spec: str) -> str:
    return re.split(r"[\s\[]", spec, maxsplit=1)[0]


def _cpu_conda_form(
    properties: Sequence[VariantProperty],
    rattler_spec: str,
    by_property: Sequence[tuple[VariantProperty, tuple[CondaSpec, ...]]],
    tables: MappingTables,
    *,
    channels: Sequence[str],
    installed: set[str],
) -> str | None:
    """``_x86_64-microarch-level >=N`` for a CPU generation requirement, where conda-forge's
    metapackage can be had (a conda-forge channel, or already installed)."""
    for prop, specs in by_property:
        if prop not in properties or rattler_spec not in (c.spec for c in specs):
            continue
        cpu = tables.cpu(prop.namespace)
        if cpu is None or cpu.metapackage is None or prop.feature != cpu.generation_feature:
            continue
        level = _level_number(prop.value)
        reachable = cpu.metapackage in installed or any(
            normalize_channel(c).rstrip("/").endswith(_CONDA_FORGE) for c in channels
        )
        if level is not None and reachable:
            return f"{cpu.metapackage} >={level}"
    return None


# -- pip ---------------------------------------------------------------------------------------


_PYPI_HOSTS = frozenset({"files.pythonhosted.org", "pypi.org", "pypi.python.org"})


def _installed_from(dist: PythonDistribution) -> str | None:
    """The http(s) URL a distribution's file came from (PEP 610 ``direct_url.json``, or a
    pixi.lock entry's URL), or ``None``."""
    location = dist.location or ""
    url = dist.direct_url or (location if "://" in location else None)
    if url is None or not url.lower().startswith(("http://", "https://")):
        return None
    return url.partition("#")[0]


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).netloc.rpartition("@")[2].lower()
    except ValueError:
        return url


def _off_pypi_note(dist: PythonDistribution, index_options: IndexOptions | None) -> str | None:
    """Why ``name==version`` may not re-create *dist*: it came from an index that is not PyPI
    and that the export does not name (installers look ``name==version`` up on PyPI)."""
    url = _installed_from(dist)
    if url is None or _host(url) in _PYPI_HOSTS:
        return None
    known = () if index_options is None else index_options.urls()
    if any(_host(u) == _host(url) for u in known):
        return None
    return (
        f"{dist.name} {dist.version} was installed from {url}, not from PyPI, but is exported as "
        f"{dist.name}=={dist.version}, which is looked up on PyPI: pass the index it came from "
        "with --index-url or --extra-index-url"
    )


def _pip_requirements(
    env: Environment,
    origins: Sequence[WheelOrigin],
    *,
    allow_unpinned: bool,
    index_options: IndexOptions | None = None,
) -> tuple[tuple[PipRequirement, ...], tuple[str, ...]]:
    by_name = {(canonicalize_name(o.name), o.version): o for o in origins}
    lines: list[PipRequirement] = []
    notes: list[str] = []
    unpinned: list[str] = []
    for dist in sorted(env.python_packages, key=lambda d: canonicalize_name(d.name)):
        label = variant_label(dist)
        if label is None:
            lines.append(PipRequirement(dist.name, dist.version))
            off_pypi = _off_pypi_note(dist, index_options)
            if off_pypi is not None:
                notes.append(off_pypi)
            continue
        origin = by_name.get((canonicalize_name(dist.name), dist.version))
        if origin is None or origin.url is None:
            why = origin.source if origin is not None else "its origin was not looked up"
            unpinned.append(f"{_wheel_text(dist)}: {why}")
            lines.append(
                PipRequirement(
                    dist.name, dist.version, label=label, note="variant wheel NOT pinned: " + why
                )
            )
            continue
        if origin.note:
            notes.append(f"{_wheel_text(dist)}: {origin.note}")
        lines.append(
            PipRequirement(dist.name, dist.version, origin.url, origin.sha256, label, origin.note)
        )
    if unpinned and not allow_unpinned:
        raise ExportError(
            "cannot pin variant wheel"
            + ("s " if len(unpinned) > 1 else " ")
            + "; ".join(unpinned)
            + " (pass --find-links/--index-url where it can be found, or --allow-unpinned to "
            "export it as name==version)"
        )
    notes.extend(
        f"{u.split(':', 1)[0]} is exported unpinned (name==version): an installer may pick "
        "another variant"
        for u in unpinned
    )
    return tuple(lines), tuple(notes)


# -- pixi platform declaration ----------------------------------------------------------------


def _satisfies(name: str, version: str, build: str, specs: Sequence[str], subdir: str) -> bool:
    from rattler import MatchSpec, PackageRecord
    from rattler.package import BuildString

    record = PackageRecord(name, version, BuildString(build), 0, subdir)
    return all(MatchSpec(spec).matches(record) for spec in specs)


def _lowest(
    name: str,
    specs: Sequence[str],
    subdir: str,
    *,
    also: Iterable[str | None] = (),
    fallback: str | None = None,
) -> str | None:
    """The lowest version of virtual package *name* that satisfies *specs*, tried among the
    specs' own lower bounds and *also*; *fallback* when none does."""
    from rattler import Version

    candidates: list[str | None] = [
        *(str(m) for s in specs for m in _LOWER_BOUND_RE.findall(s)),
        *also,
    ]
    unique = {c for c in candidates if c and re.fullmatch(r"[0-9]+(\.[0-9]+)*", c)}
    for version in sorted(unique, key=Version):
        if _satisfies(name, version, "0", specs, subdir):
            return version
    return fallback


def _platform_declaration(env: Environment, host: Sequence[HostRequirement]) -> PlatformDeclaration:
    """The lowest declared virtual packages that satisfy the wheels and the pinned records."""
    depends = [s for r in env.conda_packages for s in r.depends if s.startswith("__")]
    constrains = [s for r in env.conda_packages for s in r.constrains if s.startswith("__")]
    wheel_specs = [h.rattler_spec for h in host]
    every = depends + constrains + wheel_specs
    subdir = env.platform

    cuda_specs = [s for s in every if spec_name(s) == "__cuda"]
    # Constrains alone never need a driver (they are vacuous without __cuda); a dependency, a
    # wheel's requirement or a solved toolkit does.
    needs_cuda = env.toolkit is not None or any(
        spec_name(s) == "__cuda" for s in (*depends, *wheel_specs)
    )
    cuda: str | None = None
    if needs_cuda:
        toolkit_major = (
            _major_minor(env.toolkit.version).split(".")[0] if env.toolkit is not None else None
        )
        driver = env.cuda.version if env.cuda is not None else None
        cuda = _lowest("__cuda", cuda_specs, subdir, also=(toolkit_major, driver), fallback=driver)

    arch: str | None = None
    arch_specs = [s for s in every if spec_name(s) == "__cuda_arch"]
    if cuda is not None and arch_specs:
        gpu = env.cuda_arch.version if env.cuda_arch is not None else None
        arch = _lowest("__cuda_arch", arch_specs, subdir, also=(gpu,), fallback=gpu)

    archspec: str | None = None
    archspec_specs = [s for s in wheel_specs if spec_name(s) == "__archspec"]
    if archspec_specs:
        archspec = _lowest_archspec(env, archspec_specs)

    glibc: str | None = None
    glibc_specs = [s for s in every if spec_name(s) == "__glibc"]
    if (
        glibc_specs
        and subdir.startswith("linux")
        and not _satisfies("__glibc", _PIXI_DEFAULT_GLIBC, "0", glibc_specs, subdir)
    ):
        glibc = _lowest("__glibc", glibc_specs, subdir)
    return PlatformDeclaration(subdir, cuda, arch, archspec, glibc)


def _lowest_archspec(env: Environment, specs: Sequence[str]) -> str | None:
    """The lowest generic microarchitecture (``x86_64_v3``) every spec accepts, else the
    detected one."""
    generics: list[str] = []
    for cpu in load_tables().cpus:
        values = [cpu.base_value] + [f"v{n}" for n in range(2, 10)]
        generics += [cpu.archspec_name(v) for v in values]
    for name in generics:
        if _satisfies("__archspec", "1", name, specs, env.platform):
            return name
    return env.archspec.build if env.archspec is not None else None


# -- the model ---------------------------------------------------------------------------------


def _view(env: Environment) -> BridgedView:
    return BridgedView(
        platform=env.platform,
        driver=env.cuda,
        toolkit=str(env.toolkit) + f" ({env.toolkit.source})" if env.toolkit else None,
        cuda_arch=env.cuda_arch,
        archspec=env.archspec,
        glibc=env.glibc,
    )


_DECLARED = Source.TARGET  # the exported platform: declared facts, like --target


def _activation_env(
    env: Environment, declaration: PlatformDeclaration
) -> tuple[tuple[str, str], ...]:
    """The NVIDIA provider's override values for the environment being shared.

    They follow the declared platform (the lowest driver and GPU architecture the wheels and the
    toolkit accept), never the exporting machine: the bridge's view of a machine with exactly the
    declared ``__cuda``/``__cuda_arch`` and the environment's toolkit. ``none`` only when the
    environment has no CUDA at all; no architecture variable when none is declared (uv then reads
    the GPU it runs on).
    """
    from variant_bridge.translate import supported_properties
    from variant_bridge.uv_settings import DRIVER_VARIABLE, NO_CUDA, SM_ARCH_VARIABLE, uv_settings

    if declaration.cuda is None:
        return ((DRIVER_VARIABLE, NO_CUDA), (SM_ARCH_VARIABLE, NO_CUDA))
    declared = [VirtualPackage("__cuda", declaration.cuda, "0", _DECLARED)]
    if declaration.cuda_arch is not None:
        declared.append(VirtualPackage("__cuda_arch", declaration.cuda_arch, "0", _DECLARED))
    others = [vp for vp in env.virtual_packages if vp.name not in ("__cuda", "__cuda_arch")]
    shared = replace(env, virtual_packages=tuple(sorted([*others, *declared], key=_vp_name)))
    values = uv_settings(shared, supported_properties(shared)).as_dict()
    wanted = [DRIVER_VARIABLE] + ([SM_ARCH_VARIABLE] if declaration.cuda_arch else [])
    return tuple((name, values[name]) for name in wanted)


def _vp_name(vp: VirtualPackage) -> str:
    return vp.name


def build_export(
    env: Environment,
    *,
    name: str,
    origins: Sequence[WheelOrigin] = (),
    requested_specs: Sequence[str] | None = None,
    channel_order: Sequence[str] = (),
    builds: bool = True,
    host_requirements: bool = True,
    allow_unpinned: bool = False,
    index_options: IndexOptions | None = None,
    producer: str = "variant-bridge export",
    extra_notes: Iterable[str] = (),
) -> ExportModel:
    """The export of *env*.

    :param origins: where each variant wheel came from (:func:`establish_origins`).
    :param requested_specs: ``None`` exports every record; a sequence exports only these
        (``--from-history``).
    :param channel_order: channels in priority order as far as known (a lock file, history).
    :raises ExportError: a variant wheel has no established origin and *allow_unpinned* is
        false; a requested spec does not parse.
    """
    channels = order_channels(env.conda_packages, channel_order)
    dependencies = _dependencies(env, requested_specs, builds=builds)
    host, implied, host_notes = _host_requirements(env, channels)
    pip, pip_notes = _pip_requirements(
        env, origins, allow_unpinned=allow_unpinned, index_options=index_options
    )
    full_declaration = _platform_declaration(env, host)
    declaration = full_declaration if host_requirements else _platform_declaration(env, ())
    if not host_requirements:
        host = ()
    notes = [*host_notes, *pip_notes, *extra_notes]
    if any(p.names_variant_file for p in pip):
        notes.insert(0, VARIANT_FILENAMES_NOTE)
    if requested_specs is not None and not requested_specs:
        notes.append("no requested specs were recorded: only the toolkit pin is exported")
    return ExportModel(
        name=name,
        platform=env.platform,
        origin=env.origin,
        producer=producer,
        channels=channels,
        dependencies=dependencies,
        host_requirements=host,
        pip=pip,
        index_options=index_options or IndexOptions(),
        view=_view(env),
        platform_declaration=declaration,
        # What the wheels need, even when --no-host-requirements keeps it out of the platform.
        activation_env=_activation_env(env, full_declaration),
        implied_specs=implied,
        from_history=requested_specs is not None,
        builds=builds,
        notes=tuple(notes),
    )


def requested_from_records(records: Iterable[CondaRecord]) -> tuple[str, ...]:
    """Requested specs that rattler/pixi recorded per record (used when history is empty)."""
    specs: dict[str, None] = {}
    for record in records:
        for spec in record.requested_specs:
            specs.setdefault(spec, None)
    return tuple(specs)
