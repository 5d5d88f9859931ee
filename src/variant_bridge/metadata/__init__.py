"""Variant metadata (``variant.json``, ``*-variants.json``): the model, one reader per dialect
(PEP 817, PEP 825, PEP 850 and variantlib's), and merging."""

from __future__ import annotations

from variant_bridge.metadata.merge import merge_metadata
from variant_bridge.metadata.model import Provider, StaticFeature, VariantMetadata
from variant_bridge.metadata.parse import (
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
