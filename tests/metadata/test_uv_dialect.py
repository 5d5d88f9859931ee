"""Which variant metadata uv reads (``metadata/uv_dialect.py``), on the real index's files.

The real uv agrees on each case: ``tests/conformance/test_uv_dialect.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.worlds.dialects import uv_readable_document
from variant_bridge.metadata.uv_dialect import uv_refuses

INDEX = "real/variants-index-test"


def _real(corpus: Path, path: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((corpus / INDEX / path).read_text())
    return document


def test_uv_reads_one_real_file_of_192(corpus: Path) -> None:
    readable = [
        str(path.relative_to(corpus / INDEX))
        for path in sorted((corpus / INDEX).rglob("*-variants.json"))
        if uv_refuses(json.loads(path.read_text())) is None
    ]
    assert readable == ["v0.0.2/xgboost/xgboost-3.1.0rc1-variants.json"]


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("v0.0.3/torch/torch-2.9.0-variants.json",
         "it has 'static-properties' (uv reads $schema, default-priorities, providers, variants only)"),
        ("v0.0.2/cupy/cupy-13.6.0-variants.json", "provider 'nvidia' has 'enable-if'"),
    ],
)  # fmt: skip
def test_the_reason_is_one_line_naming_what_uv_refuses(corpus: Path, path: str, why: str) -> None:
    assert uv_refuses(_real(corpus, path)) == why


def test_the_same_variants_in_uvs_dialect_are_read(corpus: Path) -> None:
    for path in ("v0.0.3/torch/torch-2.9.0-variants.json",
                 "v0.0.3/torchvision/torchvision-0.24.0-variants.json"):  # fmt: skip
        assert uv_refuses(uv_readable_document(_real(corpus, path))) is None


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: d["default-priorities"].update(feature={}),
         "'default-priorities.feature' (uv reads 'default-priorities.namespace' only)"),
        (lambda d: d.pop("providers"),
         "its providers (none) are not the namespaces of 'default-priorities.namespace' (nvidia)"),
        (lambda d: d["providers"]["nvidia"].update({"install-time": True}),
         "provider 'nvidia' has 'install-time'"),
        (lambda d: d.update({"$schema": 1}), "it has no '$schema' string"),
        (lambda d: d["variants"]["a"].update(amd={"gfx_arch": ["gfx942"]}),
         "variant 'a' uses namespace 'amd', which 'default-priorities.namespace' lacks"),
        (lambda d: d["variants"]["a"]["nvidia"].update(sm_arch="90_real"),
         "variant 'a': nvidia is not {feature: [values]}"),
    ],
)  # fmt: skip
def test_variations(change: Any, why: str) -> None:
    document = {
        "$schema": "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json",
        "default-priorities": {"namespace": ["nvidia"]},
        "providers": {"nvidia": {"requires": ["nvidia-variant-provider"]}},
        "variants": {"a": {"nvidia": {"cuda_version_lower_bound": ["12.0"]}}},
    }
    assert uv_refuses(document) is None
    change(document)
    assert uv_refuses(document) == why
