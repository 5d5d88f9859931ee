"""Do the conda side and the wheel side of one release agree? One finding per disagreement.

:func:`check_release` pairs each conda build with the wheel variant of its platform built for the
same CUDA toolkit (:mod:`.context`), then applies the rules (:mod:`.rules`, docs/semantics.md
§11):

- **platforms**: conda builds for a platform no wheel is for, and the other way round; build
  families of their own (``arm_variant_type=tegra``) are named and left out;
- **CUDA coverage**, per platform: every CUDA minor on one side has a build on the other (a
  missing minor is a warning when its major is covered, an error when the whole major is
  missing); a per-major wheel (``cu12``) covers every minor of its major;
- **lower bound**: a wheel's ``cuda_version_lower_bound`` against its toolkit (pins, label):
  torch's ``12.0`` on a 12.8 build is the trap, pins that contradict the label an error;
- **SM architectures** per pair (real and PTX targets, as sets), and targets nvcc of the
  toolkit cannot compile (``toolkits.yaml``);
- **glibc**: the wheels' manylinux floor against ``c_stdlib_version``, and the CUDA major's floor;
- **x86-64 level**: ``microarch_level`` against ``x86_64 :: level``;
- **CPU build** against the **null variant**; **Python** versions (``3.13t`` its own); the
  release **version**; **build numbers** that leave CUDA minors tied.

Findings carry a :class:`Level`, a :class:`Topic` and a stable :class:`Rule` id with structured
fields (kinds drive exit codes and ``--json``; the text is for people) and, where something
should change, what to change: never a change the toolkit table says cannot be built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.release import CondaSide, WheelSide
from variant_bridge.release_check import rules
from variant_bridge.release_check.context import Comparison, Pair
from variant_bridge.release_check.findings import Finding, Level, Rule, Topic, merge

__all__ = ["CheckReport", "Finding", "Level", "Pair", "Rule", "Topic", "check_release"]


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


def check_release(
    conda: CondaSide, wheels: WheelSide, *, tables: MappingTables | None = None
) -> CheckReport:
    """Compare both sides of one release; findings in rule order (the same finding on several
    platforms once, listing them), pairs in build order."""
    c = Comparison(conda, wheels, tables or load_tables())
    rules.version_rule(c)
    rules.platform_rule(c)
    rules.cuda_coverage(c)
    rules.identical_variants_rule(c)
    rules.unread_rule(c)
    for wheel in c.cuda_wheels:
        rules.lower_bound_rule(c, wheel)
    pairs = tuple(c.pair(b) for b in conda.builds)
    for rule in (rules.family_rule, rules.arch_rule, rules.glibc_rule, rules.level_rule):
        for pair in _distinct(pairs):
            rule(c, pair)
    if not c.wheels.files_known and any(b.glibc for b in conda.builds):
        c.add(
            Level.INFO, Rule.GLIBC_UNKNOWN, "wheels",
            "glibc floor of the wheels unknown: only their variant metadata was read",
            "give the wheels, or their tags with --wheel-tag",
        )  # fmt: skip
    rules.cpu_rule(c)
    rules.python_rule(c)
    rules.build_number_rule(c)
    return CheckReport(conda, wheels, pairs, merge(c.findings))


def _distinct(pairs: Sequence[Pair]) -> list[Pair]:
    """One pair per (conda build shape, wheel): Python and other keys do not repeat findings."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for pair in pairs:
        b = pair.build
        key = (
            b.platform,
            b.family,
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
