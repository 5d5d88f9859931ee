"""``mappings/providers.yaml``: the providers a generated ``[variant]`` table names are the ones
the real published metadata names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from variant_bridge.maintainer.providers import provider_tables

TORCH_210 = "maint/variant-repack/torch-2.10.0-variants.json"
TORCH_29 = "real/variants-index-test/v0.0.3/torch/torch-2.9.0-variants.json"


@pytest.mark.parametrize("namespace", ["nvidia", "amd", "intel"])
def test_upstream_providers_are_what_torch_2_10_names(corpus: Path, namespace: str) -> None:
    published = json.loads((corpus / TORCH_210).read_text())["providers"][namespace]
    assert provider_tables("upstream")[namespace] == {
        "requires": published["requires"],
        "plugin-api": published["plugin-api"],
    }


def test_the_amd_provider_of_torch_2_9_is_the_same(corpus: Path) -> None:
    published = json.loads((corpus / TORCH_29).read_text())["providers"]["amd"]
    assert provider_tables("upstream")["amd"]["requires"] == published["requires"]
    assert provider_tables("upstream")["amd"]["plugin-api"] == published["plugin-api"]


def test_bridge_names_its_own_plugins_and_upstream_where_it_has_none() -> None:
    bridge = provider_tables("bridge")
    assert bridge["amd"]["plugin-api"] == "variant_bridge.providers.plugins:AmdPlugin"
    assert bridge["nvidia"]["requires"] == ["variant-bridge"]
    # an Intel GPU has no conda counterpart: no bridge plugin, the upstream provider
    assert bridge["intel"] == provider_tables("upstream")["intel"]
