"""The facts beyond conda's virtual packages: the ROCm runtime, each GPU, Intel's device IPs.

Called once by :func:`~variant_bridge.detect.detect_environment` after the virtual packages are
decided (semantics.md §3a-3c):

- the ROCm runtime (``amd :: rocm_version``), first found: ``--target rocm_version``; the AMD
  provider's ``AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION``; the environment's conda package
  (``rocm-core``, from conda-meta or pixi.lock); this machine's ROCm as the AMD provider reads it
  (``$ROCM_PATH/.info/version``, else ``/opt/rocm/.info/version``), only when this machine is
  the one described;
- each GPU, when several are declared (``--target cuda_arch=8.0,9.0``) or, for AMD, when KFD
  lists several on this machine;
- Intel's ``device_ip``, which no conda package describes: ``--target device_ip=...``, the Intel
  provider's own variable, or the installed Intel provider's answer (only on this machine).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from variant_bridge.detect.facts import Fact, rocm_override, target_rocm
from variant_bridge.environment import (
    DeclaredFeature,
    Environment,
    Source,
    SourceKind,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.mappings import MappingTables

__all__ = ["complete_devices"]


def complete_devices(
    env: Environment,
    *,
    declared: Mapping[str, str],
    decided: Mapping[str, Fact],
    variables: Mapping[str, str],
    measure: bool,
    tables: MappingTables,
    notes: list[str],
) -> Environment:
    """*env* with its ROCm runtime, its GPUs and its Intel device IPs.

    :param declared: the parsed ``--target`` items.
    :param decided: the declared virtual-package facts that won.
    :param measure: *env* describes this machine: its ROCm and GPUs may be read here.
    """
    return replace(
        env,
        rocm=_rocm(env, declared, variables, measure=measure, tables=tables, notes=notes),
        gpus=_gpus(env, decided, measure=measure, tables=tables),
        declared_features=_intel(declared, variables, measure=measure, tables=tables, notes=notes),
    )


def _rocm(
    env: Environment,
    declared: Mapping[str, str],
    variables: Mapping[str, str],
    *,
    measure: bool,
    tables: MappingTables,
    notes: list[str],
) -> Toolkit | None:
    amd = tables.amd
    in_env = next(
        (
            Toolkit(record.name, record.version, _package_source(env))
            for package in amd.runtime_packages
            if (record := env.conda_package(package)) is not None
        ),
        None,
    )
    chosen: Toolkit | None
    target = target_rocm(declared)
    forced = rocm_override(variables, tables=tables)
    if target is not None:
        chosen = Toolkit("rocm", target, Source.TARGET) if target else None
    elif forced is not None:
        chosen = Toolkit("rocm", forced, Source.override(amd.runtime_override)) if forced else None
    else:
        return in_env or (_machine_rocm(variables, tables) if measure else None)
    if in_env is not None:
        by = "--target rocm_version" if target is not None else amd.runtime_override
        instead = str(chosen) if chosen else "no ROCm"
        notes.append(f"{in_env} ({in_env.source}) overridden by {by}: {instead}")
    return chosen


def _package_source(env: Environment) -> Source:
    return Source.LOCKFILE if env.platform_source == Source.LOCKFILE else Source.PREFIX


def _machine_rocm(variables: Mapping[str, str], tables: MappingTables) -> Toolkit | None:
    from variant_bridge.detect.machine import rocm_version_file

    amd = tables.amd
    found = rocm_version_file(
        variables,
        root_variable=amd.root_variable,
        default_root=amd.default_root,
        version_file=amd.version_file,
    )
    if found is None:
        return None
    version, path = found
    return Toolkit("rocm", version, Source(SourceKind.DETECTED, path))


def _gpus(
    env: Environment, decided: Mapping[str, Fact], *, measure: bool, tables: MappingTables
) -> tuple[VirtualPackage, ...]:
    """Each GPU: the declared lists whose deciding value won, else (this machine, AMD) every GPU
    KFD lists beside the one rattler chose."""
    gpus: list[VirtualPackage] = []
    for name, fact in decided.items():
        vp = env.virtual_package(name)
        if fact.several and vp is not None and vp.source == fact.source:
            gpus += [VirtualPackage(name, v, "0", fact.source) for v in fact.several]
    arch = env.virtual_package(tables.amd.arch_package)
    if measure and arch is not None and arch.source == Source.DETECTED:
        from variant_bridge.detect.machine import amd_gpus
        from variant_bridge.gfx_archs import isa_text

        found = amd_gpus()
        if len({g.isa for g in found}) > 1:
            gpus += [
                VirtualPackage(arch.name, isa_text(g.isa), "0", Source.DETECTED) for g in found
            ]
    return tuple(gpus)


def _intel(
    declared: Mapping[str, str],
    variables: Mapping[str, str],
    *,
    measure: bool,
    tables: MappingTables,
    notes: list[str],
) -> tuple[DeclaredFeature, ...]:
    intel = tables.intel
    target = declared.get(intel.target)
    forced = variables.get(intel.provider_override, "").strip()
    if target:
        values, source = tuple(target.split(",")), Source.TARGET
    elif forced:
        values, source = (forced,), Source.override(intel.provider_override)
    elif measure:
        answered = _intel_provider(intel.plugin_api, intel.feature, notes)
        if not answered:
            return ()
        values, source = answered, Source(SourceKind.PROVIDER, intel.plugin_api)
    else:
        return ()
    return (DeclaredFeature(intel.namespace, intel.feature, values, source),)


def _intel_provider(plugin_api: str, feature: str, notes: list[str]) -> tuple[str, ...]:
    """What the installed Intel provider answers for *feature* (``()`` when it is not installed
    or answers nothing). It probes Level Zero in this process, as installers run it."""
    import importlib.util  # lazy: only when this machine is measured

    module_name, _, class_name = plugin_api.partition(":")
    try:
        if importlib.util.find_spec(module_name.split(".")[0]) is None:
            return ()
        module = importlib.import_module(module_name)
        configs = getattr(module, class_name).get_supported_configs()
    except Exception as e:  # a broken provider must not break detection: say so
        notes.append(f"the Intel provider ({plugin_api}) failed: {type(e).__name__}: {e}")
        return ()
    for config in configs:
        if getattr(config, "name", None) == feature:
            return tuple(str(v) for v in getattr(config, "values", ()))
    return ()
