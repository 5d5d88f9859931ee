"""This machine, through py-rattler's virtual package detection (imported lazily).

Overrides are NOT taken from rattler (``VirtualPackageOverrides.from_env()`` reads ``os.environ``,
and its constructor cannot express ``cuda_arch``/``linux``/``win``): the caller layers declared
facts in Python. The one override passed down is ``__cuda`` when it is already decided, because
that is the expensive probe (NVML / libcuda) and rattler then skips it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.environment import Source, VirtualPackage
from variant_bridge.errors import DetectionError
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.virtual_packages import applies_to

__all__ = [
    "KFD_NODES",
    "AmdGpu",
    "amd_gpus",
    "applies_to",
    "detect_virtual_packages",
    "host_platform",
    "platform_defaults",
    "rocm_version_file",
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


# -- AMD: every GPU (KFD topology) and the ROCm runtime (its version file) ----------------------

KFD_NODES = Path("/sys/class/kfd/kfd/topology/nodes")
"""Where the amdgpu kernel driver lists its nodes (CPUs and GPUs), one folder each; rattler reads
the same topology for ``__amdgpu_arch``."""
# A properties file is a few hundred bytes; a larger one is not KFD's.
_MAX_PROPERTIES = 64 * 1024
_MAX_NODES = 256


@value
class AmdGpu:
    """One AMD GPU as KFD describes it: its ISA (``(9, 4, 2)``) and compute units."""

    isa: tuple[int, int, int]
    compute_units: int
    node: str


def amd_gpus(nodes: Path = KFD_NODES) -> tuple[AmdGpu, ...]:
    """Every AMD GPU KFD lists under *nodes*, most compute units first (rattler's order for
    ``__amdgpu_arch``); ``()`` without KFD. A node's ``gfx_target_version`` is
    ``major * 10000 + minor * 100 + stepping`` (``90402`` for gfx942; ``0`` for a CPU node) and its
    compute units are ``simd_count / simd_per_cu`` (as rocminfo counts them). Unreadable nodes are
    skipped: this list only explains, rattler decides."""
    try:
        entries = sorted(nodes.iterdir(), key=lambda p: p.name)[:_MAX_NODES]
    except OSError:
        return ()
    gpus = []
    for entry in entries:
        properties = _kfd_properties(entry / "properties")
        target = properties.get("gfx_target_version", 0)
        simds, per_cu = properties.get("simd_count", 0), properties.get("simd_per_cu", 0)
        if target <= 0 or simds <= 0:
            continue  # a CPU node
        isa = (target // 10000, target // 100 % 100, target % 100)
        gpus.append(AmdGpu(isa, simds // per_cu if per_cu > 0 else 0, entry.name))
    return tuple(sorted(gpus, key=lambda g: -g.compute_units))


def _kfd_properties(path: Path) -> dict[str, int]:
    try:
        with path.open("rb") as f:
            text = f.read(_MAX_PROPERTIES).decode("ascii", errors="replace")
    except OSError:
        return {}
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, number = line.strip().partition(" ")
        if number.strip().isascii() and number.strip().isdigit() and len(number.strip()) <= 12:
            found[key] = int(number.strip())
    return found


_ROCM_VERSION = Lazy(r"([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,6}))?", re.ASCII)


def rocm_version_file(
    environ: Mapping[str, str], *, root_variable: str, default_root: str, version_file: str
) -> tuple[str, str] | None:
    """``(version, path)`` of this machine's ROCm as the AMD provider reads it:
    ``$ROCM_PATH/.info/version``, else the default root's (``/opt/rocm``); ``None`` when there
    is none or it does not start with a version (``6.4.1-120`` -> ``6.4.1``)."""
    root = environ.get(root_variable) or default_root
    path = Path(root) / version_file
    try:
        with path.open("rb") as f:
            text = f.read(256).decode("ascii", errors="replace").strip()
    except OSError:
        return None
    match = _ROCM_VERSION.match(text)
    if match is None:
        return None
    return ".".join(n for n in match.groups() if n is not None), str(path)
