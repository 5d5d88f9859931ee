"""The rules ``check`` applies, each adding findings to a :class:`Comparison` (semantics §11.3).

Rules about CUDA coverage, the CPU build, Python and build numbers run per platform; rules about
one pair (SM targets, glibc, x86-64 level) per distinct pair; rules about one wheel variant
(lower bound, label) once. A fix never asks for what the toolkit table says cannot be built: an
SM target the toolkit's nvcc does not compile, a glibc below the CUDA major's floor.
"""

from __future__ import annotations

from collections.abc import Sequence

from variant_bridge.cuda_archs import ArchSet
from variant_bridge.release import CondaBuild, CudaVersion, ToolkitBasis, WheelVariant, python_key
from variant_bridge.release_check.context import Comparison, Pair, short_name, versions_text
from variant_bridge.release_check.findings import Level, Rule

__all__ = [
    "arch_rule",
    "build_number_rule",
    "cpu_rule",
    "cuda_coverage",
    "family_rule",
    "glibc_rule",
    "identical_variants_rule",
    "level_rule",
    "lower_bound_rule",
    "platform_rule",
    "python_rule",
    "unread_rule",
    "version_rule",
]


def _labels(wheels: Sequence[WheelVariant]) -> str:
    return ", ".join(sorted(w.label for w in wheels)) or "none"


def _glibc_text(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def version_rule(c: Comparison) -> None:
    ours, theirs = c.conda.version, c.wheels.version
    if ours is None or theirs is None:
        return
    if ours == theirs:
        c.add(Level.OK, Rule.VERSION_MATCH, "release",
              f"both sides are version {ours}")  # fmt: skip
        return
    c.add(
        Level.ERROR, Rule.VERSION_MISMATCH, "release",
        f"the conda packages are version {ours}, the wheels {theirs}",
        "compare the two sides of one release",
    )  # fmt: skip


# -- platforms and families -------------------------------------------------------------------


def platform_rule(c: Comparison) -> None:
    """Conda builds for a platform no wheel is for, and wheels for one no conda build is for
    (only when the wheels' tags are known)."""
    if not c.wheels.files_known:
        return
    for platform in c.platforms:
        if c.wheels_on(platform):
            continue
        builds = c.builds_on(platform)
        cuda = sorted({b.cuda for b in builds if b.cuda}, key=lambda v: v.key)
        what = ", ".join([*(f"CUDA {v}" for v in cuda), *(["CPU"] if any(
            b.cuda is None for b in builds) else [])])  # fmt: skip
        c.add(
            Level.WARN, Rule.PLATFORM_WITHOUT_WHEELS, "conda builds{where}",
            f"{what}, but no wheel read is for {platform}: pip users there get no wheel",
            f"publish wheels for {platform}, or check the wheels of every platform",
            platforms=(platform,), conda_builds=tuple(b.where for b in builds),
        )  # fmt: skip
    wheel_platforms: dict[str, list[str]] = {}
    for wheel in c.wheels.variants:
        for platform in sorted(wheel.platforms() or ()):
            wheel_platforms.setdefault(platform, []).append(wheel.label)
    for platform, labels in wheel_platforms.items():
        if platform in c.platforms or not c.platforms:
            continue
        c.add(
            Level.WARN, Rule.PLATFORM_WITHOUT_CONDA, "wheels{where}",
            f"wheels {', '.join(labels)} are for {platform}, but no conda build read is for "
            f"{platform}",
            f"add {platform} to the conda matrix, or give its conda files too",
            platforms=(platform,),
        )  # fmt: skip


def family_rule(c: Comparison, pair: Pair) -> None:
    build = pair.build
    if not build.family:
        return
    keys = " ".join(f"{k}={v}" for k, v in build.family)
    c.add(
        Level.INFO, Rule.FAMILY_WITHOUT_WHEELS, f"{short_name(build)}{{where}}",
        f"a build family of its own ({keys}): no wheel platform tag describes it, so it is not "
        "compared with the wheels",
        platforms=(build.where_built,), cuda=build.cuda, conda_builds=(build.where,),
    )  # fmt: skip


# -- CUDA coverage ----------------------------------------------------------------------------


def _conda_coverage(c: Comparison, platform: str, wheels: list[WheelVariant]) -> None:
    builds = c.builds_on(platform)
    minors = {c.toolkit(w).cuda.key: w for w in wheels if c.minor_precise(w)}
    majors = [w for w in wheels if not c.minor_precise(w)]
    for version in sorted({b.cuda for b in builds if b.cuda}, key=lambda v: v.key):
        files = tuple(b.where for b in builds if b.cuda == version)
        facts = {"platforms": (platform,), "cuda": version, "conda_builds": files}
        template = f"conda CUDA {version}{{where}}"
        if version.key in minors:
            wheel = minors[version.key]
            c.add(Level.OK, Rule.CUDA_MATCH, template,
                  f"wheel variant {wheel.label} has that toolkit", label=wheel.label,
                  toolkit_from=c.toolkit_from(wheel), **facts)  # fmt: skip
            continue
        whole = next((w for w in majors if c.toolkit(w).cuda.major == version.major), None)
        if whole is not None:
            c.add(Level.OK, Rule.CUDA_PER_MAJOR, template,
                  f"wheel variant {whole.label} ({c.toolkit(whole)}) holds for it",
                  label=whole.label, toolkit_from=c.toolkit_from(whole), **facts)  # fmt: skip
            continue
        same = [v for v in (c.toolkit(w).cuda for w in wheels) if v.major == version.major]
        add = (
            f"add a wheel variant built with CUDA {version} or drop {version} from the conda matrix"
        )
        if same:
            c.add(Level.WARN, Rule.CONDA_MINOR_WITHOUT_WHEEL, template,
                  f"no wheel variant has toolkit {version} (wheels of CUDA {version.major}: "
                  f"{versions_text(same)})", add, **facts)  # fmt: skip
        else:
            shown = versions_text(c.toolkit(w).cuda for w in wheels)
            c.add(Level.ERROR, Rule.CONDA_MAJOR_WITHOUT_WHEEL, template,
                  f"no wheel variant for CUDA {version.major} at all (wheels: {shown})", add,
                  **facts)  # fmt: skip


def _wheel_coverage(c: Comparison, platform: str, wheels: list[WheelVariant]) -> None:
    conda = {b.cuda for b in c.builds_on(platform) if b.cuda is not None}
    for wheel in sorted(wheels, key=lambda w: (c.toolkit(w).cuda.key, w.label)):
        claim = c.toolkit(wheel)
        version = claim.cuda
        same = [v for v in conda if v.major == version.major]
        facts = {"platforms": (platform,), "cuda": version, "label": wheel.label,
                 "toolkit_from": claim.basis.value}  # fmt: skip
        template = f"wheel {wheel.label}{{where}}"
        add = f"add CUDA {version} to the conda matrix or drop the {wheel.label} wheels"
        if not c.minor_precise(wheel):
            if not same:
                c.add(Level.ERROR, Rule.WHEEL_MAJOR_WITHOUT_CONDA, template,
                      f"{claim} has no conda build of CUDA {version.major} (conda: "
                      f"{versions_text(conda)})",
                      f"add a CUDA {version.major} build to the conda matrix or drop the "
                      f"{wheel.label} wheels", **facts)  # fmt: skip
            continue
        if any(v.key == version.key for v in conda):
            continue
        if same:
            c.add(Level.WARN, Rule.WHEEL_MINOR_WITHOUT_CONDA, template,
                  f"toolkit {version} has no conda build (conda builds CUDA {version.major} as "
                  f"{versions_text(same)})", add, **facts)  # fmt: skip
        else:
            c.add(Level.ERROR, Rule.WHEEL_MAJOR_WITHOUT_CONDA, template,
                  f"toolkit {version} and its whole major have no conda build (conda: "
                  f"{versions_text(conda)})", add, **facts)  # fmt: skip


def cuda_coverage(c: Comparison) -> None:
    """Per platform: every CUDA minor of one side has a build on the other (its major, for a
    wheel that holds for every minor of it)."""
    for platform in c.platforms:
        wheels = [w for w in c.wheels_on(platform) if c.claims[w.label] is not None]
        if not wheels and c.wheels.files_known and not c.wheels_on(platform):
            continue  # platform_rule said it
        _conda_coverage(c, platform, wheels)
        _wheel_coverage(c, platform, wheels)
    others = [w for w in c.wheels.variants if not w.is_null and c.claims[w.label] is None]
    foreign = [w for w in others if w.x86_64_level(c.tables) is None]
    if foreign:
        spaces = sorted({ns for w in foreign for ns in w.description.namespaces})
        c.add(
            Level.INFO, Rule.VARIANTS_NOT_COMPARED, "wheels",
            f"variants {_labels(foreign)} use namespaces ({', '.join(spaces)}) no conda build "
            "here is compared with",
        )  # fmt: skip


def identical_variants_rule(c: Comparison) -> None:
    seen: dict[tuple[str, ...], str] = {}
    for wheel in c.wheels.variants:
        if wheel.is_null:
            continue
        key = tuple(sorted(str(p) for p in wheel.description.properties))
        first = seen.setdefault(key, wheel.label)
        if first != wheel.label:
            c.add(
                Level.WARN, Rule.VARIANTS_IDENTICAL, f"wheels {first}, {wheel.label}",
                f"variants {first} and {wheel.label} declare the same properties: installers "
                "cannot tell them apart and take the first",
                f"give {wheel.label} the properties of what it is built for",
                label=wheel.label,
            )  # fmt: skip


def unread_rule(c: Comparison) -> None:
    unread = c.wheels.unread
    if not unread:
        return
    shown = ", ".join(unread[:4]) + (f" and {len(unread) - 4} more" if len(unread) > 4 else "")
    c.add(
        Level.INFO, Rule.WHEELS_NOT_OPENED, "wheels",
        f"{len(unread)} wheel(s) not opened ({shown}): the index offers neither PEP 658 "
        "metadata nor range requests, so their CUDA component pins were not read; their "
        "toolkits come from their labels and properties",
        "pass --download to read them whole",
    )  # fmt: skip


# -- one wheel variant ------------------------------------------------------------------------


def _per_major_bound(c: Comparison, wheel: WheelVariant, bound: CudaVersion | None) -> None:
    claim = c.toolkit(wheel)
    subject = f"wheel {wheel.label}"
    facts = {"label": wheel.label, "cuda": claim.cuda, "toolkit_from": claim.basis.value}
    if bound is None:
        c.add(Level.WARN, Rule.LOWER_BOUND_MISSING, subject,
              "declares no cuda_version_lower_bound: installers accept it with any driver",
              f"declare nvidia :: cuda_version_lower_bound :: {claim.cuda.major}.0",
              **facts)  # fmt: skip
    elif bound.major != claim.cuda.major:
        c.add(Level.ERROR, Rule.LABEL_CONTRADICTS_TOOLKIT, subject,
              f"{claim.text} but declares cuda_version_lower_bound {bound}",
              "rename the variant or correct its lower bound", **facts)  # fmt: skip
    else:
        c.add(Level.OK, Rule.LOWER_BOUND_PER_MAJOR, subject,
              f"lower bound {bound} = its major ({claim.text})",
              **facts)  # fmt: skip


def lower_bound_rule(c: Comparison, wheel: WheelVariant) -> None:
    """A wheel's ``cuda_version_lower_bound`` against its toolkit (pins, label)."""
    subject = f"wheel {wheel.label}"
    bound = wheel.lower_bound(c.tables)
    claim = c.toolkit(wheel)
    facts = {"label": wheel.label, "cuda": claim.cuda, "toolkit_from": claim.basis.value}
    if claim.per_major:
        _per_major_bound(c, wheel, bound)
        return
    if bound is None:
        c.add(Level.WARN, Rule.LOWER_BOUND_MISSING, subject,
              "declares no cuda_version_lower_bound: installers accept it with any driver",
              f"declare nvidia :: cuda_version_lower_bound :: {claim.cuda}", **facts)  # fmt: skip
        return
    if claim.floor_only:
        c.add(Level.INFO, Rule.TOOLKIT_FROM_LOWER_BOUND, subject,
              f"toolkit known only from its lower bound {bound} (no label convention or CUDA "
              f"component pin says more): compared with conda at CUDA {bound.major}",
              **facts)  # fmt: skip
        return
    said = c.tables.toolkits.label_cuda(wheel.label)
    label_minor = CudaVersion(said[0][0], said[0][1]) if said and said[0][1] is not None else None
    if claim.basis is ToolkitBasis.PINS and label_minor and label_minor != claim.cuda:
        c.add(Level.ERROR, Rule.LABEL_CONTRADICTS_TOOLKIT, subject,
              f"its label says CUDA {label_minor} but it {claim.text}",
              "rename the variant or pin the components of its toolkit", **facts)  # fmt: skip
    if bound.key > claim.cuda.key and bound.major == claim.cuda.major:
        c.add(Level.ERROR, Rule.LOWER_BOUND_ABOVE_TOOLKIT, subject,
              f"declares cuda_version_lower_bound {bound} but {claim.text}",
              f"declare {claim.cuda}", **facts)  # fmt: skip
    elif bound.key < claim.cuda.key:
        c.add(
            Level.WARN, Rule.LOWER_BOUND_BELOW_TOOLKIT, subject,
            f"declares cuda_version_lower_bound {bound} but {claim.text}: installers accept it "
            f"beside a conda toolkit as old as {bound}, while a conda build of it needs "
            f"cuda-version >={claim.cuda} (nvcc's run export)",
            f"declare nvidia :: cuda_version_lower_bound :: {claim.cuda}, which also raises the "
            f"driver pip users need from {bound} to {claim.cuda} (keep {bound} if CUDA "
            "minor-version compatibility is meant)",
            **facts,
        )  # fmt: skip
    else:
        c.add(Level.OK, Rule.LOWER_BOUND_MATCH, subject,
              f"lower bound {bound} = toolkit ({claim.text})", **facts)  # fmt: skip


# -- one pair ---------------------------------------------------------------------------------


def _not_compilable(c: Comparison, pair: Pair) -> None:
    """Targets a side declares that its own toolkit's nvcc cannot compile."""
    build, wheel = pair.build, pair.wheel
    if build.cuda is not None and build.archs is not None:
        bad = c.cannot_compile(build.archs, c.nvcc(build.cuda))
        if bad:
            c.add(Level.ERROR, Rule.SM_ARCH_NOT_COMPILABLE,
                  f"{short_name(build)}{{where}}",
                  f"nvcc {build.cuda} cannot compile {bad} ({build.arch_source})",
                  f"drop {bad.cmake()} from the CUDA {build.cuda} arch list",
                  platforms=(build.where_built,), cuda=build.cuda, conda_builds=(build.where,),
                  conda_only=bad.sm_arch)  # fmt: skip
    if wheel is None or c.claims.get(wheel.label) is None or not c.minor_precise(wheel):
        return
    claim = c.toolkit(wheel)
    bad = c.cannot_compile(wheel.archs(c.tables), c.nvcc(claim.cuda))
    if bad:
        c.add(Level.ERROR, Rule.SM_ARCH_NOT_COMPILABLE, f"wheel {wheel.label}",
              f"declares sm_arch {bad}, which nvcc {claim.cuda} cannot compile ({claim.text})",
              "correct its sm_arch or its toolkit", label=wheel.label, cuda=claim.cuda,
              wheel_only=bad.sm_arch, toolkit_from=claim.basis.value)  # fmt: skip


def _arch_fix(c: Comparison, pair: Pair, conda_only: ArchSet, wheel_only: ArchSet) -> str:
    build, wheel = pair.build, pair.wheel
    assert build.cuda is not None
    assert wheel is not None
    claim = c.toolkit(wheel)
    fix = []
    if conda_only:
        row = c.nvcc(claim.cuda, per_major=not c.minor_precise(wheel))
        bad = c.cannot_compile(conda_only, row)
        good = conda_only - bad
        if good:
            fix.append(f"add sm_arch {' '.join(good.sm_arch)} to the wheel variant")
        if bad:
            fix.append(
                f"nvcc {claim.cuda} of {wheel.label} cannot compile {bad}: drop "
                f"{bad.cmake()} from the conda build or compare it with a newer wheel"
            )
    if wheel_only:
        bad = c.cannot_compile(wheel_only, c.nvcc(build.cuda))
        good = wheel_only - bad
        if good:
            fix.append(f"compile {good.cmake()} into the conda build (or drop it from the wheel)")
        if bad:
            fix.append(f"nvcc {build.cuda} cannot compile {bad}: drop it from the wheel")
    return "; ".join(fix)


def arch_rule(c: Comparison, pair: Pair) -> None:
    build, wheel = pair.build, pair.wheel
    if build.cuda is None or wheel is None:
        return
    _not_compilable(c, pair)
    facts = {
        "platforms": (build.where_built,), "cuda": build.cuda, "label": wheel.label,
        "conda_builds": (build.where,), "toolkit_from": c.toolkit_from(wheel),
    }  # fmt: skip
    if build.archs is None:
        c.add(Level.INFO, Rule.SM_ARCH_UNKNOWN, pair.template,
              "no CUDA architecture list known for the conda build",
              f"pass --arch-list {build.cuda}=LIST (PLATFORM:{build.cuda}=LIST for one platform) "
              "from the recipe's build script", **facts)  # fmt: skip
        return
    wheel_archs = wheel.archs(c.tables)
    if not wheel_archs:
        c.add(Level.WARN, Rule.SM_ARCH_UNDECLARED, pair.template,
              f"the wheel declares no sm_arch (installers take it for any GPU); conda builds "
              f"{build.archs}", f"declare sm_arch {' '.join(build.archs.sm_arch)}",
              conda_only=build.archs.sm_arch, **facts)  # fmt: skip
        return
    conda_only, wheel_only = build.archs - wheel_archs, wheel_archs - build.archs
    if not conda_only and not wheel_only:
        c.add(Level.OK, Rule.SM_ARCH_MATCH, pair.template,
              f"SM architectures agree ({len(wheel_archs)} targets)", **facts)  # fmt: skip
        return
    c.add(
        Level.WARN, Rule.SM_ARCH_DIFFER, pair.template,
        f"SM architectures differ: conda only {conda_only or '-'}; wheel only {wheel_only or '-'}",
        _arch_fix(c, pair, conda_only, wheel_only),
        conda_only=conda_only.sm_arch, wheel_only=wheel_only.sm_arch, **facts,
    )  # fmt: skip


def _glibc_floor(c: Comparison, pair: Pair) -> tuple[int, int] | None:
    build = pair.build
    return c.tables.toolkits.glibc_floor(build.cuda.major) if build.cuda is not None else None


def _below_floor(c: Comparison, pair: Pair, floor: tuple[int, int] | None) -> None:
    build, wheel = pair.build, pair.wheel
    if floor is None or build.cuda is None:
        return
    need = _glibc_text(floor)
    facts = {"platforms": (build.where_built,), "cuda": build.cuda}
    if build.glibc is not None and build.glibc < floor:
        c.add(Level.ERROR, Rule.GLIBC_BELOW_CUDA_FLOOR,
              f"{short_name(build)}{{where}}",
              f"CUDA {build.cuda.major} needs glibc >={need}, the conda build has "
              f"c_stdlib_version {_glibc_text(build.glibc)}",
              f"raise c_stdlib_version to {need}", conda_builds=(build.where,),
              **facts)  # fmt: skip
    seen = wheel.glibc(build.platform) if wheel is not None else None
    if wheel is not None and seen is not None and seen < floor:
        c.add(Level.ERROR, Rule.GLIBC_BELOW_CUDA_FLOOR, f"wheel {wheel.label}{{where}}",
              f"CUDA {build.cuda.major} needs glibc >={need}, the wheels are tagged "
              f"manylinux_{seen[0]}_{seen[1]}",
              f"tag the wheels manylinux_{floor[0]}_{floor[1]}", label=wheel.label,
              **facts)  # fmt: skip


def glibc_rule(c: Comparison, pair: Pair) -> None:
    build, wheel = pair.build, pair.wheel
    if wheel is None or build.glibc is None or not c.wheels.files_known:
        return
    cuda_floor = _glibc_floor(c, pair)
    _below_floor(c, pair, cuda_floor)
    floor = wheel.glibc(build.platform)
    if floor is None:
        return
    conda, wheels = _glibc_text(build.glibc), _glibc_text(floor)
    facts = {
        "platforms": (build.where_built,), "cuda": build.cuda, "label": wheel.label,
        "conda_builds": (build.where,),
    }  # fmt: skip
    allowed = cuda_floor or (0, 0)
    if floor == build.glibc:
        c.add(Level.OK, Rule.GLIBC_MATCH, pair.template,
              f"glibc floor {conda} on both sides", **facts)  # fmt: skip
    elif floor > build.glibc:
        fix = [f"build the wheels for manylinux_{build.glibc[0]}_{build.glibc[1]}"] * (
            build.glibc >= allowed
        ) + [f"raise c_stdlib_version to {wheels}"]
        c.add(
            Level.WARN, Rule.GLIBC_WHEELS_NEWER, pair.template,
            f"the wheels need glibc >={wheels} (manylinux_{floor[0]}_{floor[1]}), the conda "
            f"build {conda} (c_stdlib_version): machines with a glibc older than {wheels} get the "
            "conda package but no wheel",
            " or ".join(fix), **facts,
        )  # fmt: skip
    else:
        fix = [f"lower c_stdlib_version to {wheels}"] * (floor >= allowed) + [
            f"tag the wheels manylinux_{build.glibc[0]}_{build.glibc[1]}"
        ]
        c.add(
            Level.WARN, Rule.GLIBC_CONDA_NEWER, pair.template,
            f"the conda build needs glibc >={conda} (c_stdlib_version), the wheels only "
            f"{wheels} (manylinux_{floor[0]}_{floor[1]})",
            " or ".join(fix), **facts,
        )  # fmt: skip


def level_rule(c: Comparison, pair: Pair) -> None:
    build, wheel = pair.build, pair.wheel
    if wheel is None:
        return
    ours, theirs = build.microarch_level, wheel.x86_64_level(c.tables)
    facts = {"platforms": (build.where_built,), "cuda": build.cuda, "label": wheel.label,
             "conda_builds": (build.where,)}  # fmt: skip
    if ours == theirs:
        if ours is not None:
            c.add(Level.OK, Rule.X86_64_LEVEL_MATCH, pair.template,
                  f"x86-64 level v{ours} on both sides", **facts)  # fmt: skip
        return
    conda = f"microarch_level {ours}" if ours is not None else "no microarch_level"
    wheels = f"x86_64 :: level :: v{theirs}" if theirs is not None else "no x86_64 :: level"
    c.add(
        Level.WARN, Rule.X86_64_LEVEL_DIFFER, pair.template,
        f"the conda build has {conda}, the wheel {wheels}",
        f"declare x86_64 :: level :: v{ours} on the wheel" if ours is not None
        else f"build the conda package with microarch_level {theirs}",
        **facts,
    )  # fmt: skip


# -- per platform -----------------------------------------------------------------------------


def cpu_rule(c: Comparison) -> None:
    for platform in c.platforms:
        wheels = c.wheels_on(platform)
        if not wheels:
            continue
        cpu = [b for b in c.builds_on(platform) if b.cuda is None]
        null = [w for w in wheels if w.is_null]
        facts = {"platforms": (platform,), "conda_builds": tuple(b.where for b in cpu)}
        if cpu and null:
            c.add(Level.OK, Rule.CPU_MATCH, "CPU{where} <-> null",
                  "a CPU conda build and a null wheel variant", label=null[0].label,
                  **facts)  # fmt: skip
        elif cpu:
            c.add(
                Level.WARN, Rule.CPU_WITHOUT_NULL, "CPU{where} <-> null",
                "conda has a CPU build but the wheels have no null variant: pip users without "
                "a supported GPU get no wheel",
                "publish a null variant (variantlib make-variant --null-variant)", **facts,
            )  # fmt: skip
        elif null:
            c.add(
                Level.WARN, Rule.NULL_WITHOUT_CPU, "CPU{where} <-> null",
                "the wheels have a null variant but the conda builds read have no CPU build "
                "(cuda_compiler_version None)",
                "add cuda_compiler_version None to the conda matrix, or check its CPU files too",
                label=null[0].label, **facts,
            )  # fmt: skip


def python_rule(c: Comparison) -> None:
    """Per platform: the conda builds' Pythons against the wheels' ``cpXY`` tags (``3.13t``,
    free-threaded, a Python of its own on both sides)."""
    for platform in c.platforms:
        conda = {p for b in c.builds_on(platform) for p in b.python}
        known = [s for w in c.wheels_on(platform) if (s := w.python(platform)) is not None]
        if not conda or not known:
            continue
        wheels: set[str] = set().union(*known)
        facts = {"platforms": (platform,)}
        if "any" in wheels:
            c.add(Level.OK, Rule.PYTHON_MATCH, "python{where}",
                  "the wheels are for any Python 3", **facts)  # fmt: skip
            continue
        conda_only = sorted(conda - wheels, key=python_key)
        wheel_only = sorted(wheels - conda, key=python_key)
        if not conda_only and not wheel_only:
            c.add(Level.OK, Rule.PYTHON_MATCH, "python{where}",
                  f"Python {', '.join(sorted(conda, key=python_key))}", **facts)  # fmt: skip
            continue
        c.add(
            Level.WARN, Rule.PYTHON_DIFFER, "python{where}",
            f"Python versions differ: conda only {', '.join(conda_only) or '-'}; wheels only "
            f"{', '.join(wheel_only) or '-'}",
            "build the same Python versions on both sides (free-threaded 3.13t is conda's "
            "python 3.13.* *_cp313t)" if any(v.endswith("t") for v in conda_only + wheel_only)
            else "build the same Python versions on both sides",
            conda_only=tuple(conda_only), wheel_only=tuple(wheel_only), **facts,
        )  # fmt: skip


def build_number_rule(c: Comparison) -> None:
    groups: dict[tuple[str, int | None, int], list[CondaBuild]] = {}
    for build in c.main_builds:
        if build.cuda is not None and build.build_number is not None:
            key = (build.platform, build.microarch_level, build.build_number)
            groups.setdefault(key, []).append(build)
    for (platform, _, number), builds in sorted(groups.items(), key=lambda i: str(i[0])):
        minors = {b.cuda for b in builds if b.cuda is not None}
        if len(minors) < 2:
            continue
        c.add(
            Level.WARN, Rule.BUILD_NUMBER_TIE, "conda build numbers{where}",
            f"CUDA {versions_text(minors)} share build number {number}: among them conda picks "
            "the newest upload, not the newest toolkit the machine supports",
            "offset the build number per CUDA minor (variant-bridge matrix computes them)",
            platforms=(platform,), conda_builds=tuple(b.where for b in builds),
        )  # fmt: skip
