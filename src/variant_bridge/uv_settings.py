"""Environment variables that make uv's built-in variant selection agree with the bridged view.

uv (``uv pip install --preview-features wheel-variants``) ranks variant wheels with its own
vendored providers and never runs third-party plugins. Its NVIDIA provider looks at the driver
only, but honours the provider's two override variables (their names come from the mapping
tables' ``overrides``); this module computes their values from the bridged supported properties,
so uv picks the label ``variant-bridge select`` picks wherever uv can express it. What uv does
with each value (an unparsable driver such as ``none`` switches its provider off; a compute
capability below 5.0 offers no ``sm_arch``) is in docs/uv.md, checked by
tests/integration/test_uv_agreement.py.

Pure: the caller passes the environment snapshot, its supported properties and the process
environment to extend.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Literal

from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.environment import Environment, Source
from variant_bridge.errors import quote
from variant_bridge.mappings import MappingTables, NvidiaTable, load_tables
from variant_bridge.translate.supported import SupportedProperties

__all__ = [
    "DRIVER_VARIABLE",  # noqa: F822 - the tables' name, resolved by __getattr__
    "EXPORTED_PINS_VARIABLE",
    "NO_CUDA",
    "NO_GPU_ARCH",
    "PREVIEW_FEATURE",
    "PREVIEW_VARIABLE",
    "SHELL_FORMATS",
    "SM_ARCH_VARIABLE",  # noqa: F822 - likewise
    "ShellFormat",
    "UvSettings",
    "exported_pins_value",
    "format_variables",
    "parse_exported_pins",
    "uv_settings",
]

PREVIEW_VARIABLE = "UV_PREVIEW_FEATURES"
PREVIEW_FEATURE = "wheel-variants"

NO_CUDA = "none"
"""A driver value uv rejects, so it skips its NVIDIA provider (empty would mean "detect")."""
NO_GPU_ARCH = "0.0"
"""A compute capability below 5.0: uv offers no ``sm_arch`` value but keeps the driver's bounds."""

EXPORTED_PINS_VARIABLE = "VARIANT_BRIDGE_EXPORTED_PINS"
"""Written by ``export`` next to the pins it sets for uv (``[activation.env]``): ``NAME=VALUE``
pairs, space-separated. A variable whose current value is the one listed is the export's pin,
not a fact about the machine (docs/semantics.md, "Exported pins")."""

ShellFormat = Literal["sh", "fish", "powershell", "dotenv", "json"]
SHELL_FORMATS: tuple[ShellFormat, ...] = ("sh", "fish", "powershell", "dotenv", "json")

_VERSION_RE = Lazy(r"(\d+)(?:\.(\d+))?")
_SM_RE = Lazy(r"(\d+)_(real|virtual)")
_NAME_RE = Lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTENV_PLAIN_RE = Lazy(r"[A-Za-z0-9_.,:/@+=-]*")


@value
class UvSettings:
    """Variables to set for uv, in output order, and what uv still cannot be told."""

    variables: tuple[tuple[str, str], ...]
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, str]:
        return dict(self.variables)

    def applied_to(self, environ: Mapping[str, str]) -> dict[str, str]:
        """A copy of *environ* with these variables set (for running a command)."""
        return {**environ, **self.as_dict()}


@value
class _Names:
    """What the nvidia table calls the features and variables this module reads and writes."""

    namespace: str
    lower: str
    upper: str
    sm_arch: str
    driver_variable: str
    arch_variable: str
    oldest_major: int
    """The oldest CUDA major the provider lists lower bounds for; uv accepts them all."""

    @classmethod
    def of(cls, table: NvidiaTable) -> _Names:
        by_rule = {f.rule: f.name for f in table.features}
        driver = table.override(table.driver_package).provider
        arch = table.override(table.arch_package).provider
        assert driver is not None  # the provider has a variable for both facts
        assert arch is not None
        return cls(
            table.namespace,
            by_rule["cuda_lower_bound"],
            by_rule["cuda_upper_bound"],
            by_rule["sm_arch"],
            driver,
            arch,
            table.driver_majors.low,
        )


def __getattr__(name: str) -> str:
    # The provider's variable names are the tables' (read lazily, when first asked for).
    if name == "DRIVER_VARIABLE":
        return _Names.of(load_tables().nvidia).driver_variable
    if name == "SM_ARCH_VARIABLE":
        return _Names.of(load_tables().nvidia).arch_variable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _version(text: str) -> tuple[int, int] | None:
    match = _VERSION_RE.fullmatch(text)
    if match is None:
        return None
    return int(match[1]), int(match[2] or 0)


def _text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _lower_bounds(supported: SupportedProperties, names: _Names) -> list[tuple[int, int]]:
    values = supported.values(names.namespace, names.lower)
    return [v for v in map(_version, values) if v is not None]


def _sm_arch_value(supported: SupportedProperties, names: _Names) -> str:
    """The lowest GPU (``__cuda_arch``) for uv: ``90_real`` -> ``9.0``, ``120_real`` -> ``12.0``.

    The bridged list starts at ``{A}_real``, so its highest real value is ``A``; uv given ``A``
    offers the same shape (``{A}_real`` down to ``{major}0_real``, then ``{major}0_virtual``).
    """
    values = supported.values(names.namespace, names.sm_arch)
    matches = [m for m in map(_SM_RE.fullmatch, values) if m]
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


def _control(char: str) -> bool:
    """A control character (C0, DEL, C1): ESC starts the ANSI sequences a terminal acts on (and
    that click strips from output that is not a terminal, changing the value)."""
    code = ord(char)
    return code < 0x20 or 0x7F <= code < 0xA0


def _printable(name: str, text: str) -> tuple[str, str | None]:
    """*text* without control characters, and the note that says so (``None``: none there)."""
    dropped = [c for c in text if _control(c)]
    if not dropped:
        return text, None
    kept = "".join(c for c in text if not _control(c))
    which = ", ".join(dict.fromkeys(f"U+{ord(c):04X}" for c in dropped))
    return kept, (
        f"{name}: dropped {len(dropped)} control character{'s' if len(dropped) > 1 else ''} "
        f"({which}) from its value, which a shell or terminal would act on; printed as "
        f"{quote(kept)}"
    )


def _cuda_notes(
    env: Environment, supported: SupportedProperties, driver: tuple[int, int], names: _Names
) -> list[str]:
    """What uv's driver-only provider cannot be told (nothing under the driver policy)."""
    notes = []
    lower = _lower_bounds(supported, names)
    if driver[0] > names.oldest_major and all(v[0] == driver[0] for v in lower):
        notes.append(
            f"uv also accepts {names.lower} values of CUDA {driver[0] - 1} and older, "
            f"which variant-bridge excludes here: when a package has no CUDA {driver[0]} variant, "
            "uv may install an older-major one where `variant-bridge select` picks the null or "
            "non-variant wheel"
        )
    facts = [env.cuda.version if env.cuda is not None else None]
    if supported.policy == "toolkit" and env.toolkit is not None:
        facts.append(env.toolkit.version)
    newest = max((v for v in map(_leading_version, facts) if v is not None), default=driver)
    if newest > driver:
        notes.append(
            f"uv compares {names.upper} with {_text(driver)} only: a wheel whose "
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


def _gpu_notes(supported: SupportedProperties, tables: MappingTables) -> list[str]:
    """What uv cannot do for AMD and Intel GPUs, nor for several declared GPUs."""
    notes = [
        (
            f"uv 0.13.9 has no {namespace} provider (it skips the namespace as unsupported), "
            f"so no variable can make it choose an {namespace} variant: it installs the null or "
            f"non-variant wheel where `variant-bridge select` chooses one; install with "
            "`variant-bridge install` instead"
        )
        for namespace in (tables.amd.namespace, tables.intel.namespace)
        if any(f.namespace == namespace for f in supported.features)
    ]
    notes += [
        (
            f"uv cannot be told that every GPU of {every.declared} must run the wheel: it "
            f"accepts a wheel with {every.feature} code for any one of them"
        )
        for every in supported.every_gpu
        if every.namespace == tables.nvidia.namespace
    ]
    return notes


def uv_settings(
    env: Environment,
    supported: SupportedProperties,
    *,
    environ: Mapping[str, str] | None = None,
    tables: MappingTables | None = None,
) -> UvSettings:
    """The variables that make uv's built-in providers agree with *supported*.

    :param env: the environment *supported* was derived from (for the notes).
    :param supported: the bridged supported properties (``translate.supported_properties``),
        with the CUDA policy they were derived with.
    :param environ: the process environment the variables will extend (for
        ``UV_PREVIEW_FEATURES``); ``None``: none.
    """
    names = _Names.of((tables or load_tables()).nvidia)
    driver = max(_lower_bounds(supported, names), default=None)  # uv accepts the bounds up to it
    notes: list[str] = []
    if driver is None:
        # No CUDA at all is what the switched-off provider means; only features the bridge
        # still supports without a lower bound (sm_arch, an upper bound) are lost on uv.
        others = [
            f.feature for f in supported.features if f.namespace == names.namespace and f.values
        ]
        if others:
            notes.append(
                f"no {names.lower} is supported, so uv's NVIDIA provider is switched "
                f"off ({names.driver_variable}={NO_CUDA}, a value uv rejects): wheels that need "
                f"only {' or '.join(others)} are refused by uv and accepted by variant-bridge"
            )
        cuda_vars = ((names.driver_variable, NO_CUDA), (names.arch_variable, NO_CUDA))
    else:
        cuda_vars = (
            (names.driver_variable, _text(driver)),
            (names.arch_variable, _sm_arch_value(supported, names)),
        )
        notes.extend(_cuda_notes(env, supported, driver, names))
    notes.extend(_cpu_notes(env))
    notes.extend(_gpu_notes(supported, tables or load_tables()))
    variables = []
    for name, text in (*cuda_vars, (PREVIEW_VARIABLE, _preview_features(environ or {}))):
        kept, note = _printable(name, text)
        variables.append((name, kept))
        notes += [note] if note is not None else []
    return UvSettings(tuple(variables), tuple(notes))


def exported_pins_value(pins: Iterable[tuple[str, str]]) -> str:
    """The :data:`EXPORTED_PINS_VARIABLE` value naming *pins* (``NAME=VALUE NAME=VALUE``)."""
    return " ".join(f"{name}={value}" for name, value in pins)


def parse_exported_pins(value: str) -> dict[str, str]:
    """The ``{NAME: VALUE}`` pairs of an :data:`EXPORTED_PINS_VARIABLE` value; words that are not
    ``NAME=VALUE`` are ignored (the variable describes, it never fails a command)."""
    pins: dict[str, str] = {}
    for word in value.split():
        name, sep, pinned = word.partition("=")
        if sep and _NAME_RE.fullmatch(name):
            pins[name] = pinned
    return pins


# -- shell formats ------------------------------------------------------------------------------


def _sh(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def _fish(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


# PowerShell ends a single-quoted string at any of these quote characters, not only at ' (and a
# doubled one stands for itself): each must be doubled.
_POWERSHELL_QUOTES = Lazy("['\u2018\u2019\u201a\u201b]")


def _powershell(value: str) -> str:
    return "'" + _POWERSHELL_QUOTES.sub(lambda m: m[0] * 2, value) + "'"


def _dotenv(value: str) -> str:
    r"""As uv's ``--env-file`` reader (dotenvy) reads it back: plain when nothing needs quoting;
    single quotes (literal) when the value holds no ``'``, backslash or line break; else double
    quotes with backslash, double quote, ``$`` and newline escaped (``\\``, ``\"``, ``\$``,
    ``\n``); a carriage return stays as it is."""
    if _DOTENV_PLAIN_RE.fullmatch(value):
        return value
    if not any(c in value for c in "'\\\n\r"):
        return f"'{value}'"
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("\n", "\\n")
    )
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
