"""How the translator names the facts it used, in sources, notes and explanations."""

from __future__ import annotations

from variant_bridge.environment import SourceKind, Toolkit, VirtualPackage

__all__ = ["toolkit_text", "vp_text"]

# Whose toolkit it is, by where it was read: a prefix's conda-meta, a lock, or facts given on the
# command line (``--from-conda``, a hand-built environment).
_OWNERS = {
    SourceKind.PREFIX: "the prefix's",
    SourceKind.LOCKFILE: "the locked",
    SourceKind.REQUESTED: "the requested",
}


def vp_text(vp: VirtualPackage, *, build: bool = False) -> str:
    """``__cuda=12.9 (CONDA_OVERRIDE_CUDA)``; with *build*: ``__archspec=1=haswell (...)``."""
    text = f"{vp.name}={vp.version}={vp.build}" if build else f"{vp.name}={vp.version}"
    return f"{text} ({vp.source})"


def toolkit_text(toolkit: Toolkit) -> str:
    """``the prefix's toolkit is cuda-version 12.6`` (or the locked / the environment's)."""
    owner = _OWNERS.get(toolkit.source.kind, "the environment's")
    return f"{owner} toolkit is {toolkit.package} {toolkit.version}"
