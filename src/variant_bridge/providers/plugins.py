"""Variant provider plugins for the ``nvidia``, ``amd``, ``x86_64`` and ``aarch64`` namespaces.

They implement variantlib's plugin protocol (:mod:`variant_bridge.providers.protocol`) and
answer from the *bridged view* of the active environment instead of probing hardware on their own:
``$CONDA_PREFIX`` (its solved ``cuda-version``), ``CONDA_OVERRIDE_*``, the NVIDIA provider's
``NV_VARIANT_PROVIDER_FORCE_*`` and this machine, exactly as ``variant-bridge detect`` sees them
(semantics.md §2-4). So a variant-aware installer run inside a conda or pixi environment ranks
wheels as ``variant-bridge select`` does.

Use them from a variant metadata file (``providers.nvidia.plugin-api``, see :func:`plugin_apis`)
or through the ``variant_plugins`` entry points (entry name = namespace). The plugin classes share
one :class:`BridgedView`, which holds the answers computed so far.

A plugin never crashes the installer that calls it: when the environment cannot be read (a
``CONDA_PREFIX`` that is not a prefix), no namespace supports anything, so the null or
non-variant wheel wins, and one line per namespace saying why goes to stderr. An invalid
override variable switches off only the namespaces it speaks for (``CONDA_OVERRIDE_CUDA=abc``:
``nvidia``, with that line naming it); the others answer as if it were not set.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from variant_bridge.mappings import AmdTable, CpuTable, MappingTables, NvidiaTable
    from variant_bridge.providers.protocol import FeatureConfigType, PluginType
    from variant_bridge.translate.supported import SupportedProperties

__all__ = [
    "NAMESPACES",  # noqa: F822 - the tables' namespaces, resolved by __getattr__
    "PLUGIN_APIS",  # noqa: F822 - likewise
    "Aarch64Plugin",
    "AmdPlugin",
    "BridgedView",
    "FeatureConfig",
    "NvidiaPlugin",
    "X8664Plugin",
    "plugin_apis",
]

_PREFIX_VARIABLE = "CONDA_PREFIX"
# Answers kept per distinct set of relevant variables (a process rarely sees more than one).
_MAX_VIEWS = 8


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


@dataclass(frozen=True, slots=True)
class _View:
    """The bridged view for one set of variables: what is supported, and the namespaces an
    invalid variable switched off (namespace -> why; ``*``: every namespace)."""

    supported: SupportedProperties | None
    off: Mapping[str, str]

    def why_off(self, namespace: str) -> str | None:
        return self.off.get(namespace, self.off.get("*"))


class BridgedView:
    """What the active environment supports, as the plugins answer it.

    The bridged view is computed once per distinct set of the variables that change it
    (``CONDA_PREFIX`` and the tables' override variables), and a failure to read the
    environment is reported once per namespace and reason: both are kept on this object. An
    invalid override variable switches off only the namespaces it speaks for
    (``CONDA_OVERRIDE_CUDA=abc``: ``nvidia``; ``CONDA_OVERRIDE_ARCHSPEC=x``: the CPU ones),
    each saying so; the others answer from the remaining variables.
    """

    def __init__(self, tables: MappingTables | None = None) -> None:
        self._tables = tables
        self._views: dict[tuple[tuple[str, str], ...], _View] = {}
        self._reported: set[tuple[str, str]] = set()

    @property
    def tables(self) -> MappingTables:
        if self._tables is None:
            from variant_bridge.mappings import load_tables

            self._tables = load_tables()
        return self._tables

    def _namespaces_of(self) -> dict[str, tuple[str, ...]]:
        """Override variable -> the namespaces it speaks for (a variable missing here, such as
        ``CONDA_OVERRIDE_GLIBC`` or ``CONDA_PREFIX``, speaks for the whole environment)."""
        tables = self.tables
        nvidia, amd = tables.nvidia, tables.amd
        cpus = tuple(t.namespace for t in tables.cpus)
        by_package = {
            nvidia.driver_package: (nvidia.namespace,),
            nvidia.arch_package: (nvidia.namespace,),
            amd.driver_package: (amd.namespace,),
            amd.arch_package: (amd.namespace,),
            "__archspec": cpus,
        }
        found: dict[str, tuple[str, ...]] = {
            amd.runtime_override: (amd.namespace,),
            amd.root_variable: (amd.namespace,),
            tables.intel.provider_override: (),
        }
        for override in tables.overrides:
            namespaces = by_package.get(override.virtual_package)
            if namespaces is not None:
                for name in (override.conda, override.provider):
                    if name is not None:
                        found[name] = namespaces
        return found

    def _relevant(self, environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        names = {_PREFIX_VARIABLE, *self._namespaces_of()}
        for override in self.tables.overrides:
            names |= {override.conda, override.provider or override.conda}
        return tuple(sorted((k, v) for k, v in environ.items() if k in names))

    def _view(self, environ: Mapping[str, str]) -> _View:
        """The supported properties for *environ*, and what could not be computed."""
        key = self._relevant(environ)
        if key not in self._views:
            if len(self._views) >= _MAX_VIEWS:
                del self._views[next(iter(self._views))]
            self._views[key] = self._compute(dict(key))
        return self._views[key]

    def _supported(self, variables: Mapping[str, str]) -> SupportedProperties | str:
        from variant_bridge.detect import detect_environment
        from variant_bridge.errors import VariantBridgeError
        from variant_bridge.translate import supported_properties

        try:
            env = detect_environment(env=dict(variables))
            # policy None: toolkit whenever the prefix has a solved cuda-version (semantics.md §3).
            return supported_properties(env, tables=self.tables)
        except VariantBridgeError as e:
            return str(e) or type(e).__name__
        except (
            Exception
        ) as e:  # an installer must never die of our detection: report, answer nothing
            return f"unexpected {type(e).__name__}: {e}"

    def _compute(self, variables: dict[str, str]) -> _View:
        supported = self._supported(variables)
        if not isinstance(supported, str):
            return _View(supported, {})
        # Which variables are invalid on their own, and whom they speak for.
        speaks_for = self._namespaces_of()
        off: dict[str, str] = {}
        bad: set[str] = set()
        for name, text in variables.items():
            if name not in speaks_for:
                continue
            alone = self._supported({name: text})
            if isinstance(alone, str):
                bad.add(name)
                for namespace in speaks_for[name] or ("*",):
                    off.setdefault(namespace, alone)
        if not bad or "*" in off:
            return _View(None, {"*": supported})
        rest = self._supported({k: v for k, v in variables.items() if k not in bad})
        if isinstance(rest, str):
            return _View(None, {"*": supported})
        return _View(rest, off)

    def supported_configs(
        self, namespace: str, *, environ: Mapping[str, str] | None = None
    ) -> list[FeatureConfig]:
        """What the active environment supports in *namespace*, most preferred first.

        :param environ: the process environment to read ``CONDA_PREFIX`` and the override
            variables from; ``None``: :data:`os.environ`.
        :returns: an empty list when the namespace is unsupported or the environment (or a
            variable speaking for the namespace) cannot be read (then one ``variant-bridge
            provider {namespace}: ...`` line goes to stderr).
        """
        view = self._view(os.environ if environ is None else environ)
        why = view.why_off(namespace)
        if why is not None or view.supported is None:
            why = why or "the environment cannot be read"
            if (namespace, why) not in self._reported:
                self._reported.add((namespace, why))
                print(
                    f"variant-bridge provider {namespace}: {why}; no {namespace} variant is "
                    "supported, so the null or non-variant wheel wins",
                    file=sys.stderr,
                )
            return []
        return [
            FeatureConfig(f.feature, f.values, _multi_value(self.tables, namespace, f.feature))
            for f in view.supported.features
            if f.namespace == namespace and f.values
        ]

    def all_configs(self, namespace: str) -> list[FeatureConfig]:
        """Every valid feature and value of *namespace*, from the mapping tables and archspec.

        :raises ValueError: for a namespace these plugins do not provide.
        """
        if namespace == self.tables.nvidia.namespace:
            return _nvidia_all(self.tables.nvidia)
        if namespace == self.tables.amd.namespace:
            return _amd_all(self.tables.amd)
        cpu = self.tables.cpu(namespace)
        if cpu is None:
            raise ValueError(f"no variant-bridge plugin for namespace {namespace!r}")
        return _cpu_all(cpu)


def _multi_value(tables: MappingTables, namespace: str, feature: str) -> bool:
    for table in (tables.nvidia, tables.amd):
        spec = table.feature(feature) if namespace == table.namespace else None
        if spec is not None:
            return spec.multi_value
    return False


def _amd_all(table: AmdTable) -> list[FeatureConfig]:
    """The AMD provider's vocabulary: its gfx names, its ROCm versions (``get_all_configs``)."""
    values = {"gfx_arch": table.known_gfx, "rocm_version": table.runtime_versions}
    return [FeatureConfig(f.name, values[f.rule], f.multi_value) for f in table.features]


def _nvidia_all(table: NvidiaTable) -> list[FeatureConfig]:
    from variant_bridge.translate.cuda import vocabulary

    return [
        FeatureConfig(
            feature.name,
            tuple(text for text, _ in vocabulary(table, feature)),
            feature.multi_value,
        )
        for feature in table.features
    ]


def _cpu_all(table: CpuTable) -> list[FeatureConfig]:
    from variant_bridge.translate.microarchitectures import flag_features, generation_values

    generations = generation_values(table)
    configs = [FeatureConfig(table.generation_feature, generations)] if generations else []
    return configs + [FeatureConfig(flag, (table.flag_value,)) for flag in flag_features(table)]


class _BridgePlugin:
    """Shared behaviour; subclasses name their namespace. Every method is a class method, so the
    class itself is the plugin object variantlib loads (``module:Class``)."""

    namespace: ClassVar[str]
    all_properties_compatible: ClassVar[bool] = False  # the answer depends on the machine
    view: ClassVar[BridgedView] = BridgedView()

    @classmethod
    def get_all_configs(cls) -> list[FeatureConfigType]:
        return list(cls.view.all_configs(cls.namespace))

    @classmethod
    def get_supported_configs(cls) -> list[FeatureConfigType]:
        return list(cls.view.supported_configs(cls.namespace))


class NvidiaPlugin(_BridgePlugin):
    """``nvidia``: CUDA driver/toolkit bounds and GPU architecture from ``__cuda``,
    ``__cuda_arch`` and the solved ``cuda-version``."""

    namespace = "nvidia"


class AmdPlugin(_BridgePlugin):
    """``amd``: GPU architecture from ``__amdgpu_arch`` and the ROCm runtime (``rocm-core``, or
    this machine's ROCm)."""

    namespace = "amd"


class X8664Plugin(_BridgePlugin):
    """``x86_64``: microarchitecture level and CPU flags from ``__archspec``."""

    namespace = "x86_64"


class Aarch64Plugin(_BridgePlugin):
    """``aarch64``: architecture version and CPU flags from ``__archspec``."""

    namespace = "aarch64"


_PLUGINS: tuple[type[_BridgePlugin], ...] = (NvidiaPlugin, AmdPlugin, X8664Plugin, Aarch64Plugin)


def plugin_apis(tables: MappingTables | None = None) -> dict[str, str]:
    """``providers.{namespace}.plugin-api`` values (also the ``variant_plugins`` entry points),
    for the namespaces of the tables that these plugins answer (nvidia and the CPU tables)."""
    if tables is None:
        from variant_bridge.mappings import load_tables

        tables = load_tables()
    by_namespace = {plugin.namespace: plugin for plugin in _PLUGINS}
    namespaces = (
        tables.nvidia.namespace,
        tables.amd.namespace,
        *(t.namespace for t in tables.cpus),
    )
    return {ns: f"{__name__}:{by_namespace[ns].__name__}" for ns in namespaces}


def __getattr__(name: str) -> object:
    if name == "PLUGIN_APIS":
        return plugin_apis()
    if name == "NAMESPACES":
        return tuple(plugin_apis())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    # The classes themselves are the plugin objects: let the type checker verify the protocol.
    _CHECK: tuple[PluginType, ...] = (NvidiaPlugin, AmdPlugin, X8664Plugin, Aarch64Plugin)
