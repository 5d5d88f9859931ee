"""Read and write variant metadata (``variant.json``, ``{name}-{version}-variants.json``), pure.

Four dialects are met in the wild; each normalises into one
:class:`~variant_bridge.metadata.model.VariantMetadata`:

- ``pep817`` (``v0.0.3.json``): providers with ``enable-if`` / ``install-time`` / ``optional`` /
  ``plugin-api`` / ``requires``, ``default-priorities.{namespace,feature,property}`` and a top-level
  ``static-properties`` table (moved onto the provider of its namespace here);
- ``pep825`` (``peps/825/v0.1.1.json``): only ``$schema``, ``default-priorities.namespace`` and
  ``variants``;
- ``variantlib`` (``v0.2.0.json``, written by variantlib 0.2.2) and ``pep850``
  (``peps/850/v0.2.0.json``, read by uv): providers with exactly one of ``requires``,
  ``static-properties`` (+ ``feature-order``) or ``builtin``, plus ``plugin-api`` and ``optional``.

The dialect comes from ``$schema`` (a newer minor version of a known schema is accepted and its
unknown keys ignored; an unknown major version or URL is an error), or from the document's shape
when ``$schema`` is missing. Every error is an :class:`~variant_bridge.errors.InvalidMetadata`
whose one-line message names the source and the key path::

    variants.json: variants.cu128.nvidia.sm_arch[1]: invalid value 'SM90': must match [a-z0-9_.]+

Nothing here touches files; :mod:`variant_bridge.indexes.variant_files` reads paths and wheels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final, NoReturn, TypeVar

from variant_bridge.errors import InvalidMetadata
from variant_bridge.metadata.model import Dialect, Provider, StaticFeature, VariantMetadata
from variant_bridge.properties import (
    FEATURE_RE,
    LABEL_RE,
    NAMESPACE_RE,
    NULL_LABEL,
    VALUE_RE,
    VariantDescription,
    VariantProperty,
)

__all__ = [
    "SCHEMA_URLS",
    "convert_metadata",
    "dialect_of_schema",
    "merge_metadata",
    "metadata_to_json",
    "parse_variant_metadata",
    "read_variant_json",
    "single_variant",
]

_SCHEMA_HOST = "https://variants-schema.wheelnext.dev/"

SCHEMA_URLS: Final[Mapping[Dialect, str]] = MappingProxyType(
    {
        "pep817": f"{_SCHEMA_HOST}v0.0.3.json",
        "pep825": f"{_SCHEMA_HOST}peps/825/v0.1.1.json",
        "variantlib": f"{_SCHEMA_HOST}v0.2.0.json",
        "pep850": f"{_SCHEMA_HOST}peps/850/v0.2.0.json",
    }
)
"""The ``$schema`` URL each dialect is written with."""

_SCHEMA_URL_RE = re.compile(
    re.escape(_SCHEMA_HOST)
    + r"(?:peps/(?P<pep>[0-9]+)/)?v(?P<major>[0-9]+)\.(?P<minor>[0-9]+)\.(?P<patch>[0-9]+)\.json"
)
# URL family (the PEP directory, None for the root) -> known versions, oldest first. A version
# reads as the newest known one at or below it, so v0.1.0 at the root is still PEP 817's shape.
_FAMILIES: Final[Mapping[str | None, tuple[tuple[tuple[int, int, int], Dialect], ...]]] = {
    None: (((0, 0, 3), "pep817"), ((0, 2, 0), "variantlib")),
    "825": (((0, 1, 1), "pep825"),),
    "850": (((0, 2, 0), "pep850"),),
}

# variantlib 0.2.2 checks requirements and plugin references with these shapes, not PEP 508.
_REQUIREMENT_RE = re.compile(r"[\S ]+")
_PLUGIN_API_RE = re.compile(r"[\w.]+(?:\s*:\s*[\w.]+)?")
# PEP 817's schema limits labels to 16 characters; PEP 825 dropped the limit.
_PEP817_LABEL_MAX = 16
# PEP 817 keeps abi_dependency out of providers although variants may use it.
_ABI_DEPENDENCY = "abi_dependency"

_PRIORITY_KEYS: Final[Mapping[Dialect, frozenset[str]]] = {
    "pep817": frozenset({"namespace", "feature", "property"}),
    "pep825": frozenset({"namespace"}),
    "variantlib": frozenset({"namespace"}),
    "pep850": frozenset({"namespace"}),
}
_PROVIDER_KEYS_817 = frozenset({"enable-if", "install-time", "optional", "plugin-api", "requires"})
_PROVIDER_KEYS_850 = frozenset(
    {"requires", "plugin-api", "static-properties", "feature-order", "builtin", "optional"}
)
_TOP_KEYS_825 = frozenset({"$schema", "default-priorities", "variants"})

_Path = tuple[str | int, ...]
_T = TypeVar("_T")
_PLAIN_KEY_RE = re.compile(r"[A-Za-z0-9_$-]+")


# --------------------------------------------------------------------------- error reporting


def _format_path(path: _Path) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY_RE.fullmatch(part):
            text += f".{part}" if text else part
        else:  # a label like "cu12.8" would read as two keys when dotted
            text += f"[{part!r}]"
    return text or "(top level)"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def _describe(value: object) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{_json_type(value)} {text}"


class _JsonObject(dict[str, object]):
    """A decoded JSON object that remembers keys the text repeated (``json`` keeps the last)."""

    __slots__ = ("duplicate_keys",)

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        super().__init__(pairs)
        seen: set[str] = set()
        duplicates: list[str] = []
        for key, _ in pairs:
            if key in seen:
                duplicates.append(key)
            seen.add(key)
        self.duplicate_keys = tuple(duplicates)


@dataclass(frozen=True, slots=True)
class _Reader:
    """Validation helpers that know the source, the dialect and whether to be lenient."""

    source: str
    dialect: Dialect
    lenient: bool
    """A newer minor schema version: ignore keys this reader does not know."""

    def fail(self, path: _Path, message: str) -> NoReturn:
        raise InvalidMetadata(f"{self.source}: {_format_path(path)}: {message}")

    def mapping(self, value: object, path: _Path, what: str = "an object") -> Mapping[str, object]:
        if not isinstance(value, Mapping):
            self.fail(path, f"expected {what}, got {_describe(value)}")
        for key in value:
            if not isinstance(key, str):
                self.fail(path, f"keys must be strings, got {_describe(key)}")
        duplicates: tuple[str, ...] = getattr(value, "duplicate_keys", ())
        if duplicates:
            self.fail((*path, duplicates[0]), "key appears more than once in this object")
        return value

    def only_keys(self, value: Mapping[str, object], path: _Path, allowed: Collection[str]) -> None:
        if self.lenient:
            return
        for key in value:
            if key not in allowed:
                self.fail(
                    (*path, key),
                    f"unknown key in the {self.dialect} schema "
                    f"(allowed here: {', '.join(sorted(allowed))})",
                )

    def required(self, table: Mapping[str, object], key: str, path: _Path) -> object:
        if key not in table:
            self.fail((*path, key), "required key is missing")
        return table[key]

    def name(self, value: object, path: _Path, pattern: re.Pattern[str], what: str) -> str:
        if not isinstance(value, str):
            self.fail(path, f"expected a {what} string, got {_describe(value)}")
        if pattern.fullmatch(value) is None:
            self.fail(path, f"invalid {what} {value!r}: must match {pattern.pattern}")
        return value

    def text(self, value: object, path: _Path, what: str) -> str:
        if not isinstance(value, str):
            self.fail(path, f"expected {what} (a string), got {_describe(value)}")
        return value

    def boolean(self, value: object, path: _Path) -> bool:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {_describe(value)}")
        return value

    def names(
        self,
        value: object,
        path: _Path,
        pattern: re.Pattern[str],
        what: str,
        *,
        min_items: int = 1,
        unique: bool = True,
    ) -> tuple[str, ...]:
        if not isinstance(value, list | tuple):
            self.fail(path, f"expected an array of {what}s, got {_describe(value)}")
        items = tuple(self.name(item, (*path, i), pattern, what) for i, item in enumerate(value))
        if len(items) < min_items:
            self.fail(path, f"expected at least {min_items} {what}, got an empty array")
        if unique:
            for i, item in enumerate(items):
                if item in items[:i]:
                    self.fail((*path, i), f"duplicate {what} {item!r}")
        return items


def _optional(table: Mapping[str, object], key: str) -> object:
    # Provider sub-keys set to JSON null read as absent (variantlib and uv both do so).
    return table.get(key)


# --------------------------------------------------------------------------- schema -> dialect


def _resolve_schema(url: object, source: str) -> tuple[Dialect, bool]:
    """Return the dialect of a ``$schema`` value and whether it is newer than the one we know."""
    if not isinstance(url, str):
        raise InvalidMetadata(f"{source}: $schema: expected a URL string, got {_describe(url)}")
    match = _SCHEMA_URL_RE.fullmatch(url)
    family = match["pep"] if match else None
    if match is None or family not in _FAMILIES:
        urls = ", ".join(SCHEMA_URLS.values())
        raise InvalidMetadata(
            f"{source}: $schema: unknown variant metadata schema {url!r} (known: {urls})"
        )
    version = (int(match["major"]), int(match["minor"]), int(match["patch"]))
    known_versions = _FAMILIES[family]
    majors = {v[0] for v, _ in known_versions}
    if version[0] not in majors:
        latest = ".".join(map(str, known_versions[-1][0]))
        raise InvalidMetadata(
            f"{source}: $schema: unsupported major version {version[0]} of variant metadata "
            f"schema {url!r} (this reader knows v{latest} of that schema)"
        )
    dialect = known_versions[0][1]
    newer = False
    for known, candidate in known_versions:
        if known[0] == version[0] and known <= version:
            dialect, newer = candidate, version > known
    return dialect, newer


def dialect_of_schema(url: str, *, source: str) -> Dialect:
    """The dialect a ``$schema`` URL announces.

    :raises InvalidMetadata: for an unknown URL family or an unknown major version.
    """
    return _resolve_schema(url, source)[0]


def _dialect_from_shape(data: Mapping[str, object]) -> Dialect:
    """Guess the dialect of a document without ``$schema`` from the keys only one dialect has."""
    priorities = data.get("default-priorities")
    providers = data.get("providers")
    if "static-properties" in data or (
        isinstance(priorities, Mapping) and {"feature", "property"} & set(priorities)
    ):
        return "pep817"
    if isinstance(providers, Mapping):
        for body in providers.values():
            if isinstance(body, Mapping) and {"enable-if", "install-time"} & set(body):
                return "pep817"
        return "pep850"
    return "pep850" if "providers" in data else "pep825"


# --------------------------------------------------------------------------- readers


def _namespace_priorities(r: _Reader, data: Mapping[str, object]) -> Mapping[str, object]:
    path: _Path = ("default-priorities",)
    table = r.mapping(r.required(data, "default-priorities", ()), path)
    r.only_keys(table, path, _PRIORITY_KEYS[r.dialect])
    return table


def _variants(
    r: _Reader, data: Mapping[str, object], namespaces: tuple[str, ...], *, required: bool
) -> tuple[VariantDescription, ...]:
    path: _Path = ("variants",)
    if "variants" not in data and not required:  # variantlib reads a missing table as empty
        return ()
    table = r.mapping(r.required(data, "variants", ()), path)
    result: list[VariantDescription] = []
    for label, body in table.items():
        label_path = (*path, label)
        if LABEL_RE.fullmatch(label) is None:
            r.fail(label_path, f"invalid variant label {label!r}: must match {LABEL_RE.pattern}")
        if r.dialect == "pep817" and len(label) > _PEP817_LABEL_MAX:
            r.fail(
                label_path,
                f"variant label {label!r} is longer than {_PEP817_LABEL_MAX} characters, "
                "the limit of the pep817 schema",
            )
        properties: list[VariantProperty] = []
        for namespace, features in r.mapping(body, label_path).items():
            ns_path = (*label_path, namespace)
            r.name(namespace, ns_path, NAMESPACE_RE, "namespace")
            feature_table = r.mapping(features, ns_path)
            for feature, values in feature_table.items():
                feature_path = (*ns_path, feature)
                r.name(feature, feature_path, FEATURE_RE, "feature name")
                for value in r.names(values, feature_path, VALUE_RE, "value"):
                    properties.append(VariantProperty(namespace, feature, value))
            # An empty namespace object carries no property; variantlib and uv both skip it.
            if feature_table and namespace not in namespaces:
                r.fail(
                    ns_path,
                    f"namespace {namespace!r} is not listed in default-priorities.namespace",
                )
        if label == NULL_LABEL and properties:
            r.fail(label_path, f"the {NULL_LABEL!r} variant must have no properties")
        if not properties and label != NULL_LABEL:
            r.fail(label_path, f"a variant without properties must use the label {NULL_LABEL!r}")
        result.append(VariantDescription.of(properties, label))
    return tuple(sorted(result, key=lambda description: description.label))


def _static_table(r: _Reader, value: object, path: _Path) -> dict[str, tuple[str, ...]]:
    table = r.mapping(value, path)
    if not table:
        r.fail(path, "expected at least one feature, got an empty object")
    result: dict[str, tuple[str, ...]] = {}
    for feature, values in table.items():
        r.name(feature, (*path, feature), FEATURE_RE, "feature name")
        result[feature] = r.names(values, (*path, feature), VALUE_RE, "value")
    return result


def _order_index(order: Iterable[str]) -> dict[str, int]:
    return {name: i for i, name in enumerate(order)}


def _parse_pep825(r: _Reader, data: Mapping[str, object], schema: str | None) -> VariantMetadata:
    r.only_keys(data, (), _TOP_KEYS_825)
    priorities = _namespace_priorities(r, data)
    namespaces = r.names(
        r.required(priorities, "namespace", ("default-priorities",)),
        ("default-priorities", "namespace"),
        NAMESPACE_RE,
        "namespace",
    )
    variants = _variants(r, data, namespaces, required=True)
    return VariantMetadata("pep825", schema, variants, namespaces)


def _parse_pep850(r: _Reader, data: Mapping[str, object], schema: str | None) -> VariantMetadata:
    if "static-properties" in data and not r.lenient:
        # variantlib ignores it, which would silently drop what decides compatibility.
        r.fail(
            ("static-properties",),
            f"a top-level static-properties table is PEP 817's; in the {r.dialect} schema "
            "static properties belong in providers.<namespace>.static-properties",
        )
    priorities = _namespace_priorities(r, data)
    prio_path: _Path = ("default-priorities", "namespace")
    namespaces = r.names(
        r.required(priorities, "namespace", prio_path[:1]), prio_path, NAMESPACE_RE, "namespace"
    )
    path: _Path = ("providers",)
    table = r.mapping(data.get("providers", {}), path)
    providers: list[Provider] = []
    for namespace, body in table.items():
        providers.append(_provider_850(r, namespace, body, (*path, namespace)))
    missing = [ns for ns in namespaces if ns not in table]
    extra = [ns for ns in table if ns not in namespaces]
    if missing or extra:
        r.fail(
            prio_path,
            "must name the same namespaces as providers "
            f"(without a provider: {missing or 'none'}; not listed: {extra or 'none'})",
        )
    variants = _variants(r, data, namespaces, required=False)
    index = _order_index(namespaces)
    providers.sort(key=lambda provider: index[provider.namespace])
    return VariantMetadata(r.dialect, schema, variants, namespaces, tuple(providers))


def _provider_850(r: _Reader, namespace: str, body: object, path: _Path) -> Provider:
    r.name(namespace, path, NAMESPACE_RE, "namespace")
    table = r.mapping(body, path)
    if "build-requires" in table:
        r.fail(
            (*path, "build-requires"),
            "build-requires belongs in pyproject.toml only; built metadata carries the "
            "static-properties it produced",
        )
    r.only_keys(table, path, _PROVIDER_KEYS_850)
    requires: tuple[str, ...] = ()
    if (value := _optional(table, "requires")) is not None:
        requires = r.names(value, (*path, "requires"), _REQUIREMENT_RE, "requirement", unique=False)
    plugin_api = None
    if (value := _optional(table, "plugin-api")) is not None:
        plugin_api = r.name(value, (*path, "plugin-api"), _PLUGIN_API_RE, "plugin-api reference")
    builtin = None
    if (value := _optional(table, "builtin")) is not None:
        builtin = r.text(value, (*path, "builtin"), "a builtin provider name")
    static: dict[str, tuple[str, ...]] | None = None
    if (value := _optional(table, "static-properties")) is not None:
        static = _static_table(r, value, (*path, "static-properties"))
    order: tuple[str, ...] | None = None
    if (value := _optional(table, "feature-order")) is not None:
        order = r.names(value, (*path, "feature-order"), FEATURE_RE, "feature name")
    optional = r.boolean(table["optional"], (*path, "optional")) if "optional" in table else False

    kinds = [
        key
        for key, given in (
            ("requires", requires),
            ("static-properties", static),
            ("builtin", builtin),
        )
        if given is not None and given != ()
    ]
    if len(kinds) != 1:
        r.fail(
            path,
            "exactly one of requires, static-properties or builtin must be given, "
            f"got {' and '.join(kinds) if kinds else 'none'}",
        )
    if plugin_api is not None and not requires:
        r.fail((*path, "plugin-api"), "plugin-api is valid only with requires")
    static_features: tuple[StaticFeature, ...] | None = None
    if static is None:
        if order is not None:
            r.fail((*path, "feature-order"), "feature-order is valid only with static-properties")
    else:
        if order is None and len(static) > 1:
            r.fail(
                path,
                "feature-order is required when static-properties lists more than one feature",
            )
        if order is not None and set(order) != set(static):
            r.fail(
                (*path, "feature-order"),
                f"must list every feature of static-properties: got {list(order)}, "
                f"expected {sorted(static)}",
            )
        static_features = tuple(StaticFeature(name, static[name]) for name in (order or static))
    return Provider(
        namespace,
        requires=requires,
        plugin_api=plugin_api,
        static_properties=static_features,
        builtin=builtin,
        optional=optional,
    )


def _parse_pep817(r: _Reader, data: Mapping[str, object], schema: str | None) -> VariantMetadata:
    priorities = _namespace_priorities(r, data)
    prio_path: _Path = ("default-priorities",)
    namespaces = r.names(
        r.required(priorities, "namespace", prio_path),
        (*prio_path, "namespace"),
        NAMESPACE_RE,
        "namespace",
    )
    index = _order_index(namespaces)

    feature_priorities: dict[str, tuple[str, ...]] = {}
    if (value := priorities.get("feature")) is not None:
        path = (*prio_path, "feature")
        for namespace, features in r.mapping(value, path).items():
            _known_namespace(r, namespace, (*path, namespace), index)
            feature_priorities[namespace] = r.names(
                features, (*path, namespace), FEATURE_RE, "feature name", min_items=0
            )
    property_priorities: list[tuple[str, str, tuple[str, ...]]] = []
    if (value := priorities.get("property")) is not None:
        path = (*prio_path, "property")
        for namespace, features in r.mapping(value, path).items():
            _known_namespace(r, namespace, (*path, namespace), index)
            for feature, values in r.mapping(features, (*path, namespace)).items():
                feature_path = (*path, namespace, feature)
                r.name(feature, feature_path, FEATURE_RE, "feature name")
                values_ = r.names(values, feature_path, VALUE_RE, "value", min_items=0)
                property_priorities.append((namespace, feature, values_))

    static: dict[str, tuple[StaticFeature, ...]] = {}
    if (value := data.get("static-properties")) is not None:
        path = ("static-properties",)
        for namespace, features in r.mapping(value, path).items():
            ns_path = (*path, namespace)
            r.name(namespace, ns_path, NAMESPACE_RE, "namespace")
            static_table = _static_table(r, features, ns_path)
            if len(static_table) > 1:
                # PEP 817: with several static features their order comes from default-priorities.
                order = feature_priorities.get(namespace, ())
                unordered = sorted(set(static_table) - set(order))
                if unordered:
                    r.fail(
                        ns_path,
                        f"features {unordered} need an order in "
                        f"default-priorities.feature.{namespace} when more than one is listed",
                    )
                rank = _order_index(order)
                static_table = dict(sorted(static_table.items(), key=lambda i: rank[i[0]]))
            static[namespace] = tuple(StaticFeature(k, v) for k, v in static_table.items())

    path = ("providers",)
    table = r.mapping(r.required(data, "providers", ()), path)
    providers: list[Provider] = []
    for namespace, body in table.items():
        provider_path = (*path, namespace)
        _known_namespace(r, namespace, provider_path, index)
        providers.append(_provider_817(r, namespace, body, provider_path, static.get(namespace)))
    for namespace in static:
        if namespace not in table:
            r.fail(
                ("static-properties", namespace),
                f"namespace {namespace!r} has static properties but no entry in providers",
            )
    missing = [ns for ns in namespaces if ns not in table and ns != _ABI_DEPENDENCY]
    if missing:
        r.fail((*prio_path, "namespace"), f"namespaces without an entry in providers: {missing}")

    variants = _variants(r, data, namespaces, required=True)
    providers.sort(key=lambda provider: index[provider.namespace])
    return VariantMetadata(
        "pep817",
        schema,
        variants,
        namespaces,
        tuple(providers),
        tuple(sorted(feature_priorities.items(), key=lambda item: index[item[0]])),
        tuple(sorted(property_priorities, key=lambda item: (index[item[0]], item[1]))),
    )


def _known_namespace(r: _Reader, namespace: str, path: _Path, index: Mapping[str, int]) -> None:
    r.name(namespace, path, NAMESPACE_RE, "namespace")
    if namespace not in index:
        r.fail(path, f"namespace {namespace!r} is not listed in default-priorities.namespace")


def _provider_817(
    r: _Reader,
    namespace: str,
    body: object,
    path: _Path,
    static: tuple[StaticFeature, ...] | None,
) -> Provider:
    table = r.mapping(body, path)
    r.only_keys(table, path, _PROVIDER_KEYS_817)
    install_time = True
    if (value := _optional(table, "install-time")) is not None:
        install_time = r.boolean(value, (*path, "install-time"))
    requires: tuple[str, ...] = ()
    if (value := _optional(table, "requires")) is not None:
        requires = r.names(value, (*path, "requires"), _REQUIREMENT_RE, "requirement", min_items=0)
    elif install_time:
        r.fail(path, "requires is required unless install-time is false")
    plugin_api = None
    if (value := _optional(table, "plugin-api")) is not None:
        plugin_api = r.name(value, (*path, "plugin-api"), _PLUGIN_API_RE, "plugin-api reference")
    enable_if = None
    if (value := _optional(table, "enable-if")) is not None:
        enable_if = r.text(value, (*path, "enable-if"), "an environment marker")
        if not enable_if.strip():
            r.fail((*path, "enable-if"), "expected an environment marker, got an empty string")
    optional = r.boolean(table["optional"], (*path, "optional")) if "optional" in table else False
    return Provider(
        namespace,
        requires=requires,
        plugin_api=plugin_api,
        static_properties=static,
        optional=optional,
        enable_if=enable_if,
        install_time=install_time,
    )


_PARSERS = {
    "pep817": _parse_pep817,
    "pep825": _parse_pep825,
    "variantlib": _parse_pep850,
    "pep850": _parse_pep850,
}


def parse_variant_metadata(data: object, *, source: str) -> VariantMetadata:
    """Normalise the decoded JSON of a ``variant.json`` or ``*-variants.json`` of any dialect.

    :param data: what ``json.loads`` returned.
    :param source: where it came from (a path, ``wheel!member``, a URL), used in error messages.
    :raises InvalidMetadata: on an unknown schema or malformed content; the message names the
        source and the key path.
    """
    if not isinstance(data, Mapping):
        raise InvalidMetadata(
            f"{source}: expected a JSON object at the top level, got {_describe(data)}"
        )
    schema: str | None = None
    if "$schema" in data:
        dialect, lenient = _resolve_schema(data["$schema"], source)
        schema = str(data["$schema"])  # _resolve_schema accepted only a string
    else:
        dialect, lenient = _dialect_from_shape(data), False
    reader = _Reader(source, dialect, lenient)
    table = reader.mapping(data, ())
    return _PARSERS[dialect](reader, table, schema)


class _BadConstantError(ValueError):
    pass


def _reject_constant(name: str) -> NoReturn:
    raise _BadConstantError(name)


def read_variant_json(text: str | bytes, *, source: str) -> VariantMetadata:
    """Decode JSON text (``bytes`` may be UTF-8/16/32) and :func:`parse_variant_metadata` it.

    :raises InvalidMetadata: naming *source* and the line and column of a JSON syntax error.
    """
    try:
        data = json.loads(text, object_pairs_hook=_JsonObject, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise InvalidMetadata(
            f"{source}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from error
    except UnicodeDecodeError as error:
        raise InvalidMetadata(
            f"{source}: not UTF-8 text: {error.reason} at byte {error.start}"
        ) from error
    except _BadConstantError as error:
        raise InvalidMetadata(f"{source}: invalid JSON: {error} is not a JSON value") from error
    except RecursionError as error:
        raise InvalidMetadata(f"{source}: invalid JSON: nested too deeply") from error
    return parse_variant_metadata(data, source=source)


def single_variant(
    meta: VariantMetadata, *, source: str, expected_label: str | None = None
) -> VariantDescription:
    """The one variant of a wheel's ``variant.json``.

    :param expected_label: the label of the wheel's filename, when known.
    :raises InvalidMetadata: when the metadata lists no or several labels, or another label.
    """
    if len(meta.variants) != 1:
        raise InvalidMetadata(
            f"{source}: variants: a wheel's variant.json must list exactly one label, "
            f"got {len(meta.variants)}: {list(meta.labels)}"
        )
    (variant,) = meta.variants
    if expected_label is not None and variant.label != expected_label:
        raise InvalidMetadata(
            f"{source}: variants: label {variant.label!r} does not match the wheel filename's "
            f"label {expected_label!r}"
        )
    return variant


# --------------------------------------------------------------------------- merge


def merge_metadata(a: VariantMetadata, b: VariantMetadata, *, source: str) -> VariantMetadata:
    """Merge two metadata of one package version by the index-file rules of PEP 825.

    ``variants`` is the union (a label must mean one property set); the namespace priorities are
    the longer list, of which the shorter must be a prefix; providers and PEP 817 priorities of a
    namespace must agree. The result keeps the dialect of *a*, or of *b* when only *b* carries
    providers.

    :raises InvalidMetadata: naming *source* and what disagrees.
    """
    shorter, longer = sorted((a.namespace_priorities, b.namespace_priorities), key=len)
    if longer[: len(shorter)] != shorter:
        raise InvalidMetadata(
            f"{source}: default-priorities.namespace: cannot merge {list(a.namespace_priorities)} "
            f"with {list(b.namespace_priorities)}: the shorter list must begin the longer one"
        )
    variants = {variant.label: variant for variant in a.variants}
    for variant in b.variants:
        old = variants.setdefault(variant.label, variant)
        if old.properties != variant.properties:
            raise InvalidMetadata(
                f"{source}: {_format_path(('variants', variant.label))}: label "
                f"{variant.label!r} means {{{'; '.join(map(str, old.properties))}}} in one "
                f"document and {{{'; '.join(map(str, variant.properties))}}} in another"
            )
    providers = {provider.namespace: provider for provider in a.providers}
    for provider in b.providers:
        old_provider = providers.setdefault(provider.namespace, provider)
        if old_provider != provider:
            raise InvalidMetadata(
                f"{source}: {_format_path(('providers', provider.namespace))}: the provider "
                "differs between the documents being merged"
            )
    feature_priorities = _merge_same(a.feature_priorities, b.feature_priorities, source, "feature")
    property_priorities = _merge_same(
        a.property_priorities, b.property_priorities, source, "property"
    )
    rank = _order_index(longer)
    base = b if b.providers and not a.providers else a
    return VariantMetadata(
        base.dialect,
        base.schema,
        tuple(sorted(variants.values(), key=lambda variant: variant.label)),
        longer,
        tuple(sorted(providers.values(), key=lambda p: rank.get(p.namespace, len(rank)))),
        feature_priorities,
        property_priorities,
    )


def _merge_same(a: tuple[_T, ...], b: tuple[_T, ...], source: str, key: str) -> tuple[_T, ...]:
    if a and b and a != b:
        raise InvalidMetadata(
            f"{source}: default-priorities.{key}: differs between the documents being merged"
        )
    return a or b


# --------------------------------------------------------------------------- writers


def convert_metadata(meta: VariantMetadata, dialect: Dialect) -> VariantMetadata:
    """*meta* as *dialect* carries it: what ``parse(metadata_to_json(meta, dialect))`` gives.

    - ``pep825`` drops providers and PEP 817 priorities;
    - ``variantlib``/``pep850`` keep one provider per namespace (a static provider loses its
      ``requires``; ``enable_if``/``install_time`` are dropped) and drop PEP 817 priorities;
    - ``pep817`` turns static providers into ahead-of-time ones (``install_time=False``) and
      records the order of several static features in ``feature_priorities``.

    :raises InvalidMetadata: when *dialect* cannot express *meta* (a namespace without a provider
        in ``pep817``/``pep850``, a builtin provider or a label over 16 characters in ``pep817``).
    """
    where = f"converting to {dialect}"
    if dialect == "pep825":
        return VariantMetadata(
            dialect, SCHEMA_URLS[dialect], meta.variants, meta.namespace_priorities
        )
    providers = {provider.namespace: provider for provider in meta.providers}
    needed = [
        ns
        for ns in meta.namespace_priorities
        if ns not in providers and not (dialect == "pep817" and ns == _ABI_DEPENDENCY)
    ]
    if needed:
        raise InvalidMetadata(
            f"{where}: providers: the {dialect} schema needs a provider for every namespace; "
            f"missing for {needed}"
        )
    unlisted = [ns for ns in providers if ns not in meta.namespace_priorities]
    if unlisted:
        raise InvalidMetadata(
            f"{where}: providers: namespaces {unlisted} are not in default-priorities.namespace"
        )
    if dialect == "pep817":
        return _convert_to_817(meta, where)
    converted: list[Provider] = []
    for provider in meta.providers:
        if provider.static_properties is not None:
            converted.append(
                Provider(
                    provider.namespace,
                    static_properties=provider.static_properties,
                    optional=provider.optional,
                )
            )
        elif provider.builtin is not None:
            converted.append(
                Provider(provider.namespace, builtin=provider.builtin, optional=provider.optional)
            )
        elif provider.requires:
            converted.append(
                Provider(
                    provider.namespace,
                    requires=provider.requires,
                    plugin_api=provider.plugin_api,
                    optional=provider.optional,
                )
            )
        else:
            raise InvalidMetadata(
                f"{where}: {_format_path(('providers', provider.namespace))}: the {dialect} "
                "schema needs requires, static-properties or builtin; this provider has none"
            )
    return VariantMetadata(
        dialect, SCHEMA_URLS[dialect], meta.variants, meta.namespace_priorities, tuple(converted)
    )


def _convert_to_817(meta: VariantMetadata, where: str) -> VariantMetadata:
    for variant in meta.variants:
        if len(variant.label) > _PEP817_LABEL_MAX:
            raise InvalidMetadata(
                f"{where}: {_format_path(('variants', variant.label))}: the pep817 schema limits "
                f"labels to {_PEP817_LABEL_MAX} characters"
            )
    feature_priorities = dict(meta.feature_priorities)
    converted: list[Provider] = []
    for provider in meta.providers:
        path = ("providers", provider.namespace)
        if provider.builtin is not None:
            raise InvalidMetadata(
                f"{where}: {_format_path(path)}: the pep817 schema has no builtin providers"
            )
        static = provider.static_properties
        if static is not None and len(static) > 1:
            order = [feature.name for feature in static]
            listed = feature_priorities.get(provider.namespace)
            if listed is None:
                feature_priorities[provider.namespace] = tuple(order)
            elif [name for name in listed if name in order] != order:
                raise InvalidMetadata(
                    f"{where}: default-priorities.feature.{provider.namespace}: {list(listed)} "
                    f"does not list the static features in their order {order}"
                )
        # PEP 817 needs requires unless install-time is false: a static provider without
        # requires (PEP 850's kind) becomes an ahead-of-time one.
        install_time = provider.install_time and (static is None or bool(provider.requires))
        converted.append(replace(provider, install_time=install_time))
    rank = _order_index(meta.namespace_priorities)
    return replace(
        meta,
        dialect="pep817",
        schema=SCHEMA_URLS["pep817"],
        providers=tuple(converted),
        feature_priorities=tuple(sorted(feature_priorities.items(), key=lambda i: rank[i[0]])),
    )


def _variants_json(meta: VariantMetadata) -> dict[str, object]:
    return {variant.label: variant.to_dict() for variant in meta.variants}


def metadata_to_json(meta: VariantMetadata, *, dialect: Dialect = "pep850") -> dict[str, object]:
    """The JSON document (a ``dict`` for ``json.dumps``) of *meta* in *dialect*.

    What *dialect* cannot carry is dropped as :func:`convert_metadata` describes, so
    ``parse_variant_metadata(metadata_to_json(m, dialect=d), ...) == convert_metadata(m, d)``.

    :raises InvalidMetadata: when *dialect* cannot express *meta*.
    """
    meta = convert_metadata(meta, dialect)
    priorities: dict[str, object] = {"namespace": list(meta.namespace_priorities)}
    document: dict[str, object] = {
        "$schema": SCHEMA_URLS[dialect],
        "default-priorities": priorities,
    }
    if dialect == "pep825":
        document["variants"] = _variants_json(meta)
        return document
    if dialect == "pep817":
        if meta.feature_priorities:
            priorities["feature"] = {ns: list(names) for ns, names in meta.feature_priorities}
        if meta.property_priorities:
            table: dict[str, dict[str, list[str]]] = {}
            for namespace, feature, values in meta.property_priorities:
                table.setdefault(namespace, {})[feature] = list(values)
            priorities["property"] = table
        document["providers"] = {p.namespace: _provider_817_json(p) for p in meta.providers}
        static = {
            p.namespace: {f.name: list(f.values) for f in p.static_properties}
            for p in meta.providers
            if p.static_properties is not None
        }
        if static:
            document["static-properties"] = static
    else:
        document["providers"] = {p.namespace: _provider_850_json(p) for p in meta.providers}
    document["variants"] = _variants_json(meta)
    return document


def _provider_850_json(provider: Provider) -> dict[str, object]:
    body: dict[str, object] = {}
    if provider.requires:
        body["requires"] = list(provider.requires)
    if provider.plugin_api is not None:
        body["plugin-api"] = provider.plugin_api
    if provider.static_properties is not None:
        body["static-properties"] = {f.name: list(f.values) for f in provider.static_properties}
        if len(provider.static_properties) > 1:
            body["feature-order"] = [f.name for f in provider.static_properties]
    if provider.builtin is not None:
        body["builtin"] = provider.builtin
    if provider.optional:
        body["optional"] = True
    return body


def _provider_817_json(provider: Provider) -> dict[str, object]:
    body: dict[str, object] = {}
    if provider.requires or provider.install_time:
        body["requires"] = list(provider.requires)
    if provider.plugin_api is not None:
        body["plugin-api"] = provider.plugin_api
    if provider.enable_if is not None:
        body["enable-if"] = provider.enable_if
    if not provider.install_time:
        body["install-time"] = False
    if provider.optional:
        body["optional"] = True
    return body
