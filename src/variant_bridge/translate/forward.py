"""Forward: an environment -> the properties it supports, most preferred first.

An :class:`~variant_bridge.environment.Environment` (its virtual packages and solved toolkit)
becomes ordered supported properties per namespace, shaped exactly like the variant providers'
answers, so ranking agrees with uv for the same inputs (semantics.md §3-5). The CUDA policy is
decided here, once. What each namespace was derived from is recorded in the result, for
:func:`~variant_bridge.translate.explain_unsupported`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from types import MappingProxyType

from variant_bridge._patterns import Lazy
from variant_bridge.environment import (
    CUDA_POLICIES,
    CudaPolicy,
    Environment,
    SourceKind,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.errors import InvalidTarget, quote
from variant_bridge.mappings import CpuTable, MappingTables, NvidiaFeature, NvidiaTable, load_tables
from variant_bridge.translate import cuda, microarchitectures
from variant_bridge.translate._words import toolkit_text, vp_text
from variant_bridge.translate.amd import AmdOut, forward_amd, forward_intel
from variant_bridge.translate.supported import (
    AbiBasis,
    Basis,
    Bound,
    CpuBasis,
    EveryGpu,
    Limit,
    NvidiaBasis,
    NvidiaValue,
    SupportedFeature,
    SupportedProperties,
)

__all__ = ["supported_properties"]


def supported_properties(
    env: Environment,
    *,
    policy: CudaPolicy | None = None,
    tables: MappingTables | None = None,
) -> SupportedProperties:
    """The properties *env* supports, most preferred first (semantics.md §3-5).

    :param policy: ``toolkit`` or ``driver``; ``None``: :meth:`Environment.default_policy`. The
        result records the policy it was derived with.
    :raises InvalidTarget: on an unknown policy.
    """
    if policy is None:
        policy = env.default_policy()
    elif policy not in CUDA_POLICIES:
        raise InvalidTarget(f"unknown CUDA policy {policy!r}: expected 'toolkit' or 'driver'")
    tables = tables if tables is not None else load_tables()
    # No cache of whole results: hashing an Environment costs about as much as computing.
    out = _Collected()
    _nvidia(env, policy, tables.nvidia, out)
    _amd(env, tables, out)
    for cpu in tables.cpus:
        _cpu(env, cpu, tables, out)
    _abi(env, tables, out)
    _intel(env, tables, out)
    return SupportedProperties(
        tuple(out.features),
        tuple(out.unsupported),
        tuple(out.notes),
        policy,
        MappingProxyType(out.bases),
        tuple(out.every_gpu),
    )


class _Collected:
    """What the providers' passes collect (a plain slotted class: a dataclass would compile its
    methods at import)."""

    __slots__ = ("bases", "every_gpu", "features", "notes", "unsupported")

    def __init__(self) -> None:
        self.features: list[SupportedFeature] = []
        self.unsupported: list[tuple[str, str]] = []
        self.notes: list[str] = []
        self.bases: dict[str, Basis] = {}
        self.every_gpu: list[EveryGpu] = []


def _admitted(
    values: Iterable[tuple[str, NvidiaValue]], bounds: Sequence[Bound]
) -> tuple[str, ...]:
    return tuple(text for text, value in values if all(b.admits(value) for b in bounds))


@functools.lru_cache(maxsize=256)
def _cuda_values(
    table: NvidiaTable, feature: NvidiaFeature, bounds: tuple[Bound, ...]
) -> tuple[str, ...]:
    """The provider's values of *feature* that every bound admits (a pure function of frozen
    values: cached, the same few drivers and toolkits come back)."""
    return _admitted(cuda.vocabulary(table, feature), bounds)


# -- nvidia ------------------------------------------------------------------------------------


def _nvidia(env: Environment, policy: CudaPolicy, table: NvidiaTable, out: _Collected) -> None:
    driver = env.virtual_package(table.driver_package)
    d = _driver(table, driver)
    if isinstance(d, str) or driver is None:
        out.unsupported.append((table.namespace, str(d)))
        return
    toolkit = env.toolkit
    t = cuda.major_minor(toolkit.version) if toolkit is not None else None
    if policy == "toolkit" and t is None:
        if toolkit is not None:
            out.notes.append(
                f"toolkit policy: cannot read the version of {toolkit}; using the driver policy"
            )
        policy = "driver"
    source = vp_text(driver)
    if toolkit is not None and t is not None:
        if policy == "toolkit":
            source += f", {toolkit.package}={toolkit.version} ({toolkit.source})"
        else:
            source += f"; {toolkit.package}={toolkit.version} ignored (driver policy)"
    used = toolkit if policy == "toolkit" and t is not None else None
    bounds: dict[str, tuple[Bound, ...]] = {}
    for feature in table.features:
        if feature.rule == "sm_arch":
            bounds[feature.name] = _sm_arch(env, table, feature, out)
        else:
            driver_bound = Bound(_DRIVER_LIMITS[feature.rule], d, driver)
            bounds[feature.name] = _cuda_bounds(feature, driver_bound, used)
            _cuda_feature(table, feature, bounds[feature.name], source=source, out=out)
    out.bases[table.namespace] = NvidiaBasis(MappingProxyType(bounds))


_DRIVER_LIMITS = {"cuda_lower_bound": Limit.DRIVER_AT_LEAST, "cuda_upper_bound": Limit.DRIVER_BELOW}


def _driver(table: NvidiaTable, driver: VirtualPackage | None) -> tuple[int, int] | str:
    """The driver's CUDA ``major.minor``, or why the namespace is unsupported."""
    if driver is None:
        variable = table.override(table.driver_package).conda
        return f"no {table.driver_package}: no NVIDIA driver (or {variable} is empty)"
    d = cuda.major_minor(driver.version)
    if d is None:
        return f"{table.driver_package} version {quote(driver.version)} is not a CUDA version"
    low = (table.driver_majors.low, table.driver_minors.low)
    high = (table.driver_majors.high, table.driver_minors.high)
    if not low <= d <= high:
        return (
            f"{vp_text(driver)} is outside {cuda.fmt(low)} .. {cuda.fmt(high)}, the driver "
            "versions the NVIDIA provider knows"
        )
    return d


def _cuda_bounds(
    feature: NvidiaFeature, driver: Bound, toolkit: Toolkit | None
) -> tuple[Bound, ...]:
    """The driver's bound, and the toolkit's (under the toolkit policy)."""
    t = cuda.major_minor(toolkit.version) if toolkit is not None else None
    if toolkit is None or t is None:
        return (driver,)
    if feature.rule == "cuda_lower_bound":
        return (
            driver,
            Bound(Limit.TOOLKIT_MAJOR, t, toolkit),
            Bound(Limit.TOOLKIT_AT_LEAST, t, toolkit),
        )
    return (driver, Bound(Limit.TOOLKIT_BELOW, t, toolkit))


def _cuda_feature(
    table: NvidiaTable,
    feature: NvidiaFeature,
    bounds: tuple[Bound, ...],
    *,
    source: str,
    out: _Collected,
) -> None:
    """The provider's values of a CUDA bound feature that every bound admits."""
    values = _cuda_values(table, feature, bounds)
    toolkit = bounds[-1].fact
    if isinstance(toolkit, Toolkit):
        dropped = len(_cuda_values(table, feature, bounds[:1])) - len(values)
        if dropped:
            out.notes.append(
                f"toolkit policy: {dropped} {feature.name} value(s) the driver allows were "
                f"dropped because {toolkit_text(toolkit)}"
            )
    if values:
        out.features.append(SupportedFeature(table.namespace, feature.name, values, source))
    else:
        out.notes.append(
            f"no {feature.name} value satisfies {source}: wheels that set it are not supported"
        )


def _sm_arch(
    env: Environment, table: NvidiaTable, feature: NvidiaFeature, out: _Collected
) -> tuple[Bound, ...]:
    arch = env.virtual_package(table.arch_package)
    if arch is None:
        out.notes.append(
            f"no {table.arch_package}: GPU architecture unknown, wheels that set "
            f"{table.namespace} :: {feature.name} are not supported"
        )
        return (Bound(Limit.NO_GPU),)
    a = cuda.major_minor(arch.version)
    if a is None:
        out.notes.append(f"{vp_text(arch)} is not a compute capability; {feature.name} omitted")
        return (Bound(Limit.GPU_UNREADABLE, fact=arch),)
    if a < table.lowest_arch:
        out.notes.append(
            f"{vp_text(arch)} is below {cuda.fmt(table.lowest_arch)}, the lowest compute "
            f"capability the NVIDIA provider ranks; {feature.name} omitted"
        )
        return (Bound(Limit.GPU_TOO_OLD, table.lowest_arch, arch),)
    bounds = tuple(Bound(limit, a, arch) for limit in _GPU_LIMITS)
    values = _admitted(cuda.gpu_generation(a[0]), bounds)
    if env.gpus_of(table.arch_package) and arch.source.kind is SourceKind.TARGET:
        values, every = _several_gpus(env, table, feature)
        out.every_gpu.append(every)
        out.notes.append(
            f"{feature.name}: every GPU of {every.declared} must run the wheel, so a variant is "
            f"chosen only if its {feature.name} list has code for each; conda's "
            f"{arch.name} is the lowest, {arch.version}"
        )
        source = ", ".join(gpu for gpu, _ in every.gpus) + f" ({arch.source})"
        out.features.append(SupportedFeature(table.namespace, feature.name, values, source))
        return bounds
    out.features.append(SupportedFeature(table.namespace, feature.name, values, vp_text(arch)))
    if not arch.source.declared:
        out.notes.append(
            f"{feature.name} follows {arch.name}={arch.version}, the LOWEST compute capability "
            "of this machine's GPUs (conda's rule); the NVIDIA provider reads every GPU and uses "
            "the HIGHEST, so with GPUs of different generations it would differ; to choose a "
            "wheel with code for every GPU, declare them: --target "
            f"{table.arch_package[2:]}={arch.version},<the others>"
        )
    return bounds


_GPU_LIMITS = (Limit.GPU_AT_LEAST, Limit.GPU_GENERATION, Limit.GPU_PTX)


def _sm_arch_values(table: NvidiaTable, arch: VirtualPackage) -> tuple[str, ...]:
    """The provider's sm_arch list for one GPU (none below the lowest it ranks)."""
    a = cuda.major_minor(arch.version)
    if a is None or a < table.lowest_arch:
        return ()
    return _admitted(cuda.gpu_generation(a[0]), tuple(Bound(x, a, arch) for x in _GPU_LIMITS))


def _several_gpus(
    env: Environment, table: NvidiaTable, feature: NvidiaFeature
) -> tuple[tuple[str, ...], EveryGpu]:
    """With several GPUs declared (``--target cuda_arch=8.0,9.0``): the values of every GPU,
    the highest first (the provider's preference), and the rule that each GPU must have code."""
    gpus = sorted(
        env.gpus_of(table.arch_package),
        key=lambda g: cuda.major_minor(g.version) or (0, 0),
        reverse=True,
    )
    per_gpu = [(f"{g.name}={g.version}", _sm_arch_values(table, g)) for g in gpus]
    values = tuple(dict.fromkeys(v for _, runs in per_gpu for v in runs))
    declared = f"--target {table.arch_package[2:]}=" + ",".join(g.version for g in gpus)
    return values, EveryGpu(table.namespace, feature.name, tuple(per_gpu), declared)


# -- amd, intel ----------------------------------------------------------------------------------


def _amd(env: Environment, tables: MappingTables, out: _Collected) -> None:
    amd = AmdOut()
    forward_amd(env, tables.amd, amd)
    out.features += amd.features
    out.unsupported += amd.unsupported
    out.notes += amd.notes
    out.every_gpu += amd.every_gpu
    if amd.basis is not None:
        out.bases[tables.amd.namespace] = amd.basis


def _intel(env: Environment, tables: MappingTables, out: _Collected) -> None:
    found = forward_intel(env, tables.intel)
    if isinstance(found, str):
        out.unsupported.append((tables.intel.namespace, found))
    else:
        out.features.append(found)


# -- CPU namespaces ----------------------------------------------------------------------------


def _cpu(env: Environment, table: CpuTable, tables: MappingTables, out: _Collected) -> None:
    reason = _cpu_platform_problem(env.platform, table, tables)
    vp = env.virtual_package(table.virtual_package)
    if reason is None and vp is None:
        reason = (
            f"no {table.virtual_package}: the CPU microarchitecture is unknown "
            f"(or {table.overrides[0].conda} is empty)"
        )
    if reason is not None or vp is None:
        out.unsupported.append((table.namespace, reason or "no microarchitecture"))
        return
    profile = microarchitectures.profile(table, vp.build)
    if isinstance(profile, str):
        out.unsupported.append((table.namespace, f"{vp_text(vp, build=True)}: {profile}"))
        return
    source = f"{vp_text(vp, build=True)}, archspec {microarchitectures.archspec_version()}"
    if profile.generations:
        out.features.append(
            SupportedFeature(table.namespace, table.generation_feature, profile.generations, source)
        )
    out.features.extend(
        SupportedFeature(table.namespace, flag, (table.flag_value,), source)
        for flag in profile.flags
    )
    out.bases[table.namespace] = CpuBasis(vp)


def _cpu_platform_problem(platform: str, table: CpuTable, tables: MappingTables) -> str | None:
    info = tables.platform.subdirs.get(platform)
    if info is None:
        return f"unknown platform {platform!r}: no CPU namespace for it"
    if info.cpu_family == table.archspec_family:
        return None
    if info.cpu_family is None:
        return f"platform {platform} has no CPU variant namespace"
    return f"platform {platform} has an {info.cpu_family} CPU, not {table.archspec_family}"


# -- abi_dependency ----------------------------------------------------------------------------


def _abi(env: Environment, tables: MappingTables, out: _Collected) -> None:
    """variantlib's rule: a distribution installed supports X, X.Y, X.Y.Z, least specific first."""
    namespace = tables.names.abi_namespace
    installed = _installed_distributions(env, tables)
    for feature in sorted(installed):
        version, source = installed[feature]
        values = _release_prefixes(version)
        if values:
            out.features.append(SupportedFeature(namespace, feature, values, source))
    out.bases[namespace] = AbiBasis(
        MappingProxyType({feature: source for feature, (_, source) in installed.items()})
    )


def _installed_distributions(env: Environment, tables: MappingTables) -> dict[str, tuple[str, str]]:
    """``{feature name: (version, source)}``: PyPI dists, plus conda packages via names.yaml."""
    found: dict[str, tuple[str, str]] = {}
    t = cuda.major_minor(env.toolkit.version) if env.toolkit is not None else None
    for record in env.conda_packages:
        for mapping in tables.names.pypi_for_conda(record.name):
            if mapping.cuda_major is not None and (t is None or t[0] != mapping.cuda_major):
                continue  # cupy / libcublas: only the PyPI name of the toolkit's CUDA major
            found.setdefault(
                abi_feature(mapping.pypi),
                (record.version, f"{record.name} {record.version} (conda package)"),
            )
    for dist in env.python_packages:  # what Python imports wins over the conda record
        found[abi_feature(dist.name)] = (dist.version, f"{dist.name} {dist.version} (PyPI)")
    return found


def abi_feature(name: str) -> str:
    """The ``abi_dependency`` feature of a PyPI name (``jax-cuda12-plugin`` ->
    ``jax_cuda12_plugin``)."""
    from packaging.utils import canonicalize_name  # lazy: packaging costs ~10 ms to import

    return canonicalize_name(name).replace("-", "_")


# The release numbers of a version (a PEP 440 one, or the leading numbers of any other), of at
# most 18 digits: rattler's version numbers are 64-bit, and int() never sees a longer number.
_RELEASE_RE = Lazy(r"\s*[vV]?(?:[0-9]+!)?(?P<release>[0-9]+(?:\.[0-9]+)*)")
_MAX_RELEASE_DIGITS = 18


def _release_prefixes(version: str) -> tuple[str, ...]:
    """``2.9.1.post1`` -> ``2, 2.9, 2.9.1``; a number past 18 digits ends the list."""
    match = _RELEASE_RE.match(version)
    if match is None:
        return ()
    parts: list[str] = []
    for number in match["release"].split(".")[:3]:
        if len(number) > _MAX_RELEASE_DIGITS:
            break
        parts.append(str(int(number)))
    return tuple(".".join(parts[: i + 1]) for i in range(len(parts)))
