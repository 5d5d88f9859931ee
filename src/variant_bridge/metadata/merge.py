"""Merging the variant metadata of one package version read from several documents (PEP 825).

An index serves ``{name}-{version}-variants.json`` and every wheel carries its own
``variant.json``; a client that reads several (an index file that misses labels, PEP 825 PR #5100)
merges them by the index-file rules.
"""

from __future__ import annotations

from typing import TypeVar

from variant_bridge.errors import InvalidMetadata
from variant_bridge.metadata._fields import format_path, q, q_list
from variant_bridge.metadata.model import VariantMetadata

__all__ = ["merge_metadata"]

_T = TypeVar("_T")


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
            f"{source}: default-priorities.namespace: cannot merge "
            f"{q_list(a.namespace_priorities)} with {q_list(b.namespace_priorities)}: the shorter "
            "list must begin the longer one"
        )
    variants = {variant.label: variant for variant in a.variants}
    for variant in b.variants:
        old = variants.setdefault(variant.label, variant)
        if old.properties != variant.properties:
            raise InvalidMetadata(
                f"{source}: {format_path(('variants', variant.label))}: label "
                f"{q(variant.label)} means {{{'; '.join(map(str, old.properties))}}} in one "
                f"document and {{{'; '.join(map(str, variant.properties))}}} in another"
            )
    providers = {provider.namespace: provider for provider in a.providers}
    for provider in b.providers:
        old_provider = providers.setdefault(provider.namespace, provider)
        if old_provider != provider:
            raise InvalidMetadata(
                f"{source}: {format_path(('providers', provider.namespace))}: the provider "
                "differs between the documents being merged"
            )
    feature_priorities = _same(a.feature_priorities, b.feature_priorities, source, "feature")
    property_priorities = _same(a.property_priorities, b.property_priorities, source, "property")
    rank = {name: i for i, name in enumerate(longer)}
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


def _same(a: tuple[_T, ...], b: tuple[_T, ...], source: str, key: str) -> tuple[_T, ...]:
    if a and b and a != b:
        raise InvalidMetadata(
            f"{source}: default-priorities.{key}: differs between the documents being merged"
        )
    return a or b
