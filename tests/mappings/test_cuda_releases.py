"""names.yaml's version -> CUDA minor rules hold for every CUDA component the real world pins.

Checked against real data only: the nvidia-* wheels the real variant index lists (each published
as a ``cu12``/``cu13`` variant whose lower bound says its CUDA major) and the per-build pins of the
torch 2.10 variant declaration (``variant_label == 'cuda12.8'`` -> the CUDA 12.8 set).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomlkit
from packaging.version import Version

from variant_bridge.mappings import MappingTables, load_tables

INDEX = "real/variants-index-test/v0.0.3"
# Wheel links of an index.html: name-version-...-label.whl
_WHEEL_RE = re.compile(r'href="[^"]*/(?P<file>(?P<name>nvidia_[a-z_]+)-(?P<version>[0-9.]+)-[^"#]*?'
                       r'-(?P<label>cu1[0-9])\.whl)')  # fmt: skip
_PIN_RE = re.compile(
    r"^(?P<name>[a-z0-9-]+)==(?P<version>[0-9.]+);.*variant_label == '(?P<label>[^']+)'"
)


@pytest.fixture(scope="module")
def tables() -> MappingTables:
    return load_tables()


def cuda_of(tables: MappingTables, name: str, version: str) -> tuple[int, int] | None:
    mapping = tables.names.conda_for_pypi(name)
    assert mapping is not None, f"{name} is not in names.yaml"
    if mapping.cuda is None:
        return None
    return mapping.cuda.cuda_of(Version(version).release)


def published_components(corpus: Path) -> Iterator[tuple[str, str, int]]:
    """(pypi name, version, CUDA major of its variant) for every nvidia-* variant wheel listed."""
    for page in sorted((corpus / INDEX).glob("nvidia-*/index.html")):
        for match in _WHEEL_RE.finditer(page.read_text()):
            name = match["name"].replace("_", "-")
            variants = page.parent / f"{match['name']}-{match['version']}-variants.json"
            document = json.loads(variants.read_text())
            (bound,) = document["variants"][match["label"]]["nvidia"]["cuda_version_lower_bound"]
            yield name, match["version"], int(bound.split(".")[0])


def test_every_published_component_version_maps_to_its_variants_cuda_major(
    tables: MappingTables, corpus: Path
) -> None:
    seen: dict[str, set[str]] = {}
    without_rule: set[str] = set()
    for name, version, major in published_components(corpus):
        cuda = cuda_of(tables, name, version)
        if tables.names.conda_for_pypi(name).cuda is None:  # type: ignore[union-attr]
            without_rule.add(name)
            continue
        assert cuda is not None, f"names.yaml has no CUDA release for {name} {version}"
        assert cuda[0] == major, (name, version, cuda, major)
        seen.setdefault(name, set()).add(version)
    # Every versioned component of the index was checked; the rest are the documented ones.
    assert len(seen) == 11
    assert sum(len(v) for v in seen.values()) == 65
    assert without_rule == {"nvidia-cudnn", "nvidia-cusparselt", "nvidia-nccl", "nvidia-nvshmem"}


def test_unversioned_components_publish_one_version_for_several_majors(corpus: Path) -> None:
    """Why cuDNN pins give no CUDA minor: the same cuDNN version is published for cu12 and cu13."""
    majors: dict[tuple[str, str], set[int]] = {}
    for name, version, major in published_components(corpus):
        majors.setdefault((name, version), set()).add(major)
    assert majors[("nvidia-cudnn", "9.13.0.50")] == {12, 13}


def declared_pins(corpus: Path) -> Iterator[tuple[str, str, str]]:
    config = corpus / "maint/variant-repack/torch-2.10_variant_config.toml"
    document = tomlkit.parse(config.read_text())
    for line in document["metadata_configs"]["torch"]["deps_add_list"]:  # type: ignore[index,union-attr]
        match = _PIN_RE.match(str(line))
        if match and match["name"].startswith("nvidia-"):
            yield match["name"], match["version"], match["label"]


@pytest.mark.parametrize(("label", "cuda"), [("cuda12.6", (12, 6)), ("cuda12.8", (12, 8)),
                                             ("cuda13.0", (13, 0))])  # fmt: skip
def test_torch_210_pins_of_one_build_say_its_cuda_minor(
    tables: MappingTables, corpus: Path, label: str, cuda: tuple[int, int]
) -> None:
    pins = [(name, version) for name, version, lab in declared_pins(corpus) if lab == label]
    assert len(pins) >= 11
    said = {name: cuda_of(tables, name, version) for name, version in pins}
    assert {name for name, minor in said.items() if minor is not None} == {
        "nvidia-cublas", "nvidia-cuda-cupti", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime",
        "nvidia-cufft", "nvidia-cufile", "nvidia-curand", "nvidia-cusolver", "nvidia-cusparse",
        "nvidia-nvjitlink", "nvidia-nvtx",
    }  # fmt: skip
    assert {minor for minor in said.values() if minor is not None} == {cuda}


@pytest.mark.parametrize(
    ("name", "version", "cuda"),
    [
        ("nvidia-cublas", "13.1.0.3", (13, 0)),  # CUDA 13.0 Update 2: not the 13.1 it looks like
        ("nvidia-cublas", "13.2.0.9", None),  # a newer release: a gap, never a guess
        ("nvidia-cublas-cu12", "12.4.5.8", (12, 4)),  # 12.x follows its release
        ("nvidia-cuda-runtime-cu12", "12.1.105", (12, 1)),
        ("nvidia-cuda-runtime", "12.8", (12, 8)),  # a ==12.8.* pin's prefix
        ("nvidia-cufft", "11.9.9.9", None),  # not a release the table lists
        ("nvidia-cudnn-cu12", "9.1.0.70", None),  # cuDNN: the name says 12, the version nothing
    ],
)
def test_cuda_of_a_version(
    tables: MappingTables, name: str, version: str, cuda: tuple[int, int] | None
) -> None:
    assert cuda_of(tables, name, version) == cuda


def test_unsuffixed_names_are_any_major_and_suffixed_ones_keep_theirs(
    tables: MappingTables,
) -> None:
    names = tables.names
    assert names.conda_for_pypi("nvidia-cublas").cuda_major is None  # type: ignore[union-attr]
    assert names.conda_for_pypi("nvidia-cudnn").conda == "libcudnn"  # type: ignore[union-attr]
    assert names.conda_for_pypi("nvidia-cudnn-cu13").cuda_major == 13  # type: ignore[union-attr]
