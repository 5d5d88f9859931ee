"""The PEP 817 reader (``v0.0.3``).

On top of PEP 825's tables: providers with ``requires`` / ``plugin-api`` / ``enable-if`` /
``install-time`` / ``optional``, ``default-priorities.feature`` and ``.property``, and a top-level
``static-properties`` table, which moves onto the provider of its namespace here (ordered by
``default-priorities.feature`` when it lists several features).

The older ``v0.0.2`` files of the real variant index say ``plugin-use`` instead of
``install-time``: ``all`` is an install-time plugin, ``build`` and ``none`` are not (the same files
republished as ``v0.0.3`` say ``install-time: false``). They have no ``static-properties``; the
values of such a namespace are its ``default-priorities.property`` lists, which is exactly what the
``v0.0.3`` republication carries as ``static-properties`` (semantics.md §9).
"""

from __future__ import annotations

from collections.abc import Mapping

from variant_bridge.metadata import _fields as f
from variant_bridge.metadata.model import Provider, StaticFeature, VariantMetadata
from variant_bridge.metadata.pep825 import read_priorities, read_variants
from variant_bridge.metadata.pep850 import REQUIREMENT_RE, plugin_api, read_flag, static_table
from variant_bridge.metadata.schema import Schema
from variant_bridge.properties import FEATURE_RE, NAMESPACE_RE, VALUE_RE

__all__ = ["read_pep817"]

_PROVIDER_KEYS = frozenset({"enable-if", "install-time", "optional", "plugin-api", "requires"})
_LEGACY_PROVIDER_KEYS = frozenset({"enable-if", "plugin-use", "optional", "plugin-api", "requires"})
_PLUGIN_USE = {"all": True, "build": False, "none": False}
# PEP 817 keeps abi_dependency out of providers although variants may use it.
_ABI_DEPENDENCY = "abi_dependency"

_FeaturePriorities = dict[str, tuple[str, ...]]
_PropertyPriorities = list[tuple[str, str, tuple[str, ...]]]


def _known(namespace: str, index: Mapping[str, int]) -> None:
    f.name(namespace, NAMESPACE_RE, "namespace")
    if namespace not in index:
        f.fail(f"namespace {f.q(namespace)} is not listed in default-priorities.namespace")


def _feature_priorities(value: object, index: Mapping[str, int]) -> _FeaturePriorities:
    result: _FeaturePriorities = {}
    for namespace, features in f.mapping(value).items():
        try:
            _known(namespace, index)
            result[namespace] = f.names(features, FEATURE_RE, "feature name", min_items=0)
        except f.Invalid as e:
            raise e.under(namespace) from None
    return result


def _property_priorities(value: object, index: Mapping[str, int]) -> _PropertyPriorities:
    result: _PropertyPriorities = []
    for namespace, features in f.mapping(value).items():
        try:
            _known(namespace, index)
            for feature, values in f.mapping(features).items():
                try:
                    f.name(feature, FEATURE_RE, "feature name")
                    ordered = f.names(values, VALUE_RE, "value", min_items=0)
                except f.Invalid as e:
                    raise e.under(feature) from None
                result.append((namespace, feature, ordered))
        except f.Invalid as e:
            raise e.under(namespace) from None
    return result


def _static(
    value: object, feature_priorities: _FeaturePriorities
) -> dict[str, tuple[StaticFeature, ...]]:
    result: dict[str, tuple[StaticFeature, ...]] = {}
    for namespace, features in f.mapping(value).items():
        try:
            f.name(namespace, NAMESPACE_RE, "namespace")
            table = static_table(features)
            if len(table) > 1:
                # With several static features their order comes from default-priorities.
                order = feature_priorities.get(namespace, ())
                unordered = sorted(set(table) - set(order))
                if unordered:
                    f.fail(
                        f"features {unordered} need an order in "
                        f"default-priorities.feature.{namespace} when more than one is listed"
                    )
                rank = {name: i for i, name in enumerate(order)}
                table = dict(sorted(table.items(), key=lambda item: rank[item[0]]))
        except f.Invalid as e:
            raise e.under(namespace) from None
        result[namespace] = tuple(StaticFeature(k, v) for k, v in table.items())
    return result


def _requirements(value: object) -> tuple[str, ...]:
    return f.names(value, REQUIREMENT_RE, "requirement", min_items=0)


def _marker(value: object) -> str:
    marker = f.text(value, "an environment marker")
    if not marker.strip():
        f.fail("expected an environment marker, got an empty string")
    return marker


def _plugin_use(value: object) -> bool:
    text = f.text(value, "one of " + ", ".join(_PLUGIN_USE))
    if text not in _PLUGIN_USE:
        f.fail(f"expected one of {', '.join(_PLUGIN_USE)}, got {f.q(text)}")
    return _PLUGIN_USE[text]


def _legacy_static(
    properties: _PropertyPriorities, features: _FeaturePriorities
) -> dict[str, tuple[StaticFeature, ...]]:
    """``v0.0.2``: a namespace's ``default-priorities.property`` lists, as static values (in the
    ``default-priorities.feature`` order, then as listed)."""
    result: dict[str, list[StaticFeature]] = {}
    for namespace, feature, values in properties:
        result.setdefault(namespace, []).append(StaticFeature(feature, values))
    ordered: dict[str, tuple[StaticFeature, ...]] = {}
    for namespace, table in result.items():
        rank = {name: i for i, name in enumerate(features.get(namespace, ()))}
        ordered[namespace] = tuple(sorted(table, key=lambda s: rank.get(s.name, len(rank))))
    return ordered


def _provider(
    namespace: str, body: object, static: tuple[StaticFeature, ...] | None, schema: Schema
) -> Provider:
    table = f.mapping(body)
    legacy = schema.legacy_plugin_use
    allowed = _LEGACY_PROVIDER_KEYS if legacy else _PROVIDER_KEYS
    f.only_keys(table, allowed, schema=schema.dialect, lenient=schema.lenient)
    install_time = (
        f.optional(table, "plugin-use", _plugin_use)
        if legacy
        else f.optional(table, "install-time", f.boolean)
    )
    install_time = True if install_time is None else install_time
    requires = f.optional(table, "requires", _requirements)
    if requires is None and install_time:
        f.fail("requires is required unless install-time is false")
    return Provider(
        namespace,
        requires=requires or (),
        plugin_api=f.optional(table, "plugin-api", plugin_api),
        # v0.0.2 derives static values from default-priorities.property, which install-time
        # plugins may have too: those stay plugins.
        static_properties=None if legacy and install_time else static,
        optional=read_flag(table, "optional"),
        enable_if=f.optional(table, "enable-if", _marker),
        install_time=install_time,
    )


def _providers(
    data: Mapping[str, object],
    index: Mapping[str, int],
    static: Mapping[str, tuple[StaticFeature, ...]],
    schema: Schema,
) -> dict[str, Provider]:
    table = f.required(data, "providers")
    providers: dict[str, Provider] = {}
    try:
        for namespace, body in f.mapping(table).items():
            try:
                _known(namespace, index)
                providers[namespace] = _provider(namespace, body, static.get(namespace), schema)
            except f.Invalid as e:
                raise e.under(namespace) from None
    except f.Invalid as e:
        raise e.under("providers") from None
    return providers


def read_pep817(data: Mapping[str, object], schema: Schema) -> VariantMetadata:
    priorities, namespaces = read_priorities(data, schema)
    index = {name: i for i, name in enumerate(namespaces)}
    try:
        features = f.optional(priorities, "feature", lambda v: _feature_priorities(v, index))
        properties = f.optional(priorities, "property", lambda v: _property_priorities(v, index))
    except f.Invalid as e:
        raise e.under("default-priorities") from None
    features = features or {}
    static = f.optional(data, "static-properties", lambda v: _static(v, features)) or {}
    derived = schema.legacy_plugin_use and not static
    if derived:
        static = _legacy_static(properties or [], features)
    providers = _providers(data, index, static, schema)
    for namespace in () if derived else static:
        if namespace not in providers:
            f.fail(
                f"namespace {f.q(namespace)} has static properties but no entry in providers",
                "static-properties",
                namespace,
            )
    missing = [ns for ns in namespaces if ns not in providers and ns != _ABI_DEPENDENCY]
    if missing:
        f.fail(
            f"namespaces without an entry in providers: {f.q_list(missing)}",
            "default-priorities",
            "namespace",
        )
    variants = read_variants(data, namespaces, schema, required=True)
    return VariantMetadata(
        "pep817",
        schema.url,
        variants,
        namespaces,
        tuple(sorted(providers.values(), key=lambda provider: index[provider.namespace])),
        tuple(sorted(features.items(), key=lambda item: index[item[0]])),
        tuple(sorted(properties or (), key=lambda item: (index[item[0]], item[1]))),
    )
