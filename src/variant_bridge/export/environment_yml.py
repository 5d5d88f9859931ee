"""conda's ``environment.yml``: a pure :func:`to_dict` and :func:`render`, in the shape of conda's
``environment_exporters/environment_yml.py`` (docs/share.md, "environment.yml"). The text is
written by hand, not by a YAML dumper, so that lines can carry comments (why the toolkit pin and
each host requirement is there); ``yaml.safe_load(render(m)) == to_dict(m)`` is tested.

What stock conda creates: only virtual packages conda itself provides are requirements; one that
only a conda plugin provides (``__cuda_arch``) is stated in the header, naming the plugin, unless
the export is strict. The pip section reproduces the same files: every wheel pinned by hash
(pip's hash-checking mode: ``name==version --hash=sha256:...``, the copies by their
``#sha256=``), resolved with ``--no-index`` from the find-links written when every wheel came
from there or from a copy, else from the indexes given, in their order.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from variant_bridge.export._header import (
    copies_lines,
    implied_lines,
    intro_lines,
    undeclared_lines,
)
from variant_bridge.export.channels import is_defaults
from variant_bridge.export.history import spec_name
from variant_bridge.export.model import ExportModel, HostRequirement, IndexOptions, PipRequirement

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


def _written(model: ExportModel) -> list[HostRequirement]:
    """The host requirements written as dependencies: those conda can match, on virtual
    packages stock conda provides (all of them when strict)."""
    strict = model.strict_host_requirements
    return [h for h in model.host_requirements if h.expressible and (strict or h.plugin is None)]


def _host_lines(model: ExportModel) -> list[str]:
    return [h.spec for h in _written(model)]


def _hashed(model: ExportModel) -> bool:
    """Whether every pip line can carry its hash (pip's hash-checking mode is all or nothing)."""
    return model.pin != "none" and all(p.sha256 for p in model.pip)


def _index_free(requirement: PipRequirement, find_links: tuple[str, ...]) -> bool:
    """Whether pip installs *requirement* without an index: a copy, a direct reference, or a
    file found in a written find-links location."""
    if requirement.copy is not None or (requirement.url and requirement.found_in is None):
        return True
    return requirement.found_in is not None and requirement.found_in in find_links


def _requirement_line(requirement: PipRequirement, *, hashed: bool) -> str:
    if requirement.found_in is None or requirement.copy is not None or requirement.label:
        return str(requirement)  # a copy or a direct reference (its #sha256= is checked)
    line = f"{requirement.name}=={requirement.version}"
    return f"{line} --hash=sha256:{requirement.sha256}" if hashed else line


def _pip_section(model: ExportModel) -> list[tuple[str, PipRequirement | None]]:
    """Each pip line with the requirement it pins (``None`` for an option line)."""
    if not model.pip:
        return []
    index = model.index_options
    # A find-links folder inside the file's own folder is written relative to it: pip reads a
    # relative --find-links against the requirements file, which conda writes beside this one.
    local = replace(index, find_links=tuple(map(model.local_reference, index.find_links)))
    if all(_index_free(p, index.find_links) for p in model.pip):
        found = {p.found_in for p in model.pip}
        used = [w for f, w in zip(index.find_links, local.find_links, strict=True) if f in found]
        options = ["--no-index", *IndexOptions(find_links=tuple(used)).pip_lines()]
    else:
        options = list(local.pip_lines())
    hashed = _hashed(model)
    lines: list[tuple[str, PipRequirement | None]] = [(o, None) for o in options]
    return lines + [(_requirement_line(p, hashed=hashed), p) for p in model.pip]


def _pip_lines(model: ExportModel) -> list[str]:
    return [line for line, _ in _pip_section(model)]


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
        strict = model.strict_host_requirements
        lines += [f"  {_describe(h, strict=strict)}" for h in model.host_requirements]
    lines += undeclared_lines(model, "conda does not check them")
    lines += implied_lines(model, "above")
    lines += copies_lines(model, "the pip lines")
    lines += [f"Note: {note}" for note in (*model.notes, *notes(model))]
    return [_comment_line(line) for line in lines]


def notes(model: ExportModel) -> list[str]:
    """What this format leaves unsaid, for stderr and the header: the requirements only a
    conda plugin can check (stated in the header instead)."""
    if model.strict_host_requirements:
        return []
    return [
        f"{h.spec} ({', '.join(h.wheels)}) is stated in the header, not as a dependency: stock "
        f"conda has no {spec_name(h.spec)} ({_plugin(h.plugin, 'plugin')} provides it) and "
        "could not create the environment; pass --strict-host-requirements to write it"
        for h in model.host_requirements
        if h.expressible and h.plugin is not None
    ]


def _plugin(plugin: str, kind: str) -> str:
    """``the nvidia-virtual-packages {kind}``; ``a conda plugin`` when none is known."""
    return plugin if plugin.startswith("a ") else f"the {plugin} {kind}"


def _comment_line(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return f"# {indent}{_comment(line)}".rstrip()


def _describe(requirement: HostRequirement, *, strict: bool) -> str:
    wheels = ", ".join(requirement.wheels)
    if not requirement.expressible:
        return f"{requirement.spec} (conda cannot express this; NOT enforced)  <- {wheels}"
    if requirement.plugin is not None:
        written = "a dependency" if strict else "NOT a dependency, stock conda lacks it"
        needs = f"needs {_plugin(requirement.plugin, 'conda plugin')}; {written}"
        return f"{requirement.spec} ({needs})  <- {wheels}"
    return f"{requirement.spec}  <- {wheels}"


def render(model: ExportModel) -> str:
    """The environment.yml text."""
    out = header(model)
    out.append(f"name: {_scalar(model.name)}")
    channels = _channels(model)
    # An empty list, not a bare key: `channels:` alone reads as null, which conda rejects.
    out.append("channels:" if channels else "channels: []")
    out += [f"  - {_scalar(c)}" for c in channels]
    host = _written(model)
    pip = _pip_section(model)
    out.append("dependencies:" if model.dependencies or host or pip else "dependencies: []")
    for dep in model.dependencies:
        comment = f"  # {_comment(dep.comment)}" if dep.comment else ""
        out.append(f"  - {_scalar(dep.spec)}{comment}")
    if host:
        out.append("  # host requirements implied by the variant wheels:")
        out += [f"  - {_scalar(h.spec)}  # {_comment(', '.join(h.wheels))}" for h in host]
    if pip:
        out.append("  - pip:")
        for line, requirement in pip:
            note = _pip_comment(requirement) if requirement is not None else None
            comment = f"  # {_comment(note)}" if note else ""
            out.append(f"      - {_scalar(line)}{comment}")
    return "\n".join(out) + "\n"


def _pip_comment(requirement: PipRequirement) -> str | None:
    if requirement.copy_is_beside:  # a relative copy's line names no project: say which wheel
        return f"{requirement.name} {requirement.version} [{requirement.label}]"
    if requirement.note and not requirement.is_direct:
        return requirement.note
    if requirement.url is None and requirement.label is None and not requirement.any_version:
        return "origin unknown: not pinned by hash"
    return None
