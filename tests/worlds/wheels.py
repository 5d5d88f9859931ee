"""Real, installable wheels (variant or not) and ``{name}-{version}-variants.json`` index files.

Every wheel holds a tiny importable package that says which build it is, so an install test can
check what an installer picked::

    import tinyvar; tinyvar.VARIANT_LABEL   # "cu128", "null", or None for the non-variant wheel

Builders:

- :func:`make_wheel` writes one wheel: ``*.dist-info/METADATA``, ``WHEEL``, ``RECORD`` (sha256 of
  every file), and for a variant wheel ``variant.json`` in any schema dialect.
- :func:`write_variants_json` writes the index file for some wheels (their ``variant.json``
  documents merged).
- :func:`make_release` writes a whole release at once: one wheel per label (plus a non-variant
  wheel) sharing the same providers and priorities, and the index file.

The JSON documents are written here as plain dicts, not with variant-bridge's own code, so a bug
shared by a writer and the reader under test cannot hide. Zips are deterministic (fixed
timestamps, sorted entries): the same inputs give the same bytes and so the same hashes.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from packaging.tags import parse_tag
from packaging.utils import canonicalize_name

from variant_bridge.filenames import WheelFilename
from variant_bridge.properties import VariantDescription, VariantProperty

__all__ = [
    "NVIDIA_PROVIDER",
    "SCHEMAS",
    "Release",
    "default_provider",
    "make_release",
    "make_wheel",
    "module_name",
    "variant_document",
    "write_variants_json",
]

Dialect = Literal["pep817", "pep825", "variantlib", "pep850"]
JsonObject = dict[str, Any]

_SCHEMA_HOST = "https://variants-schema.wheelnext.dev/"
SCHEMAS: Mapping[Dialect, str] = {
    "pep817": f"{_SCHEMA_HOST}v0.0.3.json",
    "pep825": f"{_SCHEMA_HOST}peps/825/v0.1.1.json",
    "variantlib": f"{_SCHEMA_HOST}v0.2.0.json",
    "pep850": f"{_SCHEMA_HOST}peps/850/v0.2.0.json",
}
"""The ``$schema`` each dialect is written with."""

NVIDIA_PROVIDER: JsonObject = {
    "requires": ["nvidia-variant-provider>=0.0.1,<1.0.0"],
    "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
}
"""The NVIDIA provider as real packages declare it; uv 0.13.9 treats it as built in."""

# The provider packages uv 0.13.9 vendors for these namespaces (plugin-api defaults to the
# requirement's name with "-" replaced by "_").
_KNOWN_PROVIDERS: Mapping[str, JsonObject] = {
    "nvidia": NVIDIA_PROVIDER,
    "x86_64": {"requires": ["x86-64-variant-provider"]},
    "aarch64": {"requires": ["aarch64-variant-provider"]},
}

_ZIP_DATE = (2026, 1, 1, 0, 0, 0)

PropertyLike = str | VariantProperty


def default_provider(namespace: str) -> JsonObject:
    """The provider table a namespace gets when a test does not say: the real NVIDIA one, uv's
    x86_64/aarch64 ones, else a made-up plugin package ``{namespace}-variant-provider``."""
    known = _KNOWN_PROVIDERS.get(namespace)
    if known is not None:
        return dict(known)
    return {"requires": [f"{namespace.replace('_', '-')}-variant-provider"]}


def module_name(name: str) -> str:
    """The importable package a world wheel ships: ``tiny-var`` -> ``tiny_var``."""
    return canonicalize_name(name).replace("-", "_")


def _wheel_name(name: str) -> str:
    return canonicalize_name(name).replace("-", "_")


def _properties(properties: Iterable[PropertyLike]) -> tuple[VariantProperty, ...]:
    return tuple(
        p if isinstance(p, VariantProperty) else VariantProperty.parse(p) for p in properties
    )


def _first_seen_namespaces(descriptions: Iterable[VariantDescription]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for description in descriptions:
        for prop in description.properties:
            seen.setdefault(prop.namespace, None)
    return tuple(seen)


def _variant_table(description: VariantDescription) -> JsonObject:
    table: JsonObject = {}
    for prop in description.properties:
        table.setdefault(prop.namespace, {}).setdefault(prop.feature, []).append(prop.value)
    return table


def variant_document(
    descriptions: Sequence[VariantDescription],
    *,
    dialect: Dialect = "pep850",
    namespace_priorities: Sequence[str] | None = None,
    providers: Mapping[str, JsonObject] | None = None,
) -> JsonObject:
    """The ``variant.json`` / ``*-variants.json`` document of *descriptions* in *dialect*.

    :param namespace_priorities: default: the namespaces in the order they first appear.
    :param providers: namespace -> provider table; default: :func:`default_provider` for each
        namespace (PEP 825 documents carry none).
    """
    namespaces = (
        list(namespace_priorities)
        if namespace_priorities is not None
        else list(_first_seen_namespaces(descriptions))
    )
    if not namespaces:
        # Every dialect requires a non-empty default-priorities.namespace.
        raise ValueError(
            "variant metadata needs at least one namespace: give a null variant its siblings' "
            "namespace_priorities, e.g. ['nvidia']"
        )
    document: JsonObject = {
        "$schema": SCHEMAS[dialect],
        "default-priorities": {"namespace": namespaces},
    }
    if dialect != "pep825":
        given = providers or {}
        document["providers"] = {ns: given.get(ns) or default_provider(ns) for ns in namespaces}
    document["variants"] = {
        d.label: _variant_table(d) for d in sorted(descriptions, key=lambda d: d.label)
    }
    return document


def _dumps(document: JsonObject) -> str:
    return json.dumps(document, indent=4, sort_keys=True)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _write_zip(target: Path, members: Mapping[str, bytes]) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in members:
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, members[name])
    target.write_bytes(buffer.getvalue())


def make_wheel(
    directory: Path,
    name: str,
    version: str,
    *,
    label: str | None = None,
    properties: Iterable[PropertyLike] = (),
    tags: str = "py3-none-any",
    build: str | None = None,
    requires_python: str | None = None,
    requires: Iterable[str] = (),
    files: Mapping[str, str | bytes] | None = None,
    dialect: Dialect = "pep850",
    namespace_priorities: Sequence[str] | None = None,
    providers: Mapping[str, JsonObject] | None = None,
    variant_json: str | bytes | None = None,
) -> Path:
    """Write one real wheel into *directory* and return its path.

    A wheel is a variant wheel when it has a *label* or *properties*: ``label="null"`` (no
    properties) makes the null variant; properties without a label get the 8-hex digest label,
    as variantlib does. With neither, it is a plain non-variant wheel.

    :param tags: ``python-abi-platform``, e.g. ``cp312-cp312-manylinux_2_28_x86_64``.
    :param requires: ``Requires-Dist`` lines.
    :param files: extra or replacement members, path -> content (e.g. to break the package).
    :param dialect: the schema dialect of ``variant.json``.
    :param namespace_priorities: default: the namespaces of *properties*; a null variant should
        be given its siblings' list.
    :param providers: namespace -> provider table; default: :func:`default_provider`.
    :param variant_json: write this text as ``variant.json`` instead (a corrupt one, say).
    """
    directory.mkdir(parents=True, exist_ok=True)
    props = _properties(properties)
    description: VariantDescription | None = None
    if variant_json is None and (label is not None or props):
        description = VariantDescription.of(props, label)
    file_label = description.label if description is not None else label
    python_tag, abi_tag, platform_tag = tags.split("-")
    wheel_filename = WheelFilename(
        name=_wheel_name(name),
        version=version,
        build=build,
        python_tag=python_tag,
        abi_tag=abi_tag,
        platform_tag=platform_tag,
        label=file_label,
    )
    dist_info = f"{_wheel_name(name)}-{version}.dist-info"
    package = module_name(name)

    members: dict[str, bytes] = {
        f"{package}/__init__.py": (
            f'"""{name} {version}, built by the variant-bridge test world."""\n'
            f"__version__ = {version!r}\n"
            f"VARIANT_LABEL = {wheel_filename.label!r}\n"
            f"VARIANT_PROPERTIES = {[str(p) for p in props]!r}\n"
        ).encode()
    }
    for path, content in (files or {}).items():
        members[path] = content.encode() if isinstance(content, str) else content

    metadata_lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        metadata_lines.append(f"Requires-Python: {requires_python}")
    metadata_lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    metadata_lines.append(f"Summary: {name}, a variant-bridge test world wheel")
    members[f"{dist_info}/METADATA"] = ("\n".join(metadata_lines) + "\n\n").encode()

    wheel_lines = ["Wheel-Version: 1.0", "Generator: variant-bridge-tests", "Root-Is-Purelib: true"]
    if build:
        wheel_lines.append(f"Build: {build}")
    wheel_lines += [f"Tag: {tag}" for tag in sorted(str(t) for t in parse_tag(tags))]
    members[f"{dist_info}/WHEEL"] = ("\n".join(wheel_lines) + "\n").encode()

    if variant_json is not None:
        members[f"{dist_info}/variant.json"] = (
            variant_json.encode() if isinstance(variant_json, str) else variant_json
        )
    elif description is not None:
        document = variant_document(
            [description],
            dialect=dialect,
            namespace_priorities=namespace_priorities,
            providers=providers,
        )
        members[f"{dist_info}/variant.json"] = (_dumps(document) + "\n").encode()

    record = f"{dist_info}/RECORD"
    lines = [f"{path},{_record_hash(data)},{len(data)}" for path, data in members.items()]
    members[record] = ("\n".join([*lines, f"{record},,"]) + "\n").encode()

    target = directory / str(wheel_filename)
    _write_zip(target, members)
    return target


def _variant_json_of(wheel: Path) -> JsonObject:
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.endswith(".dist-info/variant.json")]
        if not names:
            raise ValueError(f"{wheel} is not a variant wheel")
        document: JsonObject = json.loads(zf.read(names[0]))
    return document


def write_variants_json(
    directory: Path, name: str, version: str, wheels: Iterable[Path] | JsonObject
) -> Path:
    """Write ``{name}-{version}-variants.json`` into *directory* and return its path.

    :param wheels: variant wheels of one release (same providers and priorities) whose
        ``variant.json`` documents are merged (leave some out to make an index file that misses
        their labels), or the document itself.
    """
    if isinstance(wheels, dict):
        merged: JsonObject | None = wheels
    else:
        merged = None
        for wheel in wheels:
            document = _variant_json_of(wheel)
            if merged is None:
                merged = document
            else:
                merged["variants"].update(document["variants"])
    if merged is None:
        raise ValueError("write_variants_json needs at least one variant wheel or a document")
    merged["variants"] = dict(sorted(merged["variants"].items()))
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{_wheel_name(name)}-{version}-variants.json"
    target.write_text(_dumps(merged) + "\n")
    return target


@dataclass(frozen=True)
class Release:
    """The files :func:`make_release` wrote."""

    name: str
    version: str
    wheels: dict[str | None, Path] = field(default_factory=dict)
    """Label -> wheel path; key ``None`` is the non-variant wheel."""
    variants_json: Path | None = None

    @property
    def paths(self) -> list[Path]:
        files = list(self.wheels.values())
        return files + ([self.variants_json] if self.variants_json is not None else [])


def make_release(
    directory: Path,
    name: str,
    version: str,
    variants: Mapping[str, Iterable[PropertyLike]],
    *,
    non_variant: bool = True,
    variants_json: bool | Iterable[str] = True,
    tags: str = "py3-none-any",
    dialect: Dialect = "pep850",
    namespace_priorities: Sequence[str] | None = None,
    providers: Mapping[str, JsonObject] | None = None,
    requires_python: str | None = None,
    requires: Iterable[str] = (),
) -> Release:
    """Write a release: one wheel per label, sharing priorities and providers, plus the index file.

    :param variants: label -> properties; ``{"null": []}`` adds the null variant.
    :param non_variant: also write the plain wheel without a label.
    :param variants_json: ``True``: an index file with every label; ``False``: none; an
        iterable of labels: an index file listing only those (PEP 825 PR #5100 lets clients read
        the other labels from their wheels).
    """
    descriptions = {
        label: VariantDescription.of(_properties(props), label) for label, props in variants.items()
    }
    namespaces = (
        tuple(namespace_priorities)
        if namespace_priorities is not None
        else _first_seen_namespaces(descriptions.values())
    )
    shared = {
        "tags": tags,
        "dialect": dialect,
        "namespace_priorities": namespaces,
        "providers": providers,
        "requires_python": requires_python,
        "requires": tuple(requires),
    }
    wheels: dict[str | None, Path] = {}
    for label, description in descriptions.items():
        wheels[label] = make_wheel(
            directory, name, version, label=label, properties=description.properties, **shared
        )
    if non_variant:
        wheels[None] = make_wheel(
            directory,
            name,
            version,
            tags=tags,
            requires_python=requires_python,
            requires=tuple(requires),
        )
    index_file: Path | None = None
    if variants_json is not False:
        wanted = set(descriptions) if variants_json is True else set(variants_json)
        listed = [descriptions[label] for label in descriptions if label in wanted]
        document = variant_document(
            listed, dialect=dialect, namespace_priorities=namespaces, providers=providers
        )
        index_file = write_variants_json(directory, name, version, document)
    return Release(name, version, wheels, index_file)
