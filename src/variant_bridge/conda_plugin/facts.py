"""This machine as conda knows it: the virtual packages conda's plugin manager reports.

They carry conda's overrides (``CONDA_OVERRIDE_*``, ``override_virtual_packages`` in .condarc)
and every virtual-package plugin the user has installed, so inside conda the bridge answers from
them (``Source.supplied("conda")``, shown as ``conda`` by ``detect``) instead of its own
detection. A GPU fact conda has no plugin for at all (stock conda knows no ``__cuda_arch``, no
``__amdgpu``) is completed from the bridge's detection and keeps ``detected`` as its source: what
conda cannot know is not made up, and what it does know is never second-guessed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from variant_bridge.environment import Source, VirtualPackage

__all__ = ["COMPLETED", "conda_virtual_packages", "registered_names", "supplied"]

COMPLETED = frozenset({"__cuda_arch", "__amdgpu", "__amdgpu_arch"})
"""The virtual packages the bridge's detection adds when no conda plugin registers them."""


def supplied(records: Iterable[Any]) -> tuple[VirtualPackage, ...]:
    """conda's virtual-package records (``name``, ``version``, ``build``) as the bridge's facts.

    :raises InvalidTarget: a version that is no version of its kind (``CONDA_OVERRIDE_CUDA`` or
        ``override_virtual_packages`` set to ``abc`` or a 5,000-digit number): one line naming
        it, as ``-t cuda=abc`` is refused.
    """
    from variant_bridge.errors import InvalidTarget, quote
    from variant_bridge.virtual_packages import VERSION_SHAPES

    conda = Source.supplied("conda")
    facts: list[VirtualPackage] = []
    for record in records:
        version = str(record.version)
        shape = VERSION_SHAPES.get(record.name)
        if shape is not None and not shape.matches(version):
            raise InvalidTarget(
                f"conda's virtual package {record.name}={quote(version)}: expected "
                f"{shape.expected} (check CONDA_OVERRIDE_* and override_virtual_packages)"
            )
        facts.append(VirtualPackage(record.name, version, str(record.build), conda))
    return tuple(facts)


def _records(manager: Any) -> tuple[Any, ...]:
    get = getattr(manager, "get_virtual_package_records", None)
    if get is not None:
        return tuple(get())
    # Older conda: evaluate each plugin's package (NULL, conda's "absent", has no name).
    found = (p.to_virtual_package() for p in manager.get_hook_results("virtual_packages"))
    return tuple(r for r in found if isinstance(getattr(r, "name", None), str))


def registered_names(manager: Any) -> frozenset[str]:
    """The virtual packages some conda plugin registers (``__cuda``...), present or not here."""
    return frozenset(f"__{p.name}" for p in manager.get_hook_results("virtual_packages"))


def conda_virtual_packages() -> tuple[VirtualPackage, ...]:
    """This machine's virtual packages as conda reports them, completed with the GPU facts no
    conda plugin registers (:data:`COMPLETED`), from the bridge's detection."""
    from conda.base.context import context

    manager = context.plugin_manager
    found = {vp.name: vp for vp in supplied(_records(manager))}
    missing = COMPLETED - registered_names(manager)
    if missing:
        from variant_bridge.detect.machine import detect_virtual_packages
        from variant_bridge.errors import DetectionError

        try:
            detected = detect_virtual_packages()
        except DetectionError:  # conda's facts stand alone
            detected = ()
        for vp in detected:
            if vp.name in missing:
                found.setdefault(vp.name, vp)
    return tuple(sorted(found.values(), key=lambda vp: vp.name))
