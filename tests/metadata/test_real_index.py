"""Every ``*-variants.json`` of the real variant index reads, in both of its dialects (§9).

The files are the published wheelnext/variants-index-test (v0.0.3 and the older v0.0.2), read
verbatim from the shared corpus: nothing here is written by the code under test.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from variant_bridge.errors import InvalidMetadata
from variant_bridge.metadata.model import StaticFeature, VariantMetadata
from variant_bridge.metadata.parse import parse_variant_metadata
from variant_bridge.properties import LEGACY_NULL_LABEL
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate.supported import SupportedProperties

INDEX = "real/variants-index-test"


def real_files(corpus: Path) -> list[Path]:
    return sorted((corpus / INDEX).glob("v0.0.*/*/*-variants.json"))


def read(path: Path) -> VariantMetadata:
    return parse_variant_metadata(json.loads(path.read_text()), source=str(path))


def test_every_real_variants_file_reads(corpus: Path) -> None:
    files = real_files(corpus)
    assert len(files) == 192  # the whole published index, both dialects
    failures = []
    for path in files:
        try:
            metadata = read(path)
        except InvalidMetadata as e:
            failures.append(str(e))
            continue
        assert metadata.variants, path
    assert failures == []


def test_the_older_dialect_reads_as_its_republication(corpus: Path) -> None:
    """v0.0.2 (``plugin-use``) and v0.0.3 (``install-time``, ``static-properties``) are the same
    files republished: they must read to the same variants, priorities and providers."""
    compared = 0
    for old in sorted((corpus / INDEX / "v0.0.2").glob("*/*-variants.json")):
        new = corpus / INDEX / "v0.0.3" / old.parent.name / old.name
        a, b = read(old), read(new)
        assert (a.variants, a.namespace_priorities, a.providers) == (
            b.variants,
            b.namespace_priorities,
            b.providers,
        ), old
        compared += 1
    assert compared == 96


@pytest.mark.parametrize("version", ["v0.0.2", "v0.0.3"])
def test_plugin_use_none_is_a_static_namespace(corpus: Path, version: str) -> None:
    metadata = read(corpus / INDEX / version / "torch" / "torch-2.9.0-variants.json")
    providers = {p.namespace: p for p in metadata.providers}
    priority = providers["priority"]
    assert (priority.install_time, priority.static_properties) == (
        False,
        (StaticFeature("order", ("1", "2", "3")),),
    )
    assert providers["nvidia"].install_time
    assert providers["nvidia"].static_properties is None


def test_plugin_use_build_is_static_too(corpus: Path) -> None:
    metadata = read(corpus / INDEX / "v0.0.2" / "numpy" / "numpy-2.3.3-variants.json")
    (blas,) = [p for p in metadata.providers if p.namespace == "blas_lapack"]
    assert not blas.install_time
    assert blas.static_properties == (StaticFeature("provider", ("accelerate", "openblas", "mkl")),)


def test_unknown_plugin_use_is_one_clear_line(corpus: Path) -> None:
    path = corpus / INDEX / "v0.0.2" / "torch" / "torch-2.9.0-variants.json"
    data: dict[str, Any] = json.loads(path.read_text())
    data["providers"]["priority"]["plugin-use"] = "sometimes"
    with pytest.raises(InvalidMetadata) as info:
        parse_variant_metadata(data, source="torch-2.9.0-variants.json")
    message = str(info.value)
    assert "providers.priority.plugin-use" in message
    assert "expected one of all, build, none" in message
    assert "\n" not in message


def test_plugin_use_is_not_a_key_of_the_newer_dialect(corpus: Path) -> None:
    path = corpus / INDEX / "v0.0.3" / "torch" / "torch-2.9.0-variants.json"
    data: dict[str, Any] = json.loads(path.read_text())
    data["providers"]["priority"]["plugin-use"] = "none"
    with pytest.raises(InvalidMetadata, match="plugin-use: unknown key"):
        parse_variant_metadata(data, source="torch-2.9.0-variants.json")


@pytest.mark.parametrize(
    "name", ["torch/torch-2.8.0-variants.json", "torchvision/torchvision-0.23.0-variants.json"]
)
@pytest.mark.parametrize("version", ["v0.0.2", "v0.0.3"])
def test_the_legacy_null_label_is_the_null_variant(corpus: Path, version: str, name: str) -> None:
    metadata = read(corpus / INDEX / version / name)
    legacy = metadata.variant(LEGACY_NULL_LABEL)
    assert legacy is not None
    assert legacy.is_null
    # No CUDA at all: the legacy null variant is what is left, ranked like the null variant.
    no_cuda = SupportedProperties(unsupported=(("nvidia", "no __cuda"),))
    ranked = VariantRanker(no_cuda, Priorities.of(metadata)).rank(metadata.variants)
    assert [(r.label, r.compatible) for r in ranked if r.compatible] == [(LEGACY_NULL_LABEL, True)]


def test_the_legacy_null_label_needs_no_properties_only_in_the_old_dialect(corpus: Path) -> None:
    path = corpus / INDEX / "v0.0.3" / "torch" / "torch-2.8.0-variants.json"
    data: dict[str, Any] = json.loads(path.read_text())
    pep850 = copy.deepcopy(data)
    pep850["$schema"] = "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json"
    del pep850["default-priorities"]["feature"]
    del pep850["default-priorities"]["property"]
    pep850.pop("static-properties", None)
    for provider in pep850["providers"].values():
        provider.pop("enable-if", None)
        provider.pop("install-time", None)
    with pytest.raises(InvalidMetadata, match="must use the label 'null'"):
        parse_variant_metadata(pep850, source="torch-2.8.0-variants.json")
