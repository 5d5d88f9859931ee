"""The PEP 850 reader (``peps/850/v0.2.0``, read by uv), also for variantlib's ``v0.2.0``.

On top of PEP 825's tables: one provider per namespace, with exactly one of ``requires`` (a
plugin package, optionally with ``plugin-api``), ``static-properties`` (with ``feature-order``
when there are several features) or ``builtin``, plus ``optional``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from variant_bridge.metadata import _fields as f
from variant_bridge.metadata.model import Provider, StaticFeature, VariantMetadata
from variant_bridge.metadata.pep825 import read_priorities, read_variants
from variant_bridge.metadata.schema import Schema
from variant_bridge.properties import FEATURE_RE, NAMESPACE_RE, VALUE_RE

__all__ = ["plugin_api", "read_flag", "read_pep850", "static_table"]

# variantlib checks requirements and plugin references with these shapes, not PEP 508.
REQUIREMENT_RE = re.compile(r"[\S ]+")
_PLUGIN_API_RE = re.compile(r"[\w.]+(?:\s*:\s*[\w.]+)?")
_PROVIDER_KEYS = frozenset(
    {"requires", "plugin-api", "static-properties", "feature-order", "builtin", "optional"}
)


def plugin_api(value: object) -> str:
    return f.name(value, _PLUGIN_API_RE, "plugin-api reference")


def read_flag(table: Mapping[str, object], key: str) -> bool:
    """A boolean key, ``False`` when absent; unlike other keys, null is not absent here."""
    return f.under(key, f.boolean, table[key]) if key in table else False


def static_table(value: object) -> dict[str, tuple[str, ...]]:
    """``{feature: [values]}`` of static properties, at least one feature."""
    table = f.mapping(value)
    if not table:
        f.fail("expected at least one feature, got an empty object")
    result: dict[str, tuple[str, ...]] = {}
    for feature, values in table.items():
        try:
            f.name(feature, FEATURE_RE, "feature name")
            result[feature] = f.names(values, VALUE_RE, "value")
        except f.Invalid as e:
            raise e.under(feature) from None
    return result


def _requirements(value: object) -> tuple[str, ...]:
    return f.names(value, REQUIREMENT_RE, "requirement", unique=False)


def _feature_names(value: object) -> tuple[str, ...]:
    return f.names(value, FEATURE_RE, "feature name")


def _builtin(value: object) -> str:
    return f.text(value, "a builtin provider name")


def _one_kind(requires: tuple[str, ...], static: object, builtin: object) -> None:
    given = [
        key
        for key, value in (
            ("requires", requires),
            ("static-properties", static),
            ("builtin", builtin),
        )
        if value is not None and value != ()
    ]
    if len(given) != 1:
        f.fail(
            "exactly one of requires, static-properties or builtin must be given, "
            f"got {' and '.join(given) if given else 'none'}"
        )


def _static_features(
    static: dict[str, tuple[str, ...]] | None, order: tuple[str, ...] | None
) -> tuple[StaticFeature, ...] | None:
    if static is None:
        if order is not None:
            f.fail("feature-order is valid only with static-properties", "feature-order")
        return None
    if order is None and len(static) > 1:
        f.fail("feature-order is required when static-properties lists more than one feature")
    if order is not None and set(order) != set(static):
        f.fail(
            f"must list every feature of static-properties: got {f.q_list(order)}, "
            f"expected {f.q_list(sorted(static))}",
            "feature-order",
        )
    return tuple(StaticFeature(name, static[name]) for name in (order or static))


def _provider(namespace: str, body: object, schema: Schema) -> Provider:
    f.name(namespace, NAMESPACE_RE, "namespace")
    table = f.mapping(body)
    if "build-requires" in table:
        f.fail(
            "build-requires belongs in pyproject.toml only; built metadata carries the "
            "static-properties it produced",
            "build-requires",
        )
    f.only_keys(table, _PROVIDER_KEYS, schema=schema.dialect, lenient=schema.lenient)
    requires = f.optional(table, "requires", _requirements) or ()
    api = f.optional(table, "plugin-api", plugin_api)
    builtin = f.optional(table, "builtin", _builtin)
    static = f.optional(table, "static-properties", static_table)
    order = f.optional(table, "feature-order", _feature_names)
    is_optional = read_flag(table, "optional")
    _one_kind(requires, static, builtin)
    if api is not None and not requires:
        f.fail("plugin-api is valid only with requires", "plugin-api")
    return Provider(
        namespace,
        requires=requires,
        plugin_api=api,
        static_properties=_static_features(static, order),
        builtin=builtin,
        optional=is_optional,
    )


def read_pep850(data: Mapping[str, object], schema: Schema) -> VariantMetadata:
    if "static-properties" in data and not schema.lenient:
        # variantlib ignores it, which would silently drop what decides compatibility.
        f.fail(
            f"a top-level static-properties table is PEP 817's; in the {schema.dialect} schema "
            "static properties belong in providers.<namespace>.static-properties",
            "static-properties",
        )
    _, namespaces = read_priorities(data, schema)
    providers: dict[str, Provider] = {}
    try:
        for namespace, body in f.mapping(data.get("providers", {})).items():
            try:
                providers[namespace] = _provider(namespace, body, schema)
            except f.Invalid as e:
                raise e.under(namespace) from None
    except f.Invalid as e:
        raise e.under("providers") from None
    missing = [ns for ns in namespaces if ns not in providers]
    extra = [ns for ns in providers if ns not in namespaces]
    if missing or extra:
        f.fail(
            "must name the same namespaces as providers "
            f"(without a provider: {f.q_list(missing) if missing else 'none'}; "
            f"not listed: {f.q_list(extra) if extra else 'none'})",
            "default-priorities",
            "namespace",
        )
    variants = read_variants(data, namespaces, schema, required=False)
    ordered = tuple(providers[ns] for ns in namespaces)
    return VariantMetadata(schema.dialect, schema.url, variants, namespaces, ordered)
