"""find_candidates: the same answer from a directory and from an index in both forms; metadata
from variants.json or the wheels; skipping like pip/uv; one-line errors."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.indexes.conftest import CU126, CU128, DIALECTS, World
from tests.worlds.index_server import IndexServer, closed_port_url
from variant_bridge.errors import (
    HashMismatch,
    IndexReadError,
    InvalidMetadata,
    InvalidTarget,
    SelectionError,
)
from variant_bridge.indexes import PackageFiles, find_candidates
from variant_bridge.indexes.transport import Transport
from variant_bridge.properties import VariantDescription

PY = "3.11"
Finder = Callable[..., PackageFiles]
SOURCES = ("find-links dir", "find-links file URL", "index JSON", "index HTML", "links page")


@pytest.fixture(params=SOURCES)
def find(request: pytest.FixtureRequest, world: World, index: IndexServer) -> Finder:
    """find_candidates against one kind of source holding the same files."""
    kind: str = request.param

    def run(project: str, **kwargs: Any) -> PackageFiles:
        kwargs.setdefault("python_version", PY)
        if kind == "find-links dir":
            return find_candidates(
                project, find_links=[world.root], **kwargs, transport=Transport()
            )
        if kind == "find-links file URL":
            return find_candidates(
                project, find_links=[world.root.as_uri()], **kwargs, transport=Transport()
            )
        if kind == "links page":
            return find_candidates(
                project, find_links=[index.links_url], **kwargs, transport=Transport()
            )
        forms = ("json", "html") if kind == "index JSON" else ("html",)
        with index.configured(forms=forms):
            return find_candidates(project, index_urls=[index.url], **kwargs, transport=Transport())

    return run


def reasons(files: PackageFiles) -> dict[str, str]:
    """Skipped filename -> the reason in words."""
    return {s.filename: s.reason for s in files.skipped}


def summary(files: PackageFiles) -> dict[str, Any]:
    """What must not depend on where the files came from."""
    return {
        "project": files.project,
        "version": files.version,
        "candidates": [
            (c.name, c.label, c.variant, c.problem, c.requires_python, c.yanked)
            for c in files.candidates
        ],
        "labels": files.metadata.labels if files.metadata else None,
        "skipped": files.skipped,
    }


def desc(label: str, props: tuple[str, ...]) -> VariantDescription:
    return VariantDescription.parse(f"{label}: {'; '.join(props)}")


# -- the same PackageFiles whatever the source ------------------------------------------------


@pytest.mark.parametrize(
    "project",
    [
        "tinyvar",  # full variants.json; skipped sdist, bad label, requires-python
        "partvar",  # labels missing from the index file read from their wheels
        "nojson",  # no index file: every label from its wheel
    ],
)
def test_every_source_gives_the_same_files(project: str, world: World, index: IndexServer) -> None:
    reference = summary(
        find_candidates(project, find_links=[world.root], python_version=PY, transport=Transport())
    )
    for forms in (("json", "html"), ("html",)):
        with index.configured(forms=forms):
            served = find_candidates(
                project, index_urls=[index.url], python_version=PY, transport=Transport()
            )
        assert summary(served) == reference, forms
    links = find_candidates(
        project, find_links=[index.links_url], python_version=PY, transport=Transport()
    )
    assert summary(links) == reference


def test_full_release_resolves_every_label(find: Finder) -> None:
    files = find("TinyVar")  # any spelling of the name
    assert (files.project, files.version) == ("tinyvar", "1.0.0")
    assert [(c.label, c.variant) for c in files.candidates] == [
        ("cu126", desc("cu126", CU126)),
        ("cu128", desc("cu128", CU128)),
        ("null", VariantDescription.null()),
        (None, None),
    ]
    assert all(c.problem is None for c in files.candidates)
    assert files.metadata is not None
    assert files.metadata.labels == ("cu126", "cu128", "null")
    assert files.metadata_sources[0].endswith("tinyvar-1.0.0-variants.json")


def test_index_candidates_carry_the_served_hash(world: World, index: IndexServer) -> None:
    files = find_candidates(
        "tinyvar", index_urls=[index.url], python_version=PY, transport=Transport()
    )
    for c in files.candidates:
        assert c.url == index.file_url(c.name)
        assert c.sha256 == hashlib.sha256((world.root / c.name).read_bytes()).hexdigest()
        assert c.source == index.url


def test_find_links_candidates_point_at_the_files(world: World) -> None:
    files = find_candidates(
        "tinyvar", find_links=[world.root], python_version=PY, transport=Transport()
    )
    assert [c.url for c in files.candidates] == [
        (world.root / c.name).as_uri() for c in files.candidates
    ]
    assert {c.source for c in files.candidates} == {str(world.root)}
    assert files.sources == (str(world.root),)


# -- skipping ---------------------------------------------------------------------------------


def test_skipped_files_say_why(find: Finder) -> None:
    skipped = reasons(find("tinyvar"))
    assert skipped["tinyvar-1.0.0.tar.gz"] == "not a wheel (source distributions are not built)"
    assert "variant label 'CU128'" in skipped["tinyvar-1.0.0-py3-none-any-CU128.whl"]
    assert skipped["tinyvar-1.1.0-py3-none-any.whl"] == (
        "requires-python '>=3.99' excludes Python 3.11"
    )
    assert "tinyvar-0.9.tar.gz" not in skipped  # older than the chosen version: not news


@pytest.mark.parametrize(
    ("version", "python", "expected"),
    [
        (None, "3.11", "1.0.0"),  # 1.1.0 needs a newer Python: the best usable version wins
        (None, "3.99", "1.1.0"),  # ...and is chosen when the target interpreter allows it
        ("==1.0.0", "3.99", "1.0.0"),  # an exact pin
        ("1.0.0", "3.99", "1.0.0"),  # a bare version means ==
        (">=1,<1.1", "3.99", "1.0.0"),  # a specifier range
        ("~=1.0", "3.99", "1.1.0"),  # compatible release picks the highest
    ],
)
def test_version_choice(find: Finder, version: str | None, python: str, expected: str) -> None:
    assert find("tinyvar", version=version, python_version=python).version == expected


def test_yanked_files_are_skipped_unless_pinned(index: IndexServer) -> None:
    yanked = {
        "yankvar-2.0.0-py3-none-any.whl": "broken build",
        "yankvar-2.0.0-py3-none-any-cu128.whl": True,
    }
    with index.configured(yanked=yanked):
        latest = find_candidates(
            "yankvar", index_urls=[index.url], python_version=PY, transport=Transport()
        )
        pinned = find_candidates(
            "yankvar",
            index_urls=[index.url],
            version="==2.0.0",
            python_version=PY,
            transport=Transport(),
        )
        with pytest.raises(SelectionError, match=r"yankvar-2\.0\.0-py3-none-any\.whl: yanked"):
            find_candidates(
                "yankvar",
                index_urls=[index.url],
                version=">=2",
                python_version=PY,
                transport=Transport(),
            )
    assert latest.version == "1.0.0"
    assert reasons(latest) == {
        "yankvar-2.0.0-py3-none-any-cu128.whl": "yanked",
        "yankvar-2.0.0-py3-none-any.whl": "yanked (broken build)",
    }
    # PEP 592: an exact pin may use yanked files, which keep their mark for the report.
    assert pinned.version == "2.0.0"
    assert {c.label: c.yanked for c in pinned.candidates} == {"cu128": True, None: "broken build"}
    assert all(c.is_yanked for c in pinned.candidates)


def test_requires_python_from_the_index_overrides(index: IndexServer) -> None:
    override = {"tinyvar-1.0.0-py3-none-any-cu126.whl": "<3"}
    with index.configured(requires_python=override):
        files = find_candidates(
            "tinyvar", index_urls=[index.url], python_version=PY, transport=Transport()
        )
    assert "cu126" not in files.labels
    assert reasons(files)["tinyvar-1.0.0-py3-none-any-cu126.whl"] == (
        "requires-python '<3' excludes Python 3.11"
    )


# -- variant metadata -------------------------------------------------------------------------


def test_variants_json_spares_wheel_downloads(index: IndexServer) -> None:
    before = len(index.requests)
    find_candidates("tinyvar", index_urls=[index.url], python_version=PY, transport=Transport())
    fetched = [r.path for r in index.requests[before:]]
    assert fetched == ["/simple/tinyvar/", "/files/tinyvar-1.0.0-variants.json"]


def test_labels_missing_from_the_index_file_come_from_their_wheels(index: IndexServer) -> None:
    before = len(index.requests)
    files = find_candidates(
        "partvar", index_urls=[index.url], python_version=PY, transport=Transport()
    )
    fetched = [r.path for r in index.requests[before:]]
    # one wheel per missing label, none for a label the index file has or the plain wheel
    assert fetched == [
        "/simple/partvar/",
        "/files/partvar-1.0.0-variants.json",
        "/files/partvar-1.0.0-py3-none-any-cu126.whl",
        "/files/partvar-1.0.0-py3-none-any-null.whl",
    ]
    assert {c.label: c.variant for c in files.candidates if c.label} == {
        "cu126": desc("cu126", CU126),
        "cu128": desc("cu128", CU128),
        "null": VariantDescription.null(),
    }
    assert files.metadata_sources == tuple(
        index.file_url(name)
        for name in (
            "partvar-1.0.0-variants.json",
            "partvar-1.0.0-py3-none-any-cu126.whl",
            "partvar-1.0.0-py3-none-any-null.whl",
        )
    )


def test_the_smallest_wheel_of_a_label_is_downloaded(index: IndexServer) -> None:
    before = len(index.requests)
    files = find_candidates(
        "sizevar", index_urls=[index.url], python_version=PY, transport=Transport()
    )
    assert index.paths_requested()[before:] == [
        "/simple/sizevar/",
        "/files/sizevar-1.0-py3-none-any-cu128.whl",  # not the 256 KiB cp311 one
    ]
    assert {c.variant for c in files.candidates} == {desc("cu128", CU128)}


def test_variant_json_read_by_ranges_is_cached_for_the_next_command(
    index: IndexServer, tmp_path: Path
) -> None:
    before = len(index.requests)
    cold = find_candidates(
        "nojson",
        index_urls=[index.url],
        python_version=PY,
        cache_dir=tmp_path,
        transport=Transport(),
    )
    # each wheel's tail only (its central directory and .dist-info), never a whole wheel
    assert all(r.range for r in index.requests[before:] if r.path.startswith("/files/"))
    assert not (tmp_path / "wheels").exists()
    before = len(index.requests)
    warm = find_candidates(
        "nojson",
        index_urls=[index.url],
        python_version=PY,
        cache_dir=tmp_path,
        transport=Transport(),
    )
    assert index.paths_requested()[before:] == ["/simple/nojson/"]
    assert warm.candidates == cold.candidates


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("with_index_file", [True, False], ids=["variants.json", "wheels"])
def test_every_dialect_is_read(find: Finder, dialect: str, with_index_file: bool) -> None:
    project = f"dia-{dialect}" if with_index_file else f"dia-{dialect}-wheels"
    files = find(project)
    assert files.metadata is not None
    assert files.metadata.dialect == dialect
    assert {c.label: c.variant for c in files.candidates} == {
        "cu126": desc("cu126", CU126),
        "cu128": desc("cu128", CU128),
        "null": VariantDescription.null(),
        None: None,
    }
    expect_providers = () if dialect == "pep825" else ("nvidia",)
    assert tuple(p.namespace for p in files.metadata.providers) == expect_providers


def test_a_wheel_whose_metadata_lacks_its_label_is_kept_with_a_problem(find: Finder) -> None:
    files = find("brokenvar")
    broken = next(c for c in files.candidates if c.label == "cu130")
    assert broken.variant is None
    assert broken.problem is not None
    assert "'other' does not match the wheel filename's label 'cu130'" in broken.problem.text
    assert "brokenvar-1.0.0-py3-none-any-cu130.whl" in broken.problem.text
    good = next(c for c in files.candidates if c.label == "cu128")
    assert (good.variant, good.problem) == (desc("cu128", CU128), None)


def test_a_corrupt_wheel_in_a_directory_is_skipped(world: World) -> None:
    files = find_candidates(
        "brokenvar", find_links=[world.root], python_version=PY, transport=Transport()
    )
    assert "bad" not in files.labels
    assert "not a readable wheel" in reasons(files)["brokenvar-1.0.0-py3-none-any-bad.whl"]


def test_a_corrupt_wheel_on_an_index_is_a_problem_once_read(index: IndexServer) -> None:
    files = find_candidates(
        "brokenvar", index_urls=[index.url], python_version=PY, transport=Transport()
    )
    bad = next(c for c in files.candidates if c.label == "bad")
    assert bad.variant is None
    assert bad.problem is not None
    assert index.file_url("brokenvar-1.0.0-py3-none-any-bad.whl") in bad.problem.text
    assert "not a readable wheel" in bad.problem.text


def test_index_file_and_directory_metadata_are_merged(world: World, index: IndexServer) -> None:
    # partvar's index file (cu128) comes from the index; the directory holds every wheel.
    files = find_candidates(
        "partvar",
        find_links=[world.root],
        index_urls=[index.url],
        python_version=PY,
        transport=Transport(),
    )
    assert files.metadata is not None
    assert files.metadata.labels == ("cu126", "cu128", "null")
    assert files.sources == (str(world.root), index.url)
    assert {c.source for c in files.candidates} == {str(world.root)}  # first source wins


# -- errors -----------------------------------------------------------------------------------


def test_unknown_project_names_the_sources(world: World, index: IndexServer) -> None:
    with pytest.raises(SelectionError) as raised:
        find_candidates(
            "nosuch",
            find_links=[world.root],
            index_urls=[index.url],
            python_version=PY,
            transport=Transport(),
        )
    message = str(raised.value)
    assert message.startswith(f"no files for 'nosuch' in {world.root}, {index.url}")
    assert f"{index.url}nosuch/: HTTP 404 Not Found" in message
    assert "\n" not in message


def test_unreachable_index_is_one_line_with_the_reason() -> None:
    url = closed_port_url()
    with pytest.raises(IndexReadError) as raised:
        find_candidates("tinyvar", index_urls=[url], python_version=PY, transport=Transport())
    assert str(raised.value) == f"cannot fetch {url}tinyvar/: connection refused (3 retries)"


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (500, "HTTP 500 Internal Server Error"),  # a server error is not "no such project"
        (403, "HTTP 403 Forbidden"),  # nor is a refused login
    ],
)
def test_index_errors_other_than_404_are_raised(
    index: IndexServer, status: int, reason: str
) -> None:
    with (
        index.configured(status={"/simple/tinyvar/": status}),
        pytest.raises(IndexReadError, match=re.escape(f"{index.url}tinyvar/: {reason}")),
    ):
        find_candidates("tinyvar", index_urls=[index.url], python_version=PY, transport=Transport())


def test_missing_variants_json_file_is_an_index_error(index: IndexServer) -> None:
    with (
        index.configured(status={"/files/tinyvar-1.0.0-variants.json": 404}),
        pytest.raises(IndexReadError, match=r"tinyvar-1\.0\.0-variants\.json: HTTP 404"),
    ):
        find_candidates("tinyvar", index_urls=[index.url], python_version=PY, transport=Transport())


def test_missing_find_links_directory(tmp_path: Path) -> None:
    with pytest.raises(IndexReadError, match=r"find-links directory '.*/nowhere' does not exist"):
        find_candidates(
            "tinyvar", find_links=[tmp_path / "nowhere"], python_version=PY, transport=Transport()
        )


def test_corrupt_variants_json_names_its_location(find: Finder) -> None:
    with pytest.raises(InvalidMetadata, match=r"badjson-1\.0\.0-variants\.json") as raised:
        find("badjson")
    assert "\n" not in str(raised.value)


def test_wrong_hash_of_a_wheel_read_for_metadata(index: IndexServer, tmp_path: Path) -> None:
    # Without range requests the wheel is downloaded whole to read it: then it is hash-checked.
    with (
        index.configured(
            wrong_hash=frozenset({"nojson-1.0.0-py3-none-any-cu128.whl"}), ranges=False
        ),
        pytest.raises(HashMismatch, match=r"hash mismatch for nojson-1\.0\.0-py3-none-any-cu128"),
    ):
        find_candidates(
            "nojson",
            index_urls=[index.url],
            python_version=PY,
            cache_dir=tmp_path,
            transport=Transport(),
        )
    assert not [p for p in tmp_path.rglob("*") if "cu128" in p.name]


NO_MATCH = r"no version of 'tinyvar' matches '==9' in .* \(available: 1\.0\.0, 1\.1\.0\)"
EXCLUDED = r"no usable wheel for 'tinyvar' .*requires-python '>=3\.99' excludes Python 3\.11"


def test_wrong_hash_of_the_variants_json(index: IndexServer) -> None:
    with (
        index.configured(wrong_hash=frozenset({"tinyvar-1.0.0-variants.json"})),
        pytest.raises(HashMismatch, match=r"hash mismatch for tinyvar-1\.0\.0-variants\.json"),
    ):
        find_candidates("tinyvar", index_urls=[index.url], python_version=PY, transport=Transport())


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"version": "==9"}, SelectionError, NO_MATCH),  # pin of a missing version
        ({"version": "==1.1.0"}, SelectionError, EXCLUDED),  # every file excluded, with reasons
        ({"version": "=>1"}, SelectionError, r"invalid version '=>1' for 'tinyvar'"),  # typo
        ({"python_version": "three"}, InvalidTarget, r"invalid Python version 'three'"),  # typo
    ],
)
def test_bad_requests(
    world: World, kwargs: dict[str, str], error: type[Exception], message: str
) -> None:
    kwargs = {"python_version": PY, **kwargs}
    with pytest.raises(error, match=message):
        find_candidates("tinyvar", find_links=[world.root], **kwargs, transport=Transport())  # type: ignore[arg-type]


def test_no_sources_at_all() -> None:
    with pytest.raises(SelectionError, match="no find-links directory or index URL"):
        find_candidates("tinyvar", python_version=PY, transport=Transport())
