"""Layer 2: a wheel's core metadata from a loopback index: PEP 658 when advertised, else HTTP
range requests, else (when allowed) the wheel; never an unadvertised ``.metadata`` file."""

from __future__ import annotations

import io
import os
import random
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_wheel
from variant_bridge.errors import IndexReadError, InvalidMetadata, SelectionError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import (
    Candidate,
    CoreMetadataReader,
    Downloads,
    MetadataSource,
    find_candidates,
)
from variant_bridge.indexes.core_metadata import MAX_CORE_METADATA
from variant_bridge.indexes.ranges import RangeFile, RangesNotSupported
from variant_bridge.indexes.transport import Transport

REQUIRES = ("nvidia-cublas==12.8.4.1; variant_label == 'cu128'", "filelock")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    # ~1 MB of incompressible payload: reading the whole wheel would show in the byte counts.
    payload = {f"big/part{i}.bin": os.urandom(50_000) for i in range(20)}
    make_wheel(root, "big", "1.0", requires=REQUIRES, files=payload)
    make_wheel(root, "small", "1.0", requires=REQUIRES)
    return root


@pytest.fixture
def index(wheels: Path) -> Iterator[IndexServer]:
    with IndexServer(wheels) as server:
        yield server


def candidate(index: IndexServer, project: str) -> Candidate:
    (found,) = find_candidates(
        project, index_urls=[index.url], python_version="3.12", transport=Transport()
    ).candidates
    index.requests.clear()
    return found


def files_requested(index: IndexServer) -> list[tuple[str, str | None, int]]:
    return [(r.path.removeprefix("/files/"), r.range, r.status) for r in index.requests]


def test_pep658_metadata_is_read_when_advertised(index: IndexServer) -> None:
    with (
        index.configured(core_metadata=True),
        Downloads.temporary(transport=Transport()) as downloads,
    ):
        found = candidate(index, "big")
        assert found.core_metadata
        reader = CoreMetadataReader(downloads)
        metadata = reader.read(found)
        assert reader.read(found) is metadata  # once per command
    assert metadata is not None
    assert (metadata.source, metadata.requires_dist) == (MetadataSource.PEP658, REQUIRES)
    assert files_requested(index) == [("big-1.0-py3-none-any.whl.metadata", None, 200)]


def test_without_pep658_the_wheel_is_read_by_ranges_and_never_whole(index: IndexServer) -> None:
    with Downloads.temporary(transport=Transport()) as downloads:
        found = candidate(index, "big")
        assert not found.core_metadata
        metadata = CoreMetadataReader(downloads).read(found)
    assert metadata is not None
    assert (metadata.source, metadata.requires_dist) == (MetadataSource.RANGES, REQUIRES)
    requested = files_requested(index)
    assert not any(path.endswith(".metadata") for path, _, _ in requested)  # unadvertised
    assert all(status == 206 for _, _, status in requested)
    assert sum(r.sent for r in index.requests) < (found.size or 0) / 5


def test_a_server_without_ranges_gives_nothing_unless_a_download_is_allowed(
    index: IndexServer,
) -> None:
    with index.configured(ranges=False), Downloads.temporary(transport=Transport()) as downloads:
        found = candidate(index, "small")
        assert CoreMetadataReader(downloads).read(found) is None
        allowed = CoreMetadataReader(downloads, download_wheels=True)
        metadata = allowed.read(found)
        assert metadata is not None
        assert metadata.source is MetadataSource.DOWNLOAD
        assert downloads.fetched(found) is not None  # install will find it there
        # Read again in the same command: the downloaded copy, locally.
        assert CoreMetadataReader(downloads).read(found).source is MetadataSource.LOCAL  # type: ignore[union-attr]


def test_find_links_wheels_are_read_locally(wheels: Path) -> None:
    (found,) = find_candidates(
        "small", find_links=[wheels], python_version="3.12", transport=Transport()
    ).candidates
    with Downloads.temporary(transport=Transport()) as downloads:
        metadata = CoreMetadataReader(downloads).read(found)
    assert metadata is not None
    assert metadata.source is MetadataSource.LOCAL


def test_a_metadata_file_that_does_not_match_its_hash_is_refused(
    index: IndexServer, wheels: Path
) -> None:
    with (
        index.configured(core_metadata=True),
        Downloads.temporary(transport=Transport()) as downloads,
    ):
        found = candidate(index, "small")
        lying = Candidate(found.filename, found.url, found.source, core_metadata=True,
                          core_metadata_sha256="0" * 64)  # fmt: skip
        with pytest.raises(InvalidMetadata, match="does not match"):
            CoreMetadataReader(downloads).read(lying)


def test_a_huge_metadata_is_refused_with_its_size(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "huge", "1.0")
    # The same wheel, its METADATA grown past the cap (deflated, the file stays small).
    huge = tmp_path / "out"
    huge.mkdir()
    target = huge / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("METADATA"):
                data += b"Summary: x\n" * (MAX_CORE_METADATA // 11 + 1)
            dst.writestr(info.filename, data)
    found = Candidate(WheelFilename.parse(wheel.name), target.as_uri(), str(huge))
    with (
        Downloads.temporary(transport=Transport()) as downloads,
        pytest.raises(InvalidMetadata) as info,
    ):
        CoreMetadataReader(downloads).read(found)
    assert f"more than the {MAX_CORE_METADATA} read: refused" in str(info.value)
    # Listed from the find-links directory, it is no candidate at all (issue 22).
    with pytest.raises(SelectionError, match=r"METADATA is \d+ bytes, more than the 16777216"):
        find_candidates("huge", find_links=[huge], python_version="3.12", transport=Transport())


def test_range_file_reads_any_span_like_the_file(index: IndexServer, wheels: Path) -> None:
    data = (wheels / "big-1.0-py3-none-any.whl").read_bytes()
    remote = RangeFile(index.file_url("big-1.0-py3-none-any.whl"), transport=Transport())
    assert remote.size == len(data)
    spans = random.Random(7)
    for _ in range(50):
        start = spans.randrange(len(data))
        length = spans.randrange(1, 200_000)
        remote.seek(start)
        assert remote.read(length) == data[start : start + length]
    assert remote.fetched <= len(data) + remote.block  # each byte fetched about once
    with zipfile.ZipFile(io.BufferedReader(remote)) as archive:
        assert "big-1.0.dist-info/METADATA" in archive.namelist()


def test_range_file_refuses_a_server_without_ranges(index: IndexServer) -> None:
    with index.configured(ranges=False), pytest.raises(RangesNotSupported):
        RangeFile(index.file_url("small-1.0-py3-none-any.whl"), transport=Transport())


def test_range_file_stops_at_its_cap(index: IndexServer) -> None:
    remote = RangeFile(
        index.file_url("big-1.0-py3-none-any.whl"), max_bytes=100_000, transport=Transport()
    )
    remote.seek(0)
    with pytest.raises(IndexReadError, match="needs more than 100000 bytes"):
        remote.read(200_000)
