"""Every pixi manifest the export writes validates against pixi's own JSON schema
(``../shared/corpus/pixi-schema/schema.json``, pixi 0.77): new manifests in every mode, and the
real manifests of ``../shared/corpus/real/pixi-locks/`` after ``--update`` (issue 17)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from tests.export.corpus import corpus_dir, corpus_files, read_corpus_file
from tests.export.snapshots import model, pixi_model
from variant_bridge.export.build import Pinning
from variant_bridge.export.model import ExportModel, IndexOptions
from variant_bridge.export.pixi_toml.render import render
from variant_bridge.export.pixi_toml.update import apply


@cache
def _validator() -> Any:
    from jsonschema import Draft7Validator

    schema = json.loads(read_corpus_file(corpus_dir() / "pixi-schema" / "schema.json"))
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def problems(text: str) -> list[str]:
    """pixi's schema's complaints about a manifest, as ``path: message`` lines."""
    # tomlkit reads what pixi reads (TOML 1.1's multi-line inline tables, in real manifests)
    data = tomlkit.parse(text).unwrap()
    found = _validator().iter_errors(data)
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in found]


@pytest.mark.parametrize("example", corpus_files("pixi-schema/examples/valid/*.toml"))
def test_pixis_valid_examples_pass(example: Path) -> None:
    assert problems(read_corpus_file(example)) == []


@pytest.mark.parametrize("example", corpus_files("pixi-schema/examples/invalid/*.toml"))
def test_pixis_invalid_examples_fail(example: Path) -> None:
    """The validator used below rejects what pixi's own schema test rejects."""
    assert problems(read_corpus_file(example))


MODELS: dict[str, ExportModel] = {
    "default": pixi_model(),
    "strict-rich": pixi_model(strict_host_requirements=True),
    "gpu-range-said": model(),
    "no-host-requirements": model(host_requirements=False),
    "indexes": pixi_model(
        index_options=IndexOptions(
            "https://variants.example/simple", ("https://x.example/simple",), ("/srv/wheels",)
        )
    ),
    "pin-none": pixi_model(pinning=Pinning("none")),
    "no-cuda": model(env={"toolkit": None, "python_packages": (), "virtual_packages": ()}),
}


@pytest.mark.parametrize("name", MODELS)
def test_every_new_manifest_validates(name: str) -> None:
    assert problems(render(MODELS[name])) == []


@pytest.mark.parametrize("name", ["default", "indexes", "strict-rich", "gpu-range-said"])
@pytest.mark.parametrize("manifest", corpus_files("real/pixi-locks/*/pixi.toml"))
def test_every_updated_real_manifest_validates(manifest: Path, name: str) -> None:
    text = read_corpus_file(manifest)
    assert problems(text) == []  # the manifest as its project ships it
    m = MODELS[name]
    updated = apply(text, m, kind="pixi", path=str(manifest)).text
    assert problems(updated) == []
    assert apply(updated, m, kind="pixi").text == updated
