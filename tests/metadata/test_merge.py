"""Layer 1: merging the variant metadata of one version read from several documents."""

from __future__ import annotations

from typing import Any

import pytest

from tests.metadata.test_parse import NVIDIA, document, parse
from variant_bridge.errors import InvalidMetadata
from variant_bridge.metadata.merge import merge_metadata
from variant_bridge.metadata.model import VariantMetadata


def wheel_meta(label: str, body: dict[str, Any]) -> VariantMetadata:
    data = document("wheel_cu128.json")
    data["variants"] = {label: body}
    return parse(data, f"pkg-{label}.whl")


def test_merging_wheels_gives_the_index_file() -> None:
    index = parse(document("variantlib.json"))
    wheels = [wheel_meta(v.label, v.to_dict()) for v in index.variants]
    merged = wheels[0]
    for other in wheels[1:]:
        merged = merge_metadata(merged, other, source="index")
    assert merged == index
    backwards = wheels[-1]
    for other in reversed(wheels[:-1]):
        backwards = merge_metadata(backwards, other, source="index")
    assert backwards == index  # independent of order


def test_merge_namespace_prefix_rule() -> None:
    short = parse(document("pep825.json"))
    long = replace_namespaces("pep825.json", ("nvidia", "x86_64"))
    assert merge_metadata(short, long, source="i").namespace_priorities == ("nvidia", "x86_64")
    assert merge_metadata(long, short, source="i").namespace_priorities == ("nvidia", "x86_64")
    other = replace_namespaces("pep825.json", ("x86_64", "nvidia"))
    with pytest.raises(
        InvalidMetadata,
        match=r"^i: default-priorities\.namespace: cannot merge \['nvidia'\] with \['x86_64', "
        r"'nvidia'\]: the shorter list must begin the longer one$",
    ):
        merge_metadata(short, other, source="i")


def replace_namespaces(fixture: str, namespaces: tuple[str, ...]) -> VariantMetadata:
    data = document(fixture)
    data["default-priorities"] = {"namespace": list(namespaces)}
    return parse(data)


def test_merge_rejects_a_label_with_two_meanings() -> None:
    a = wheel_meta("cu128", {"nvidia": {"cuda_version_lower_bound": ["12.8"]}})
    b = wheel_meta("cu128", {"nvidia": {"cuda_version_lower_bound": ["12.6"]}})
    with pytest.raises(
        InvalidMetadata,
        match=r"^idx: variants\.cu128: label 'cu128' means \{nvidia :: cuda_version_lower_bound "
        r":: 12\.8\} in one document and \{nvidia :: cuda_version_lower_bound :: 12\.6\}",
    ):
        merge_metadata(a, b, source="idx")


def test_merge_rejects_conflicting_providers() -> None:
    a = parse(document("variantlib.json"))
    data = document("variantlib.json")
    data["providers"]["nvidia"]["requires"] = ["other-provider"]
    with pytest.raises(InvalidMetadata, match=r"^idx: providers\.nvidia: the provider differs"):
        merge_metadata(a, parse(data), source="idx")


def test_merge_keeps_providers_of_either_side() -> None:
    pep825 = parse(document("pep825.json"))
    pep850 = parse(document("pep850.json"))
    merged = merge_metadata(pep825, pep850, source="i")
    assert (merged.dialect, merged.providers) == ("pep850", (NVIDIA,))
    assert merge_metadata(pep850, pep825, source="i") == merged
