"""Layer 1: variant metadata readers for the PEP 817/825/850 and variantlib dialects."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from variant_bridge.errors import InvalidMetadata
from variant_bridge.metadata.model import Dialect, Provider, StaticFeature, VariantMetadata
from variant_bridge.metadata.parse import (
    parse_variant_metadata,
    read_variant_json,
    single_variant,
)
from variant_bridge.metadata.schema import SCHEMA_URLS
from variant_bridge.properties import VariantDescription

DATA = Path(__file__).resolve().parents[1] / "data" / "metadata"
HOST = "https://variants-schema.wheelnext.dev/"
DIALECTS: tuple[Dialect, ...] = ("pep817", "pep825", "variantlib", "pep850")
NVIDIA = Provider(
    "nvidia",
    requires=("nvidia-variant-provider>=0.0.1,<1.0.0",),
    plugin_api="nvidia_variant_provider.plugin:NvidiaVariantPlugin",
)
BLAS_FEATURES = (
    StaticFeature("library", ("mkl", "openblas")),
    StaticFeature("threading", ("openmp", "pthreads")),
)


def document(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def parse(data: object, source: str = "variants.json") -> VariantMetadata:
    return parse_variant_metadata(data, source=source)


# ------------------------------------------------------------------ one model, four dialects

THREE_VARIANTS = (
    VariantDescription.parse(
        "39bc0ddc: nvidia :: cuda_version_lower_bound :: 12.6; nvidia :: sm_arch :: 80_real; "
        "nvidia :: sm_arch :: 90_real"
    ),
    VariantDescription.parse("cu128: nvidia :: cuda_version_lower_bound :: 12.8"),
    VariantDescription.null(),
)


@pytest.mark.parametrize(
    ("fixture", "dialect", "providers"),
    [
        ("variantlib.json", "variantlib", (NVIDIA,)),  # variantlib generate-index-json output
        ("pep850.json", "pep850", (NVIDIA,)),  # the same under uv's PEP 850 URL
        ("pep825.json", "pep825", ()),  # PEP 825 carries no providers
        (
            "pep817.json",
            "pep817",
            (
                Provider(
                    "nvidia",
                    requires=NVIDIA.requires,
                    plugin_api=NVIDIA.plugin_api,
                    enable_if="platform_system == 'Linux' or platform_system == 'Windows'",
                ),
            ),
        ),  # PEP 817 adds enable-if
    ],
)
def test_dialects_normalise_to_one_model(
    fixture: str, dialect: Dialect, providers: tuple[Provider, ...]
) -> None:
    meta = parse(document(fixture), fixture)
    assert meta.dialect == dialect
    assert meta.schema == SCHEMA_URLS[dialect]
    assert meta.variants == THREE_VARIANTS  # sorted by label, null included
    assert meta.labels == ("39bc0ddc", "cu128", "null")
    assert meta.namespace_priorities == ("nvidia",)
    assert meta.providers == providers
    assert meta.variant("cu128") == THREE_VARIANTS[1]
    assert meta.variant("cu126") is None


def test_pep817_priorities() -> None:
    meta = parse(document("pep817.json"))
    assert meta.feature_priorities == (("nvidia", ("sm_arch", "cuda_version_lower_bound")),)
    assert meta.property_priorities == (("nvidia", "sm_arch", ("90_real", "80_real")),)


def test_static_providers_agree_between_817_and_850() -> None:
    pep850 = parse(document("pep850_static.json"))
    pep817 = parse(document("pep817_static.json"))
    assert pep850.variants == pep817.variants
    assert pep850.namespace_priorities == pep817.namespace_priorities == ("nvidia", "blas")
    assert pep850.provider("blas") == Provider(
        "blas", static_properties=BLAS_FEATURES, optional=True
    )
    # PEP 817's top-level table moves onto the provider, ordered by default-priorities.feature
    # (the JSON lists threading first); the provider itself is an ahead-of-time one.
    assert pep817.provider("blas") == Provider(
        "blas", static_properties=BLAS_FEATURES, optional=True, install_time=False
    )
    assert pep817.provider("nvidia") == pep850.provider("nvidia") == NVIDIA
    blas = pep850.provider("blas")
    assert blas is not None
    assert blas.is_static
    assert not NVIDIA.is_static


@pytest.mark.parametrize(
    ("fixture", "dialect"),
    [
        ("no_schema_825.json", "pep825"),  # only namespace priorities and variants
    ],
)
def test_fixture_without_schema(fixture: str, dialect: Dialect) -> None:
    meta = parse(document(fixture))
    assert (meta.dialect, meta.schema) == (dialect, None)


@pytest.mark.parametrize(
    ("drop_schema_of", "dialect"),
    [
        ("pep825.json", "pep825"),  # no providers key
        ("variantlib.json", "pep850"),  # providers with requires: the standard's name for it
        ("pep850_static.json", "pep850"),  # static-properties inside providers
        ("pep817.json", "pep817"),  # enable-if and default-priorities.feature
        ("pep817_static.json", "pep817"),  # top-level static-properties
    ],
)
def test_dialect_from_shape(drop_schema_of: str, dialect: Dialect) -> None:
    data = document(drop_schema_of)
    del data["$schema"]
    meta = parse(data)
    assert (meta.dialect, meta.schema) == (dialect, None)
    assert meta.variants == parse(document(drop_schema_of)).variants


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("malformed_unknown_major.json", r"\$schema: unsupported major version 1"),
        ("malformed_unknown_schema.json", r"\$schema: unknown variant metadata schema"),
        (
            "malformed_bad_value.json",
            r"variants\.cu128\.nvidia\.sm_arch\[1\]: invalid value 'SM90'",
        ),
        ("malformed_817_in_v020.json", r"default-priorities\.feature: unknown key in the variantl"),
        ("malformed_duplicate_label.json", r"variants\.cu128: key appears more than once"),
        ("malformed_syntax.json", r"invalid JSON at line 2, column 49: Expecting property name"),
    ],
)
def test_malformed_fixtures(fixture: str, message: str) -> None:
    with pytest.raises(InvalidMetadata, match=f"^{fixture}: {message}"):
        read_variant_json((DATA / fixture).read_bytes(), source=fixture)


# --------------------------------------------------------------------------- malformed documents

DELETE = object()


def mutate(data: dict[str, Any], pointer: str, value: object) -> dict[str, Any]:
    """A copy of *data* with the key at *pointer* (``a/b/c``) set to *value* or deleted."""
    data = copy.deepcopy(data)
    *parents, last = pointer.split("/")
    target = data
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return data


VL, S850, P825, P817, S817 = (
    "variantlib.json",
    "pep850_static.json",
    "pep825.json",
    "pep817.json",
    "pep817_static.json",
)
CU = "variants/cu128/nvidia"
LB = f"{CU}/cuda_version_lower_bound"
NS = "default-priorities/namespace"
NV = "providers/nvidia"
BLAS = "providers/blas"

# fixture, key to change (a/b/c), new value (DELETE removes it), expected message after the
# source; a message starting with ": " is prefixed with the changed key's own path.
MALFORMED = [
    (VL, LB, "12.8", ": expected an array of values, got string '12.8'"),  # bare string
    (VL, LB, [], ": expected at least 1 value, got an empty array"),  # no values
    (VL, LB, ["12.8", "12.8"], "variants.cu128.nvidia.cuda_version_lower_bound[1]: duplicate"),
    (VL, LB, [12.8], "variants.cu128.nvidia.cuda_version_lower_bound[0]: expected a value str"),
    (VL, f"{CU}/SM", ["90_real"], ": invalid feature name 'SM': must match [a-z0-9_]+"),  # case
    (VL, "variants/cu128/NV", {"a": ["1"]}, ": invalid namespace 'NV': must match [a-z0-9_]+"),
    (VL, "variants/cu128/amd", {"a": ["1"]}, ": namespace 'amd' is not listed in default-prio"),
    (VL, CU, ["12.8"], ": expected an object, got array ['12.8']"),  # wrong nesting
    (VL, "variants/null", {"nvidia": {"a": ["1"]}}, ": the 'null' variant must have no prop"),
    (VL, "variants/cu126", {}, ": a variant without properties must use the label 'null'"),
    (VL, "variants/cu126", {"nvidia": {}}, ": a variant without properties must use the label"),
    (VL, "variants/CU126", {"nvidia": {"a": ["1"]}}, ": invalid variant label 'CU126': must m"),
    (VL, "variants/cu-126", {"nvidia": {"a": ["1"]}}, ": invalid variant label 'cu-126'"),  # dash
    (VL, "variants/cu12.8", {"nvidia": {"a": ["B"]}}, "variants['cu12.8'].nvidia.a[0]: invalid"),
    (VL, "variants", [], ": expected an object, got array []"),  # wrong type
    (VL, "default-priorities", DELETE, ": required key is missing"),  # required in every dialect
    (VL, NS, DELETE, ": required key is missing"),  # required in every dialect
    (VL, NS, [], ": expected at least 1 namespace, got an empty array"),  # empty
    (VL, NS, ["nvidia", "nvidia"], "default-priorities.namespace[1]: duplicate namespace 'nvi"),
    (VL, NS, "nvidia", ": expected an array of namespaces, got string 'nvidia'"),  # a string
    (VL, NS, [1], "default-priorities.namespace[0]: expected a namespace string, got number 1"),
    (VL, "default-priorities/feature", {}, ": unknown key in the variantlib schema (allowed he"),
    (VL, "providers", DELETE, f"{NS.replace('/', '.')}: must name the same namespaces as pro"),
    (VL, "providers/blas", {"builtin": "b"}, "default-priorities.namespace: must name the sa"),
    (VL, f"{NV}/requires", [], ": expected at least 1 requirement, got an empty array"),  # empty
    (VL, f"{NV}/requires", ["a\tb"], "providers.nvidia.requires[0]: invalid requirement 'a"),
    (VL, f"{NV}/static-properties", {"a": ["1"]}, "providers.nvidia: exactly one of requires"),
    (VL, NV, {}, "providers.nvidia: exactly one of requires, static-properties or builtin must"),
    (VL, f"{NV}/plugin-api", "a:b:c", ": invalid plugin-api reference 'a:b:c'"),  # two colons
    (VL, f"{NV}/optional", "yes", ": expected true or false, got string 'yes'"),  # not a bool
    (VL, f"{NV}/optional", None, ": expected true or false, got null"),  # null is not false
    (VL, f"{NV}/enable-if", "x", ": unknown key in the variantlib schema"),  # a PEP 817 key
    (VL, f"{NV}/build-requires", ["x"], ": build-requires belongs in pyproject.toml only"),
    (VL, "providers/NVIDIA", {"requires": ["x"]}, ": invalid namespace 'NVIDIA'"),  # bad key
    (VL, "static-properties", {}, ": a top-level static-properties table is PEP 817's"),
    (S850, f"{BLAS}/feature-order", DELETE, "providers.blas: feature-order is required when"),
    (S850, f"{BLAS}/feature-order", ["library"], ": must list every feature of static-prope"),
    (S850, f"{BLAS}/feature-order", ["library"] * 2, "providers.blas.feature-order[1]: dupli"),
    (S850, f"{BLAS}/static-properties/library", ["mkl"] * 2, "providers.blas.static-properti"),
    (S850, f"{BLAS}/static-properties", {}, ": expected at least one feature, got an empty ob"),
    (S850, f"{BLAS}/plugin-api", "blas_plugin", ": plugin-api is valid only with requires"),
    (S850, f"{NV}/feature-order", ["a"], ": feature-order is valid only with static-propert"),
    (P825, "providers", {}, ": unknown key in the pep825 schema"),  # additionalProperties: false
    (P825, "default-priorities/feature", {}, ": unknown key in the pep825 schema"),  # removed
    (P825, "variants", DELETE, ": required key is missing"),  # required in 825
    (P817, f"{NV}/requires", DELETE, "providers.nvidia: requires is required unless install-t"),
    (P817, f"{NV}/install-time", "no", ": expected true or false, got string 'no'"),  # a string
    (P817, f"{NV}/enable-if", " ", ": expected an environment marker, got an empty string"),
    (P817, f"{NV}/static-properties", {}, ": unknown key in the pep817 schema"),  # a 850 key
    (P817, "providers", DELETE, ": required key is missing"),  # required in 817
    (P817, "providers/amd", {"requires": []}, ": namespace 'amd' is not listed in default-pri"),
    (P817, "default-priorities/feature/amd", [], ": namespace 'amd' is not listed in default"),
    (P817, "default-priorities/property/nvidia/a", ["1", "1"], "default-priorities.property."),
    (P817, "variants/a_label_of_17_chr", {}, ": variant label 'a_label_of_17_chr' is longer"),
    (S817, "default-priorities/feature", DELETE, "static-properties.blas: features ['library',"),
    (S817, "static-properties/nvidia", {"a": []}, "static-properties.nvidia.a: expected at lea"),
    (S817, "static-properties/amd", {"a": ["1"]}, ": namespace 'amd' has static properties bu"),
]


@pytest.mark.parametrize(("fixture", "pointer", "value", "message"), MALFORMED)
def test_malformed_names_the_key_path(
    fixture: str, pointer: str, value: object, message: str
) -> None:
    data = mutate(document(fixture), pointer, value)
    if message.startswith(": "):
        message = pointer.replace("/", ".") + message
    with pytest.raises(InvalidMetadata) as info:
        parse(data, "dist/pkg-1.0-variants.json")
    text = str(info.value)
    assert text.startswith(f"dist/pkg-1.0-variants.json: {message}"), text
    assert "\n" not in text


def test_example_message_from_the_brief() -> None:
    data = mutate(document("variantlib.json"), f"{CU}/sm_arch", ["90_real", "SM90"])
    with pytest.raises(InvalidMetadata) as info:
        parse(data)
    assert str(info.value) == (
        "variants.json: variants.cu128.nvidia.sm_arch[1]: invalid value 'SM90': "
        "must match [a-z0-9_.]+"
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], r"expected a JSON object at the top level, got array \[\]"),  # not an object
        (None, "expected a JSON object at the top level, got null"),  # JSON null
        ({1: {}}, r"\(top level\): keys must be strings, got number 1"),  # only from Python
    ],
)
def test_top_level_must_be_an_object(data: object, message: str) -> None:
    with pytest.raises(InvalidMetadata, match=f"^src: {message}"):
        parse(data, "src")


def test_renamed_label_is_checked() -> None:
    data = document("pep825.json")
    data["variants"]["Cu128"] = data["variants"].pop("cu128")
    with pytest.raises(InvalidMetadata, match=r"variants\.Cu128: invalid variant label 'Cu128'"):
        parse(data)


def test_lenient_cases_accepted() -> None:
    """What variantlib and uv accept and the specs allow, we accept too."""
    data = document("variantlib.json")
    data["variants"]["null"] = {"nvidia": {}}  # an empty namespace object carries no property
    data["x-generator"] = "some tool"  # unknown top-level keys are ignored in v0.2.0
    data["providers"]["nvidia"]["plugin-api"] = None  # null reads as absent
    data["providers"]["nvidia"]["requires"].append(data["providers"]["nvidia"]["requires"][0])
    meta = parse(data)
    assert meta.variant("null") == VariantDescription.null()
    assert meta.providers[0].plugin_api is None
    assert len(meta.providers[0].requires) == 2
    del data["variants"]  # variantlib reads a missing table as empty
    assert parse(data).variants == ()


# --------------------------------------------------------------------------- read_variant_json


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1,}', "invalid JSON at line 1, column 9: Expecting property name"),  # trailing ,
        ("", "invalid JSON at line 1, column 1: Expecting value"),  # empty file
        ('{\n  "variants": {\n', "invalid JSON at line 3, column 1"),  # truncated
        ('{"a": NaN}', "invalid JSON: NaN is not a JSON value"),  # Python extension
        (b'{"a": "\xc3\x28"}', "not UTF-8 text: invalid continuation byte at byte 7"),  # bad bytes
        ("[" * 100_000 + "]" * 100_000, "invalid JSON: nested too deeply"),  # recursion bomb
        ('{"a": ' + "9" * 5000 + "}", "invalid JSON: a number of more than 4300 digits"),
        ('"just a string"', "expected a JSON object at the top level, got string"),  # not an object
    ],
)
def test_read_variant_json_errors(text: str | bytes, message: str) -> None:
    with pytest.raises(InvalidMetadata) as info:
        read_variant_json(text, source="idx/pkg-1.0-variants.json")
    assert str(info.value).startswith(f"idx/pkg-1.0-variants.json: {message}"), str(info.value)


def test_read_variant_json_accepts_bytes_and_bom() -> None:
    raw = (DATA / "pep825.json").read_bytes()
    expected = parse(document("pep825.json"))
    assert read_variant_json(raw, source="x") == expected
    assert read_variant_json(raw.decode(), source="x") == expected
    assert read_variant_json(b"\xef\xbb\xbf" + raw, source="x") == expected  # UTF-8 BOM
    assert read_variant_json(raw.decode().encode("utf-16"), source="x") == expected


def test_duplicate_keys_are_reported_where_they_matter() -> None:
    text = (
        (DATA / "pep825.json")
        .read_text()
        .replace(
            '"default-priorities": {"namespace": ["nvidia"]}',
            '"default-priorities": {"namespace": ["nvidia"], "namespace": ["amd"]}',
        )
    )
    with pytest.raises(InvalidMetadata, match=r"^x: default-priorities\.namespace: key appears"):
        read_variant_json(text, source="x")


# --------------------------------------------------------------------------- single_variant


def test_single_variant() -> None:
    meta = parse(document("wheel_cu128.json"))
    assert single_variant(meta, source="w") == THREE_VARIANTS[1]
    assert single_variant(meta, source="w", expected_label="cu128") == THREE_VARIANTS[1]
    with pytest.raises(InvalidMetadata, match=r"label 'cu128' does not match .* label 'cu126'"):
        single_variant(meta, source="w", expected_label="cu126")
    with pytest.raises(InvalidMetadata, match=r"exactly one label, got 3: \['39bc0ddc'"):
        single_variant(parse(document("variantlib.json")), source="w")
