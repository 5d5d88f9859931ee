"""conda's ``environment.yml``: a pure :func:`to_dict` and :func:`render` (YAML text with the
comment header that says what produced the file and for which bridged view).

The text is written by hand, not by a YAML dumper, so that lines can carry comments (why the
toolkit pin and each host requirement is there); ``yaml.safe_load(render(m)) == to_dict(m)`` holds
and is tested. Valid keys are conda's: ``name``, ``channels``, ``dependencies`` (MatchSpec strings
and one ``pip:`` list).
"""

from __future__ import annotations

import json
import re
from typing import Any

from variant_bridge.export.model import ExportModel, HostRequirement
from variant_bridge.export.model import normalize_channel as _normalize

__all__ = ["NODEFAULTS", "copies_lines", "header", "render", "to_dict", "view_intro"]

NODEFAULTS = "nodefaults"
"""conda's marker that keeps the implicit ``defaults`` channel out of the solve."""

_DEFAULTS_CHANNELS = ("defaults", "main", "r", "msys2", "pkgs/main", "pkgs/r", "pkgs/msys2")
# Plain YAML scalars we never need to check further: a letter first, then spec characters.
_PLAIN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-=<>!*+,|~ ]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "~"})


def _channels(model: ExportModel) -> list[str]:
    channels = list(model.channels)
    uses_defaults = any(
        _normalize(c) in _DEFAULTS_CHANNELS or "repo.anaconda.com" in c for c in channels
    )
    # Without it, conda adds Anaconda's defaults channel to every solve of this file.
    return channels if uses_defaults or not channels else [*channels, NODEFAULTS]


def _host_lines(model: ExportModel) -> list[str]:
    return [h.spec for h in model.host_requirements if h.expressible]


def _pip_lines(model: ExportModel) -> list[str]:
    if not model.pip:
        return []
    return [*model.index_options.pip_lines(), *(str(p) for p in model.pip)]


def to_dict(model: ExportModel) -> dict[str, Any]:
    """The environment.yml content as plain data (what ``yaml.safe_load`` of the file gives)."""
    dependencies: list[Any] = [d.spec for d in model.dependencies]
    dependencies += _host_lines(model)
    pip = _pip_lines(model)
    if pip:
        dependencies.append({"pip": pip})
    return {"name": model.name, "channels": _channels(model), "dependencies": dependencies}


def _scalar(text: str) -> str:
    """*text* as a YAML scalar: plain when that reads back as the same string, else quoted."""
    if (
        _PLAIN_RE.fullmatch(text)
        and text.lower() not in _YAML_WORDS
        and not text.endswith(" ")
        and " #" not in text
    ):
        return text
    import yaml

    try:
        if yaml.safe_load(f"- {text}") == [text] and "\n" not in text:
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _comment(text: str) -> str:
    return " ".join(text.split())


def header(model: ExportModel) -> list[str]:
    """The comment block: producer, source, bridged view, requirements and notes."""
    lines = [
        f"Produced by {model.producer}",
        f"from {model.origin} ({model.platform}).",
        "Recreate with: conda env create -f <this file> (or mamba / micromamba).",
        view_intro(model, "the pip section"),
        *(f"  {line}" for line in model.view.lines()),
    ]
    if model.host_requirements:
        lines.append("Host requirements implied by the variant wheels (from their properties):")
        lines += [f"  {_describe(h)}" for h in model.host_requirements]
    if model.implied_specs:
        lines.append(
            "The variant wheels also expect (not added; the toolkit is pinned): "
            + ", ".join(model.implied_specs)
        )
    lines += copies_lines(model, "the pip lines")
    lines += [f"Note: {note}" for note in model.notes]
    return [_comment_line(line) for line in lines]


def view_intro(model: ExportModel, where: str) -> str:
    """The line before the bridged view: what it was used for, only claiming variant wheels
    when there are some."""
    if any(p.label is not None for p in model.pip):
        return f"The variant wheels in {where} were chosen for this bridged view:"
    return "The environment has no variant wheels; the bridged view when it was exported:"


def copies_lines(model: ExportModel, where: str) -> list[str]:
    """Header lines for ``--wheels-dir``: what the copies are, and the faithful pins."""
    copied = [p for p in model.pip if p.copy is not None]
    if not copied:
        return []
    intro = (
        f"{where[:1].upper()}{where[1:]} name byte-identical copies of the variant wheels in "
        f"{model.wheels_dir}, under their non-variant filenames (which pip and uv accept); "
        "the exact files they were installed from:"
    )
    return [intro, *(f"  {p.reference} [{p.label}]" for p in copied)]


def _comment_line(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return f"# {indent}{_comment(line)}".rstrip()


def _describe(requirement: HostRequirement) -> str:
    wheels = ", ".join(requirement.wheels)
    if requirement.expressible:
        return f"{requirement.spec}  <- {wheels}"
    return f"{requirement.spec} (conda cannot express this; NOT enforced)  <- {wheels}"


def render(model: ExportModel) -> str:
    """The environment.yml text."""
    out = header(model)
    out.append(f"name: {_scalar(model.name)}")
    channels = _channels(model)
    # An empty list, not a bare key: `channels:` alone reads as null, which conda rejects.
    out.append("channels:" if channels else "channels: []")
    out += [f"  - {_scalar(c)}" for c in channels]
    host = [h for h in model.host_requirements if h.expressible]
    pip = _pip_lines(model)
    out.append("dependencies:" if model.dependencies or host or pip else "dependencies: []")
    for dep in model.dependencies:
        comment = f"  # {_comment(dep.comment)}" if dep.comment else ""
        out.append(f"  - {_scalar(dep.spec)}{comment}")
    if host:
        out.append("  # host requirements implied by the variant wheels:")
        out += [f"  - {_scalar(h.spec)}  # {_comment(', '.join(h.wheels))}" for h in host]
    if pip:
        out.append("  - pip:")
        notes = {str(p): p.note for p in model.pip if p.note and not p.is_direct}
        for line in pip:
            comment = f"  # {_comment(notes[line])}" if line in notes else ""
            out.append(f"      - {_scalar(line)}{comment}")
    return "\n".join(out) + "\n"
