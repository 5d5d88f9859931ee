"""Conda virtual packages as declared facts: which platforms have them, what their versions look
like. Shared by detection (``--target``, ``CONDA_OVERRIDE_*``) and ``translate --from-conda``, so
both accept and reject the same input with the same words.

Versions are checked in pure Python with ASCII-only patterns and bounded components: rattler
accepts nonsense such as ``CONDA_OVERRIDE_CUDA=abc``, rejects numbers beyond 64 bits with a
message that blames detection, and Python's ``\\d`` / ``str.isdigit`` accept ``١٢.٨``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from variant_bridge import _archspec
from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.errors import InvalidTarget, quote
from variant_bridge.gfx_archs import ISA_SHAPE

__all__ = [
    "CONDA_BUILTIN",
    "KNOWN_PLATFORMS",
    "TOOLKIT_SHAPE",
    "VERSION_SHAPES",
    "VersionShape",
    "applies_to",
    "check_platform",
    "conda_plugin",
    "did_you_mean",
    "impossible_toolkit",
    "microarchitecture_problem",
    "not_on_platform",
]

# Every conda subdir rattler 0.28 knows except `noarch` (a test checks this against rattler).
KNOWN_PLATFORMS: frozenset[str] = frozenset(
    {
        "linux-32", "linux-64", "linux-aarch64", "linux-armv6l", "linux-armv7l",
        "linux-loongarch64", "linux-ppc64le", "linux-ppc64", "linux-ppc", "linux-s390x",
        "linux-riscv32", "linux-riscv64", "freebsd-32", "freebsd-64", "freebsd-arm64",
        "freebsd-ppc64le", "freebsd-ppc64", "osx-64", "osx-arm64", "ios-arm64",
        "iossimulator-arm64", "iossimulator-64", "android-aarch64", "android-armv7a",
        "android-64", "android-32", "win-32", "win-64", "win-arm64", "emscripten-wasm32",
        "emscripten-wasm64", "wasi-wasm32", "zos-z",
    }
)  # fmt: skip

# Which operating systems (subdir prefix) a virtual package belongs to; unlisted names apply
# everywhere. CEP 30: overrides for another OS's package must be ignored.
_OS_OF: dict[str, tuple[str, ...]] = {
    "__unix": ("linux", "osx", "freebsd", "ios", "iossimulator", "android"),
    "__linux": ("linux", "android"),
    "__glibc": ("linux",),
    "__osx": ("osx",),
    "__win": ("win",),
    # No CUDA driver exists for macOS; NVIDIA and AMD GPU packages only make sense here.
    "__cuda": ("linux", "win"),
    "__cuda_arch": ("linux", "win"),
    "__amdgpu": ("linux", "win"),
    "__amdgpu_arch": ("linux", "win"),
}


# The virtual packages stock conda provides itself: conda/plugins/virtual_packages/ at
# conda 26.x (archspec.py, conda.py, cuda.py, linux.py: __unix, __linux and the libc family,
# osx.py, windows.py, freebsd.py: __unix). Any other needs a plugin; a requirement on one makes
# `conda env create` fail with PackagesNotFoundInChannelsError where that plugin is missing.
CONDA_BUILTIN: frozenset[str] = frozenset(
    {"__archspec", "__conda", "__cuda", "__glibc", "__linux", "__osx", "__unix", "__win"}
)
# The conda plugin that provides a virtual package stock conda lacks (conda-forge's blog, "CUDA
# architecture detection", 2026-10-19: __cuda_arch comes from nvidia-virtual-packages).
_CONDA_PLUGINS: dict[str, str] = {"__cuda_arch": "nvidia-virtual-packages"}


def conda_plugin(name: str) -> str | None:
    """The conda plugin a requirement on *name* needs: ``None`` for stock conda's own virtual
    packages and for real packages; the plugin's name where known (``__cuda_arch``:
    ``nvidia-virtual-packages``), else ``"a conda plugin"``."""
    if not name.startswith("__") or name in CONDA_BUILTIN:
        return None
    return _CONDA_PLUGINS.get(name, "a conda plugin")


def _version(components: str, digits: int = 4) -> Lazy[str]:
    """A dotted version of ASCII numbers of at most *digits* digits; *components* is the
    regex of the dots, e.g. ``{0,1}`` for ``12`` or ``12.8``."""
    number = f"[0-9]{{1,{digits}}}"
    return Lazy(rf"{number}(?:\.{number}){components}", re.ASCII)


@value
class VersionShape:
    """What a virtual package's version must look like.

    :param pattern: the full match of a valid version (ASCII digits, bounded components).
    :param expected: for messages, e.g. ``a CUDA version like 12.8``.
    :param noun: what an empty value declares absent, e.g. ``CUDA``.
    """

    pattern: Lazy[str]
    expected: str
    noun: str

    def matches(self, text: str) -> bool:
        return self.pattern.fullmatch(text) is not None


# Four digits per component is far beyond any real CUDA, glibc or macOS release and keeps every
# value a valid rattler version; kernel and Windows build numbers get nine (10.0.22631).
VERSION_SHAPES: dict[str, VersionShape] = {
    "__cuda": VersionShape(_version("?"), "a CUDA version like 12.8", "CUDA"),
    # Strict major.minor, as rattler and CEP 30 require (`9` is rejected by rattler too).
    "__cuda_arch": VersionShape(_version(""), "a compute capability like 9.0", "GPU"),
    "__glibc": VersionShape(_version("{1,2}"), "a glibc version like 2.28", "glibc"),
    "__linux": VersionShape(
        _version("{0,3}", digits=9), "a Linux kernel version like 5.15", "Linux"
    ),
    "__osx": VersionShape(_version("{0,2}"), "a macOS version like 13.0", "macOS"),
    "__win": VersionShape(
        _version("{0,3}", digits=9), "a Windows version like 10.0.22631", "Windows"
    ),
    # rattler: __amdgpu is presence only (always 0); __amdgpu_arch is the ISA, three decimals.
    "__amdgpu": VersionShape(Lazy("0"), "0 (an AMD GPU is present)", "AMD GPU"),
    "__amdgpu_arch": VersionShape(
        ISA_SHAPE, "an AMD GPU ISA like 9.4.2 (major.minor.stepping, decimal)", "AMD GPU"
    ),
}
"""Version shapes of the virtual packages whose version is a fact (``__archspec`` carries its
fact in the build: an archspec name)."""

TOOLKIT_SHAPE = VersionShape(_version("{1,2}"), "a CUDA toolkit version like 12.6", "toolkit")
"""``cuda-version`` is ``X.Y``; ``cudatoolkit`` (CUDA <= 11) may add a patch: ``11.8.0``."""


def impossible_toolkit(package: str, version: str, cuda: str | None) -> str | None:
    """Why conda could not have solved toolkit *package* *version* beside ``__cuda`` *cuda*, or
    ``None``: conda-forge's ``cuda-version X.Y`` (and ``cudatoolkit X.Y``) constrains
    ``__cuda >=X``, so a driver of an older major excludes it. No ``__cuda`` excludes nothing
    (a constraint, not a dependency: a CPU machine may hold a toolkit)."""
    if cuda is None or not TOOLKIT_SHAPE.matches(version):
        return None
    major = int(version.split(".", maxsplit=1)[0])
    driver = cuda.split(".")
    if not driver[0].isascii() or not driver[0].isdigit() or int(driver[0]) >= major:
        return None
    return (
        f"{package} {version} constrains __cuda >={major}, so conda could not have solved it "
        f"beside __cuda={cuda}"
    )


def applies_to(name: str, platform: str) -> bool:
    """Whether virtual package *name* can exist on conda subdir *platform*."""
    systems = _OS_OF.get(name)
    return systems is None or platform.split("-", 1)[0] in systems


def not_on_platform(name: str, platform: str) -> str:
    """Why *name* cannot be declared for *platform*:
    ``__cuda does not exist on osx-arm64 (only linux-* and win-*)``."""
    systems = [f"{s}-*" for s in _OS_OF.get(name, ())]
    listed = " and ".join(systems) if len(systems) <= 2 else ", ".join(systems)
    return f"{name} does not exist on {platform} (only {listed})"


def did_you_mean(text: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of *choices*, or ``""``."""
    import difflib  # lazy: only on the error path

    close = difflib.get_close_matches(text[:100], sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_platform(value: str, *, where: str) -> str:
    """*value* stripped when it is a conda subdir this project knows.

    :raises InvalidTarget: ``--platform='linux64': expected a conda platform like linux-64
        (did you mean 'linux-64'?)``.
    """
    text = value.strip()
    if text in KNOWN_PLATFORMS:
        return text
    raise InvalidTarget(
        f"{where}={quote(value)}: expected a conda platform like linux-64"
        + did_you_mean(text, KNOWN_PLATFORMS)
    )


def microarchitecture_problem(name: str, platform: str, *, cpu_family: str | None) -> str | None:
    """Why ``__archspec=1=<name>`` cannot describe *platform*, whose CPU is of archspec family
    *cpu_family* (``None``: no CPU namespace, nothing to check); ``None`` when it can.

    ``0`` (CEP 30: only the architecture is known) always can.
    """
    if name == "0":
        return None
    families = _archspec.families()
    family = families.get(name)
    if family is None:
        return f"archspec knows no microarchitecture {quote(name)}" + did_you_mean(name, families)
    if cpu_family is not None and family != cpu_family:
        return f"{name} is an {family} microarchitecture but {platform} is {cpu_family}"
    return None
