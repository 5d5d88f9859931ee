"""The pixi rich platform an export declares: the lowest driver, GPU architecture, CPU level and
glibc that satisfy both the wheels' host requirements and the pinned conda packages' own ``__*``
dependencies, so that a colleague with a newer machine matches the platform too (docs/share.md,
"pixi"). rattler's MatchSpec decides what satisfies a spec.

pixi matches a host against a declared platform as a minimum (each declared virtual package at a
version at least as high; ``__archspec`` by presence only), so a wheel requirement with an upper
bound (``__cuda_arch >=8.0,<9``: kernels for 8.x only) or on the CPU cannot be declared: such
requirements are returned as :attr:`PlatformDeclaration.unenforceable`, and the pixi writers
refuse them rather than declare a platform that admits hosts the wheel cannot run on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Literal

from variant_bridge.environment import Environment
from variant_bridge.errors import ExportError, clip, quote
from variant_bridge.export.dependencies import major_minor
from variant_bridge.export.history import spec_name
from variant_bridge.export.model import HostRequirement, PlatformDeclaration
from variant_bridge.mappings import load_tables

__all__ = ["platform_declaration", "unenforced"]

_LOWER_BOUND_RE = re.compile(r">=?\s*([0-9][0-9a-z.]*)")
_PIXI_DEFAULT_GLIBC = "2.28"


def platform_declaration(env: Environment, host: Sequence[HostRequirement]) -> PlatformDeclaration:
    """The lowest declared virtual packages that satisfy the wheels (*host*) and the records."""
    depends = _virtual_specs(env, "depends")
    constrains = _virtual_specs(env, "constrains")
    wheel_specs = [h.rattler_spec for h in host]
    every = depends + constrains + wheel_specs
    subdir = env.platform

    # Constrains alone never need a driver (they are vacuous without __cuda); a dependency, a
    # wheel's requirement or a solved toolkit does.
    needs_cuda = env.toolkit is not None or any(
        spec_name(s) == "__cuda" for s in (*depends, *wheel_specs)
    )
    cuda = _lowest_cuda(env, [s for s in every if spec_name(s) == "__cuda"]) if needs_cuda else None

    arch: str | None = None
    arch_specs = [s for s in every if spec_name(s) == "__cuda_arch"]
    if cuda is not None and arch_specs:
        gpu = env.cuda_arch.version if env.cuda_arch is not None else None
        arch = _lowest("__cuda_arch", arch_specs, subdir, also=(gpu,), fallback=gpu)

    archspec_specs = [s for s in wheel_specs if spec_name(s) == "__archspec"]
    archspec = _lowest_archspec(env, archspec_specs) if archspec_specs else None

    glibc: str | None = None
    glibc_specs = [s for s in every if spec_name(s) == "__glibc"]
    if (
        glibc_specs
        and subdir.startswith("linux")
        and not _satisfies("__glibc", _PIXI_DEFAULT_GLIBC, "0", glibc_specs, subdir)
    ):
        glibc = _lowest("__glibc", glibc_specs, subdir)
    declaration = PlatformDeclaration(subdir, cuda, arch, archspec, glibc)
    return replace(declaration, unenforceable=unenforced(host, declaration))


def unenforced(
    host: Sequence[HostRequirement], declaration: PlatformDeclaration, *, arch: bool = True
) -> tuple[HostRequirement, ...]:
    """The requirements of *host* that a host admitted by *declaration* may still fail: pixi
    checks each declared virtual package as a minimum (``arch=False``: the GPU is not declared,
    as in ``[system-requirements]``)."""
    declared = {
        "__cuda": declaration.cuda,
        "__cuda_arch": declaration.cuda_arch if arch else None,
        "__glibc": declaration.glibc or _default_glibc(declaration.subdir),
    }
    return tuple(
        h for h in host if not _enforced(h.rattler_spec, declared.get(spec_name(h.rattler_spec)))
    )


def _virtual_specs(env: Environment, kind: Literal["depends", "constrains"]) -> list[str]:
    """The records' ``__*`` specs of one kind, each checked once here.

    :raises ExportError: a spec rattler cannot read (naming the record, the entry and why).
    """
    from rattler import MatchSpec

    found = []
    for record in env.conda_packages:
        for spec in getattr(record, kind):
            if not spec.startswith("__"):
                continue
            try:
                MatchSpec(spec)
            except Exception as e:  # rattler's InvalidMatchSpecError
                raise ExportError(
                    f"{clip(env.origin)}: {record}: invalid {kind} entry {quote(spec)}: "
                    f"{clip(' '.join(str(e).split()))}"
                ) from e
            found.append(spec)
    return found


def _default_glibc(subdir: str) -> str | None:
    return _PIXI_DEFAULT_GLIBC if subdir.startswith("linux") else None


def _enforced(spec: str, declared: str | None) -> bool:
    """Whether pixi, which admits a host whose virtual package is at least *declared*, admits
    only hosts that satisfy *spec*: every version from *declared* up satisfies it (tested at each
    bound the spec names, just past it, and far above)."""
    from rattler import Version

    if declared is None:
        return False  # not declared (or __archspec, which pixi matches by presence only)
    name = spec_name(spec)
    floor = Version(declared)
    bounds = set(re.findall(r"[0-9]+(?:\.[0-9]+)*", spec.partition(" ")[2]))
    points = [declared, "999999"]
    points += [p for b in bounds for p in (b, f"{b}.0.1") if Version(p) >= floor]
    return all(_satisfies(name, p, "0", [spec], "linux-64") for p in points)


def _lowest_cuda(env: Environment, specs: Sequence[str]) -> str | None:
    toolkit_major = (
        major_minor(env.toolkit.version).split(".")[0] if env.toolkit is not None else None
    )
    driver = env.cuda.version if env.cuda is not None else None
    return _lowest("__cuda", specs, env.platform, also=(toolkit_major, driver), fallback=driver)


def _satisfies(name: str, version: str, build: str, specs: Sequence[str], subdir: str) -> bool:
    from rattler import MatchSpec, PackageRecord  # heavy: loaded when an export is built
    from rattler.package import BuildString

    record = PackageRecord(name, version, BuildString(build), 0, subdir)
    return all(MatchSpec(spec).matches(record) for spec in specs)


def _lowest(
    name: str,
    specs: Sequence[str],
    subdir: str,
    *,
    also: Iterable[str | None] = (),
    fallback: str | None = None,
) -> str | None:
    """The lowest version of virtual package *name* that satisfies *specs*, tried among the
    specs' own lower bounds and *also*; *fallback* when none does."""
    from rattler import Version

    candidates: list[str | None] = [
        *(str(m) for s in specs for m in _LOWER_BOUND_RE.findall(s)),
        *also,
    ]
    unique = {c for c in candidates if c and re.fullmatch(r"[0-9]+(\.[0-9]+)*", c)}
    for version in sorted(unique, key=Version):
        if _satisfies(name, version, "0", specs, subdir):
            return version
    return fallback


def _lowest_archspec(env: Environment, specs: Sequence[str]) -> str | None:
    """The lowest generic microarchitecture (``x86_64_v3``) every spec accepts, else the
    detected one."""
    generics: list[str] = []
    for cpu in load_tables().cpus:
        values = [cpu.base_value] + [f"v{n}" for n in range(2, 10)]
        generics += [cpu.archspec_name(v) for v in values]
    for name in generics:
        if _satisfies("__archspec", "1", name, specs, env.platform):
            return name
    return env.archspec.build if env.archspec is not None else None
