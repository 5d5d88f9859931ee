"""conda's ``environment.yml``: a pure :func:`to_dict` and :func:`render`, in the shape of conda's
``environment_exporters/environment_yml.py`` (docs/share.md, "environment.yml"). The text is
written by hand, not by a YAML dumper, so that lines can carry comments (why the toolkit pin and
each host requirement is there); ``yaml.safe_load(render(m)) == to_dict(m)`` is tested.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from variant_bridge.export._header import copies_lines, intro_lines, undeclared_lines
from variant_bridge.export.channels import is_defaults
from variant_bridge.export.model import ExportModel, HostRequirement

__all__ = ["NODEFAULTS", "header", "render", "to_dict"]

NODEFAULTS = "nodefaults"
"""conda's marker that keeps the implicit ``defaults`` channel out of the solve."""

# Plain YAML scalars we never need to check further: a letter first, then spec characters.
_PLAIN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-=<>!*+,|~ ]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "~"})


def _channels(model: ExportModel) -> list[str]:
    channels = list(model.channels)
    uses_defaults = any(is_defaults(c) for c in channels)
    # Without it, conda adds Anaconda's defaults channel to every solve of this file.
    return channels if uses_defaults or not channels else [*channels, NODEFAULTS]


def _host_lines(model: ExportModel) -> list[str]:
    return [h.spec for h in model.host_requirements if h.expressible]


def _pip_lines(model: ExportModel) -> list[str]:
    if not model.pip:
        return []
    index = model.index_options
    # A find-links folder inside the file's own folder is written relative to it: pip reads a
    # relative --find-links against the requirements file, which conda writes beside this one.
    local = replace(index, find_links=tuple(map(model.local_reference, index.find_links)))
    return [*local.pip_lines(), *(str(p) for p in model.pip)]


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
    import yaml  # heavy, and needed only for the rare scalar the pattern above does not clear

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
    lines = intro_lines(
        model,
        "the pip section",
        recreate="Recreate with: conda env create -f <this file> (or mamba / micromamba).",
    )
    if model.host_requirements:
        lines.append("Host requirements implied by the variant wheels (from their properties):")
        lines += [f"  {_describe(h)}" for h in model.host_requirements]
    lines += undeclared_lines(model, "conda does not check them")
    if model.implied_specs:
        lines.append(
            "The variant wheels also expect (not added; the toolkit is pinned): "
            + ", ".join(model.implied_specs)
        )
    lines += copies_lines(model, "the pip lines")
    lines += [f"Note: {note}" for note in model.notes]
    return [_comment_line(line) for line in lines]


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
        # A relative copy's line names no project: say which wheel it is.
        notes.update(
            {str(p): f"{p.name} {p.version} [{p.label}]" for p in model.pip if p.copy_is_beside}
        )
        for line in pip:
            comment = f"  # {_comment(notes[line])}" if line in notes else ""
            out.append(f"      - {_scalar(line)}{comment}")
    return "\n".join(out) + "\n"
