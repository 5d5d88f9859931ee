"""One comparison's state: both sides, the tables, per-platform views, the pairs and findings.

Pairing is per platform (a wheel's tags against a build's ``target_platform``) and per build
family: a conda CUDA build pairs with the wheel variant of its platform built with the same CUDA
minor; else with a wheel of its major that holds for every minor (a per-major wheel, or one whose
toolkit only a lower bound gives); else with a *stand-in*: the newest wheel of its major below it
(else the oldest above) among those whose own minor has no conda build **on that platform**. A
build of a family of its own (``arm_variant_type=tegra``) pairs with nothing. A CPU build pairs
with the null variant (or, with a ``microarch_level``, the variant of that ``x86_64 :: level``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from variant_bridge.cuda_archs import ArchSet
from variant_bridge.mappings import MappingTables, NvccRelease
from variant_bridge.release import (
    CondaBuild,
    CondaSide,
    CudaVersion,
    WheelSide,
    WheelToolkit,
    WheelVariant,
)
from variant_bridge.release_check.findings import Finding, Level, Rule

__all__ = ["Comparison", "Pair", "short_name", "versions_text"]


def short_name(build: CondaBuild) -> str:
    """``CUDA 12.9``, ``CPU``, ``CUDA 12.9 x86-64-v3`` (the platform goes in ``{where}``)."""
    text = "CPU" if build.cuda is None else f"CUDA {build.cuda}"
    return text + (f" x86-64-v{build.microarch_level}" if build.microarch_level else "")


def versions_text(values: Iterable[CudaVersion]) -> str:
    return ", ".join(str(v) for v in sorted(set(values), key=lambda v: v.key)) or "none"


@dataclass(frozen=True, slots=True)
class Pair:
    """A conda build and the wheel variant compared with it (``None``: none fits)."""

    build: CondaBuild
    wheel: WheelVariant | None
    exact: bool
    """The wheel has the build's CUDA minor (or both are CPU)."""

    @property
    def template(self) -> str:
        return f"{short_name(self.build)}{{where}} <-> {self.wheel.label if self.wheel else '-'}"

    @property
    def subject(self) -> str:
        return f"{self.build.name} <-> {self.wheel.label if self.wheel else '-'}"


class Comparison:
    """Both sides of one release, read once into what the rules ask."""

    def __init__(self, conda: CondaSide, wheels: WheelSide, tables: MappingTables) -> None:
        self.conda = conda
        self.wheels = wheels
        self.tables = tables
        self.findings: list[Finding] = []
        self.claims: dict[str, WheelToolkit | None] = {
            w.label: w.claim(tables) for w in wheels.variants
        }
        self.cuda_wheels = [w for w in wheels.variants if self.claims[w.label] is not None]
        self.main_builds = [b for b in conda.builds if not b.family]
        self.platforms = list(dict.fromkeys(b.platform for b in self.main_builds))

    def add(
        self, level: Level, rule: Rule, template: str, message: str, fix: str = "", /, **facts: Any
    ) -> None:
        self.findings.append(Finding(level, rule, template, message, fix or None, **facts))

    # -- the wheels' toolkits -------------------------------------------------------------------

    def toolkit(self, wheel: WheelVariant) -> WheelToolkit:
        claim = self.claims[wheel.label]
        assert claim is not None
        return claim

    def minor_precise(self, wheel: WheelVariant) -> bool:
        """Its toolkit is one minor (pins or label), not a major or a floor only."""
        claim = self.toolkit(wheel)
        return claim.cuda.minor is not None and not claim.per_major and not claim.floor_only

    def toolkit_from(self, wheel: WheelVariant | None) -> str | None:
        claim = self.claims.get(wheel.label) if wheel is not None else None
        return claim.basis.value if claim is not None else None

    # -- per platform --------------------------------------------------------------------------

    def wheels_on(self, platform: str) -> list[WheelVariant]:
        return [w for w in self.wheels.variants if w.for_platform(platform)]

    def builds_on(self, platform: str) -> list[CondaBuild]:
        return [b for b in self.main_builds if b.platform == platform]

    def conda_minors(self, platform: str) -> set[tuple[int, int]]:
        return {b.cuda.key for b in self.builds_on(platform) if b.cuda is not None}

    # -- what nvcc compiles ----------------------------------------------------------------------

    def nvcc(self, cuda: CudaVersion, *, per_major: bool = False) -> NvccRelease | None:
        """The table's row for toolkit *cuda*; for a per-major toolkit, the major's newest."""
        table = self.tables.toolkits
        if per_major or cuda.minor is None:
            rows = [r for r in table.nvcc if r.cuda[0] == cuda.major]
            return rows[-1] if rows else None
        return table.nvcc_for(cuda.major, cuda.minor)

    @staticmethod
    def cannot_compile(archs: ArchSet, row: NvccRelease | None) -> ArchSet:
        """The targets of *archs* nvcc of *row* does not compile (none when the row is unknown)."""
        if row is None:
            return ArchSet()
        return ArchSet(
            frozenset(t for t in archs.targets if not row.compiles(t.major, t.minor, t.suffix))
        )

    # -- pairing -------------------------------------------------------------------------------

    def _level_fits(self, build: CondaBuild, wheel: WheelVariant) -> bool:
        return build.microarch_level is None or wheel.x86_64_level(self.tables) in (
            None,
            build.microarch_level,
        )

    def _cpu_pair(self, build: CondaBuild, wheels: list[WheelVariant]) -> Pair:
        cpu = [
            w
            for w in wheels
            if self.claims[w.label] is None
            and (w.is_null or w.x86_64_level(self.tables) is not None)
        ]
        if build.microarch_level is not None:
            leveled = [w for w in cpu if w.x86_64_level(self.tables) == build.microarch_level]
            cpu = leveled or cpu
        best = next((w for w in cpu if w.is_null), None) if len(cpu) > 1 else None
        chosen = cpu[0] if len(cpu) == 1 else best
        return Pair(build, chosen, chosen is not None)

    def pair(self, build: CondaBuild) -> Pair:
        if build.family:
            return Pair(build, None, False)
        wheels = self.wheels_on(build.platform)
        if build.cuda is None:
            return self._cpu_pair(build, wheels)
        wanted = build.cuda
        same = [
            w
            for w in wheels
            if self.claims[w.label] is not None
            and self.toolkit(w).cuda.major == wanted.major
            and self._level_fits(build, w)
        ]
        minors = [w for w in same if self.minor_precise(w)]
        exact = [w for w in minors if self.toolkit(w).cuda.minor == wanted.minor]
        if exact:
            return Pair(build, exact[0], True)
        whole = [w for w in same if not self.minor_precise(w)]
        if whole:  # a per-major wheel (or one known by its floor): every minor of the major
            return Pair(build, whole[0], False)
        # A stand-in is a wheel whose own toolkit has no conda build on this platform
        # (pytorch's 12.9 build and torch's cuda12.8): one that has its own is compared with
        # that build only.
        taken = self.conda_minors(build.platform)
        free = [w for w in minors if self.toolkit(w).cuda.key not in taken]
        below = [w for w in free if self.toolkit(w).cuda.key <= wanted.key]
        if below:  # the newest below the build: what a pip user with that toolkit gets
            return Pair(build, max(below, key=lambda w: self.toolkit(w).cuda.key), False)
        if free:
            return Pair(build, min(free, key=lambda w: self.toolkit(w).cuda.key), False)
        return Pair(build, None, False)
