"""What ``check`` reports: findings with a level, a topic, a stable rule id and structured fields.

A :class:`Finding` is made per platform (and per build family) and the findings that say the
same thing on several platforms are merged into one listing them (:func:`merge`). Its
:attr:`Finding.subject` is rendered from a template holding ``{where}``: nothing for linux-64
alone, `` (linux-64, linux-aarch64)`` otherwise. The rule ids are the interface bots read; they
are documented in docs/maintainers.md ("Rules") and never reused for another meaning.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, replace

from variant_bridge.translate.evidence import CudaVersion

__all__ = ["DEFAULT_PLATFORM", "Finding", "Level", "Rule", "Topic", "merge"]

DEFAULT_PLATFORM = "linux-64"
"""The platform a subject does not name (most releases are about it)."""


class Level(enum.IntEnum):
    """How much a finding matters; ``ERROR`` makes ``check`` exit 1."""

    OK = 0
    INFO = 1
    WARN = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name


class Topic(enum.Enum):
    """What a finding is about; the value is how ``--json`` names it."""

    VERSION = "version"
    CUDA = "cuda"
    LOWER_BOUND = "lower-bound"
    SM_ARCH = "sm-arch"
    GLIBC = "glibc"
    X86_64_LEVEL = "x86-64-level"
    CPU = "cpu"
    PYTHON = "python"
    BUILD_NUMBER = "build-number"
    PLATFORM = "platform"
    OTHER = "other"


class Rule(enum.Enum):
    """The stable id of what a finding says (``--json``'s ``rule``, GitHub annotations' title).

    The value is the id; each belongs to one :class:`Topic`.
    """

    VERSION_MATCH = "version-match"
    VERSION_MISMATCH = "version-mismatch"
    CUDA_MATCH = "cuda-match"
    CUDA_PER_MAJOR = "cuda-per-major"
    CONDA_MINOR_WITHOUT_WHEEL = "conda-minor-without-wheel"
    CONDA_MAJOR_WITHOUT_WHEEL = "conda-major-without-wheel"
    WHEEL_MINOR_WITHOUT_CONDA = "wheel-minor-without-conda"
    WHEEL_MAJOR_WITHOUT_CONDA = "wheel-major-without-conda"
    PLATFORM_WITHOUT_WHEELS = "platform-without-wheels"
    PLATFORM_WITHOUT_CONDA = "platform-without-conda"
    FAMILY_WITHOUT_WHEELS = "family-without-wheels"
    VARIANTS_NOT_COMPARED = "variants-not-compared"
    VARIANTS_IDENTICAL = "variants-identical"
    WHEELS_NOT_OPENED = "wheels-not-opened"
    LOWER_BOUND_MATCH = "lower-bound-match"
    LOWER_BOUND_PER_MAJOR = "lower-bound-per-major"
    LOWER_BOUND_BELOW_TOOLKIT = "lower-bound-below-toolkit"
    LOWER_BOUND_ABOVE_TOOLKIT = "lower-bound-above-toolkit"
    LOWER_BOUND_MISSING = "lower-bound-missing"
    TOOLKIT_FROM_LOWER_BOUND = "toolkit-from-lower-bound"
    LABEL_CONTRADICTS_TOOLKIT = "label-contradicts-toolkit"
    SM_ARCH_MATCH = "sm-arch-match"
    SM_ARCH_DIFFER = "sm-arch-differ"
    SM_ARCH_UNKNOWN = "sm-arch-unknown"
    SM_ARCH_UNDECLARED = "sm-arch-undeclared"
    SM_ARCH_NOT_COMPILABLE = "sm-arch-not-compilable"
    GLIBC_MATCH = "glibc-match"
    GLIBC_WHEELS_NEWER = "glibc-wheels-newer"
    GLIBC_CONDA_NEWER = "glibc-conda-newer"
    GLIBC_BELOW_CUDA_FLOOR = "glibc-below-cuda-floor"
    GLIBC_UNKNOWN = "glibc-unknown"
    X86_64_LEVEL_MATCH = "x86-64-level-match"
    X86_64_LEVEL_DIFFER = "x86-64-level-differ"
    CPU_MATCH = "cpu-match"
    CPU_WITHOUT_NULL = "cpu-without-null"
    NULL_WITHOUT_CPU = "null-without-cpu"
    PYTHON_MATCH = "python-match"
    PYTHON_DIFFER = "python-differ"
    BUILD_NUMBER_TIE = "build-number-tie"

    @property
    def topic(self) -> Topic:
        return _TOPICS[self]


_TOPICS = {
    Rule.BUILD_NUMBER_TIE: Topic.BUILD_NUMBER,
    Rule.CPU_MATCH: Topic.CPU,
    Rule.CPU_WITHOUT_NULL: Topic.CPU,
    Rule.NULL_WITHOUT_CPU: Topic.CPU,
    Rule.CONDA_MAJOR_WITHOUT_WHEEL: Topic.CUDA,
    Rule.CONDA_MINOR_WITHOUT_WHEEL: Topic.CUDA,
    Rule.CUDA_MATCH: Topic.CUDA,
    Rule.CUDA_PER_MAJOR: Topic.CUDA,
    Rule.WHEEL_MAJOR_WITHOUT_CONDA: Topic.CUDA,
    Rule.WHEEL_MINOR_WITHOUT_CONDA: Topic.CUDA,
    Rule.GLIBC_BELOW_CUDA_FLOOR: Topic.GLIBC,
    Rule.GLIBC_CONDA_NEWER: Topic.GLIBC,
    Rule.GLIBC_MATCH: Topic.GLIBC,
    Rule.GLIBC_UNKNOWN: Topic.GLIBC,
    Rule.GLIBC_WHEELS_NEWER: Topic.GLIBC,
    Rule.LABEL_CONTRADICTS_TOOLKIT: Topic.LOWER_BOUND,
    Rule.LOWER_BOUND_ABOVE_TOOLKIT: Topic.LOWER_BOUND,
    Rule.LOWER_BOUND_BELOW_TOOLKIT: Topic.LOWER_BOUND,
    Rule.LOWER_BOUND_MATCH: Topic.LOWER_BOUND,
    Rule.LOWER_BOUND_MISSING: Topic.LOWER_BOUND,
    Rule.LOWER_BOUND_PER_MAJOR: Topic.LOWER_BOUND,
    Rule.TOOLKIT_FROM_LOWER_BOUND: Topic.LOWER_BOUND,
    Rule.VARIANTS_IDENTICAL: Topic.OTHER,
    Rule.VARIANTS_NOT_COMPARED: Topic.OTHER,
    Rule.WHEELS_NOT_OPENED: Topic.OTHER,
    Rule.FAMILY_WITHOUT_WHEELS: Topic.PLATFORM,
    Rule.PLATFORM_WITHOUT_CONDA: Topic.PLATFORM,
    Rule.PLATFORM_WITHOUT_WHEELS: Topic.PLATFORM,
    Rule.PYTHON_DIFFER: Topic.PYTHON,
    Rule.PYTHON_MATCH: Topic.PYTHON,
    Rule.SM_ARCH_DIFFER: Topic.SM_ARCH,
    Rule.SM_ARCH_MATCH: Topic.SM_ARCH,
    Rule.SM_ARCH_NOT_COMPILABLE: Topic.SM_ARCH,
    Rule.SM_ARCH_UNDECLARED: Topic.SM_ARCH,
    Rule.SM_ARCH_UNKNOWN: Topic.SM_ARCH,
    Rule.VERSION_MATCH: Topic.VERSION,
    Rule.VERSION_MISMATCH: Topic.VERSION,
    Rule.X86_64_LEVEL_DIFFER: Topic.X86_64_LEVEL,
    Rule.X86_64_LEVEL_MATCH: Topic.X86_64_LEVEL,
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing ``check`` says, with the facts it is about.

    :param template: the subject with ``{where}`` where the platforms go.
    :param platforms: the conda platforms (with their build family: ``linux-aarch64
        arm_variant_type=tegra``) it is about; ``()`` for a finding about the release as a
        whole or one wheel variant.
    """

    level: Level
    rule: Rule
    template: str
    message: str
    fix: str | None = None
    platforms: tuple[str, ...] = ()
    cuda: CudaVersion | None = None
    """The CUDA version it is about (a conda build's, or a wheel's toolkit)."""
    label: str | None = None
    """The wheel variant it is about."""
    conda_builds: tuple[str, ...] = ()
    """The files of the conda builds it is about."""
    conda_only: tuple[str, ...] = ()
    """What only the conda side has (SM targets, Python versions...)."""
    wheel_only: tuple[str, ...] = ()
    toolkit_from: str | None = None
    """How the wheel's toolkit is known (``pinned-components``, ``label``, ``lower-bound``)."""

    @property
    def topic(self) -> Topic:
        return self.rule.topic

    @property
    def subject(self) -> str:
        """``CUDA 12.9 <-> cuda12.8``, ``conda CUDA 12.9 (linux-64, linux-aarch64)``."""
        shown = self.platforms != (DEFAULT_PLATFORM,) and self.platforms
        return self.template.format(where=f" ({', '.join(self.platforms)})" if shown else "")

    def __str__(self) -> str:
        fix = f"; {self.fix}" if self.fix else ""
        return f"{self.subject}: {self.message}{fix}"


def merge(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Findings that differ only by platform become one listing their platforms (in the order
    first seen), at the place of the first."""
    merged: dict[tuple[object, ...], Finding] = {}
    for finding in findings:
        key = (
            finding.rule, finding.template, finding.message, finding.fix, finding.level,
            finding.cuda, finding.label, finding.conda_only, finding.wheel_only,
        )  # fmt: skip
        known = merged.get(key)
        if known is None:
            merged[key] = finding
            continue
        platforms = tuple(dict.fromkeys(known.platforms + finding.platforms))
        builds = tuple(dict.fromkeys(known.conda_builds + finding.conda_builds))
        merged[key] = replace(known, platforms=platforms, conda_builds=builds)
    return tuple(merged.values())
