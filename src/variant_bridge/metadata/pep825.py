"""The PEP 825 reader (``peps/825/v0.1.1``), and the two tables every dialect shares with it.

PEP 825 documents carry only ``$schema``, ``default-priorities.namespace`` and ``variants``; the
provider dialects (:mod:`.pep850`, :mod:`.pep817`) add tables around the same two.
"""

from __future__ import annotations

from collections.abc import Mapping

from variant_bridge.metadata import _fields as f
from variant_bridge.metadata.model import VariantMetadata
from variant_bridge.metadata.schema import Schema
from variant_bridge.properties import (
    FEATURE_RE,
    LABEL_RE,
    LEGACY_NULL_LABEL,
    NAMESPACE_RE,
    NULL_LABEL,
    VALUE_RE,
    VariantDescription,
    VariantProperty,
)

__all__ = ["read_pep825", "read_priorities", "read_variants"]

_TOP_KEYS = frozenset({"$schema", "default-priorities", "variants"})
_PRIORITY_KEYS = {
    "pep817": frozenset({"namespace", "feature", "property"}),
    "pep825": frozenset({"namespace"}),
    "variantlib": frozenset({"namespace"}),
    "pep850": frozenset({"namespace"}),
}
# PEP 817's schema limits labels to 16 characters; PEP 825 dropped the limit.
_PEP817_LABEL_MAX = 16


def read_priorities(
    data: Mapping[str, object], schema: Schema
) -> tuple[Mapping[str, object], tuple[str, ...]]:
    """``default-priorities`` (checked for unknown keys) and its ``namespace`` list."""
    value = f.required(data, "default-priorities")
    try:
        table = f.mapping(value)
        f.only_keys(
            table, _PRIORITY_KEYS[schema.dialect], schema=schema.dialect, lenient=schema.lenient
        )
        listed = f.required(table, "namespace")
        try:
            namespaces = f.names(listed, NAMESPACE_RE, "namespace")
        except f.Invalid as e:
            raise e.under("namespace") from None
    except f.Invalid as e:
        raise e.under("default-priorities") from None
    return table, namespaces


def _variant(
    label: str, body: object, namespaces: tuple[str, ...], schema: Schema
) -> VariantDescription:
    if LABEL_RE.fullmatch(label) is None:
        f.fail(f"invalid variant label {f.q(label)}: must match {LABEL_RE.pattern}")
    if schema.dialect == "pep817" and len(label) > _PEP817_LABEL_MAX:
        f.fail(
            f"variant label {f.q(label)} is longer than {_PEP817_LABEL_MAX} characters, "
            "the limit of the pep817 schema"
        )
    properties: list[VariantProperty] = []
    for namespace, features in f.mapping(body).items():
        try:
            f.name(namespace, NAMESPACE_RE, "namespace")
            table = f.mapping(features)
            for feature, values in table.items():
                try:
                    f.name(feature, FEATURE_RE, "feature name")
                    for value in f.names(values, VALUE_RE, "value"):
                        properties.append(VariantProperty(namespace, feature, value))
                except f.Invalid as e:
                    raise e.under(feature) from None
            # An empty namespace object carries no property; variantlib and uv both skip it.
            if table and namespace not in namespaces:
                f.fail(f"namespace {f.q(namespace)} is not listed in default-priorities.namespace")
        except f.Invalid as e:
            raise e.under(namespace) from None
    if label == NULL_LABEL and properties:
        f.fail(f"the {NULL_LABEL!r} variant must have no properties")
    # The PEP 817 files of the real index still label their null variant 00000000.
    legacy_null = schema.dialect == "pep817" and label == LEGACY_NULL_LABEL
    if not properties and label != NULL_LABEL and not legacy_null:
        f.fail(f"a variant without properties must use the label {NULL_LABEL!r}")
    return VariantDescription.of(properties, label)


def read_variants(
    data: Mapping[str, object], namespaces: tuple[str, ...], schema: Schema, *, required: bool
) -> tuple[VariantDescription, ...]:
    """``variants``, sorted by label; a property's namespace must be in *namespaces*."""
    if "variants" not in data and not required:  # variantlib reads a missing table as empty
        return ()
    table = f.required(data, "variants")
    result: list[VariantDescription] = []
    try:
        for label, body in f.mapping(table).items():
            try:
                result.append(_variant(label, body, namespaces, schema))
            except f.Invalid as e:
                raise e.under(label) from None
    except f.Invalid as e:
        raise e.under("variants") from None
    return tuple(sorted(result, key=lambda description: description.label))


def read_pep825(data: Mapping[str, object], schema: Schema) -> VariantMetadata:
    f.only_keys(data, _TOP_KEYS, schema=schema.dialect, lenient=schema.lenient)
    _, namespaces = read_priorities(data, schema)
    variants = read_variants(data, namespaces, schema, required=True)
    return VariantMetadata("pep825", schema.url, variants, namespaces)
