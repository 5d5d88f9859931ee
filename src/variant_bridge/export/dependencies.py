"""The conda dependency lines of an export: every record pinned as ``--pin`` says
(``name=version=build``, ``name=version`` or ``name``), or only the user's requested specs
(``--from-history``), with the solved toolkit always pinned to its ``major.minor`` (docs/share.md,
"environment.yml")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from variant_bridge.environment import CondaRecord, Environment
from variant_bridge.errors import ExportError
from variant_bridge.export.history import spec_name
from variant_bridge.export.model import CondaDependency, PinMode

__all__ = ["conda_dependencies", "major_minor", "requested_from_records", "toolkit_dependency"]


def major_minor(version: str) -> str:
    """``12.6.77`` -> ``12.6``; ``12`` -> ``12.0``."""
    parts = re.findall(r"[0-9]+", version)
    return ".".join([*parts, "0"][:2]) if parts else version


def toolkit_dependency(env: Environment) -> CondaDependency | None:
    """The pin of the solved CUDA toolkit (``cuda-version=12.6``), or ``None`` without one."""
    if env.toolkit is None:
        return None
    pin = major_minor(env.toolkit.version)
    return CondaDependency(
        env.toolkit.package,
        f"{env.toolkit.package}={pin}",
        version=f"{pin}.*",
        comment=f"the solved CUDA toolkit ({env.toolkit.source})",
    )


def conda_dependencies(
    env: Environment,
    requested_specs: Sequence[str] | None,
    *,
    pin: PinMode,
    toolkit: CondaDependency | None,
) -> tuple[CondaDependency, ...]:
    """Every record of *env* (``requested_specs=None``), or the requested specs, plus *toolkit*.

    :raises ExportError: a requested spec is not a conda match spec.
    """
    if requested_specs is None:
        deps = [_record_dependency(r, pin=pin) for r in sorted(env.conda_packages, key=_key)]
        if toolkit is not None:
            # Whatever --pin says, the toolkit stays pinned (to its build with --pin exact).
            deps = [
                (replace(d, comment=toolkit.comment) if pin == "exact" else toolkit)
                if d.name == toolkit.name
                else d
                for d in deps
            ]
            if not any(d.name == toolkit.name for d in deps):
                deps.append(toolkit)
        return tuple(deps)
    deps = [_spec_dependency(s) for s in requested_specs]
    if toolkit is not None:
        # The explicit pin replaces whatever the user once asked for (`cuda-version >=12`).
        deps = [d for d in deps if d.name != toolkit.name] + [toolkit]
    return tuple(deps)


def requested_from_records(records: Iterable[CondaRecord]) -> tuple[str, ...]:
    """Requested specs that rattler/pixi recorded per record (used when history is empty)."""
    specs: dict[str, None] = {}
    for record in records:
        for spec in record.requested_specs:
            specs.setdefault(spec, None)
    return tuple(specs)


def _record_dependency(record: CondaRecord, *, pin: PinMode) -> CondaDependency:
    # str(): a lock reader may hand over rattler's own version/build objects.
    name, version, build = record.name, str(record.version), str(record.build)
    if pin == "exact":
        return CondaDependency(
            name, f"{name}={version}={build}", version=f"=={version}", build=build
        )
    if pin == "version":
        return CondaDependency(name, f"{name}={version}", version=f"=={version}")
    return CondaDependency(name, name)


def _spec_dependency(spec: str) -> CondaDependency:
    from rattler import MatchSpec  # heavy: loaded only for --from-history

    try:
        match = MatchSpec(spec)
    except Exception as e:
        raise ExportError(f"requested spec {spec!r} is not a conda match spec: {e}") from e
    name = spec_name(spec)
    channel = match.channel.name if match.channel is not None else None
    version = str(match.version) if match.version is not None else None
    build = str(match.build) if match.build is not None else None
    return CondaDependency(name, spec, version=version, build=build, channel=channel)


def _key(record: CondaRecord) -> str:
    return record.name
