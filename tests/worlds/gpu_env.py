"""A conda environment with a real interpreter, for installing wheels into it and examining it.

The prefix is a uv venv of the running interpreter, into which rattler installs conda packages
shaped like conda-forge's (``cuda-version``, ``libcublas`` pinned to its minor, a ``python``
record of the running interpreter's version, so detection reads the venv's ``site-packages``).
Changing the toolkit is a second rattler solve and install, as ``conda install cuda-version=12.4``
is. The wheels: ``gpulib 1.0`` with one variant per CUDA minor (lower bound = that minor, and a
``nvidia-cublas-cu12`` pin per label, as torch pins its components), the null variant, and the
``nvidia-cublas-cu12`` wheels the pins name.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from tests.worlds.channel import Channel, Pkg, cuda_packages
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, solve
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.install import find_uv

__all__ = [
    "CUBLAS",
    "PYTHON",
    "gpu_channel",
    "gpulib_wheels",
    "make_env",
    "set_toolkit",
]

PYTHON = "{}.{}.{}".format(*sys.version_info[:3])
CUBLAS = {"12.4": "12.4.5.8", "12.6": "12.6.4.1", "12.8": "12.8.4.1"}
"""The ``nvidia-cublas-cu12`` wheel of each CUDA minor (the real PyPI versions)."""


def gpu_channel(path: Path) -> Channel:
    """cuda-version 12.4 / 12.6 / 12.8 with their libcublas, and this interpreter's python."""
    python = Pkg("python", PYTHON, "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",))
    return Channel(path).add([*cuda_packages(("12.4", "12.6", "12.8")), python])


def set_toolkit(channel: Channel, prefix: Path, cache: Path, toolkit: str) -> Path:
    """Solve and install ``cuda-version {toolkit}`` with libcublas and python into *prefix*, as
    ``conda install cuda-version={toolkit}`` would (the other minor's packages are replaced)."""
    specs = [f"cuda-version {toolkit}.*", "libcublas", "python"]
    records = solve([channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
    return install_prefix(records, prefix, cache, specs)


def make_env(channel: Channel, root: Path, toolkit: str) -> Path:
    """A prefix at ``root/env``: a venv of this interpreter plus the conda packages."""
    uv = find_uv()
    assert uv is not None
    prefix = root / "env"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(prefix)], check=True)
    return set_toolkit(channel, prefix, root / "pkgs", toolkit)


def gpulib_wheels(directory: Path, minors: Iterable[str] = ("12.4", "12.6")) -> Path:
    """``gpulib 1.0``: a ``cu12X`` variant per CUDA minor, the null variant and a plain wheel;
    plus every ``nvidia-cublas-cu12`` of :data:`CUBLAS`."""
    labels = {f"cu{m.replace('.', '')}": m for m in minors}
    pins = [
        f"nvidia-cublas-cu12=={CUBLAS[m]}; variant_label == '{label}'"
        for label, m in labels.items()
    ]
    variants: dict[str, list[str]] = {
        label: [f"nvidia :: cuda_version_lower_bound :: {m}"] for label, m in labels.items()
    }
    make_release(directory, "gpulib", "1.0", {**variants, "null": []}, requires=pins)
    for version in CUBLAS.values():
        make_wheel(directory, "nvidia-cublas-cu12", version)
    return directory
