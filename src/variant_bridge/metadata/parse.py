"""Read a variant metadata document of any dialect: decode loosely, then validate once.

``read_variant_json`` decodes the JSON text into plain objects (remembering repeated keys) without
judging them; ``parse_variant_metadata`` finds the dialect (:mod:`.schema`) and hands the document
to that dialect's reader, which validates it once into a
:class:`~variant_bridge.metadata.model.VariantMetadata`. Every error is an
:class:`~variant_bridge.errors.InvalidMetadata` whose one line names the source and key path.
Nothing here touches files; :mod:`variant_bridge.indexes.variant_files` opens paths and wheels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from variant_bridge._json import loads
from variant_bridge.errors import InvalidMetadata
from variant_bridge.metadata import _fields as f
from variant_bridge.metadata.model import Dialect, VariantMetadata
from variant_bridge.metadata.pep817 import read_pep817
from variant_bridge.metadata.pep825 import read_pep825
from variant_bridge.metadata.pep850 import read_pep850
from variant_bridge.metadata.schema import Schema, schema_of
from variant_bridge.properties import VariantDescription

__all__ = ["parse_variant_metadata", "read_variant_json", "single_variant"]

_READERS: Mapping[Dialect, Callable[[Mapping[str, object], Schema], VariantMetadata]] = {
    "pep817": read_pep817,
    "pep825": read_pep825,
    "variantlib": read_pep850,
    "pep850": read_pep850,
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
            f"{source}: expected a JSON object at the top level, got {f.describe(data)}"
        )
    try:
        schema = schema_of(data)
        return _READERS[schema.dialect](f.mapping(data), schema)
    except f.Invalid as e:
        raise InvalidMetadata(f"{source}: {f.format_path(e.path)}: {e.message}") from None


def read_variant_json(text: str | bytes, *, source: str) -> VariantMetadata:
    """Decode JSON text (``bytes`` may be UTF-8/16/32) and :func:`parse_variant_metadata` it.

    :raises InvalidMetadata: naming *source* and the line and column of a JSON syntax error (or
        a number too long, a document nested too deeply: :func:`variant_bridge._json.loads`).
    """
    data = loads(text, source=source, error=InvalidMetadata, object_pairs_hook=f.JsonObject)
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
            f"got {len(meta.variants)}: {f.q_list(meta.labels)}"
        )
    (variant,) = meta.variants
    if expected_label is not None and variant.label != expected_label:
        raise InvalidMetadata(
            f"{source}: variants: label {f.q(variant.label)} does not match the wheel filename's "
            f"label {f.q(expected_label)}"
        )
    return variant
