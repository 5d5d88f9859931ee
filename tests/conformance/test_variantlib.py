"""Conformance with variantlib 0.2.2, the reference implementation of PEP 825 / 850.

The same corpus (hand-written tricky cases plus hypothesis-generated text and documents) goes
through variantlib and through ours; verdicts, parsed parts, labels and hashes must agree. Where
we deliberately differ, the case must match an entry of ``KNOWN_DIFFERENCES`` (with its reason).
"""

from __future__ import annotations

import copy
import json
import logging
import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from variantlib import constants as vl_constants
from variantlib.errors import ValidationError
from variantlib.models.variant import VariantDescription as VlDescription
from variantlib.models.variant import VariantFeature as VlFeature
from variantlib.models.variant import VariantProperty as VlProperty
from variantlib.variants_json import VariantsJson

from variant_bridge.errors import InvalidMetadata, InvalidProperty, InvalidWheelFilename
from variant_bridge.filenames import WheelFilename
from variant_bridge.metadata.model import VariantMetadata
from variant_bridge.metadata.parse import parse_variant_metadata
from variant_bridge.properties import (
    VariantDescription,
    VariantFeature,
    VariantProperty,
    validate_label,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "metadata"
VL_SCHEMA = vl_constants.VARIANT_INFO_SCHEMA_URL
SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True, scope="module")
def _quiet_variantlib() -> Iterator[None]:
    # variantlib logs a traceback for every value its validators reject.
    logger = logging.getLogger("variantlib")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


# ------------------------------------------------------------------ properties and features

PROPERTY_CORPUS = [
    "nvidia :: cuda_version_lower_bound :: 12.8",  # canonical
    "nvidia::sm_arch::90_real",  # no whitespace
    "  nvidia ::sm_arch::   90_real  ",  # padded
    "nvidia\t::\tsm_arch\t::\t90_real",  # tabs
    "nvidia\n::\nsm_arch\n::\n90_real\n",  # newlines
    "nvidia\u00a0::\u3000sm_arch\u2003::\u200a90_real",  # unicode whitespace
    "nvidia\x1c::\x1dsm_arch\x1e::\x1f90_real",  # ASCII separators are str whitespace
    "nvidia\x85:: sm_arch :: 90_real",  # NEL
    "nvidia\u200b:: sm_arch :: 90_real",  # zero-width space is not whitespace
    "nvidia\u2028::\u2029sm_arch :: 90_real",  # line/paragraph separators
    "a :: b :: .",  # value of one dot
    "a :: b :: ..",  # dots only
    "0 :: 0 :: 0",  # digits
    "_ :: _ :: _",  # underscores
    "",  # empty
    "::",  # separators only
    ":: ::",  # empty parts
    "nvidia :: sm_arch",  # missing value
    "nvidia :: sm_arch :: 90_real :: x",  # extra part
    "nvidia :: sm_arch :: 90_real ::",  # trailing separator
    ":: nvidia :: sm_arch :: 90_real",  # leading separator
    "nvidia ::: sm_arch :: 90_real",  # triple colon
    "nvidia :: :: 90_real",  # empty feature
    "nvidia : sm_arch : 90_real",  # single colons
    "NVIDIA :: sm_arch :: 90_real",  # uppercase namespace
    "nvidia :: Sm_arch :: 90_real",  # uppercase feature
    "nvidia :: sm_arch :: 90_Real",  # uppercase value
    "nvidia-x :: sm_arch :: 90_real",  # dash in namespace
    "nvidia :: sm-arch :: 90_real",  # dash in feature
    "nvidia :: sm_arch :: 90-real",  # dash in value
    "nv.idia :: sm_arch :: 90_real",  # dot in namespace
    "nvidia :: sm.arch :: 90_real",  # dot in feature
    "nvidia :: sm arch :: 90_real",  # inner space
    "nvidiä :: sm_arch :: 90_real",  # non-ASCII letter
    "nvidia :: sm_arch :: 9０",  # fullwidth digit
    "nvidia :: sm_arch :: 90_real\x00",  # NUL
    "nvidia ：： sm_arch ：： 90_real",  # fullwidth colons
]
FEATURE_CORPUS = [
    "nvidia :: sm_arch",  # canonical
    "nvidia::sm_arch",  # no whitespace
    "\u3000nvidia ::sm_arch\n",  # padded
    "nvidia",  # no feature
    "nvidia ::",  # empty feature
    ":: sm_arch",  # empty namespace
    "nvidia :: sm_arch :: 90_real",  # a property
    "Nvidia :: sm_arch",  # uppercase
    "nvidia :: sm.arch",  # dot in feature
    "nvidia :: sm-arch",  # dash
    "nvidia ::: sm_arch",  # triple colon
]

# Near-valid text: real parts with small defects, joined by odd separators and padding.
_PART = st.sampled_from(
    ["nvidia", "sm_arch", "90_real", "12.8", "x86_64", "v3", "", "NVIDIA", "sm-arch", "a.b", "ä",
     "0", ".", "_", "9０", "a b"]
)  # fmt: skip
_SEP = st.sampled_from(
    ["::", " :: ", ":", ":::", " ::", "::\t", "\u00a0::\u3000", "\u2003::", " : : ", "\u200b::",
     "\n::\n", "\x1c::"]
)  # fmt: skip
_PAD = st.sampled_from(["", " ", "\t", "\u00a0", "\u3000", "\x1c", "\x85", "\u200b", "\n", "\x00"])


@st.composite
def near_valid(draw: st.DrawFn, parts: int) -> str:
    count = draw(st.integers(max(1, parts - 1), parts + 1))
    pieces = [draw(_PART) for _ in range(count)]
    text = pieces[0]
    for piece in pieces[1:]:
        text += draw(_SEP) + piece
    return draw(_PAD) + text + draw(_PAD)


property_texts = st.one_of(
    near_valid(3),
    st.from_regex(vl_constants.VALIDATION_PROPERTY_REGEX, fullmatch=True),
    st.text(max_size=30),
    st.text(string.ascii_lowercase + string.digits + "_.: \t", max_size=30),
)
feature_texts = st.one_of(
    near_valid(2),
    st.from_regex(vl_constants.VALIDATION_FEATURE_REGEX, fullmatch=True),
    st.text(max_size=20),
)


def _attempt(call: Callable[[], Any], errors: tuple[type[Exception], ...]) -> Any:
    try:
        return call()
    except errors:
        return None


def ours_property(text: str) -> tuple[str, ...] | None:
    prop = _attempt(lambda: VariantProperty.parse(text), (InvalidProperty,))
    return None if prop is None else (prop.namespace, prop.feature, prop.value, str(prop))


def theirs_property(text: str) -> tuple[str, ...] | None:
    prop = _attempt(lambda: VlProperty.from_str(text), (ValidationError,))
    return None if prop is None else (prop.namespace, prop.feature, prop.value, prop.to_str())


def ours_feature(text: str) -> tuple[str, ...] | None:
    feature = _attempt(lambda: VariantFeature.parse(text), (InvalidProperty,))
    return None if feature is None else (feature.namespace, feature.feature, str(feature))


def theirs_feature(text: str) -> tuple[str, ...] | None:
    feature = _attempt(lambda: VlFeature.from_str(text), (ValidationError,))
    return None if feature is None else (feature.namespace, feature.feature, feature.to_str())


@pytest.mark.parametrize("text", PROPERTY_CORPUS)
def test_property_corpus(text: str) -> None:
    assert ours_property(text) == theirs_property(text)


@pytest.mark.parametrize("text", FEATURE_CORPUS)
def test_feature_corpus(text: str) -> None:
    assert ours_feature(text) == theirs_feature(text)


def test_corpora_hold_both_verdicts() -> None:
    # Guards against a corpus that silently became all-valid or all-invalid.
    verdicts = {ours_property(text) is None for text in PROPERTY_CORPUS}
    assert verdicts == {True, False}
    assert {ours_feature(text) is None for text in FEATURE_CORPUS} == {True, False}


@SETTINGS
@given(property_texts)
def test_generated_properties(text: str) -> None:
    assert ours_property(text) == theirs_property(text)


@SETTINGS
@given(feature_texts)
def test_generated_features(text: str) -> None:
    assert ours_feature(text) == theirs_feature(text)


# --------------------------------------------------------------------------- labels

LABEL_CORPUS = [
    "cu128",  # typical
    "cu12.8",  # dot
    "x86_64_v3",  # underscores
    "null",  # reserved, yet a valid label
    "0",  # one digit
    "." * 3,  # dots only
    "a" * 100,  # no length limit since PEP 825
    "",  # empty
    "CU128",  # uppercase
    "cu-128",  # dash
    "cu 128",  # space
    "cu128\n",  # trailing newline
    " cu128",  # leading space
    "cuä",  # non-ASCII
    "cu١٢٨",  # Arabic-Indic digits
]


def ours_label(label: str) -> bool:
    return _attempt(lambda: validate_label(label), (InvalidProperty,)) is not None


def theirs_label(label: str) -> bool:
    return vl_constants.VALIDATION_VARIANT_LABEL_REGEX.fullmatch(label) is not None


@pytest.mark.parametrize("label", LABEL_CORPUS)
def test_label_corpus(label: str) -> None:
    assert ours_label(label) == theirs_label(label)


@SETTINGS
@given(
    st.one_of(
        st.text(max_size=12),
        st.text(string.ascii_letters + string.digits + "._- ", max_size=12),
        st.from_regex(vl_constants.VALIDATION_VARIANT_LABEL_REGEX, fullmatch=True),
    )
)
def test_generated_labels(label: str) -> None:
    assert ours_label(label) == theirs_label(label)


# ------------------------------------------------------------------ descriptions and hashes

LB = "nvidia :: cuda_version_lower_bound"
DESCRIPTION_CORPUS: list[tuple[tuple[str, ...], str | None]] = [
    ((f"{LB} :: 12.8",), None),  # f839a2dd
    ((f"{LB} :: 12.6", "nvidia :: sm_arch :: 80_real", "nvidia :: sm_arch :: 90_real"), None),
    (("nvidia::sm_arch::90_real", "nvidia :: sm_arch :: 80_real", f"{LB}::12.6"), None),  # order
    ((), None),  # null, e3b0c442
    ((), "null"),  # null, explicit
    ((), "cu128"),  # empty needs null
    ((f"{LB} :: 12.8",), "null"),  # null needs empty
    ((f"{LB} :: 12.8",), "cu128"),  # labelled
    ((f"{LB} :: 12.8",), "CU128"),  # bad label
    ((f"{LB} :: 12.8", f"{LB}::12.8"), None),  # duplicate
    ((f"{LB} :: 12.8", f"{LB} :: 12.80"), "x"),  # 12.8 and 12.80 are different values
    (("a :: b :: cx", "d :: e :: f"), None),  # the adjacency case the newline guards
    (("a :: b :: c", "xd :: e :: f"), None),  # ... its twin
    (("z :: z :: z", "a :: a :: a", "m :: m :: m"), "sorted"),  # sorting across namespaces
]


def ours_description(texts: tuple[str, ...], label: str | None) -> tuple[Any, ...] | None:
    def build() -> VariantDescription:
        return VariantDescription.of([VariantProperty.parse(t) for t in texts], label)

    description = _attempt(build, (InvalidProperty,))
    if description is None:
        return None
    return (
        description.label,
        description.hexdigest,
        tuple(str(p) for p in description.properties),
        description.to_dict(),
    )


def theirs_description(texts: tuple[str, ...], label: str | None) -> tuple[Any, ...] | None:
    # variantlib spells "use the default label" as "", we as None.
    def build() -> VlDescription:
        return VlDescription([VlProperty.from_str(t) for t in texts], label or "")

    description = _attempt(build, (ValidationError,))
    if description is None:
        return None
    return (
        description.label,
        description.hexdigest,
        tuple(p.to_str() for p in description.properties),
        description.to_dict(),
    )


@pytest.mark.parametrize(("texts", "label"), DESCRIPTION_CORPUS)
def test_description_corpus(texts: tuple[str, ...], label: str | None) -> None:
    assert ours_description(texts, label) == theirs_description(texts, label)


def test_description_corpus_hashes() -> None:
    assert ours_description(*DESCRIPTION_CORPUS[0]) is not None
    hashes = [ours_description(texts, label) for texts, label in DESCRIPTION_CORPUS[:4]]
    assert [h[1] for h in hashes if h] == ["f839a2dd", "39bc0ddc", "39bc0ddc", "e3b0c442"]
    twins = [ours_description(*case) for case in DESCRIPTION_CORPUS[11:13]]
    assert twins[0] is not None
    assert twins[1] is not None
    assert twins[0][1] != twins[1][1]


_VALID_PROPERTY = st.from_regex(vl_constants.VALIDATION_PROPERTY_REGEX, fullmatch=True)
_SMALL_PROPERTY = st.builds(
    "{} :: {} :: {}".format,
    st.sampled_from(["nvidia", "x86_64", "a"]),
    st.sampled_from(["sm_arch", "level", "b"]),
    st.sampled_from(["90_real", "80_real", "v3", "12.8", "12.80"]),
)
_LABELS = st.sampled_from([None, "null", "cu128", "CU", "a.b", "39bc0ddc", "e3b0c442", "a-b"])


@SETTINGS
@given(
    st.lists(st.one_of(_SMALL_PROPERTY, _VALID_PROPERTY, near_valid(3)), max_size=5),
    _LABELS,
)
def test_generated_descriptions(texts: list[str], label: str | None) -> None:
    assert ours_description(tuple(texts), label) == theirs_description(tuple(texts), label)


# --------------------------------------------------------------------------- wheel filenames
# Not a variantlib API, but its VALIDATION_WHEEL_NAME_REGEX is the reference for the label part.

_WHEEL_RE = vl_constants.VALIDATION_WHEEL_NAME_REGEX


def theirs_wheel(filename: str) -> tuple[str | None, ...] | None:
    match = _WHEEL_RE.fullmatch(filename)
    if match is None:
        return None
    return tuple(
        match[g] for g in ("name", "ver", "build", "pyver", "abi", "plat", "variant_label")
    )


def ours_wheel(filename: str) -> tuple[str | None, ...] | None:
    wheel = _attempt(lambda: WheelFilename.parse(filename), (InvalidWheelFilename,))
    if wheel is None:
        return None
    return (
        wheel.name,
        wheel.version,
        wheel.build,
        wheel.python_tag,
        wheel.abi_tag,
        wheel.platform_tag,
        wheel.label,
    )


@pytest.mark.parametrize(
    "filename",
    [
        "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl",  # label
        "tinyvar-0.1.0-py3-none-any.whl",  # none
        "tinyvar-0.1.0-1-py3-none-any.whl",  # build tag
        "tinyvar-0.1.0-1_b-py3-none-any-null.whl",  # build tag and label
        "tinyvar-0.1.0-py2.py3-none-any-39bc0ddc.whl",  # tag set
    ],
)
def test_valid_wheel_names_split_alike(filename: str) -> None:
    assert ours_wheel(filename) == theirs_wheel(filename)


@pytest.mark.parametrize(
    "filename",
    [
        "tinyvar-0.1.0-py3-none-any-CU128.whl",  # uppercase label
        "tinyvar-0.1.0-py3-none.whl",  # too few parts
        "tinyvar-0.1.0-py3-none-any-cu-128.whl",  # too many parts
    ],
)
def test_invalid_wheel_names_rejected_by_both(filename: str) -> None:
    assert ours_wheel(filename) is None
    assert theirs_wheel(filename) is None


@SETTINGS
@given(
    st.text(string.ascii_letters + string.digits + "-_.+", max_size=40).map(lambda s: s + ".whl")
)
def test_generated_wheel_names(filename: str) -> None:
    ours = ours_wheel(filename)
    # We are stricter (PEP 440 versions, tag characters, PEP 825's python-tag rule), never looser:
    # whatever we accept, variantlib splits the same way.
    if ours is not None:
        assert theirs_wheel(filename) == ours


# ------------------------------------------------------------------ variants.json documents


@dataclass(frozen=True)
class KnownDifference:
    """A document variantlib 0.2.2 accepts and we reject, on purpose."""

    name: str
    reason: str
    applies: Callable[[dict[str, Any]], bool]
    our_message: str  # a regex our error message matches for this reason


def _variant_features(doc: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    variants = doc.get("variants")
    if not isinstance(variants, dict):
        return
    for body in variants.values():
        if isinstance(body, dict):
            for namespace, features in body.items():
                if isinstance(features, dict):
                    for feature, values in features.items():
                        yield namespace, feature, values


def _repeats(values: object) -> bool:
    return isinstance(values, list) and len(values) != len({json.dumps(v) for v in values})


def _providers(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    providers = doc.get("providers")
    if isinstance(providers, dict):
        yield from (p for p in providers.values() if isinstance(p, dict))


def _name_ok(name: str) -> bool:
    return re.fullmatch(r"[a-z0-9_]+", name) is not None


def _no_values(features: object) -> bool:
    return isinstance(features, dict) and all(v == [] for v in features.values())


def _has_bad_empty_key(doc: dict[str, Any]) -> bool:
    variants = doc.get("variants")
    for body in variants.values() if isinstance(variants, dict) else ():
        for namespace, features in body.items() if isinstance(body, dict) else ():
            # A bad namespace yields no property when none of its features has a value (an
            # empty table, or only empty lists): variantlib never looks at its name.
            if not _name_ok(namespace) and _no_values(features):
                return True
    return any(not _name_ok(f) and v == [] for _, f, v in _variant_features(doc))


KNOWN_DIFFERENCES = [
    KnownDifference(
        "duplicate-namespace-priority",
        "PEP 817's schema has uniqueItems on default-priorities.namespace and uv rejects a "
        "namespace listed twice; variantlib compares the list as a set",
        lambda doc: _repeats(doc.get("default-priorities", {}).get("namespace")),
        r"default-priorities\.namespace\[\d+\]: duplicate namespace",
    ),
    KnownDifference(
        "empty-value-list",
        "a feature listed with no values is malformed (PEP 817's schema: minItems 1; uv: 'must "
        "have at least one value'); variantlib silently drops the feature",
        lambda doc: any(values == [] for _, _, values in _variant_features(doc)),
        r"expected at least 1 value, got an empty array",
    ),
    KnownDifference(
        "malformed-name-without-values",
        "a namespace or feature name that breaks the name rules is malformed even when it holds "
        "no values; variantlib never looks at it because it yields no property",
        _has_bad_empty_key,
        r"invalid (namespace|feature name)",
    ),
    KnownDifference(
        "duplicate-static-value",
        "static values are an ordered preference list of distinct values (the provider protocol: "
        "'no duplicates'; PEP 817's schema: uniqueItems); variantlib keeps the repeat",
        lambda doc: any(
            _repeats(v)
            for p in _providers(doc)
            if isinstance(p.get("static-properties"), dict)
            for v in p["static-properties"].values()
        ),
        r"static-properties\.\w+\[\d+\]: duplicate value",
    ),
    KnownDifference(
        "duplicate-feature-order",
        "feature-order ranks features; a repeat is ambiguous, variantlib compares it as a set",
        lambda doc: any(_repeats(p.get("feature-order")) for p in _providers(doc)),
        r"feature-order\[\d+\]: duplicate feature name",
    ),
    KnownDifference(
        "top-level-static-properties",
        "a top-level static-properties table is PEP 817's place for static values; variantlib "
        "ignores it, which silently changes which variants count as compatible",
        lambda doc: "static-properties" in doc,
        r"static-properties: a top-level static-properties table is PEP 817's",
    ),
]


def ours_document(doc: dict[str, Any]) -> tuple[VariantMetadata | None, str]:
    try:
        return parse_variant_metadata(copy.deepcopy(doc), source="corpus"), ""
    except InvalidMetadata as error:
        return None, str(error)


def theirs_document(doc: dict[str, Any]) -> VariantsJson | None:
    try:
        return VariantsJson(copy.deepcopy(doc))
    except ValidationError:
        return None


def summary_ours(meta: VariantMetadata) -> dict[str, Any]:
    return {
        "namespaces": list(meta.namespace_priorities),
        "providers": {
            p.namespace: (
                list(p.requires),
                p.plugin_api,
                {f.name: list(f.values) for f in p.static_properties or ()},
                [f.name for f in p.static_properties or ()],
                p.builtin,
                p.optional,
            )
            for p in meta.providers
        },
        "variants": {v.label: (v.hexdigest, [str(p) for p in v.properties]) for v in meta.variants},
    }


def summary_theirs(vj: VariantsJson) -> dict[str, Any]:
    return {
        "namespaces": list(vj.namespace_priorities),
        "providers": {
            namespace: (
                list(p.requires),
                p.plugin_api,
                {k: list(v) for k, v in p.static_properties.items()},
                list(p.feature_order) or list(p.static_properties),
                p.builtin,
                p.optional,
            )
            for namespace, p in vj.providers.items()
        },
        "variants": {
            label: (v.hexdigest, [p.to_str() for p in v.properties])
            for label, v in sorted(vj.variants.items())
        },
    }


def check_document(doc: dict[str, Any]) -> str:
    """Compare verdicts and content; return 'agree' or the name of the known difference."""
    ours, message = ours_document(doc)
    theirs = theirs_document(doc)
    if ours is not None and theirs is not None:
        assert summary_ours(ours) == summary_theirs(theirs)
        return "agree"
    if ours is None and theirs is None:
        return "agree"
    assert ours is None, f"we accept what variantlib rejects: {doc!r}"
    for difference in KNOWN_DIFFERENCES:
        if difference.applies(doc) and re.search(difference.our_message, message):
            return difference.name
    pytest.fail(f"undocumented disagreement: variantlib accepts, we say {message!r}: {doc!r}")


def _doc(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / "variantlib.json").read_text())
    doc.update(overrides)
    return {k: v for k, v in doc.items() if v is not _DROP}


_DROP = object()


def _as_v020(fixture: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / fixture).read_text())
    return doc | {"$schema": VL_SCHEMA}


_NV_REQ = {"requires": ["nvidia-variant-provider"]}
_BLAS = {
    "static-properties": {"library": ["mkl", "openblas"], "threading": ["openmp"]},
    "feature-order": ["library", "threading"],
}
_PRIO = {"namespace": ["nvidia"]}
_PRIO2 = {"namespace": ["nvidia", "blas"]}
_P2 = {"nvidia": _NV_REQ, "blas": _BLAS}

DOCUMENT_CORPUS: list[tuple[dict[str, Any], str]] = [
    # (document, expected outcome: "agree" or the KnownDifference name)
    (_doc(), "agree"),  # variantlib's own generate-index-json output
    (json.loads((DATA / "pep850_static.json").read_text()), "agree"),  # static provider
    (_as_v020("pep825.json"), "agree"),  # a PEP 825 file under v0.2.0: both reject
    (_as_v020("pep817.json"), "agree"),  # a PEP 817 file under v0.2.0: both reject
    (_doc(variants=_DROP), "agree"),  # no variants table: both read it as empty
    (_doc(**{"x-extra": 1}), "agree"),  # unknown top-level key: both ignore
    (_doc(providers=_DROP), "agree"),  # no providers: both reject
    (_doc(**{"default-priorities": {}}), "agree"),  # no namespaces: both reject
    (_doc(**{"default-priorities": {"namespace": ["nvidia"], "x": 1}}), "agree"),  # unknown key
    (_doc(providers={"nvidia": {"requires": []}}), "agree"),  # empty requires
    (_doc(providers={"nvidia": {"requires": ["a\tb"]}}), "agree"),  # tab in a requirement
    (_doc(providers={"nvidia": {"requires": [" "]}}), "agree"),  # a lone space passes [\S ]+
    (_doc(providers={"nvidia": {"requires": ["x", "x"]}}), "agree"),  # repeated requirement
    (_doc(providers={"nvidia": {"requires": ["x"], "plugin-api": "m.n : C.d"}}), "agree"),
    (_doc(providers={"nvidia": {"requires": ["x"], "plugin-api": "módulo:Clase"}}), "agree"),
    (_doc(providers={"nvidia": {"requires": ["x"], "plugin-api": "a:b:c"}}), "agree"),  # bad
    (_doc(providers={"nvidia": {"requires": ["x"], "plugin-api": None}}), "agree"),  # null
    (_doc(providers={"nvidia": {"requires": ["x"], "optional": None}}), "agree"),  # null bool
    (_doc(providers={"nvidia": {"requires": ["x"], "optional": 1}}), "agree"),  # int bool
    (_doc(providers={"nvidia": {"builtin": ""}}), "agree"),  # any builtin string
    (_doc(providers={"nvidia": {"builtin": "x", "requires": ["y"]}}), "agree"),  # two kinds
    (_doc(providers={"nvidia": {"plugin-api": "m:C"}}), "agree"),  # no kind
    (_doc(providers={"nvidia": {"build-requires": ["x"]}}), "agree"),  # pyproject only
    (_doc(providers={"nvidia": {"requires": ["x"], "enable-if": "True"}}), "agree"),  # 817 key
    (_doc(providers={"nvidia": {"static-properties": {"sm_arch": ["90_real"]}}}), "agree"),
    (_doc(providers={"nvidia": {"static-properties": {}}}), "agree"),  # empty static
    (_doc(providers={"nvidia": {"static-properties": {"a": []}}}), "agree"),  # empty values
    (_doc(providers={"nvidia": {"static-properties": {"a": ["1"]}, "feature-order": []}}), "agree"),
    (_doc(providers={"nvidia": {"requires": ["x"], "feature-order": ["a"]}}), "agree"),
    (_doc(providers={"nvidia": {"static-properties": {"a": ["1"], "b": ["2"]}}}), "agree"),
    (
        _doc(providers={"nvidia": {"static-properties": {"a": ["1"]}, "feature-order": ["a"]}}),
        "agree",
    ),
    (
        _doc(providers={"nvidia": {"static-properties": {"a": ["1"]}, "feature-order": ["b"]}}),
        "agree",
    ),
    (
        _doc(
            providers={"nvidia": _NV_REQ, "NV": _NV_REQ},
            **{"default-priorities": {"namespace": ["nvidia", "NV"]}},
        ),
        "agree",
    ),
    (_doc(providers=_P2, **{"default-priorities": _PRIO2}), "agree"),  # unused provider is fine
    (_doc(providers=_P2, **{"default-priorities": _PRIO}), "agree"),  # unlisted provider
    (_doc(variants={"cu128": {"nvidia": {"a": ["1"]}, "blas": {"b": ["2"]}}}), "agree"),
    (_doc(variants={"null": {"nvidia": {}}}), "agree"),  # empty namespace in null
    (_doc(variants={"cu": {"nvidia": {}}}), "agree"),  # empty non-null
    (_doc(variants={"null": {"nvidia": {"a": ["1"]}}}), "agree"),  # null with properties
    (_doc(variants={"CU": {"nvidia": {"a": ["1"]}}}), "agree"),  # uppercase label
    (_doc(variants={"cu": {"nvidia": {"a": ["1", "1"]}}}), "agree"),  # duplicate value
    (_doc(variants={"cu": {"nvidia": {"a": "1"}}}), "agree"),  # string, not list
    (_doc(variants={"cu": {"nvidia": {"a": [1]}}}), "agree"),  # number value
    (_doc(variants={"cu": {"nvidia": {"A": ["1"]}}}), "agree"),  # uppercase feature
    (_doc(variants={"cu": {"nvidia": {"a": ["1"], "b": []}}}), "empty-value-list"),
    (_doc(variants={"cu": {"nvidia": {"a": ["1"], "B": []}}}), "malformed-name-without-values"),
    (_doc(variants={"cu": {"nvidia": {"a": ["1"]}, "NV": {}}}), "malformed-name-without-values"),
    (
        _doc(**{"default-priorities": {"namespace": ["nvidia", "nvidia"]}}),
        "duplicate-namespace-priority",
    ),
    (
        _doc(providers={"nvidia": {"static-properties": {"a": ["1", "1"]}}}),
        "duplicate-static-value",
    ),
    (
        _doc(
            providers={"nvidia": {"static-properties": {"a": ["1"]}, "feature-order": ["a", "a"]}}
        ),
        "duplicate-feature-order",
    ),
    (_doc(**{"static-properties": {"nvidia": {"a": ["1"]}}}), "top-level-static-properties"),
]


@pytest.mark.parametrize(("doc", "expected"), DOCUMENT_CORPUS)
def test_document_corpus(doc: dict[str, Any], expected: str) -> None:
    assert check_document(doc) == expected


def test_every_known_difference_is_exercised() -> None:
    used = {expected for _, expected in DOCUMENT_CORPUS}
    assert {d.name for d in KNOWN_DIFFERENCES} <= used
    verdicts = {ours_document(doc)[0] is None for doc, _ in DOCUMENT_CORPUS}
    assert verdicts == {True, False}


# Generated documents: a valid v0.2.0 document, then zero to three small defects, so that both
# verdicts and every kind of disagreement come up.
_NAMESPACES = ["nvidia", "blas", "x86_64", "amd"]
_FEATURE_NAMES = ["sm_arch", "library", "level", "threading"]
_VALUE_NAMES = ["90_real", "12.8", "mkl", "v3", "openblas", "0"]
_LABEL_NAMES = ["cu128", "mkl", "39bc0ddc", "x.y", "a_b"]
_BAD_NAMES = ["", "NV", "a-b", "a.b", "ä", "a b"]
_BAD_VALUES = ["", "UP", "a b", "9-0", "ä"]


def _unique(strategy: st.SearchStrategy[str], most: int) -> st.SearchStrategy[list[str]]:
    return st.lists(strategy, min_size=1, max_size=most, unique=True)


@st.composite
def valid_provider(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["requires", "static", "builtin"]))
    entry: dict[str, Any] = {}
    if kind == "requires":
        entry["requires"] = draw(_unique(st.sampled_from(["nv-provider", "pkg>=1", "a b"]), 2))
        if draw(st.booleans()):
            entry["plugin-api"] = draw(st.sampled_from(["mod.p:Cls", "mod", "m : C", "módulo:C"]))
    elif kind == "static":
        features = draw(_unique(st.sampled_from(_FEATURE_NAMES), 2))
        entry["static-properties"] = {
            f: draw(_unique(st.sampled_from(_VALUE_NAMES), 3)) for f in features
        }
        if len(features) > 1 or draw(st.booleans()):
            entry["feature-order"] = draw(st.permutations(features))
    else:
        entry["builtin"] = draw(st.sampled_from(["abi_dependency", "x"]))
    if draw(st.booleans()):
        entry["optional"] = draw(st.booleans())
    return entry


@st.composite
def valid_document(draw: st.DrawFn) -> dict[str, Any]:
    namespaces = draw(_unique(st.sampled_from(_NAMESPACES), 3))
    variants: dict[str, Any] = {}
    for label in draw(st.lists(st.sampled_from(_LABEL_NAMES), max_size=3, unique=True)):
        used = draw(_unique(st.sampled_from(namespaces), 2))
        variants[label] = {
            ns: {
                f: draw(_unique(st.sampled_from(_VALUE_NAMES), 2))
                for f in draw(_unique(st.sampled_from(_FEATURE_NAMES), 2))
            }
            for ns in used
        }
    if draw(st.booleans()):
        variants["null"] = {}
    return {
        "$schema": VL_SCHEMA,
        "default-priorities": {"namespace": namespaces},
        "providers": {ns: draw(valid_provider()) for ns in draw(st.permutations(namespaces))},
        "variants": variants,
    }


def _pick(draw: st.DrawFn, items: Any) -> Any:
    return draw(st.sampled_from(sorted(items)))


def _some_values(doc: dict[str, Any]) -> list[list[str]]:
    lists = [v for _, _, v in _variant_features(doc) if isinstance(v, list) and v]
    lists += [
        v
        for p in _providers(doc)
        for v in (p.get("static-properties") or {}).values()
        if isinstance(v, list) and v
    ]
    return lists


def _defect(draw: st.DrawFn, doc: dict[str, Any]) -> None:  # noqa: C901 - one case per defect kind
    """Apply one small defect, in place."""
    providers = doc["providers"]
    namespaces = doc["default-priorities"]["namespace"]
    kind = draw(st.integers(0, 17))
    values = _some_values(doc)
    if kind == 0 and values:
        target = draw(st.sampled_from(values))
        target[draw(st.integers(0, len(target) - 1))] = draw(st.sampled_from(_BAD_VALUES))
    elif kind == 1 and values:
        target = draw(st.sampled_from(values))
        target.append(target[0])  # a repeated value
    elif kind == 2 and values:
        draw(st.sampled_from(values)).clear()  # no values
    elif kind == 3 and doc["variants"]:
        body = doc["variants"][_pick(draw, doc["variants"])]
        if not isinstance(body, dict):
            return
        name = draw(st.sampled_from(_BAD_NAMES + _NAMESPACES))
        body[name] = draw(st.sampled_from([{}, {"level": ["v3"]}, {"BAD": []}]))
    elif kind == 4 and namespaces:
        namespaces.append(draw(st.sampled_from(namespaces)))  # listed twice
    elif kind == 5:
        namespaces.append(draw(st.sampled_from(_NAMESPACES + _BAD_NAMES)))
    elif kind == 6 and namespaces:
        namespaces.pop(draw(st.integers(0, len(namespaces) - 1)))
    elif kind == 7 and providers:
        del providers[_pick(draw, providers)]
    elif kind == 8 and providers:
        entry = providers[_pick(draw, providers)]
        key, value = draw(
            st.sampled_from(
                [
                    ("requires", ["x"]),
                    ("requires", []),
                    ("requires", ["a\tb"]),
                    ("requires", None),
                    ("plugin-api", "a:b:c"),
                    ("plugin-api", "m:C"),
                    ("builtin", "y"),
                    ("builtin", None),
                    ("static-properties", {"level": ["v3"]}),
                    ("static-properties", {}),
                    ("static-properties", None),
                    ("feature-order", ["level"]),
                    ("feature-order", []),
                    ("optional", None),
                    ("optional", 1),
                    ("enable-if", "True"),
                    ("build-requires", ["x"]),
                ]
            )
        )
        entry[key] = value
    elif kind == 9 and providers:
        entry = providers[_pick(draw, providers)]
        if entry:
            del entry[_pick(draw, entry)]
    elif kind == 10:
        order = [p.get("feature-order") for p in _providers(doc) if p.get("feature-order")]
        if order:
            target = draw(st.sampled_from(order))
            target.append(draw(st.sampled_from([*target, "level", "BAD"])))
    elif kind == 11:
        label = draw(st.sampled_from(["CU", "a-b", "", "null", "cu 1", *_LABEL_NAMES]))
        doc["variants"][label] = draw(st.sampled_from([{}, {"nvidia": {}}, {"blas": {"a": ["1"]}}]))
    elif kind == 12:
        doc["static-properties"] = {"nvidia": {"a": ["1"]}}
    elif kind == 13:
        doc[draw(st.sampled_from(["x-extra", "annotations"]))] = {}
    elif kind == 14:
        doc["default-priorities"][draw(st.sampled_from(["feature", "property"]))] = {}
    elif kind == 15 and doc["variants"]:
        body = doc["variants"][_pick(draw, doc["variants"])]
        features = body[_pick(draw, body)] if isinstance(body, dict) and body else None
        if isinstance(features, dict):
            features[draw(st.sampled_from(_BAD_NAMES))] = draw(st.sampled_from([[], ["v3"]]))
    elif kind == 16 and doc["variants"]:
        doc["variants"][_pick(draw, doc["variants"])] = draw(
            st.sampled_from([[], "x", {"nvidia": []}, {"nvidia": {"a": "1"}}])
        )
    elif kind == 17:
        del doc[draw(st.sampled_from(["variants", "providers", "default-priorities"]))]


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    doc = draw(valid_document())
    for _ in range(draw(st.integers(0, 3))):
        if not all(k in doc for k in ("variants", "providers", "default-priorities")):
            break
        _defect(draw, doc)
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
@example(  # once in ~40 random runs: a bad namespace whose only feature has no values
    {
        "$schema": VL_SCHEMA,
        "default-priorities": {"namespace": ["nvidia"]},
        "providers": {"nvidia": {"requires": ["nv-provider"]}},
        "variants": {"null": {"": {"level": []}}},
    }
)
def test_generated_documents(doc: dict[str, Any]) -> None:
    check_document(doc)


# ----------------------------------------------------------------- their writer, our reader


@pytest.mark.parametrize("fixture", ["variantlib.json", "pep850.json", "pep850_static.json"])
def test_we_read_what_variantlib_writes(fixture: str) -> None:
    theirs = VariantsJson(json.loads((DATA / fixture).read_text()))
    written = json.loads(theirs.to_str())
    assert written["$schema"] == VL_SCHEMA
    ours = parse_variant_metadata(written, source="written")
    assert summary_theirs(theirs) == summary_ours(ours)
