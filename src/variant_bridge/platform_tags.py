"""The target interpreter and the wheel tags it accepts on an environment's platform.

Tags are computed for the *target* (its version, ABI and the environment's platform and
``__glibc``), not for the interpreter variant-bridge runs on, so selecting for a pixi.lock of
another platform or a prefix with another Python works.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms

from variant_bridge.environment import Environment

__all__ = ["TargetPython", "platform_tags", "target_tags"]

# conda subdir -> (system, machine as wheel platform tags spell it)
_SUBDIR_ARCH = {
    "linux-64": ("linux", "x86_64"),
    "linux-aarch64": ("linux", "aarch64"),
    "linux-ppc64le": ("linux", "ppc64le"),
    "linux-s390x": ("linux", "s390x"),
    "linux-32": ("linux", "i686"),
    "osx-64": ("osx", "x86_64"),
    "osx-arm64": ("osx", "arm64"),
    "win-64": ("win", "amd64"),
    "win-arm64": ("win", "arm64"),
    "win-32": ("win", "win32"),
}
# The manylinux aliases of PEP 513/571/599 and the glibc minor each one means.
_LEGACY_MANYLINUX = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
_LEGACY_ARCHS = {
    "manylinux2014": None,
    "manylinux2010": ("x86_64", "i686"),
    "manylinux1": ("x86_64", "i686"),
}


@dataclass(frozen=True, slots=True)
class TargetPython:
    """The target interpreter.

    :param version: ``major.minor[.micro]``.
    :param executable: the interpreter to install into; ``None`` when only its version is known
        (a pixi.lock, ``--python 3.12``).
    :param abiflags: ``t`` for a free-threaded CPython.
    :param source: where it came from: ``--python``, ``prefix``, ``pixi.lock``, ``running``.
    """

    version: str
    executable: str | None = None
    implementation: str = "cpython"
    abiflags: str = ""
    source: str = "running"

    @property
    def major_minor(self) -> tuple[int, int]:
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    def __str__(self) -> str:
        where = f" at {self.executable}" if self.executable else ""
        return f"Python {self.version}{self.abiflags}{where} ({self.source})"


def _linux_platforms(arch: str, env: Environment) -> Iterator[str]:
    glibc = env.glibc
    if glibc is not None:
        parts = glibc.version.split(".")
        if len(parts) >= 2 and parts[0] == "2" and parts[1].isdigit():
            for minor in range(int(parts[1]), 4, -1):
                yield f"manylinux_2_{minor}_{arch}"
                legacy = _LEGACY_MANYLINUX.get(minor)
                archs = _LEGACY_ARCHS.get(legacy or "")
                if legacy and (archs is None or arch in archs):
                    yield f"{legacy}_{arch}"
    yield f"linux_{arch}"


def platform_tags(env: Environment) -> tuple[str, ...]:
    """Wheel platform tags the environment accepts, most preferred first.

    manylinux tags follow ``__glibc`` (none without it: conda has no musl virtual package);
    macOS tags follow ``__osx``.
    """
    system, arch = _SUBDIR_ARCH.get(env.platform, ("", ""))
    if system == "linux":
        return tuple(_linux_platforms(arch, env))
    if system == "osx":
        osx = env.virtual_package("__osx")
        parts = (osx.version if osx else "11.0").split(".")
        version = (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
        return tuple(mac_platforms(version, arch))
    if system == "win":
        return (f"win_{arch}",) if arch != "win32" else ("win32",)
    return ()


def target_tags(target: TargetPython, env: Environment) -> tuple[Tag, ...]:
    """The wheel tags of *target* on *env*'s platform, most preferred first."""
    major, minor = target.major_minor
    platforms = list(platform_tags(env))
    if target.implementation != "cpython":
        interpreter = f"{target.implementation[:2]}{major}{minor}"
        return tuple(compatible_tags((major, minor), interpreter, platforms))
    abi = f"cp{major}{minor}{target.abiflags}"
    return (
        *cpython_tags((major, minor), [abi], platforms),
        *compatible_tags((major, minor), f"cp{major}{minor}", platforms),
    )
