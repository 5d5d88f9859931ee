"""Do the conda side and the wheel side of one release agree? One finding per disagreement.

:func:`check_release` pairs each conda build with the wheel variant built for the same CUDA
toolkit (the same minor; else the nearest of the same major) and the same x86-64 level, the CPU
build with the null variant, then applies the rules (docs/semantics.md §12):

- **CUDA coverage**: every CUDA minor on one side has a build on the other (a missing minor is a
  warning when its major is covered, an error when the whole major is missing);
- **lower bound**: a wheel's ``cuda_version_lower_bound`` against its toolkit (pins, label):
  torch's ``12.0`` on a 12.8 build is the trap, pins that contradict the label an error;
- **SM architectures** per pair (real and PTX targets, as sets);
- **glibc**: the wheels' manylinux floor against ``c_stdlib_version``;
- **x86-64 level**: ``microarch_level`` against ``x86_64 :: level``;
- **CPU build** against the **null variant**; **Python** versions; the release **version**;
- **build numbers** that leave CUDA minors tied (the solver then picks the newest upload).

Findings carry a :class:`Level` and a :class:`Topic` (kinds drive exit codes and ``--json``; the
text is for people) and, where something should change, what to change.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from variant_bridge.cuda_archs import ArchSet
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.release import (
    ClaimSource,
    CondaBuild,
    CondaSide,
    CudaVersion,
    WheelSide,
    WheelVariant,
    label_cuda,
)

__all__ = ["CheckReport", "Finding", "Level", "Pair", "Topic", "check_release"]


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
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Finding:
    level: Level
    topic: Topic
    subject: str
    """What is compared: ``CUDA 12.9 <-> cuda12.8``, ``wheel cuda13.0``, ``release``."""
    message: str
    fix: str | None = None
    """What to change, when something should."""

    def __str__(self) -> str:
        fix = f"; {self.fix}" if self.fix else ""
        return f"{self.subject}: {self.message}{fix}"


@dataclass(frozen=True, slots=True)
class Pair:
    """A conda build and the wheel variant compared with it (``None``: none fits)."""

    build: CondaBuild
    wheel: WheelVariant | None
    exact: bool
    """The wheel has the build's CUDA minor (or both are CPU)."""

    @property
    def subject(self) -> str:
        return f"{self.build.name} <-> {self.wheel.label if self.wheel else '-'}"


@dataclass(frozen=True, slots=True)
class CheckReport:
    conda: CondaSide
    wheels: WheelSide
    pairs: tuple[Pair, ...]
    findings: tuple[Finding, ...]

    @property
    def worst(self) -> Level:
        return max((f.level for f in self.findings), default=Level.OK)

    def at_least(self, level: Level) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level >= level)


def _versions(values: Iterable[CudaVersion]) -> str:
    return ", ".join(str(v) for v in sorted(set(values), key=lambda v: v.key)) or "none"


def _labels(wheels: Iterable[WheelVariant]) -> str:
    return ", ".join(sorted(w.label for w in wheels)) or "none"


class _Check:
    """One comparison: both sides, the tables, and the findings as they are made."""

    def __init__(self, conda: CondaSide, wheels: WheelSide, tables: MappingTables) -> None:
        self.conda = conda
        self.wheels = wheels
        self.tables = tables
        self.findings: list[Finding] = []
        self.claims = {w.label: w.claim(tables) for w in wheels.variants}
        self.cuda_wheels = [w for w in wheels.variants if self.claims[w.label] is not None]
        self.conda_minors = {b.cuda.key for b in conda.builds if b.cuda is not None}

    def add(self, level: Level, topic: Topic, subject: str, message: str, fix: str = "") -> None:
        self.findings.append(Finding(level, topic, subject, message, fix or None))

    def toolkit(self, wheel: WheelVariant) -> CudaVersion:
        claim = self.claims[wheel.label]
        assert claim is not None
        return claim.cuda

    # -- pairing ------------------------------------------------------------------------------

    def _level_fits(self, build: CondaBuild, wheel: WheelVariant) -> bool:
        return build.microarch_level is None or wheel.x86_64_level(self.tables) in (
            None,
            build.microarch_level,
        )

    def pair(self, build: CondaBuild) -> Pair:
        if build.cuda is None:
            cpu = [
                w
                for w in self.wheels.variants
                if self.claims[w.label] is None
                and (w.is_null or w.x86_64_level(self.tables) is not None)
            ]
            if build.microarch_level is not None:
                leveled = [w for w in cpu if w.x86_64_level(self.tables) == build.microarch_level]
                cpu = leveled or cpu
            best = next((w for w in cpu if w.is_null), None) if len(cpu) > 1 else None
            chosen = cpu[0] if len(cpu) == 1 else best
            return Pair(build, chosen, chosen is not None)
        wanted = build.cuda
        same = [
            w
            for w in self.cuda_wheels
            if self.toolkit(w).major == wanted.major and self._level_fits(build, w)
        ]
        exact = [w for w in same if self.toolkit(w).minor == wanted.minor]
        if exact:
            return Pair(build, exact[0], True)
        # A stand-in is a wheel whose own toolkit has no conda build (pytorch's 12.9 build and
        # torch's cuda12.8): one that has its own is compared with that build only.
        same = [w for w in same if self.toolkit(w).key not in self.conda_minors]
        below = [w for w in same if self.toolkit(w).key <= wanted.key]
        pool = below or same
        if not pool:
            return Pair(build, None, False)
        # The newest below the build (what a pip user with that toolkit gets), else the oldest.
        chosen = max(pool, key=lambda w: self.toolkit(w).key) if below else pool[0]
        return Pair(build, chosen, False)


def _version_rule(c: _Check) -> None:
    ours, theirs = c.conda.version, c.wheels.version
    if ours is None or theirs is None:
        return
    if ours == theirs:
        c.add(Level.OK, Topic.VERSION, "release", f"both sides are version {ours}")
        return
    c.add(
        Level.ERROR, Topic.VERSION, "release",
        f"the conda packages are version {ours}, the wheels {theirs}",
        "compare the two sides of one release",
    )  # fmt: skip


def _cuda_coverage(c: _Check) -> None:
    conda_cuda = {b.cuda for b in c.conda.builds if b.cuda is not None}
    wheel_cuda = {c.toolkit(w): w for w in c.cuda_wheels}
    for version in sorted(conda_cuda, key=lambda v: v.key):
        subject = f"conda CUDA {version}"
        if any(w.key == version.key for w in wheel_cuda):
            label = wheel_cuda[next(w for w in wheel_cuda if w.key == version.key)].label
            c.add(Level.OK, Topic.CUDA, subject, f"wheel variant {label} has that toolkit")
            continue
        same = [w for w in wheel_cuda if w.major == version.major]
        add = (
            f"add a wheel variant built with CUDA {version} or drop {version} from the conda matrix"
        )
        if same:
            c.add(
                Level.WARN, Topic.CUDA, subject,
                f"no wheel variant has toolkit {version} (wheels of CUDA {version.major}: "
                f"{_versions(same)})", add,
            )  # fmt: skip
        else:
            c.add(
                Level.ERROR, Topic.CUDA, subject,
                f"no wheel variant for CUDA {version.major} at all (wheels: "
                f"{_versions(wheel_cuda)})", add,
            )  # fmt: skip
    for version, wheel in sorted(wheel_cuda.items(), key=lambda item: item[0].key):
        subject = f"wheel {wheel.label}"
        if any(v.key == version.key for v in conda_cuda):
            continue
        same = [v for v in conda_cuda if v.major == version.major]
        add = f"add CUDA {version} to the conda matrix or drop the {wheel.label} wheels"
        if same:
            c.add(
                Level.WARN, Topic.CUDA, subject,
                f"toolkit {version} has no conda build (conda builds CUDA {version.major} as "
                f"{_versions(same)})", add,
            )  # fmt: skip
        else:
            c.add(
                Level.ERROR, Topic.CUDA, subject,
                f"toolkit {version} and its whole major have no conda build (conda: "
                f"{_versions(conda_cuda)})", add,
            )  # fmt: skip
    others = [w for w in c.wheels.variants if not w.is_null and c.claims[w.label] is None]
    foreign = [w for w in others if w.x86_64_level(c.tables) is None]
    if foreign:
        c.add(
            Level.INFO, Topic.OTHER, "wheels",
            f"variants {_labels(foreign)} use namespaces no conda build here is compared with",
        )  # fmt: skip


def _lower_bound_rule(c: _Check, wheel: WheelVariant) -> None:
    subject = f"wheel {wheel.label}"
    bound = wheel.lower_bound(c.tables)
    claim = c.claims[wheel.label]
    assert claim is not None
    said = f"{claim.text}" if claim.source is not ClaimSource.LOWER_BOUND else ""
    if bound is None:
        c.add(
            Level.WARN, Topic.LOWER_BOUND, subject,
            "declares no cuda_version_lower_bound: installers accept it with any driver",
            f"declare nvidia :: cuda_version_lower_bound :: {claim.cuda}",
        )  # fmt: skip
        return
    pins = claim.source is ClaimSource.PINS
    from_label = label_cuda(wheel.label)
    if (
        pins
        and from_label is not None
        and from_label.minor is not None
        and (from_label.key != claim.cuda.key)
    ):
        c.add(
            Level.ERROR, Topic.LOWER_BOUND, subject,
            f"its label says CUDA {from_label} but it {claim.text}",
            "rename the variant or pin the components of its toolkit",
        )  # fmt: skip
    if claim.source is ClaimSource.LOWER_BOUND:
        c.add(
            Level.INFO if bound.minor is not None else Level.WARN, Topic.LOWER_BOUND, subject,
            f"toolkit known only from its lower bound {bound} (no label or CUDA component pin "
            "says more)",
        )  # fmt: skip
        return
    if bound.key > claim.cuda.key and bound.major == claim.cuda.major:
        c.add(
            Level.ERROR, Topic.LOWER_BOUND, subject,
            f"declares cuda_version_lower_bound {bound} but {said}",
            f"declare {claim.cuda}",
        )  # fmt: skip
    elif bound.key < claim.cuda.key:
        c.add(
            Level.WARN, Topic.LOWER_BOUND, subject,
            f"declares cuda_version_lower_bound {bound} but {said}: installers accept it beside "
            f"a conda toolkit as old as {bound}, while a conda build of it needs cuda-version "
            f">={claim.cuda} (nvcc's run export)",
            f"declare nvidia :: cuda_version_lower_bound :: {claim.cuda}",
        )  # fmt: skip
    else:
        c.add(Level.OK, Topic.LOWER_BOUND, subject, f"lower bound {bound} = toolkit ({said})")


def _arch_rule(c: _Check, pair: Pair) -> None:
    build, wheel = pair.build, pair.wheel
    if build.cuda is None or wheel is None:
        return
    if build.archs is None:
        c.add(
            Level.INFO, Topic.SM_ARCH, pair.subject,
            "no CUDA architecture list known for the conda build",
            f"pass --arch-list {build.cuda}=LIST (from the recipe's build script)",
        )  # fmt: skip
        return
    wheel_archs = wheel.archs(c.tables)
    if not wheel_archs:
        c.add(
            Level.WARN, Topic.SM_ARCH, pair.subject,
            f"the wheel declares no sm_arch (installers take it for any GPU); conda builds "
            f"{build.archs}",
            f"declare sm_arch {' '.join(build.archs.sm_arch)}",
        )  # fmt: skip
        return
    conda_only, wheel_only = build.archs - wheel_archs, wheel_archs - build.archs
    if not conda_only and not wheel_only:
        c.add(
            Level.OK, Topic.SM_ARCH, pair.subject,
            f"SM architectures agree ({len(wheel_archs)} targets)",
        )  # fmt: skip
        return
    c.add(
        Level.WARN, Topic.SM_ARCH, pair.subject,
        f"SM architectures differ: conda only {conda_only or '-'}; wheel only {wheel_only or '-'}",
        _arch_fix(conda_only, wheel_only),
    )  # fmt: skip


def _arch_fix(conda_only: ArchSet, wheel_only: ArchSet) -> str:
    fix = []
    if conda_only:
        fix.append(f"add sm_arch {' '.join(conda_only.sm_arch)} to the wheel variant")
    if wheel_only:
        fix.append(f"compile {wheel_only.cmake()} into the conda build (or drop it from the wheel)")
    return "; ".join(fix)


def _glibc_text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _glibc_rule(c: _Check, pair: Pair) -> None:
    build, wheel = pair.build, pair.wheel
    if wheel is None or build.glibc is None or not c.wheels.files_known:
        return
    floor = wheel.glibc(build.platform)
    if floor is None:
        return
    conda, wheels = _glibc_text(build.glibc), _glibc_text(floor)
    if floor == build.glibc:
        c.add(Level.OK, Topic.GLIBC, pair.subject, f"glibc floor {conda} on both sides")
    elif floor > build.glibc:
        c.add(
            Level.WARN, Topic.GLIBC, pair.subject,
            f"the wheels need glibc >={wheels} (manylinux_{floor[0]}_{floor[1]}), the conda "
            f"build {conda} (c_stdlib_version): machines with a glibc older than {wheels} get the "
            "conda package but no wheel",
            f"build the wheels for manylinux_{build.glibc[0]}_{build.glibc[1]} or raise "
            f"c_stdlib_version to {wheels}",
        )  # fmt: skip
    else:
        c.add(
            Level.WARN, Topic.GLIBC, pair.subject,
            f"the conda build needs glibc >={conda} (c_stdlib_version), the wheels only "
            f"{wheels} (manylinux_{floor[0]}_{floor[1]})",
            f"lower c_stdlib_version to {wheels} or tag the wheels "
            f"manylinux_{build.glibc[0]}_{build.glibc[1]}",
        )  # fmt: skip


def _level_rule(c: _Check, pair: Pair) -> None:
    build, wheel = pair.build, pair.wheel
    if wheel is None:
        return
    ours, theirs = build.microarch_level, wheel.x86_64_level(c.tables)
    if ours == theirs:
        if ours is not None:
            c.add(Level.OK, Topic.X86_64_LEVEL, pair.subject, f"x86-64 level v{ours} on both sides")
        return
    conda = f"microarch_level {ours}" if ours is not None else "no microarch_level"
    wheels = f"x86_64 :: level :: v{theirs}" if theirs is not None else "no x86_64 :: level"
    c.add(
        Level.WARN, Topic.X86_64_LEVEL, pair.subject,
        f"the conda build has {conda}, the wheel {wheels}",
        f"declare x86_64 :: level :: v{ours} on the wheel" if ours is not None
        else f"build the conda package with microarch_level {theirs}",
    )  # fmt: skip


def _cpu_rule(c: _Check) -> None:
    cpu = [b for b in c.conda.builds if b.cuda is None]
    null = [w for w in c.wheels.variants if w.is_null]
    if cpu and null:
        c.add(Level.OK, Topic.CPU, "CPU <-> null", "a CPU conda build and a null wheel variant")
    elif cpu:
        c.add(
            Level.WARN, Topic.CPU, "CPU <-> null",
            "conda has a CPU build but the wheels have no null variant: pip users without a "
            "supported GPU get no wheel",
            "publish a null variant (variantlib make-variant --null-variant)",
        )  # fmt: skip
    elif null:
        c.add(
            Level.WARN, Topic.CPU, "CPU <-> null",
            "the wheels have a null variant but the conda builds read have no CPU build "
            "(cuda_compiler_version None)",
            "add cuda_compiler_version None to the conda matrix, or check its CPU files too",
        )  # fmt: skip


def _python_rule(c: _Check) -> None:
    conda = {p for b in c.conda.builds for p in b.python}
    wheel_sets = [w.python() for w in c.wheels.variants]
    known = [s for s in wheel_sets if s is not None]
    if not conda or not known:
        return
    wheels = set().union(*known)
    if "any" in wheels:
        c.add(Level.OK, Topic.PYTHON, "python", "the wheels are for any Python 3")
        return

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in v.split("."))

    conda_only, wheel_only = sorted(conda - wheels, key=key), sorted(wheels - conda, key=key)
    if not conda_only and not wheel_only:
        c.add(Level.OK, Topic.PYTHON, "python", f"Python {', '.join(sorted(conda, key=key))}")
        return
    c.add(
        Level.WARN, Topic.PYTHON, "python",
        f"Python versions differ: conda only {', '.join(conda_only) or '-'}; wheels only "
        f"{', '.join(wheel_only) or '-'}",
        "build the same Python versions on both sides",
    )  # fmt: skip


def _build_number_rule(c: _Check) -> None:
    groups: dict[tuple[str, int | None, int], list[CondaBuild]] = {}
    for build in c.conda.builds:
        if build.cuda is not None and build.build_number is not None:
            key = (build.platform, build.microarch_level, build.build_number)
            groups.setdefault(key, []).append(build)
    for (_, _, number), builds in sorted(groups.items(), key=lambda i: str(i[0])):
        minors = {b.cuda for b in builds if b.cuda is not None}
        if len(minors) < 2:
            continue
        c.add(
            Level.WARN, Topic.BUILD_NUMBER, "conda build numbers",
            f"CUDA {_versions(minors)} share build number {number}: among them conda picks the "
            "newest upload, not the newest toolkit the machine supports",
            "offset the build number per CUDA minor (variant-bridge matrix computes them)",
        )  # fmt: skip


def check_release(
    conda: CondaSide, wheels: WheelSide, *, tables: MappingTables | None = None
) -> CheckReport:
    """Compare both sides of one release; findings in rule order, pairs in build order."""
    c = _Check(conda, wheels, tables or load_tables())
    _version_rule(c)
    _cuda_coverage(c)
    for wheel in c.cuda_wheels:
        _lower_bound_rule(c, wheel)
    pairs = tuple(c.pair(b) for b in conda.builds)
    for rule in (_arch_rule, _glibc_rule, _level_rule):
        for pair in _distinct(pairs):
            rule(c, pair)
    if not c.wheels.files_known and any(b.glibc for b in conda.builds):
        c.add(
            Level.INFO, Topic.GLIBC, "wheels",
            "glibc floor of the wheels unknown: only their variant metadata was read",
            "give the wheels, or their tags with --wheel-tag",
        )  # fmt: skip
    _cpu_rule(c)
    _python_rule(c)
    _build_number_rule(c)
    return CheckReport(conda, wheels, pairs, tuple(c.findings))


def _distinct(pairs: Sequence[Pair]) -> list[Pair]:
    """One pair per (conda build shape, wheel): Python and other keys do not repeat findings."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for pair in pairs:
        b = pair.build
        key = (
            b.platform,
            b.cuda,
            b.microarch_level,
            b.glibc,
            b.archs,
            pair.wheel and pair.wheel.label,
        )
        if key not in seen:
            seen.add(key)
            out.append(pair)
    return out
