"""A new pixi manifest: :func:`to_dict` (plain data) and :func:`render` (its text, with the comment
header and per-line comments) (docs/share.md, "pixi").

pixi checks a machine against what a manifest declares, each virtual package as a minimum. The
export declares what that can say and no more: a new manifest (and one that uses rich platforms)
gets the rich platform entry (``platforms = [{ platform = "linux-64", cuda = { driver, arch }
}]``, pixi >= 0.71) with the driver and GPU floors; a manifest whose platforms are plain subdirs
gets the driver floor (and a glibc above pixi's default) as ``[system-requirements]``, which
every pixi reads (0.71 and later with a deprecation warning) and which has no GPU. A requirement
no declaration can state (an upper bound, an ``sm_arch`` list, a CPU level) is said in the header
and on stderr; the strict mode (``--strict-host-requirements``) refuses it instead. The uv pins
in ``[activation.env]`` are written only for the facts declared.

Every entry the export writes ends with the :data:`MARKER` comment (``# variant-bridge``, or
``# variant-bridge: why``): that is how ``--update`` tells the export's entries from the user's,
which it never changes (:mod:`.update`).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from variant_bridge.errors import ExportError
from variant_bridge.export._header import (
    copies_lines,
    implied_lines,
    intro_lines,
    undeclared_lines,
)
from variant_bridge.export.history import spec_name
from variant_bridge.export.model import (
    CondaDependency,
    ExportModel,
    HostRequirement,
    PipRequirement,
    PlatformDeclaration,
)
from variant_bridge.export.platform import unenforced
from variant_bridge.indexes import url_to_path
from variant_bridge.uv_settings import (
    DRIVER_VARIABLE,
    EXPORTED_PINS_VARIABLE,
    SM_ARCH_VARIABLE,
    exported_pins_value,
)

__all__ = [
    "MARKER",
    "MIN_PIXI",
    "activation",
    "check_declarable",
    "comments",
    "declaration",
    "header",
    "is_marked",
    "marked",
    "notes",
    "platform_entry",
    "platform_entry_of",
    "render",
    "system_requirements",
    "table_lines",
    "to_dict",
    "toml_value",
    "unstated",
]

MIN_PIXI = "0.71"
"""The first pixi with rich platforms (``platforms = [{ platform = ..., cuda = ... }]``)."""

MARKER = "variant-bridge"
"""The comment that marks an entry as the export's own: ``# variant-bridge`` alone or followed by
``: why``. Delete it to take an entry over; ``--update`` then leaves it alone."""


def marked(note: str | None = None) -> str:
    """The comment text (without ``#``) of an entry the export writes."""
    return f"{MARKER}: {' '.join(note.split())}" if note else MARKER


def is_marked(comment: str) -> bool:
    """Whether a TOML comment (``# variant-bridge: ...``) marks the export's own entry."""
    text = comment.lstrip("#").strip()
    return text == MARKER or text.startswith(f"{MARKER}:")


def declaration(model: ExportModel, *, rich: bool) -> PlatformDeclaration:
    """What the manifest declares: the whole platform in a rich entry; the driver floor and
    glibc alone in ``[system-requirements]`` (it has no GPU architecture, and pixi matches a
    declared ``archspec`` by name only)."""
    d = model.platform_declaration
    return d if rich else replace(d, cuda_arch=None, archspec=None)


def unstated(model: ExportModel, *, rich: bool) -> tuple[HostRequirement, ...]:
    """The wheels' host requirements the manifest's declaration cannot state."""
    return unenforced(model.host_requirements, declaration(model, rich=rich), arch=rich)


def check_declarable(model: ExportModel) -> None:
    """In the strict mode, refuse a platform that would admit hosts the wheels cannot run on.

    :raises ExportError: the wheels need a bound no pixi platform can state (naming it).
    """
    if not model.strict_host_requirements:
        return
    lost = model.platform_declaration.unenforceable
    if not lost:
        return
    needs = "; ".join(f"{', '.join(h.wheels)} needs {_short(h.rattler_spec)}" for h in lost)
    raise ExportError(
        f"cannot declare the {model.platform} platform for pixi: {needs}, and pixi admits every "
        "host at or above a declared version (and any CPU), so no platform entry can state "
        "an upper bound or a CPU requirement; without --strict-host-requirements the export "
        "declares what pixi can state and lists the rest in the header"
    )


def notes(model: ExportModel, *, rich: bool) -> list[str]:
    """What the manifest leaves unsaid, for stderr and the header."""
    if model.strict_host_requirements:
        return []
    where = "its platform entry" if rich else "[system-requirements]"
    return [
        f"{', '.join(h.wheels)} needs {_short(h.rattler_spec)}, which {where} cannot state "
        "(pixi checks each declared virtual package as a minimum): stated in the header, not "
        "checked by pixi (--strict-host-requirements refuses instead)"
        for h in unstated(model, rich=rich)
    ]


def _short(spec: str) -> str:
    if spec_name(spec) == "__archspec":
        return "a CPU microarchitecture (__archspec)"
    return spec


def platform_entry(model: ExportModel, *, rich: bool = True) -> str | dict[str, Any]:
    """The ``workspace.platforms`` entry: a bare subdir, or a rich platform table."""
    d = declaration(model, rich=rich)
    if not rich or not d.is_rich:
        return d.subdir
    return {**({"name": d.name} if d.name else {}), **platform_entry_of(d)}


def platform_entry_of(declaration: PlatformDeclaration) -> dict[str, Any]:
    """A platform entry's keys other than its name (the subdir and the declared packages)."""
    entry: dict[str, Any] = {"platform": declaration.subdir}
    if declaration.cuda is not None:
        entry["cuda"] = (
            declaration.cuda
            if declaration.cuda_arch is None
            else {"driver": declaration.cuda, "arch": declaration.cuda_arch}
        )
    if declaration.archspec is not None:
        entry["archspec"] = declaration.archspec
    if declaration.glibc is not None:
        entry["glibc"] = declaration.glibc
    entry.update(declaration.raw)
    return entry


def system_requirements(model: ExportModel) -> dict[str, str]:
    """``[system-requirements]``: the driver floor and a glibc above pixi's default."""
    d = declaration(model, rich=False)
    found = {"cuda": d.cuda, "libc": d.glibc}
    return {k: v for k, v in found.items() if v is not None}


def activation(model: ExportModel, *, rich: bool) -> dict[str, str]:
    """The uv pins for the facts the manifest declares (the driver pin with a declared driver,
    the GPU pin with a declared architecture), listed in ``VARIANT_BRIDGE_EXPORTED_PINS``."""
    d = declaration(model, rich=rich)
    declared = {DRIVER_VARIABLE: d.cuda is not None, SM_ARCH_VARIABLE: d.cuda_arch is not None}
    pins = [
        (k, v)
        for k, v in model.activation_env
        if k != EXPORTED_PINS_VARIABLE and declared.get(k, True)
    ]
    if not pins:
        return {}
    return {**dict(pins), EXPORTED_PINS_VARIABLE: exported_pins_value(pins)}


def _dependency_value(dep: CondaDependency) -> str | dict[str, str]:
    if dep.build is None and dep.channel is None:
        return dep.version or "*"
    value = {"version": dep.version or "*"}
    if dep.build is not None:
        value["build"] = dep.build
    if dep.channel is not None:
        value["channel"] = dep.channel
    return value


def _local_path(url: str) -> str | None:
    return str(url_to_path(url)) if url.startswith("file:") else None


def _pypi_value(model: ExportModel, requirement: PipRequirement) -> str | dict[str, str]:
    if requirement.url is None:
        return "*" if requirement.any_version else f"=={requirement.version}"
    if requirement.copy is not None:
        return {"path": requirement.copy_relative or requirement.copy}
    path = _local_path(requirement.url)
    return {"path": model.local_reference(path)} if path is not None else {"url": requirement.url}


def _pypi_comment(requirement: PipRequirement) -> str | None:
    parts = []
    if requirement.label is not None:
        parts.append(f"variant {requirement.label}")
    if requirement.sha256:
        parts.append(f"sha256={requirement.sha256}")
    if requirement.url is None and requirement.label is not None:
        parts.append("NOT pinned to a file")
    return ", ".join(parts) or None


def _pypi_options(model: ExportModel) -> dict[str, Any]:
    """The indexes the wheels came from, as pixi reads them: every index as an extra index (pixi's
    ``index-url`` replaces PyPI for every PyPI dependency of the workspace), find-links."""
    options: dict[str, Any] = {}
    idx = model.index_options
    extra = [u for u in (idx.index_url, *idx.extra_index_urls) if u]
    if extra:
        options["extra-index-urls"] = list(dict.fromkeys(extra))
    if idx.find_links:
        options["find-links"] = [
            {"url": loc}
            if "://" in loc and not loc.startswith("file:")
            else {"path": model.local_reference(_local_path(loc) or loc)}
            for loc in idx.find_links
        ]
    return options


def to_dict(model: ExportModel, *, rich: bool | None = None) -> dict[str, Any]:
    """A new pixi manifest as plain data (what ``tomllib.loads`` of :func:`render` gives).

    :param rich: declare a rich platform entry (the default for a new manifest) instead of
        ``[system-requirements]``.
    """
    rich = True if rich is None else rich
    entry = platform_entry(model, rich=rich)
    workspace: dict[str, Any] = {
        "name": model.name,
        "channels": list(model.channels),
        "platforms": [entry],
    }
    if not isinstance(entry, str):
        workspace["requires-pixi"] = f">={MIN_PIXI}"
    manifest: dict[str, Any] = {"workspace": workspace}
    system = system_requirements(model) if not rich else {}
    if system:
        manifest["system-requirements"] = system
    manifest["dependencies"] = {d.name: _dependency_value(d) for d in model.dependencies}
    if model.pip:
        manifest["pypi-dependencies"] = {p.name: _pypi_value(model, p) for p in model.pip}
    options = _pypi_options(model)
    if options and model.pip:
        manifest["pypi-options"] = options
    pins = activation(model, rich=rich)
    if pins:
        manifest["activation"] = {"env": pins}
    return manifest


def header(model: ExportModel, *, rich: bool | None = None) -> list[str]:
    """The comment block: producer, source, bridged view, platform, requirements and notes."""
    rich = True if rich is None else rich
    lines = intro_lines(model, "[pypi-dependencies]")
    d = declaration(model, rich=rich)
    needs = "the pinned packages" + (
        "" if model.undeclared_host_requirements else " and the wheels' host requirements"
    )
    if rich and d.is_rich:
        lines.append(
            f"The {d.subdir} platform declares the lowest machine that satisfies {needs}, as far "
            f"as pixi can state it (needs pixi >= {MIN_PIXI})."
        )
    elif system_requirements(model):
        lines.append(
            f"[system-requirements] declares the lowest driver (and C library) that satisfies "
            f"{needs}, as far as pixi can state it."
        )
    if model.host_requirements:
        lines.append("Host requirements implied by the variant wheels:")
        lines += [
            f"  {h.rattler_spec if len(h.rattler_spec) < 80 else h.spec}  <- " + ", ".join(h.wheels)
            for h in model.host_requirements
        ]
    lines += implied_lines(model, "in [dependencies]")
    missing = unstated(model, rich=rich)
    if missing:
        lines.append(
            "Not enforced by what is declared (pixi cannot state them; it does not check them):"
        )
        lines += [f"  {_short(h.rattler_spec)}  <- {', '.join(h.wheels)}" for h in missing]
    lines += undeclared_lines(model, "pixi does not check them")
    if activation(model, rich=rich):
        lines.append(
            "[activation.env] pins uv's NVIDIA provider to this environment's CUDA toolkit"
            + (" and target GPU" if d.cuda_arch is not None else "")
            + ", so `uv pip install --preview-features wheel-variants` inside it chooses what "
            "`variant-bridge select` chooses; variant-bridge reads them back as exported pins, "
            "not as facts about the machine."
        )
    lines.append(
        f"Entries marked `# {MARKER}` are the export's: `variant-bridge export --update` "
        "rewrites them; remove the marker to make an entry yours."
    )
    lines += copies_lines(model, "the [pypi-dependencies] paths")
    lines += [f"Note: {note}" for note in model.notes]
    return [" ".join(line.split()) if not line.startswith("  ") else line for line in lines]


def render(model: ExportModel) -> str:
    """A new pixi.toml text (with the comment header and per-line comments).

    Written directly rather than through tomlkit, whose table appends are quadratic (a
    1,000-package environment took 2 s); ``tomllib.loads(render(m)) == to_dict(m)`` is tested.

    :raises ExportError: in the strict mode, the platform cannot be declared
        (:func:`check_declarable`).
    """
    check_declarable(model)
    data = to_dict(model)
    reasons = comments(model)
    out = [f"# {line}".rstrip() for line in header(model)]
    for name, table in data.items():
        out.append("")
        if name == "activation":
            out += table_lines("activation.env", table["env"], {})
        else:
            out += table_lines(name, table, reasons.get(name, {}))
    return "\n".join(out) + "\n"


def comments(model: ExportModel) -> dict[str, dict[str, str]]:
    """Why each line of the dependency tables is there (the text after the marker)."""
    return {
        "dependencies": {d.name: d.comment for d in model.dependencies if d.comment},
        "pypi-dependencies": {p.name: c for p in model.pip if (c := _pypi_comment(p)) is not None},
    }


def table_lines(name: str, table: dict[str, Any], notes: dict[str, str]) -> list[str]:
    """The text of table *name*, every key marked as the export's (with its note from
    *notes*)."""
    out = [f"[{name}]"]
    for key, value in table.items():
        text = f"{_key(key)} = {toml_value(value)}"
        if key in _LONG_LISTS and isinstance(value, list) and len(value) > _LONG_LISTS[key]:
            text = f"{_key(key)} = [\n" + "".join(f"  {toml_value(v)},\n" for v in value) + "]"
        out.append(f"{text}  # {marked(notes.get(key))}")
    return out


# Lists written one item a line from this many items on (a platform per node class).
_LONG_LISTS = {"channels": 2, "platforms": 1}
_BARE_KEY_RE = re.compile(r"[A-Za-z0-9_-]+")


def _key(key: str) -> str:
    return key if _BARE_KEY_RE.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    # A JSON string is a TOML basic string, except that TOML also wants DEL escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    """*value* (str, bool, int, dict, list) as TOML text; dicts as inline tables."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")
