"""Declared facts: ``--target K=V``, ``CONDA_OVERRIDE_*`` and the provider's ``NV_*`` variables.

A *fact* is one virtual package (``cuda`` -> ``__cuda``) or one property of the target
(``platform``, ``python``). Which virtual packages can be declared, and the variables that declare
them, come from the mapping tables' ``overrides`` (semantics.md §1-2). Values are checked here, in
pure Python, with the shapes of :mod:`variant_bridge.virtual_packages` that ``translate
--from-conda`` uses too: rattler accepts nonsense such as ``CONDA_OVERRIDE_CUDA=abc`` and fails on
``١٢.٨`` or numbers past 64 bits with a message that blames detection.

``--target cuda_arch=8.0,9.0`` (and ``amdgpu_arch=gfx942,gfx90a``) declares several GPUs: the
fact's value is the one conda's virtual package takes (the lowest compute capability; for AMD the
first listed, as rattler takes the GPU with the most compute units), and :attr:`Fact.several`
keeps them all, so a choice can be asked to run on every GPU (docs/clusters.md). The AMD keys
take gfx names too (``gfx942`` is ``9.4.2``). ``rocm_version`` declares the ROCm runtime and
``device_ip`` Intel's GPU IPs, which no conda package describes.

An empty ``--target`` or ``CONDA_OVERRIDE_*`` value declares the virtual package *absent* (CEP 30);
an empty provider variable is *unset*, as in the provider (which tests its truthiness), and
``none`` declares the package absent. The provider's GPU variable also takes the CMake spelling
(``90``, ``120``). For ``platform`` and ``python`` an empty value means "not declared".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from variant_bridge import _archspec
from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.environment import Source
from variant_bridge.errors import InvalidTarget, quote
from variant_bridge.gfx_archs import isa_of, isa_text, parse_isa
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.virtual_packages import (
    TOOLKIT_SHAPE,
    VERSION_SHAPES,
    check_platform,
    did_you_mean,
)

__all__ = [
    "Fact",
    "amd_provider_facts",
    "check_value",
    "conda_override_facts",
    "fact_virtual_package",
    "normalize_sm_arch",
    "parse_targets",
    "provider_override_facts",
    "rocm_override",
    "rocm_version_shape",
    "target_facts",
    "target_keys",
    "target_rocm",
    "target_toolkit",
]

# pixi's friendly spellings of two keys.
_KEY_ALIASES = {"macos": "osx", "windows": "win"}
_PYTHON = Lazy(r"[0-9]{1,4}\.[0-9]{1,4}(?:\.[0-9]{1,4})?", re.ASCII)
_PYTHON_EXPECTED = "a Python version like 3.12"
_ARCHSPEC_EXPECTED = "an archspec microarchitecture name like haswell, or 0 for unknown"
# ASCII only: `\d` would take `٩٠` and hand rattler a version it cannot parse.
_CMAKE_ARCH = Lazy(r"([0-9]{1,2})([0-9])", re.ASCII)
# What `variant-bridge env` writes for "no CUDA": uv's provider rejects the value and switches
# itself off, so reading it as "absent" keeps the bridge and uv agreeing.
_PROVIDER_NONE = "none"


@value
class Fact:
    """One declared fact about a virtual package.

    :param name: the virtual package, e.g. ``__cuda``.
    :param value: its version (the *build* for ``__archspec``), or ``None`` when declared absent.
    :param source: where it was declared: ``--target``, or the variable.
    :param raw: the text as the user wrote it (for messages).
    """

    name: str
    value: str | None
    source: Source
    raw: str = ""
    several: tuple[str, ...] = ()
    """Every GPU's value when several were declared (``--target cuda_arch=8.0,9.0``), the
    deciding one included; empty for one value."""


def _virtual_packages(tables: MappingTables) -> dict[str, str]:
    """Fact key -> virtual package (``cuda`` -> ``__cuda``): those the tables can override, in
    the order ``detect`` documents them."""
    return {o.virtual_package.removeprefix("__"): o.virtual_package for o in tables.overrides}


def _toolkit_keys(tables: MappingTables) -> dict[str, str]:
    """Fact key -> toolkit package (``cuda_version`` -> ``cuda-version``, ``cudatoolkit``)."""
    return {name.replace("-", "_"): name for name in tables.nvidia.toolkit_packages}


_ROCM_KEY = "rocm_version"
_ROCM = Lazy(r"[0-9]{1,4}\.[0-9]{1,4}(?:\.[0-9]{1,6})?", re.ASCII)
_ROCM_EXPECTED = "a ROCm version like 6.4 or 6.4.3"
_DEVICE_IP = Lazy(r"[0-9]{1,4}(?:\.[0-9]{1,4}){2}", re.ASCII)
_DEVICE_IP_EXPECTED = "Intel GPU device IPs like 20.1.0 (comma-separated)"
# Keys that declare several GPUs at once, and the virtual package each one sets.
_SEVERAL = {"cuda_arch": "__cuda_arch", "amdgpu_arch": "__amdgpu_arch"}


def _rocm_value(text: str, where: str, original: str) -> str:
    if rocm_version_shape(text):
        return text
    raise InvalidTarget(f"{where}={quote(original)}: expected {_ROCM_EXPECTED}")


def _device_ips(text: str, where: str, original: str) -> str:
    ips = [ip.strip() for ip in text.split(",")]
    if all(_DEVICE_IP.fullmatch(ip) for ip in ips):
        return ",".join(dict.fromkeys(ips))
    raise InvalidTarget(f"{where}={quote(original)}: expected {_DEVICE_IP_EXPECTED}")


# Facts that are no virtual package: the ROCm runtime, Intel's device IPs.
_OTHER_SHAPES = {_ROCM_KEY: _rocm_value, "device_ip": _device_ips}


def rocm_version_shape(text: str) -> bool:
    """Whether *text* is a ROCm version (``6.4``, ``6.4.3``)."""
    return _ROCM.fullmatch(text) is not None


def target_keys(tables: MappingTables | None = None) -> tuple[str, ...]:
    """The ``--target`` keys: the virtual packages, the toolkit packages (``cuda_version``),
    the ROCm runtime and Intel's device IPs, then ``platform`` and ``python``."""
    tables = tables or load_tables()
    extra = (_ROCM_KEY, tables.intel.target)
    return (*_virtual_packages(tables), *_toolkit_keys(tables), *extra, "platform", "python")


def fact_virtual_package(fact: Fact) -> tuple[str, str, str]:
    """``(name, version, build)`` of a present fact (``__archspec`` carries its value as build)."""
    assert fact.value is not None
    if fact.name == "__archspec":
        return (fact.name, "1", fact.value)
    return (fact.name, fact.value, "0")


def check_value(name: str, value: str, *, where: str, empty_hint: bool = False) -> str:
    """Check *value* for virtual package *name* (``__cuda``), or ``platform`` / ``python``;
    return it stripped (``""`` stays ``""``: absent).

    :param where: how the user wrote the key, e.g. ``--target cuda`` or ``CONDA_OVERRIDE_CUDA``.
    :param empty_hint: mention that an empty value declares the package absent.
    :raises InvalidTarget: one line, e.g.
        ``--target cuda='abc': expected a CUDA version like 12.8``.
    """
    text = value.strip()
    if not text:
        return ""
    if name == "__archspec":
        return _check_archspec(text, where=where, original=value)
    if name == "platform":
        return check_platform(value, where=where)
    if name == "python":
        if _PYTHON.fullmatch(text):
            return text
        raise InvalidTarget(f"{where}={quote(value)}: expected {_PYTHON_EXPECTED}")
    if name == "toolkit":
        if TOOLKIT_SHAPE.matches(text):
            return text
        raise InvalidTarget(f"{where}={quote(value)}: expected {TOOLKIT_SHAPE.expected}")
    if name in _OTHER_SHAPES:
        return _OTHER_SHAPES[name](text, where, value)
    shape = VERSION_SHAPES[name]
    if shape.matches(text):
        return text
    hint = f" (or empty to declare no {shape.noun})" if empty_hint else ""
    raise InvalidTarget(f"{where}={quote(value)}: expected {shape.expected}{hint}")


def _check_archspec(text: str, *, where: str, original: str) -> str:
    if text == "0":  # CEP 30: only the platform's architecture is known
        return text
    names = _archspec.families()
    if text in names:
        return text
    fixed = text.replace("-", "_").lower()
    suggestion = f" (did you mean {fixed!r}?)" if fixed in names else did_you_mean(text, names)
    raise InvalidTarget(f"{where}={quote(original)}: expected {_ARCHSPEC_EXPECTED}{suggestion}")


def parse_targets(
    items: Mapping[str, str] | Iterable[str], *, tables: MappingTables | None = None
) -> dict[str, str]:
    """Parse and check ``--target K=V`` items (or a mapping) into ``{key: value}``.

    Keys are canonical (:func:`target_keys`; ``macos``, ``windows`` and ``__cuda``-style names
    are accepted as aliases). A virtual-package key with an empty value is kept with value ``""``:
    it declares the package absent. ``platform`` and ``python`` with an empty value are dropped.

    :raises InvalidTarget: malformed item, unknown key, invalid value, or one key given twice
        with different values.
    """
    tables = tables or load_tables()
    virtual = _virtual_packages(tables)
    toolkits = _toolkit_keys(tables)
    keys = target_keys(tables)
    result: dict[str, str] = {}
    for raw_key, raw_value in _pairs(items, keys):
        key = raw_key.strip().lower().replace("-", "_").removeprefix("__")
        key = _KEY_ALIASES.get(key, key)
        if key not in keys:
            raise InvalidTarget(
                f"--target {quote(raw_key.strip())}: unknown key; expected one of "
                + ", ".join(keys)
                + did_you_mean(raw_key.strip().lower(), keys)
            )
        kind = "toolkit" if key in toolkits else virtual.get(key, key)
        if key in _SEVERAL:
            value = _several(kind, raw_value, where=f"--target {key}")
        else:
            kind = "device_ip" if key == tables.intel.target else kind
            value = check_value(kind, raw_value, where=f"--target {key}")
        if key in result and result[key] != value:
            raise InvalidTarget(
                f"--target {key} given twice with different values: {result[key]!r} and {value!r}"
            )
        result[key] = value
    given = [key for key in toolkits if key in result]
    if len(given) > 1:
        raise InvalidTarget(f"--target {' and '.join(given)}: declare one toolkit")
    declarable = {*virtual, *toolkits, _ROCM_KEY}
    return {key: value for key, value in result.items() if value or key in declarable}


def _several(name: str, raw: str, *, where: str) -> str:
    """One GPU's value or several, comma-separated, each checked (AMD: gfx names become ISAs);
    returned canonical and without repeats, in the order given."""
    texts = [t.strip() for t in raw.split(",")]
    if len(texts) == 1 and not texts[0]:
        return ""
    if not all(texts):
        raise InvalidTarget(f"{where}={quote(raw)}: an empty value in the list")
    values = []
    for text in texts:
        if name != "__amdgpu_arch":
            values.append(check_value(name, text, where=where))
            continue
        isa = isa_of(text.lower()) or parse_isa(text)
        if isa is None:
            raise InvalidTarget(
                f"{where}={quote(text)}: expected a gfx name like gfx942 or an ISA like 9.4.2"
            )
        values.append(isa_text(isa))
    return ",".join(dict.fromkeys(values))


def _deciding(name: str, values: list[str]) -> str:
    """The GPU conda's virtual package describes: ``__cuda_arch`` the lowest compute capability
    (CEP 30); ``__amdgpu_arch`` the first listed (rattler takes the GPU with the most compute
    units, which a declaration lists first)."""
    if name == "__cuda_arch":
        return min(values, key=lambda v: tuple(int(n) for n in v.split(".")))
    return values[0]


def target_toolkit(
    targets: Mapping[str, str], *, tables: MappingTables | None = None
) -> tuple[str, str] | None:
    """``(package, version)`` of a toolkit declared among parsed *targets* (``version`` is ``""``
    when declared absent); ``None`` when none is declared."""
    for key, package in _toolkit_keys(tables or load_tables()).items():
        if key in targets:
            return package, targets[key]
    return None


def _pairs(
    items: Mapping[str, str] | Iterable[str], keys: tuple[str, ...]
) -> list[tuple[str, str]]:
    if isinstance(items, Mapping):
        return [(str(k), str(v)) for k, v in items.items()]
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidTarget(
                f"--target {quote(item)}: expected KEY=VALUE with KEY one of {', '.join(keys)}"
            )
        pairs.append((key, value))
    return pairs


def target_facts(
    targets: Mapping[str, str], *, tables: MappingTables | None = None
) -> dict[str, Fact]:
    """The virtual-package facts among parsed *targets*, keyed by virtual package name."""
    tables = tables or load_tables()
    virtual = _virtual_packages(tables)
    facts: dict[str, Fact] = {}
    amd = tables.amd
    arch_key = amd.arch_package.removeprefix("__")
    if targets.get(arch_key) and amd.driver_package.removeprefix("__") not in targets:
        # __amdgpu is presence only: a declared GPU architecture declares the GPU.
        facts[amd.driver_package] = Fact(
            amd.driver_package, amd.driver_version, Source.TARGET, raw=amd.driver_version
        )
    for key, text in targets.items():
        if key not in virtual:
            continue
        name = virtual[key]
        values = text.split(",") if text else []
        several = tuple(values) if len(values) > 1 else ()
        deciding = _deciding(name, values) if values else None
        facts[name] = Fact(name, deciding, Source.TARGET, raw=text, several=several)
    return facts


def conda_override_facts(
    environ: Mapping[str, str], *, tables: MappingTables | None = None
) -> dict[str, Fact]:
    """Facts declared by ``CONDA_OVERRIDE_*`` in *environ*, keyed by virtual package name.

    :raises InvalidTarget: e.g. ``CONDA_OVERRIDE_CUDA='abc': expected a CUDA version like 12.8
        (or empty to declare no CUDA)``.
    """
    facts: dict[str, Fact] = {}
    for override in (tables or load_tables()).overrides:
        raw = environ.get(override.conda)
        if raw is None:
            continue
        name = override.virtual_package
        value = check_value(name, raw, where=override.conda, empty_hint=True)
        facts[name] = Fact(name, value or None, Source.override(override.conda), raw=raw)
    return facts


def normalize_sm_arch(value: str, *, variable: str) -> str:
    """``9.0`` -> ``9.0``; CMake style ``90`` -> ``9.0``, ``120`` -> ``12.0``.

    :raises InvalidTarget: anything else, named by *variable*.
    """
    text = value.strip()
    if VERSION_SHAPES["__cuda_arch"].matches(text):
        return text
    match = _CMAKE_ARCH.fullmatch(text)
    if match:
        return f"{int(match[1])}.{match[2]}"
    raise InvalidTarget(
        f"{variable}={quote(value)}: expected a compute capability like 9.0 (or 90)"
    )


def provider_override_facts(
    environ: Mapping[str, str], *, tables: MappingTables | None = None
) -> dict[str, Fact]:
    """Facts declared by the providers' own variables (``NV_VARIANT_PROVIDER_FORCE_*``, the AMD
    provider's GPU variable).

    :raises InvalidTarget: a value that is not a CUDA version / compute capability / gfx name.
    """
    tables = tables or load_tables()
    return {**_nvidia_provider_facts(environ, tables), **amd_provider_facts(environ, tables)}


def amd_provider_facts(environ: Mapping[str, str], tables: MappingTables) -> dict[str, Fact]:
    """``AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH=gfx942[,gfx90a]``: the GPUs, as gfx names split on
    commas, spaces or semicolons like the provider splits them; the first decides
    ``__amdgpu_arch`` and implies ``__amdgpu``. ``none`` declares no AMD GPU."""
    amd = tables.amd
    variable = amd.override(amd.arch_package).provider
    raw = environ.get(variable or "", "")
    if variable is None or not raw.strip():
        return {}
    source = Source.override(variable)
    if raw.strip().lower() == _PROVIDER_NONE:
        return {amd.driver_package: Fact(amd.driver_package, None, source, raw=raw)}
    isas: list[str] = []
    for name in re.split(r"[,\s;]+", raw.strip()):
        isa = isa_of(name.lower(), amd.gfx_prefix)
        if isa is None:
            raise InvalidTarget(
                f"{variable}={quote(raw)}: expected gfx names like gfx942 or gfx90a "
                "(comma-separated)"
            )
        isas.append(isa_text(isa))
    isas = list(dict.fromkeys(isas))
    several = tuple(isas) if len(isas) > 1 else ()
    return {
        amd.driver_package: Fact(amd.driver_package, amd.driver_version, source, raw=raw),
        amd.arch_package: Fact(amd.arch_package, isas[0], source, raw=raw, several=several),
    }


def _nvidia_provider_facts(environ: Mapping[str, str], tables: MappingTables) -> dict[str, Fact]:
    nvidia = tables.nvidia
    facts: dict[str, Fact] = {}
    for override in nvidia.overrides:
        raw = environ.get(override.provider or "", "")
        if override.provider is None or not raw.strip():
            continue
        name, source = override.virtual_package, Source.override(override.provider)
        if raw.strip().lower() == _PROVIDER_NONE:
            facts[name] = Fact(name, None, source, raw=raw)
        elif name == nvidia.arch_package:
            arch = normalize_sm_arch(raw, variable=override.provider)
            # The provider offers no sm_arch below its lowest GPU; `variant-bridge env` writes
            # 0.0 for "CUDA but no known GPU architecture".
            major, minor = (int(n) for n in arch.split("."))
            present = (major, minor) >= nvidia.lowest_arch
            facts[name] = Fact(name, arch if present else None, source, raw=raw)
        else:
            value = check_value(name, raw, where=override.provider)
            facts[name] = Fact(name, value, source, raw=raw)
    return facts


def target_rocm(targets: Mapping[str, str]) -> str | None:
    """The ROCm runtime declared among parsed *targets* (``""``: declared absent; ``None``: not
    declared)."""
    return targets.get(_ROCM_KEY)


def rocm_override(environ: Mapping[str, str], *, tables: MappingTables) -> str | None:
    """``AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION``, checked (the provider wants three numbers,
    ``7.0.0``; two are accepted here); ``None`` when unset or empty.

    :raises InvalidTarget: a value that is not a ROCm version.
    """
    variable = tables.amd.runtime_override
    raw = environ.get(variable, "").strip()
    if not raw:
        return None
    if raw.lower() == _PROVIDER_NONE:
        return ""
    return check_value(_ROCM_KEY, raw, where=variable)
