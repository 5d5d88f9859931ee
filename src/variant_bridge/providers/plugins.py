"""Variant provider plugins for the ``nvidia``, ``x86_64`` and ``aarch64`` namespaces.

They implement variantlib 0.2.2's plugin protocol (:mod:`variant_bridge.providers.protocol`) and
answer from the *bridged view* of the active environment instead of probing hardware on their own:
``$CONDA_PREFIX`` (its solved ``cuda-version``), ``CONDA_OVERRIDE_*``, the NVIDIA provider's
``NV_VARIANT_PROVIDER_FORCE_*`` and this machine, exactly as ``variant-bridge detect`` sees them
(semantics.md §2-4). So a variant-aware installer run inside a conda or pixi environment ranks
wheels as ``variant-bridge select`` does.

Use them from a variant metadata file (``providers.nvidia.plugin-api``, see :data:`PLUGIN_APIS`)
or through the ``variant_plugins`` entry points (entry name = namespace).

A plugin never crashes the installer that calls it: when the environment cannot be read (an
invalid ``CONDA_OVERRIDE_CUDA``, a ``CONDA_PREFIX`` that is not a prefix), the namespace supports
nothing, so the null or non-variant wheel wins, and one line saying why goes to stderr.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from variant_bridge.mappings import CpuTable, NvidiaTable
    from variant_bridge.providers.protocol import FeatureConfigType, PluginType
    from variant_bridge.translate.supported import SupportedProperties

__all__ = [
    "NAMESPACES",
    "PLUGIN_APIS",
    "Aarch64Plugin",
    "FeatureConfig",
    "NvidiaPlugin",
    "X8664Plugin",
    "all_configs",
    "supported_configs",
]

NAMESPACES = ("nvidia", "x86_64", "aarch64")

PLUGIN_APIS: Mapping[str, str] = {
    "nvidia": "variant_bridge.providers.plugins:NvidiaPlugin",
    "x86_64": "variant_bridge.providers.plugins:X8664Plugin",
    "aarch64": "variant_bridge.providers.plugins:Aarch64Plugin",
}
"""``providers.{namespace}.plugin-api`` values (also the ``variant_plugins`` entry points)."""

# Variables that change the answer; the bridged view is cached per distinct set of them.
_VARIABLE_PREFIXES = ("CONDA_OVERRIDE_", "NV_VARIANT_PROVIDER_FORCE_")
_PREFIX_VARIABLE = "CONDA_PREFIX"


@dataclass(frozen=True, slots=True)
class FeatureConfig:
    """One feature with its values, most preferred first (variantlib's feature config shape)."""

    name: str
    ordered_values: tuple[str, ...]
    multi_value: bool = False

    @property
    def values(self) -> list[str]:
        """The values as the protocol wants them: a list, most preferred first."""
        return list(self.ordered_values)


def _relevant(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            (name, value)
            for name, value in environ.items()
            if name == _PREFIX_VARIABLE or name.startswith(_VARIABLE_PREFIXES)
        )
    )


@functools.lru_cache(maxsize=8)
def _bridged_view(variables: tuple[tuple[str, str], ...]) -> SupportedProperties | str:
    """The supported properties for these variables, or why they could not be computed."""
    from variant_bridge.detect import detect_environment
    from variant_bridge.errors import VariantBridgeError
    from variant_bridge.translate import supported_properties

    try:
        env = detect_environment(env=dict(variables))
        # policy None: toolkit whenever the prefix has a solved cuda-version (semantics.md §3).
        return supported_properties(env)
    except VariantBridgeError as e:
        return str(e) or type(e).__name__
    except Exception as e:  # an installer must never die of our detection: report, answer nothing
        return f"unexpected {type(e).__name__}: {e}"


# (namespace, reason) pairs already reported, so one process prints each failure once.
_reported: set[tuple[str, str]] = set()


def _multi_value(namespace: str, feature: str) -> bool:
    if namespace != "nvidia":
        return False
    from variant_bridge.mappings import load_tables

    spec = load_tables().nvidia.feature(feature)
    return spec is not None and spec.multi_value


def supported_configs(
    namespace: str, *, environ: Mapping[str, str] | None = None
) -> list[FeatureConfig]:
    """What the active environment supports in *namespace*, most preferred first.

    :param environ: the process environment to read ``CONDA_PREFIX``, ``CONDA_OVERRIDE_*`` and
        ``NV_VARIANT_PROVIDER_FORCE_*`` from; ``None``: :data:`os.environ`.
    :returns: an empty list when the namespace is unsupported or the environment cannot be
        read (then one ``variant-bridge provider {namespace}: ...`` line goes to stderr).
    """
    view = _bridged_view(_relevant(os.environ if environ is None else environ))
    if isinstance(view, str):
        if (namespace, view) not in _reported:
            _reported.add((namespace, view))
            print(
                f"variant-bridge provider {namespace}: {view}; no {namespace} variant is "
                "supported, so the null or non-variant wheel wins",
                file=sys.stderr,
            )
        return []
    return [
        FeatureConfig(f.feature, f.values, _multi_value(namespace, f.feature))
        for f in view.features
        if f.namespace == namespace and f.values
    ]


def all_configs(namespace: str) -> list[FeatureConfig]:
    """Every valid feature and value of *namespace*, from the mapping tables and archspec.

    :raises ValueError: for a namespace these plugins do not provide.
    """
    from variant_bridge.mappings import load_tables

    tables = load_tables()
    if namespace == tables.nvidia.namespace:
        return _nvidia_all(tables.nvidia)
    cpu = tables.cpu(namespace)
    if cpu is None:
        raise ValueError(f"no variant-bridge plugin for namespace {namespace!r}")
    return _cpu_all(cpu)


def _nvidia_all(table: NvidiaTable) -> list[FeatureConfig]:
    majors, minors = table.driver_majors, table.driver_minors
    versions: list[str] = []
    for major in range(majors.high, majors.low - 1, -1):
        versions += [f"{major}.{minor}" for minor in range(minors.high, minors.low - 1, -1)]
        versions.append(str(major))
    arches = [
        f"{major}{minor}"
        for major in range(table.arch_majors.high, table.arch_majors.low - 1, -1)
        for minor in range(table.arch_minors.high, table.arch_minors.low - 1, -1)
    ]
    sm_values = [f"{a}_real" for a in arches] + [f"{a}_virtual" for a in arches]
    return [
        FeatureConfig(
            feature.name,
            tuple(sm_values if feature.rule == "sm_arch" else versions),
            feature.multi_value,
        )
        for feature in table.features
    ]


def _cpu_all(table: CpuTable) -> list[FeatureConfig]:
    import archspec.cpu

    from variant_bridge.properties import FEATURE_RE

    family = [t for t in archspec.cpu.TARGETS.values() if t.family.name == table.archspec_family]
    cap = archspec.cpu.TARGETS.get(table.archspec_name(table.max_value))
    # Generic microarchitectures up to the provider's maximum, newest first.
    generics = sorted(
        (t for t in family if t.vendor == "generic" and (cap is None or cap not in t.ancestors)),
        key=lambda t: -len(t.ancestors),
    )
    generations = _unique(table.value_for(t.name) for t in generics)
    known = {flag for t in family for flag in t.features}
    flags = _unique(
        (
            *table.flag_order,
            *sorted(f for f in known if FEATURE_RE.fullmatch(f) and f != table.generation_feature),
        )
    )
    configs = [FeatureConfig(table.generation_feature, generations)] if generations else []
    return configs + [FeatureConfig(flag, (table.flag_value,)) for flag in flags]


def _unique(values: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v is not None))


class _BridgePlugin:
    """Shared behaviour; subclasses name their namespace. Every method is a class method, so the
    class itself is the plugin object variantlib loads (``module:Class``)."""

    namespace: ClassVar[str]
    all_properties_compatible: ClassVar[bool] = False  # the answer depends on the machine

    @classmethod
    def get_all_configs(cls) -> list[FeatureConfigType]:
        return list(all_configs(cls.namespace))

    @classmethod
    def get_supported_configs(cls) -> list[FeatureConfigType]:
        return list(supported_configs(cls.namespace))


class NvidiaPlugin(_BridgePlugin):
    """``nvidia``: CUDA driver/toolkit bounds and GPU architecture from ``__cuda``,
    ``__cuda_arch`` and the solved ``cuda-version``."""

    namespace = "nvidia"


class X8664Plugin(_BridgePlugin):
    """``x86_64``: microarchitecture level and CPU flags from ``__archspec``."""

    namespace = "x86_64"


class Aarch64Plugin(_BridgePlugin):
    """``aarch64``: architecture version and CPU flags from ``__archspec``."""

    namespace = "aarch64"


if TYPE_CHECKING:
    # The classes themselves are the plugin objects: let the type checker verify the protocol.
    _CHECK: tuple[PluginType, ...] = (NvidiaPlugin, X8664Plugin, Aarch64Plugin)
