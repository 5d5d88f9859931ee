"""Override variables, read from an explicit mapping (never ``os.environ`` directly).

Two families declare facts about the machine (semantics.md §1-2):

- conda's ``CONDA_OVERRIDE_<NAME>`` (CEP 30): an empty value declares the package *absent*;
- the NVIDIA provider's ``NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION`` (-> ``__cuda``) and
  ``NV_VARIANT_PROVIDER_FORCE_SM_ARCH`` (-> ``__cuda_arch``): an empty value is *unset*, as in the
  provider (which tests the variable's truthiness); ``none`` declares the package absent.

``NV_VARIANT_PROVIDER_FORCE_SM_ARCH`` takes ``9.0`` (what the provider parses) or the CMake
spelling ``90`` / ``120`` (the last digit is the minor), normalised to ``9.0`` / ``12.0``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from variant_bridge.detect.targets import VIRTUAL_PACKAGE_KEYS, Fact, check_value
from variant_bridge.environment import Source
from variant_bridge.errors import InvalidTarget, quote
from variant_bridge.virtual_packages import VERSION_SHAPES

__all__ = [
    "CONDA_OVERRIDES",
    "NV_FORCE_CUDA",
    "NV_FORCE_SM_ARCH",
    "conda_override_facts",
    "normalize_sm_arch",
    "nv_force_facts",
]

CONDA_OVERRIDES: dict[str, str] = {
    f"CONDA_OVERRIDE_{key.upper()}": key for key in VIRTUAL_PACKAGE_KEYS
}
"""``CONDA_OVERRIDE_CUDA`` -> ``cuda`` etc. (cuda, cuda_arch, archspec, glibc, linux, osx, win)."""

NV_FORCE_CUDA = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
NV_FORCE_SM_ARCH = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"

# `none` is what `variant-bridge env` writes for "no CUDA": uv's provider rejects the value and
# switches itself off, so reading it as "absent" keeps the bridge and uv agreeing.
NV_NONE = "none"
_MIN_SM_ARCH = 5.0

# ASCII only: `\d` would take `٩٠` and hand rattler a version it cannot parse.
_CMAKE_ARCH = re.compile(r"([0-9]{1,2})([0-9])", re.ASCII)


def conda_override_facts(env: Mapping[str, str]) -> dict[str, Fact]:
    """Facts declared by ``CONDA_OVERRIDE_*`` in *env*, keyed by virtual package name.

    :raises InvalidTarget: e.g. ``CONDA_OVERRIDE_CUDA='abc': expected a CUDA version like 12.8
        (or empty to declare no CUDA)``.
    """
    facts: dict[str, Fact] = {}
    for variable, key in CONDA_OVERRIDES.items():
        raw = env.get(variable)
        if raw is None:
            continue
        value = check_value(key, raw, where=variable, empty_hint=True)
        name = VIRTUAL_PACKAGE_KEYS[key]
        facts[name] = Fact(name, value or None, Source.env(variable), raw=raw)
    return facts


def normalize_sm_arch(value: str) -> str:
    """``9.0`` -> ``9.0``; CMake style ``90`` -> ``9.0``, ``120`` -> ``12.0``.

    :raises InvalidTarget: anything else.
    """
    text = value.strip()
    if VERSION_SHAPES["__cuda_arch"].matches(text):
        return text
    match = _CMAKE_ARCH.fullmatch(text)
    if match:
        return f"{int(match[1])}.{match[2]}"
    raise InvalidTarget(
        f"{NV_FORCE_SM_ARCH}={quote(value)}: expected a compute capability like 9.0 (or 90)"
    )


def nv_force_facts(env: Mapping[str, str]) -> dict[str, Fact]:
    """Facts declared by the NVIDIA provider's ``NV_VARIANT_PROVIDER_FORCE_*`` variables.

    :raises InvalidTarget: a value that is not a CUDA version / compute capability.
    """
    facts: dict[str, Fact] = {}
    raw = env.get(NV_FORCE_CUDA, "")
    if raw.strip().lower() == NV_NONE:
        facts["__cuda"] = Fact("__cuda", None, Source.env(NV_FORCE_CUDA), raw=raw)
    elif raw.strip():
        value = check_value("cuda", raw, where=NV_FORCE_CUDA)
        facts["__cuda"] = Fact("__cuda", value, Source.env(NV_FORCE_CUDA), raw=raw)
    raw = env.get(NV_FORCE_SM_ARCH, "")
    if raw.strip().lower() == NV_NONE:
        facts["__cuda_arch"] = Fact("__cuda_arch", None, Source.env(NV_FORCE_SM_ARCH), raw=raw)
    elif raw.strip():
        value = normalize_sm_arch(raw)
        # The provider offers no sm_arch below compute capability 5.0; `variant-bridge env`
        # writes 0.0 for "CUDA but no known GPU architecture".
        arch = value if float(value) >= _MIN_SM_ARCH else None
        facts["__cuda_arch"] = Fact("__cuda_arch", arch, Source.env(NV_FORCE_SM_ARCH), raw=raw)
    return facts
