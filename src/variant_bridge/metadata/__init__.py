"""Variant metadata (``variant.json``, ``*-variants.json``, pyproject ``[variant]``): the model
and its readers."""

from __future__ import annotations

from variant_bridge.metadata.model import Provider, StaticFeature, VariantMetadata
from variant_bridge.metadata.parse import (
    merge_metadata,
    parse_variant_metadata,
    read_variant_json,
    single_variant,
)

__all__ = [
    "Provider",
    "StaticFeature",
    "VariantMetadata",
    "merge_metadata",
    "parse_variant_metadata",
    "read_variant_json",
    "single_variant",
]
