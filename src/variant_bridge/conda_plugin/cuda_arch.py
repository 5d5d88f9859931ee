"""``__cuda_arch`` for stock conda: an opt-in virtual package, so that environments requiring
``__cuda_arch`` (exported by the bridge, or packages ``variant-bridge convert`` made) create on a
conda that has no such virtual package.

Opt in with the ``variant_bridge_cuda_arch`` setting (``conda config --set
plugins.variant_bridge_cuda_arch true``, or ``CONDA_PLUGINS_VARIANT_BRIDGE_CUDA_ARCH=true``).
The package is never registered when conda itself or another installed plugin provides
``__cuda_arch`` (conda/conda#16509 may ship it; nvidia-virtual-packages does): two registrations
of one name are a conda error, so the hook looks at the others first. Its version is the lowest
compute capability of this machine's NVIDIA GPUs (``major.minor``) from the bridge's detection
(py-rattler's native extension), run lazily only when conda asks for the value; conda's own
override conventions apply: ``CONDA_OVERRIDE_CUDA_ARCH=8.9`` sets it (no detection), an empty
value removes it, as do ``override_virtual_packages`` in .condarc.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

__all__ = ["NAME", "Detected", "provided_elsewhere", "virtual_packages"]

NAME = "cuda_arch"
"""The name as conda's virtual-package plugins spell it (``__cuda_arch`` in a spec)."""
_OVERRIDE = "CONDA_OVERRIDE_CUDA_ARCH"


def provided_elsewhere(ours: str = "variant_bridge.conda_plugin") -> frozenset[str]:
    """The virtual packages every other registered plugin yields (conda's own included); a
    plugin that fails to answer is skipped (conda will report it itself)."""
    from conda.base.context import context

    names: set[str] = set()
    for impl in context.plugin_manager.hook.conda_virtual_packages.get_hookimpls():
        if impl.function.__module__.startswith(ours):
            continue
        try:
            names.update(str(package.name) for package in impl.function() or ())
        except Exception:  # another plugin's failure is conda's to report
            continue
    return frozenset(names)


class Detected:
    """This machine's ``__cuda_arch`` from the bridge's detection, read once, on first use."""

    def __init__(self) -> None:
        self._read = False
        self._found: tuple[str, str] | None = None

    def _package(self) -> tuple[str, str] | None:
        if not self._read:
            from variant_bridge.detect.machine import detect_virtual_packages
            from variant_bridge.errors import DetectionError

            self._read = True
            try:
                detected = detect_virtual_packages()
            except DetectionError:  # no GPU facts: the package is absent
                detected = ()
            for vp in detected:
                if vp.name == f"__{NAME}":
                    self._found = (vp.version, vp.build)
        return self._found

    def version(self) -> Any:
        """The compute capability, or conda's ``NULL`` (absent) when no NVIDIA GPU is found."""
        from conda.auxlib import NULL

        found = self._package()
        return NULL if found is None else found[0]

    def build(self) -> Any:
        """The detected build string; ``0`` when an override decides the version (no
        detection runs for it)."""
        if _overridden():
            return "0"
        found = self._package()
        return "0" if found is None else found[1]


def _overridden() -> bool:
    from conda.base.context import context

    given = getattr(context, "override_virtual_packages", None) or {}
    return os.environ.get(_OVERRIDE) is not None or NAME in given


def virtual_packages() -> Iterator[Any]:
    """The hook's packages: ``__cuda_arch`` when opted in and nobody else provides it."""
    from variant_bridge.conda_plugin import _compat
    from variant_bridge.conda_plugin.settings import CUDA_ARCH, flag

    if not flag(CUDA_ARCH) or NAME in provided_elsewhere():
        return
    detected = Detected()
    yield _compat.virtual_package(
        name=NAME, version=detected.version, build=detected.build, override_entity="version"
    )
