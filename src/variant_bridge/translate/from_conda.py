"""``translate --from-conda``: conda specs -> a declared environment.

Accepted: ``name=version[=build]``, ``name==version``, ``name version [build]``, a bare virtual
package (``__unix``) and ``__archspec=<name>`` (the build, as ``CONDA_OVERRIDE_ARCHSPEC`` sets it).
Virtual package values are checked exactly as ``detect`` checks ``--target`` (same shapes, same
platforms), so both commands accept the same facts (semantics.md §2).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from variant_bridge._values import value
from variant_bridge.environment import CondaRecord, Environment, Source, Toolkit, VirtualPackage
from variant_bridge.errors import InvalidTarget, quote
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.translate.cuda import major_minor
from variant_bridge.virtual_packages import (
    VERSION_SHAPES,
    applies_to,
    check_platform,
    impossible_toolkit,
    microarchitecture_problem,
    not_on_platform,
)

__all__ = ["CondaFacts", "read_conda_specs"]

_SPEC_RE = re.compile(
    r"(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)"
    r"(?:(?:\s*==?\s*|\s+)(?P<version>[^=\s]+)(?:(?:\s*=\s*|\s+)(?P<build>[^=\s]+))?)?"
)
_EXACT_VERSION_RE = re.compile(r"[0-9][0-9A-Za-z._+]*")
# CEP 30 names that carry no version fact of their own (their presence alone is the fact).
_KNOWN_VIRTUAL = frozenset({"__archspec", "__unix"})


@value
class CondaFacts:
    """What :func:`read_conda_specs` made of conda specs.

    :param environment: the declared environment.
    :param ignored: ``(spec as given, reason)`` for packages that change nothing: neither a
        virtual package, nor a toolkit selector, nor a package ``abi_dependency`` knows.
    """

    environment: Environment
    ignored: tuple[tuple[str, str], ...] = ()


@value
class _Spec:
    text: str
    name: str
    version: str | None
    build: str | None


def read_conda_specs(
    specs: Iterable[str], *, platform: str, tables: MappingTables | None = None
) -> CondaFacts:
    """A declared :class:`Environment` from specs like ``__cuda=12.8`` or ``cuda-version 12.6``.

    Every fact gets the source ``--from-conda``.

    :param platform: the conda subdir the facts are for.
    :raises InvalidTarget: on a spec that is not one exact package, a duplicate, a version of
        the wrong shape, a virtual package the platform cannot have, an unknown
        microarchitecture or one of another family, an unknown platform.
    """
    tables = tables if tables is not None else load_tables()
    platform = check_platform(platform, where="--platform")
    parsed = _parse_all(specs)
    virtual = [
        _declared_virtual(spec, platform, tables) for spec in parsed if spec.name.startswith("__")
    ]
    ignored = [
        (spec.text.strip(), f"no variant property depends on {spec.name}")
        for spec in parsed
        if spec.name.startswith("__")
        and spec.name not in _KNOWN_VIRTUAL
        and spec.name not in VERSION_SHAPES
    ]  # kept as declared (conda would see it), but no variant namespace reads it
    records: list[tuple[str, CondaRecord]] = []
    toolkits: dict[str, Toolkit] = {}
    for spec in parsed:
        if not spec.name.startswith("__"):
            toolkit = _toolkit(spec, tables)
            if toolkit is not None:
                toolkits[spec.name] = toolkit
            record = CondaRecord(spec.name, str(spec.version), spec.build or "", subdir=platform)
            records.append((spec.text, record))
    toolkit = next((toolkits[p] for p in tables.nvidia.toolkit_packages if p in toolkits), None)
    driver = next((vp for vp in virtual if vp.name == tables.nvidia.driver_package), None)
    if toolkit is not None:
        problem = impossible_toolkit(
            toolkit.package, toolkit.version, driver.version if driver else None
        )
        if problem is not None:
            raise InvalidTarget(f"--from-conda {toolkit.package}={toolkit.version}: {problem}")
    kept: list[CondaRecord] = []
    for text, record in records:
        reason = _ignored_reason(record.name, toolkit, tables)
        if reason is None:
            kept.append(record)
        else:
            ignored.append((text.strip(), reason))
    rocm = next(
        (
            Toolkit(r.name, r.version, Source.FROM_CONDA)
            for _, r in records
            if r.name in tables.amd.runtime_packages
        ),
        None,
    )
    environment = Environment(
        platform=platform,
        virtual_packages=tuple(sorted(virtual, key=lambda vp: vp.name)),
        toolkit=toolkit,
        rocm=rocm,
        conda_packages=tuple(kept),
        origin=str(Source.FROM_CONDA),
        notes=_notes(virtual, tables),
    )
    return CondaFacts(environment, tuple(ignored))


def _parse_all(specs: Iterable[str]) -> list[_Spec]:
    parsed: dict[str, _Spec] = {}
    for text in specs:
        match = _SPEC_RE.fullmatch(text.strip())
        if match is None or any(c in text for c in "<>!*|,[]()~^"):
            raise InvalidTarget(
                f"invalid spec {quote(text)}: expected one exact package like '__cuda=12.8', "
                "'__archspec=1=haswell' or 'cuda-version 12.6'"
            )
        spec = _Spec(text, match["name"].lower(), match["version"], match["build"])
        if spec.name in parsed:
            raise InvalidTarget(
                f"{spec.name} given twice: {quote(parsed[spec.name].text)} and {quote(text)}"
            )
        if not spec.name.startswith("__") and spec.version is None:
            raise InvalidTarget(
                f"invalid spec {quote(text)}: a package needs a version, e.g. 'name=1.2'"
            )
        parsed[spec.name] = spec
    return list(parsed.values())


def _toolkit(spec: _Spec, tables: MappingTables) -> Toolkit | None:
    if spec.name not in tables.nvidia.toolkit_packages or spec.version is None:
        return None
    if major_minor(spec.version) is None:
        raise InvalidTarget(
            f"invalid spec {quote(spec.text)}: {spec.name} needs a version like '12.6'"
        )
    return Toolkit(spec.name, spec.version, Source.FROM_CONDA)


def _notes(virtual: list[VirtualPackage], tables: MappingTables) -> tuple[str, ...]:
    names = {vp.name for vp in virtual}
    nvidia = tables.nvidia
    if nvidia.arch_package in names and nvidia.driver_package not in names:
        note = (
            f"{nvidia.arch_package} without {nvidia.driver_package}: conda drops the GPU "
            "architecture when there is no driver, so the nvidia namespace is unsupported"
        )
        return (note,)
    return ()


def _ignored_reason(name: str, toolkit: Toolkit | None, tables: MappingTables) -> str | None:
    """Why conda package *name* changes no supported property, or ``None`` when it does (a
    toolkit selector, or a package ``abi_dependency`` reads through names.yaml)."""
    if name in tables.nvidia.toolkit_packages or name in tables.amd.runtime_packages:
        return None
    mappings = tables.names.pypi_for_conda(name)
    if not mappings:
        selectors = (*tables.nvidia.toolkit_packages, *tables.amd.runtime_packages)
        return (
            f"not a virtual package, a toolkit selector ({', '.join(selectors)}) or a package "
            "whose PyPI name variant-bridge knows (for abi_dependency)"
        )
    t = major_minor(toolkit.version) if toolkit is not None else None
    majors = sorted({m.cuda_major for m in mappings if m.cuda_major is not None})
    if len(majors) < len(mappings) or (t is not None and t[0] in majors):
        return None
    return (
        f"its PyPI name depends on the CUDA major ({', '.join(map(str, majors))}) and no "
        "toolkit of one of those is given (e.g. cuda-version=12.6)"
    )


def _declared_virtual(spec: _Spec, platform: str, tables: MappingTables) -> VirtualPackage:
    name, version, build = spec.name, spec.version, spec.build
    if not applies_to(name, platform):
        raise InvalidTarget(f"invalid spec {quote(spec.text)}: {not_on_platform(name, platform)}")
    if tables.cpu_for_package(name) is not None:
        if build is None and version is not None and not version[0].isdigit():
            version, build = "1", version  # __archspec=haswell: the build, like the override
        if build is None:
            raise InvalidTarget(
                f"invalid spec {quote(spec.text)}: {name} needs a microarchitecture, "
                f"e.g. '{name}=1=haswell'"
            )
        info = tables.platform.subdirs.get(platform)
        family = info.cpu_family if info is not None else None
        problem = microarchitecture_problem(build, platform, cpu_family=family)
        if problem is not None:
            raise InvalidTarget(f"invalid spec {quote(spec.text)}: {problem}")
        return VirtualPackage(name, version or "1", build, Source.FROM_CONDA)
    shape = VERSION_SHAPES.get(name)
    if shape is not None and (version is None or not shape.matches(version)):
        raise InvalidTarget(f"invalid spec {quote(spec.text)}: {name} needs {shape.expected}")
    if version is not None and _EXACT_VERSION_RE.fullmatch(version) is None:
        raise InvalidTarget(f"invalid spec {quote(spec.text)}: {quote(version)} is not a version")
    return VirtualPackage(name, version or "0", build or "0", Source.FROM_CONDA)
