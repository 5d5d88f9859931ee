"""An environment snapshot (plus its history and the origins of its variant wheels) becomes an
:class:`~variant_bridge.export.model.ExportModel`: channels, conda dependencies, host
requirements, pip pins and the uv activation variables (docs/share.md, "environment.yml",
"pixi"; docs/semantics.md §6.2 for the variables).

Variant wheels are pinned as direct references with ``#sha256=``, other distributions as
``name==version``; pip and uv refuse variant filenames without their preview feature, which the
header says unless ``--wheels-dir`` copied the wheels.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from packaging.utils import canonicalize_name

from variant_bridge.environment import Environment, PythonDistribution, Source, VirtualPackage
from variant_bridge.errors import ExportError
from variant_bridge.export.channels import order_channels
from variant_bridge.export.dependencies import conda_dependencies, major_minor, toolkit_dependency
from variant_bridge.export.host_requirements import wheel_host_requirements, wheel_text
from variant_bridge.export.model import (
    VARIANT_FILENAMES_NOTE,
    BridgedView,
    ExportModel,
    IndexOptions,
    PinMode,
    PipRequirement,
    PlatformDeclaration,
)
from variant_bridge.export.origins import WheelOrigin, variant_label
from variant_bridge.export.platform import platform_declaration
from variant_bridge.export.validate import is_url
from variant_bridge.translate import supported_properties
from variant_bridge.uv_settings import (
    DRIVER_VARIABLE,
    EXPORTED_PINS_VARIABLE,
    SM_ARCH_VARIABLE,
    exported_pins_value,
    uv_settings,
)

__all__ = ["Pinning", "build_export"]

_PYPI_HOSTS = frozenset({"files.pythonhosted.org", "pypi.org", "pypi.python.org"})
_DECLARED = Source.TARGET  # the exported platform: declared facts, like --target


@dataclass(frozen=True, slots=True)
class Pinning:
    """How the export pins what it writes.

    :param pin: the packages it owns (``--pin``); variant wheels always name their file.
    :param every_wheel: pin every PyPI package to a file, not only the variant wheels (a
        pylock.toml has no ``name==version`` form).
    :param allow_unpinned: a wheel whose file cannot be established is exported as
        ``name==version`` (left out of a pylock.toml) instead of failing the export.
    :param hashes: establish every wheel's file and hash, so that environment.yml's pip section
        pins each one by hash (pip's hash-checking mode); a plain wheel whose origin is unknown
        is then ``name==version`` and named in a note, never an error.
    """

    pin: PinMode = "exact"
    every_wheel: bool = False
    allow_unpinned: bool = False
    hashes: bool = False


def build_export(
    env: Environment,
    *,
    name: str,
    origins: Sequence[WheelOrigin] = (),
    requested_specs: Sequence[str] | None = None,
    channel_order: Sequence[str] = (),
    pinning: Pinning = Pinning(),
    host_requirements: bool = True,
    index_options: IndexOptions | None = None,
    producer: str = "variant-bridge export",
    extra_notes: Iterable[str] = (),
    strict_host_requirements: bool = False,
) -> ExportModel:
    """The export of *env*.

    :param origins: where each variant wheel (every wheel with ``pinning.every_wheel``) came
        from (:func:`establish_origins`).
    :param requested_specs: ``None`` exports every record; a sequence exports only these
        (``--from-history``).
    :param channel_order: channels in priority order as far as known (a lock file, history).
    :raises ExportError: a wheel that must be pinned has no established origin and
        ``pinning.allow_unpinned`` is false; a requested spec does not parse.
    """
    channels = order_channels(env.conda_packages, channel_order)
    toolkit = toolkit_dependency(env)
    dependencies = conda_dependencies(env, requested_specs, pin=pinning.pin, toolkit=toolkit)
    host = wheel_host_requirements(env, channels)
    pip, pip_notes = _pip_requirements(env, origins, pinning, index_options)
    full_declaration = platform_declaration(env, host.requirements)
    declaration = full_declaration if host_requirements else platform_declaration(env, ())
    notes = [*host.notes, *pip_notes, *extra_notes]
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
        host_requirements=host.requirements if host_requirements else (),
        pip=pip,
        index_options=index_options or IndexOptions(),
        view=_view(env),
        platform_declaration=declaration,
        toolkit_dependency=next(
            (d for d in dependencies if toolkit is not None and d.name == toolkit.name), None
        ),
        activation_env=_activation_env(env, full_declaration, any(p.label for p in pip)),
        implied_specs=host.implied,
        from_history=requested_specs is not None,
        pin=pinning.pin,
        notes=tuple(notes),
        undeclared_host_requirements=() if host_requirements else host.requirements,
        installed_conda=tuple((r.name, str(r.version), str(r.build)) for r in env.conda_packages),
        strict_host_requirements=strict_host_requirements,
    )


# -- pip ---------------------------------------------------------------------------------------


def _pip_requirements(
    env: Environment,
    origins: Sequence[WheelOrigin],
    pinning: Pinning,
    index_options: IndexOptions | None,
) -> tuple[tuple[PipRequirement, ...], tuple[str, ...]]:
    by_name = {(canonicalize_name(o.name), o.version): o for o in origins}
    lines: list[PipRequirement] = []
    notes: list[str] = []
    unpinned: list[str] = []
    unknown: list[str] = []
    hashes = pinning.hashes and pinning.pin != "none"
    for dist in sorted(env.python_packages, key=lambda d: canonicalize_name(d.name)):
        label = variant_label(dist)
        if label is None and not (pinning.every_wheel or hashes):
            lines.append(PipRequirement(dist.name, dist.version, any_version=pinning.pin == "none"))
            off_pypi = _off_pypi_note(dist, index_options)
            if off_pypi is not None:
                notes.append(off_pypi)
            continue
        origin = by_name.get((canonicalize_name(dist.name), dist.version))
        if (origin is None or origin.url is None) and label is None and not pinning.every_wheel:
            why = origin.source if origin is not None else "its origin was not looked up"
            unknown.append(f"{dist.name} {dist.version} ({why})")
            lines.append(PipRequirement(dist.name, dist.version))
            continue
        if origin is None or origin.url is None:
            why = origin.source if origin is not None else "its origin was not looked up"
            unpinned.append(f"{wheel_text(dist)}: {why}")
            kind = "variant wheel" if label is not None else "wheel"
            lines.append(
                PipRequirement(
                    dist.name, dist.version, label=label, note=f"{kind} NOT pinned: {why}"
                )
            )
            continue
        if origin.note:
            notes.append(f"{wheel_text(dist)}: {origin.note}")
        lines.append(
            PipRequirement(
                dist.name,
                dist.version,
                origin.url,
                origin.sha256,
                label,
                origin.note,
                properties=_properties(dist),
                size=origin.size,
                found_in=_found_in(origin.source, index_options),
            )
        )
    if unknown:
        notes.append(
            f"the origin of {len(unknown)} wheel(s) is unknown, so they are written as "
            "name==version, which pip looks up in the index again and cannot check by hash (and "
            "no pip line gets a --hash then): " + "; ".join(unknown) + " (pass the "
            "--find-links/--index-url they came from to pin them)"
        )
    fallback = "leave it out of the lock" if pinning.every_wheel else "export it as name==version"
    if unpinned and not pinning.allow_unpinned:
        raise ExportError(
            ("cannot pin variant wheel" if not pinning.every_wheel else "cannot pin wheel")
            + ("s " if len(unpinned) > 1 else " ")
            + "; ".join(unpinned)
            + " (pass --find-links/--index-url where it can be found, or --allow-unpinned to "
            f"{fallback})"
        )
    notes.extend(
        f"{u.split(':', 1)[0]} is left out: no file to pin it to"
        if pinning.every_wheel
        else f"{u.split(':', 1)[0]} is exported unpinned (name==version): an installer may pick "
        "another variant"
        for u in unpinned
    )
    return tuple(lines), tuple(notes)


def _found_in(source: str, index_options: IndexOptions | None) -> str | None:
    """The find-links location or index URL of *index_options* that *source* (where a lookup
    found the file) names, as the model writes it; ``None`` for anything else."""
    if index_options is None:
        return None
    indexes = [u for u in (index_options.index_url, *index_options.extra_index_urls) if u]
    for place in (*index_options.find_links, *indexes):
        if _same_place(source, place):
            return place
    return None


def _same_place(a: str, b: str) -> bool:
    if is_url(a) or is_url(b):
        return a.rstrip("/") == b.rstrip("/")
    return os.path.abspath(a) == os.path.abspath(b)


def _properties(dist: PythonDistribution) -> tuple[str, ...]:
    return tuple(str(p) for p in dist.variant.properties) if dist.variant is not None else ()


def _installed_from(dist: PythonDistribution) -> str | None:
    """The http(s) URL a distribution's file came from (PEP 610 ``direct_url.json``, or a
    pixi.lock entry's URL), or ``None``."""
    location = dist.location or ""
    url = dist.direct_url or (location if "://" in location else None)
    if url is None or not url.lower().startswith(("http://", "https://")):
        return None
    return url.partition("#")[0]


def _host(url: str) -> str:
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


# -- the view and the uv variables --------------------------------------------------------------


def _view(env: Environment) -> BridgedView:
    return BridgedView(
        platform=env.platform,
        driver=env.cuda,
        toolkit=str(env.toolkit) + f" ({env.toolkit.source})" if env.toolkit else None,
        cuda_arch=env.cuda_arch,
        archspec=env.archspec,
        glibc=env.glibc,
    )


def _activation_env(
    env: Environment, declaration: PlatformDeclaration, variant_wheels: bool
) -> tuple[tuple[str, str], ...]:
    """The pins that make uv, run inside the shared environment, choose what ``variant-bridge
    select`` chooses there (docs/share.md, "The pins for uv"), marked as the export's with
    :data:`EXPORTED_PINS_VARIABLE` so that a later ``variant-bridge`` run there does not take
    them for facts.

    - The driver value is a property of the environment only under the toolkit policy: the
      bridge's value for its toolkit and this driver (or, with no driver here, the toolkit or the
      declared platform's, whichever is newer). Without a toolkit the driver is the machine's, and
      uv detects it as ``select`` does: no pin.
    - The GPU is the environment's target, ``__cuda_arch`` (detected or declared), never the
      lowest value the wheels accept; without one uv reads the GPU it runs on.

    An environment with neither a toolkit nor variant wheels gets no pins: uv's own detection
    is then what ``select`` uses too.
    """
    if env.toolkit is None and not variant_wheels:
        return ()
    pins: list[tuple[str, str]] = []
    if env.toolkit is not None:
        view = env if env.cuda is not None else _with_driver(env, declaration)
        pins.append((DRIVER_VARIABLE, _uv_value(view, DRIVER_VARIABLE)))
    if env.cuda_arch is not None and env.cuda is not None:
        pins.append((SM_ARCH_VARIABLE, _uv_value(env, SM_ARCH_VARIABLE)))
    if not pins:
        return ()
    return (*pins, (EXPORTED_PINS_VARIABLE, exported_pins_value(pins)))


def _with_driver(env: Environment, declaration: PlatformDeclaration) -> Environment:
    """*env* on a machine whose driver runs the toolkit (and the declared platform's driver)."""
    assert env.toolkit is not None
    toolkit = major_minor(env.toolkit.version)
    driver = max(
        (v for v in (toolkit, declaration.cuda) if v), key=lambda v: tuple(map(int, v.split(".")))
    )
    declared = VirtualPackage("__cuda", driver, "0", _DECLARED)
    others = [vp for vp in env.virtual_packages if vp.name not in ("__cuda", "__cuda_arch")]
    return replace(env, virtual_packages=tuple(sorted([*others, declared], key=_vp_name)))


def _uv_value(env: Environment, variable: str) -> str:
    return uv_settings(env, supported_properties(env)).as_dict()[variable]


def _vp_name(vp: VirtualPackage) -> str:
    return vp.name
