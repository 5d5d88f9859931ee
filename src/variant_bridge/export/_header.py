"""The comment header both file formats share: what produced the file, from what, for which bridged
view, and the faithful pins behind ``--wheels-dir`` copies (docs/share.md, "environment.yml",
"Installing without wheel-variant support")."""

from __future__ import annotations

from variant_bridge.export.history import spec_name
from variant_bridge.export.model import ExportModel

__all__ = ["copies_lines", "implied_lines", "intro_lines", "undeclared_lines"]


def intro_lines(model: ExportModel, where: str, *, recreate: str | None = None) -> list[str]:
    """Producer, origin, (how to recreate,) and the bridged view the wheels in *where* were
    chosen for, claiming variant wheels only when there are some."""
    lines = [f"Produced by {model.producer}", f"from {model.origin} ({model.platform})."]
    if recreate is not None:
        lines.append(recreate)
    if any(p.label is not None for p in model.pip):
        lines.append(f"The variant wheels in {where} were chosen for this bridged view:")
    else:
        lines.append(
            "The environment has no variant wheels; the bridged view when it was exported:"
        )
    return lines + [f"  {line}" for line in model.view.lines()]


def copies_lines(model: ExportModel, where: str) -> list[str]:
    """Header lines for ``--wheels-dir``: what the copies are, and the faithful pins."""
    copied = [p for p in model.pip if p.copy is not None]
    if not copied:
        return []
    folder = model.local_reference(model.wheels_dir) if model.wheels_dir else model.wheels_dir
    intro = (
        f"{where[:1].upper()}{where[1:]} name byte-identical copies of the variant wheels in "
        f"{folder}, under their non-variant filenames (which pip and uv accept); "
        "the exact files they were installed from:"
    )
    return [intro, *(f"  {p.reference} [{p.label}]" for p in copied)]


def undeclared_lines(model: ExportModel, consequence: str) -> list[str]:
    """Header lines for the wheels' host requirements ``--no-host-requirements`` left out."""
    if not model.undeclared_host_requirements:
        return []
    return [
        f"The variant wheels also need (not declared, --no-host-requirements; {consequence}):",
        *(f"  {h.spec}  <- {', '.join(h.wheels)}" for h in model.undeclared_host_requirements),
    ]


def implied_lines(model: ExportModel, where: str) -> list[str]:
    """The conda packages the wheels expect but the export does not add (``cuda-version
    >=12.6,<13``, ``rocm-core 6.4.*``), each with what pins it *where* (the dependencies), or
    that nothing does (a ROCm runtime the environment does not hold)."""
    if not model.implied_specs:
        return []
    said = []
    for spec in model.implied_specs:
        name = spec_name(spec)
        pinned = next((d for d in model.dependencies if d.name == name), None)
        if pinned is not None:
            said.append(f"{spec} (pinned {where}: {pinned.spec})")
        else:
            said.append(f"{spec} (not pinned: no {name} among the dependencies)")
    return ["The variant wheels also expect (not added as dependencies): " + ", ".join(said)]
