"""Fetching a tree's documents ahead (issue 23): concurrent but bounded, every document once,
and the same choices in the same order whatever the concurrency."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.environment import Environment, VirtualPackage
from variant_bridge.indexes import Downloads, Prefetch, SimpleIndex
from variant_bridge.indexes.simple import ACCEPT
from variant_bridge.indexes.sources import IndexStrategy
from variant_bridge.indexes.transport import WORKERS, Transport
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.select import parse_requests, select
from variant_bridge.jobs.target import Target
from variant_bridge.platform_tags import TargetPython, target_tags
from variant_bridge.translate import supported_properties

ENV = Environment("linux-64", (VirtualPackage("__glibc", "2.36"), VirtualPackage("__cuda", "12.9")))
PYTHON = TargetPython.parse("3.12")
MARKERS = {"python_version": "3.12", "sys_platform": "linux", "platform_system": "Linux"}


def _tree() -> dict[str, list[str]]:
    """root -> a0..a3 -> b00..b31 (each a has two b), b -> leaf shared by all: 14 projects."""
    requires = {"root": [f"a{i}" for i in range(4)]}
    for i in range(4):
        requires[f"a{i}"] = [f"b{i}{j}" for j in range(2)]
        for j in range(2):
            requires[f"b{i}{j}"] = ["leaf>=1"]
    requires["leaf"] = []
    return requires


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    for project, deps in _tree().items():
        for version in ("1.0", "2.0"):
            make_wheel(root, project, version, requires=deps)
    # One variant project in the tree: its variants are read by the resolver, not ahead.
    make_release(
        root, "gpu", "1.0",
        {"cu129": ["nvidia :: cuda_version_lower_bound :: 12.9"], "null": []},
    )  # fmt: skip
    make_wheel(root, "top", "1.0", requires=["root", "gpu"])
    return root


def _select(index: IndexServer, workers: int) -> list[tuple[str, str, str | None]]:
    target = Target(ENV, PYTHON, supported_properties(ENV))
    transport = Transport(workers=workers)
    with transport, Downloads.temporary(transport=transport) as downloads:
        ctx = Context(Sources((SimpleIndex.parse(index.url),)), downloads, target)
        choices = select(parse_requests(["top"]), ctx)
    return [(c.files.project, c.files.version, c.selected and c.selected.name) for c in choices]


def test_a_tree_is_chosen_alike_and_each_document_fetched_once(root: Path) -> None:
    with IndexServer(root, core_metadata=True, latency=0.02) as index:
        one_at_a_time = _select(index, workers=1)
        index.requests.clear()
        index.most_at_once = 0
        concurrent = _select(index, workers=WORKERS)
        asked = Counter(r.path for r in index.requests)
        assert index.most_at_once <= WORKERS + 1  # the pool, and the resolver's own request
    assert concurrent == one_at_a_time  # the same packages, versions and files, in order
    assert [p for p, _, _ in concurrent][:3] == ["top", "gpu", "root"]
    assert len(concurrent) == 16
    assert all(version == "2.0" for p, version, _ in concurrent if p not in ("top", "gpu"))
    assert [path for path, count in asked.items() if count > 1] == []  # nothing twice
    # The variant project's wheels are read by the resolver, as the target's properties say.
    assert "/files/gpu-1.0-py3-none-any-null.whl.metadata" not in asked


def test_prefetched_documents_wait_for_the_resolver(root: Path) -> None:
    with IndexServer(root, core_metadata=True) as index, Transport() as transport:
        prefetch = Prefetch(
            [SimpleIndex.parse(index.url)], python=Version("3.12"),
            strategy=IndexStrategy.FIRST_INDEX, tags=frozenset(target_tags(PYTHON, ENV)),
            markers=MARKERS, transport=transport,
        )  # fmt: skip
        prefetch.projects([("b00", SpecifierSet(">=1"))])
        prefetch.projects([("B00", SpecifierSet())])  # once per project
        prefetch.wait()
        assert prefetch.started == 2  # b00, then the leaf it requires
        fetched = sorted(index.paths_requested())
        assert fetched == [
            "/files/b00-2.0-py3-none-any.whl.metadata",
            "/files/leaf-2.0-py3-none-any.whl.metadata",
            "/simple/b00/",
            "/simple/leaf/",
        ]
        before = len(index.requests)
        page = transport.get(f"{index.url}b00/", accept=ACCEPT)
        assert page is not None
        assert len(index.requests) == before  # taken from what was fetched ahead


def test_a_releases_variant_metadata_is_asked_for_at_once_and_once(root: Path) -> None:
    from variant_bridge.indexes import CoreMetadataReader, find_files

    with IndexServer(root, core_metadata=True) as index, Transport() as transport:
        with Downloads.temporary(transport=transport) as downloads:
            files = find_files(
                "gpu", [SimpleIndex.parse(index.url)], spec=SpecifierSet(),
                python=Version("3.12"), downloads=downloads,
            )  # fmt: skip
            reader = CoreMetadataReader(downloads)
            wheels = [c for c in files.candidates if c.label is not None]
            assert len(wheels) == 2
            reader.prefetch(wheels)
            read = [reader.read(c) for c in wheels]
        asked = [p for p in index.paths_requested() if p.endswith(".metadata")]
    assert sorted(asked) == sorted(f"/files/{c.name}.metadata" for c in wheels)
    assert [m.name if m else None for m in read] == ["gpu", "gpu"]
