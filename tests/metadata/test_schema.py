"""Layer 1: which dialect a variant metadata document is read as: its ``$schema``, or its shape."""

from __future__ import annotations

import pytest

from tests.metadata.test_parse import HOST, document, parse
from variant_bridge.errors import InvalidMetadata
from variant_bridge.metadata.model import Dialect
from variant_bridge.metadata.schema import SCHEMA_URLS, schema_of


@pytest.mark.parametrize(
    ("url", "dialect"),
    [
        (f"{HOST}v0.0.3.json", "pep817"),  # PEP 817
        (f"{HOST}v0.0.2.json", "pep817"),  # an older patch of PEP 817's schema
        (f"{HOST}v0.1.0.json", "pep817"),  # newer minor than 0.0.3, older than variantlib's 0.2
        (f"{HOST}v0.2.0.json", "variantlib"),  # variantlib 0.2.2
        (f"{HOST}v0.2.7.json", "variantlib"),  # newer patch
        (f"{HOST}v0.9.0.json", "variantlib"),  # newer minor
        (f"{HOST}peps/825/v0.1.1.json", "pep825"),  # PEP 825
        (f"{HOST}peps/825/v0.1.0.json", "pep825"),  # older patch
        (f"{HOST}peps/825/v0.4.2.json", "pep825"),  # newer minor
        (f"{HOST}peps/850/v0.2.0.json", "pep850"),  # PEP 850 (uv)
        (f"{HOST}peps/850/v0.3.0.json", "pep850"),  # newer minor
    ],
)
def test_known_schemas(url: str, dialect: Dialect) -> None:
    assert schema_of({"$schema": url}).dialect == dialect


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (f"{HOST}v1.0.0.json", "unsupported major version 1 .* knows v0.2.0"),  # unknown major
        (f"{HOST}peps/825/v1.0.0.json", "unsupported major version 1 .* knows v0.1.1"),  # final?
        (f"{HOST}peps/850/v2.3.4.json", "unsupported major version 2"),  # unknown major
        (f"{HOST}peps/817/v0.0.3.json", "unknown variant metadata schema"),  # unknown family
        (f"{HOST}v0.2.json", "unknown variant metadata schema"),  # not semver
        ("http://variants-schema.wheelnext.dev/v0.2.0.json", "unknown variant"),  # http
        (f"{HOST}v0.2.0.json ", "unknown variant metadata schema"),  # trailing space
        ("https://example.org/variants/v0.1.1.json", "unknown variant metadata schema"),  # host
        ("", "unknown variant metadata schema"),  # empty
    ],
)
def test_unknown_schemas(url: str, message: str) -> None:
    data = document("pep825.json") | {"$schema": url}
    with pytest.raises(InvalidMetadata, match=f"^f.json: \\$schema: {message}"):
        parse(data, "f.json")


def test_schema_must_be_a_string() -> None:
    with pytest.raises(
        InvalidMetadata, match=r"^f: \$schema: expected a URL string, got number 3$"
    ):
        parse(document("pep825.json") | {"$schema": 3}, "f")


def test_newer_minor_ignores_unknown_keys() -> None:
    meta = parse(document("newer_minor_825.json"))
    assert meta.dialect == "pep825"
    assert meta.schema == f"{HOST}peps/825/v0.3.0.json"  # kept as read
    assert meta.labels == ("cu128", "null")
    # The same keys under the version this reader knows are errors.
    current = document("newer_minor_825.json") | {"$schema": SCHEMA_URLS["pep825"]}
    with pytest.raises(InvalidMetadata, match=r": annotations: unknown key in the pep825 schema"):
        parse(current)
    del current["annotations"]
    with pytest.raises(InvalidMetadata, match=r"default-priorities\.tie-breaker: unknown key"):
        parse(current)


def test_schema_urls() -> None:
    assert dict(SCHEMA_URLS) == {
        "pep817": f"{HOST}v0.0.3.json",
        "pep825": f"{HOST}peps/825/v0.1.1.json",
        "variantlib": f"{HOST}v0.2.0.json",
        "pep850": f"{HOST}peps/850/v0.2.0.json",
    }
