"""This machine, through py-rattler's virtual package detection (imported lazily).

Overrides are NOT taken from rattler (``VirtualPackageOverrides.from_env()`` reads ``os.environ``,
and its constructor cannot express ``cuda_arch``/``linux``/``win``): the caller layers declared
facts in Python. The one override passed down is ``__cuda`` when it is already decided, because
that is the expensive probe (NVML / libcuda) and rattler then skips it.
"""

from __future__ import annotations

import os

from variant_bridge.environment import Source, VirtualPackage
from variant_bridge.errors import DetectionError
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.virtual_packages import applies_to

__all__ = [
    "applies_to",
    "detect_virtual_packages",
    "host_platform",
    "platform_defaults",
]

# The least capable archspec target per subdir architecture (a test checks archspec knows them).
_MIN_ARCHSPEC = {
    "64": "x86_64",
    "32": "x86",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "ppc64le": "ppc64le",
    "ppc64": "ppc64",
    "riscv64": "riscv64",
}

# pixi's defaults for a bare platform: __linux=4.18, __glibc=2.28, __osx=13.0 (conda.md §5.1),
# __win=10.0 (what pixi writes for a bare win-64 in the real v7 locks of shared/corpus).
_LINUX_DEFAULT = "4.18"
_GLIBC_DEFAULT = "2.28"
_OSX_DEFAULT = "13.0"
_WIN_DEFAULT = "10.0"


def host_platform(tables: MappingTables | None = None) -> str:
    """The conda subdir of this machine, e.g. ``linux-64``: the tables' ``subdirs`` whose system
    and machine this one reports; rattler's answer for a machine the tables do not list."""
    if hasattr(os, "uname"):  # what platform.system()/machine() read, without importing it
        system, machine = os.uname().sysname, os.uname().machine
    else:  # Windows
        import platform

        system, machine = platform.system(), platform.machine()
    subdir = (tables or load_tables()).platform.host_subdir(system, machine)
    if subdir is not None:
        return subdir
    import rattler

    return str(rattler.Subdir.current())


def platform_defaults(platform: str) -> tuple[VirtualPackage, ...]:
    """The virtual packages assumed for a platform that is not this machine (pixi's defaults)."""
    system, _, arch = platform.partition("-")
    default = Source.PLATFORM_DEFAULT
    packages: list[VirtualPackage] = []
    if applies_to("__unix", platform):
        packages.append(VirtualPackage("__unix", "0", "0", default))
    if system == "linux":
        packages.append(VirtualPackage("__linux", _LINUX_DEFAULT, "0", default))
        packages.append(VirtualPackage("__glibc", _GLIBC_DEFAULT, "0", default))
    if system == "osx":
        packages.append(VirtualPackage("__osx", _OSX_DEFAULT, "0", default))
    if system == "win":
        packages.append(VirtualPackage("__win", _WIN_DEFAULT, "0", default))
    minimum = "m1" if platform == "osx-arm64" else _MIN_ARCHSPEC.get(arch)
    if minimum is not None:
        packages.append(VirtualPackage("__archspec", "1", minimum, default))
    return tuple(packages)


def detect_virtual_packages(*, cuda: str | None = None) -> tuple[VirtualPackage, ...]:
    """Detect this machine's virtual packages with py-rattler, without reading any variable.

    :param cuda: an already decided ``__cuda`` version (``""`` = absent) so rattler skips the
        driver probe; ``None`` detects it.
    :raises DetectionError: rattler could not detect.
    """
    from variant_bridge.detect._rattler import native

    rattler = native()  # the extension alone: `import rattler` would load all of py-rattler
    overrides = rattler.PyVirtualPackageOverrides.none()
    if cuda is not None:
        overrides.cuda = rattler.PyOverride.string(cuda)
    try:
        detected = rattler.PyVirtualPackage.detect(overrides, None)
    except Exception as e:  # rattler's DetectVirtualPackageError has no importable base
        raise DetectionError(f"could not detect this machine's virtual packages: {e}") from e
    packages = []
    for vp in detected:
        generic = vp.as_generic()
        packages.append(
            VirtualPackage(
                generic.name.normalized,
                generic.version.as_str(),
                str(generic.build_string),
                Source.DETECTED,
            )
        )
    return tuple(packages)
