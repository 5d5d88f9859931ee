"""Environment variables that make uv's built-in variant selection agree with the bridged view.

uv 0.13.9 (``uv pip install --preview-features wheel-variants``) ranks variant wheels with its own
vendored providers and never runs third-party plugins. Its NVIDIA provider looks at the driver only,
but honours two override variables; this module computes their values from the bridged supported
properties, so uv picks the label ``variant-bridge select`` picks wherever uv can express it.

What uv 0.13.9 does with the variables (established by running it offline against find-links
wheels, with a fake ``nvidia-smi`` standing in for a GPU; docs/uv.md has the table):

- ``NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=X.Y``: lower bounds ``<= X.Y`` (older majors
  included) and upper bounds ``> X.Y`` are supported. An *empty* value counts as unset (uv detects
  the driver); ``0`` keeps the provider on (every upper bound and ``sm_arch`` still match); an
  unparsable value such as ``none`` makes uv skip its NVIDIA provider altogether, so only the null
  or non-variant wheel can win: that is how an absent ``__cuda`` is expressed.
- ``NV_VARIANT_PROVIDER_FORCE_SM_ARCH=M.N``: ``sm_arch`` values ``{MN}_real`` down to ``{M}0_real``
  then ``{M}0_virtual``; below ``5.0`` no value at all, so ``0.0`` says "no GPU architecture"
  while the driver still counts.
- ``UV_PREVIEW_FEATURES=wheel-variants`` turns variant selection on like the command-line flag.

Pure: the caller passes the environment snapshot, its supported properties and the process
environment to extend.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from variant_bridge.environment import CudaPolicy, Environment, Source
from variant_bridge.translate.supported import SupportedProperties

__all__ = [
    "DRIVER_VARIABLE",
    "NO_CUDA",
    "NO_GPU_ARCH",
    "PREVIEW_FEATURE",
    "PREVIEW_VARIABLE",
    "SHELL_FORMATS",
    "SM_ARCH_VARIABLE",
    "ShellFormat",
    "UvSettings",
    "format_variables",
    "uv_settings",
]

DRIVER_VARIABLE = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
SM_ARCH_VARIABLE = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"
PREVIEW_VARIABLE = "UV_PREVIEW_FEATURES"
PREVIEW_FEATURE = "wheel-variants"

NO_CUDA = "none"
"""A driver value uv rejects, so it skips its NVIDIA provider (empty would mean "detect")."""
NO_GPU_ARCH = "0.0"
"""A compute capability below 5.0: uv offers no ``sm_arch`` value but keeps the driver's bounds."""

ShellFormat = Literal["sh", "fish", "powershell", "dotenv", "json"]
SHELL_FORMATS: tuple[ShellFormat, ...] = ("sh", "fish", "powershell", "dotenv", "json")

_NAMESPACE = "nvidia"
_LOWER = "cuda_version_lower_bound"
_SM_ARCH = "sm_arch"
_VERSION_RE = re.compile(r"(\d+)(?:\.(\d+))?")
_SM_RE = re.compile(r"(\d+)_(real|virtual)")
# The NVIDIA provider lists lower bounds down to CUDA 11; uv accepts those for any newer driver.
_OLDEST_CUDA_MAJOR = 11
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTENV_PLAIN_RE = re.compile(r"[A-Za-z0-9_.,:/@+=-]*")


@dataclass(frozen=True, slots=True)
class UvSettings:
    """Variables to set for uv, in output order, and what uv still cannot be told."""

    variables: tuple[tuple[str, str], ...]
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, str]:
        return dict(self.variables)

    def applied_to(self, environ: Mapping[str, str]) -> dict[str, str]:
        """A copy of *environ* with these variables set (for running a command)."""
        return {**environ, **self.as_dict()}


def _version(text: str) -> tuple[int, int] | None:
    match = _VERSION_RE.fullmatch(text)
    if match is None:
        return None
    return int(match[1]), int(match[2] or 0)


def _text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _driver_value(supported: SupportedProperties) -> tuple[int, int] | None:
    """The newest supported lower bound: uv then accepts exactly the bounds up to it."""
    versions = [v for v in map(_version, supported.values(_NAMESPACE, _LOWER)) if v is not None]
    return max(versions, default=None)


def _sm_arch_value(supported: SupportedProperties) -> str:
    """The lowest GPU (``__cuda_arch``) for uv: ``90_real`` -> ``9.0``, ``120_real`` -> ``12.0``.

    The bridged list starts at ``{A}_real``, so its highest real value is ``A``; uv given ``A``
    offers the same shape (``{A}_real`` down to ``{major}0_real``, then ``{major}0_virtual``).
    """
    matches = [m for m in map(_SM_RE.fullmatch, supported.values(_NAMESPACE, _SM_ARCH)) if m]
    if not matches:
        return NO_GPU_ARCH
    # Real values name the GPU itself; a list of virtual values only still names its major.
    _, best = max((m[2] == "real", int(m[1])) for m in matches)
    return f"{best // 10}.{best % 10}"


def _preview_features(environ: Mapping[str, str]) -> str:
    """The user's ``UV_PREVIEW_FEATURES`` plus ``wheel-variants`` (uv splits it on commas)."""
    features = [f.strip() for f in environ.get(PREVIEW_VARIABLE, "").split(",") if f.strip()]
    if PREVIEW_FEATURE not in features:
        features.append(PREVIEW_FEATURE)
    return ",".join(features)


def _cuda_notes(
    env: Environment, supported: SupportedProperties, driver: tuple[int, int], policy: CudaPolicy
) -> list[str]:
    """What uv's driver-only provider cannot be told (nothing under the driver policy)."""
    notes = []
    lower = [v for v in map(_version, supported.values(_NAMESPACE, _LOWER)) if v is not None]
    if driver[0] > _OLDEST_CUDA_MAJOR and all(v[0] == driver[0] for v in lower):
        notes.append(
            f"uv also accepts cuda_version_lower_bound values of CUDA {driver[0] - 1} and older, "
            f"which variant-bridge excludes here: when a package has no CUDA {driver[0]} variant, "
            "uv may install an older-major one where `variant-bridge select` picks the null or "
            "non-variant wheel"
        )
    facts = [env.cuda.version if env.cuda is not None else None]
    if policy == "toolkit" and env.toolkit is not None:
        facts.append(env.toolkit.version)
    newest = max((v for v in map(_leading_version, facts) if v is not None), default=driver)
    if newest > driver:
        notes.append(
            f"uv compares cuda_version_upper_bound with {_text(driver)} only: a wheel whose "
            f"upper bound is above {_text(driver)} but not above {_text(newest)} is accepted by "
            "uv and rejected by variant-bridge (the driver and the toolkit must both be below it)"
        )
    return notes


def _leading_version(text: str | None) -> tuple[int, int] | None:
    """``major.minor`` of a conda version such as ``12.6`` or ``11.8.0``."""
    match = _VERSION_RE.match(text) if text else None
    return (int(match[1]), int(match[2] or 0)) if match is not None else None


def _cpu_notes(env: Environment) -> list[str]:
    archspec = env.archspec
    if archspec is None or archspec.source == Source.DETECTED:
        return []
    return [
        (
            "uv's x86_64/aarch64 providers read this machine's CPU and take no override: "
            f"__archspec={archspec.build} ({archspec.source}) cannot be passed on to uv"
        )
    ]


def uv_settings(
    env: Environment,
    supported: SupportedProperties,
    *,
    policy: CudaPolicy | None = None,
    environ: Mapping[str, str] | None = None,
) -> UvSettings:
    """The variables that make uv 0.13.9's built-in providers agree with *supported*.

    :param env: the environment *supported* was derived from (for the notes).
    :param supported: the bridged supported properties (``translate.supported_properties``).
    :param policy: the CUDA policy *supported* was computed with; ``None``: the environment's
        default (``toolkit`` whenever a toolkit is solved).
    :param environ: the process environment the variables will extend (for
        ``UV_PREVIEW_FEATURES``); ``None``: none.
    """
    policy = policy or env.default_policy()
    driver = _driver_value(supported)
    notes: list[str] = []
    if driver is None:
        # No CUDA at all is what the switched-off provider means; only features the bridge
        # still supports without a lower bound (sm_arch, an upper bound) are lost on uv.
        others = [f.feature for f in supported.features if f.namespace == _NAMESPACE and f.values]
        if others:
            notes.append(
                f"no cuda_version_lower_bound is supported, so uv's NVIDIA provider is switched "
                f"off ({DRIVER_VARIABLE}={NO_CUDA}, a value uv rejects): wheels that need only "
                f"{' or '.join(others)} are refused by uv and accepted by variant-bridge"
            )
        cuda_vars = ((DRIVER_VARIABLE, NO_CUDA), (SM_ARCH_VARIABLE, NO_CUDA))
    else:
        cuda_vars = (
            (DRIVER_VARIABLE, _text(driver)),
            (SM_ARCH_VARIABLE, _sm_arch_value(supported)),
        )
        notes.extend(_cuda_notes(env, supported, driver, policy))
    notes.extend(_cpu_notes(env))
    variables = (*cuda_vars, (PREVIEW_VARIABLE, _preview_features(environ or {})))
    return UvSettings(variables, tuple(notes))


# -- shell formats ------------------------------------------------------------------------------


def _sh(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def _fish(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _powershell(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _dotenv(value: str) -> str:
    if _DOTENV_PLAIN_RE.fullmatch(value):
        return value
    if "'" not in value and "\n" not in value:
        return f"'{value}'"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def format_variables(variables: Iterable[tuple[str, str]], shell: ShellFormat) -> str:
    """Render ``(name, value)`` pairs for *shell*, values quoted so they pass through literally.

    ``sh``: ``export K='v'``; ``fish``: ``set -gx K 'v'``; ``powershell``: ``$env:K = 'v'``;
    ``dotenv``: ``K=v``; ``json``: one object.

    :raises ValueError: on a name that is not an environment variable name, or an unknown shell.
    """
    pairs = list(variables)
    for name, _ in pairs:
        if _NAME_RE.fullmatch(name) is None:
            raise ValueError(f"invalid environment variable name {name!r}")
    if shell == "json":
        return json.dumps(dict(pairs), indent=2) + "\n"
    if shell == "sh":
        lines = [f"export {name}={_sh(value)}" for name, value in pairs]
    elif shell == "fish":
        lines = [f"set -gx {name} {_fish(value)}" for name, value in pairs]
    elif shell == "powershell":
        lines = [f"$env:{name} = {_powershell(value)}" for name, value in pairs]
    elif shell == "dotenv":
        lines = [f"{name}={_dotenv(value)}" for name, value in pairs]
    else:
        raise ValueError(f"unknown shell format {shell!r}; expected one of {SHELL_FORMATS}")
    return "".join(f"{line}\n" for line in lines)
