"""Downloads: hash-checked, atomic (never a partial file), one-line errors."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from tests.indexes.conftest import World
from tests.worlds.index_server import IndexServer, closed_port_url
from variant_bridge.errors import HashMismatch, IndexReadError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import Candidate, download
from variant_bridge.indexes.download import file_sha256
from variant_bridge.indexes.transport import Transport

WHEEL = "tinyvar-1.0.0-py3-none-any-cu128.whl"


def candidate(url: str, sha256: str | None = None, name: str = WHEEL) -> Candidate:
    return Candidate(WheelFilename.parse(name), url, source="test", sha256=sha256)


def real_hash(world: World, name: str = WHEEL) -> str:
    return hashlib.sha256((world.root / name).read_bytes()).hexdigest()


def test_http_download_checks_the_hash(world: World, index: IndexServer, tmp_path: Path) -> None:
    path = download(
        candidate(index.file_url(WHEEL), real_hash(world)), tmp_path / "dl", transport=Transport()
    )
    assert path == tmp_path / "dl" / WHEEL
    assert path.read_bytes() == (world.root / WHEEL).read_bytes()
    assert [p.name for p in path.parent.iterdir()] == [WHEEL]


def test_hash_mismatch_leaves_nothing(world: World, index: IndexServer, tmp_path: Path) -> None:
    wrong = "0" * 64
    with pytest.raises(HashMismatch) as raised:
        download(candidate(index.file_url(WHEEL), wrong), tmp_path, transport=Transport())
    assert str(raised.value) == (
        f"hash mismatch for {WHEEL} from {index.file_url(WHEEL)}: expected sha256 {wrong}, "
        f"got {real_hash(world)}"
    )
    assert list(tmp_path.iterdir()) == []


def test_file_url_is_copied_and_checked(world: World, tmp_path: Path) -> None:
    url = (world.root / WHEEL).as_uri()
    assert (
        download(candidate(url), tmp_path / "a", transport=Transport()).read_bytes()
        == (world.root / WHEEL).read_bytes()
    )
    with pytest.raises(HashMismatch, match="hash mismatch"):
        download(candidate(url, "f" * 64), tmp_path / "b", transport=Transport())
    assert list((tmp_path / "b").iterdir()) == []


def test_existing_file_with_the_right_hash_is_reused(
    world: World, index: IndexServer, tmp_path: Path
) -> None:
    c = candidate(index.file_url(WHEEL), real_hash(world))
    download(c, tmp_path, transport=Transport())
    before = len(index.requests)
    download(c, tmp_path, transport=Transport())
    assert index.requests[before:] == []


def test_existing_file_with_other_content_is_replaced(
    world: World, index: IndexServer, tmp_path: Path
) -> None:
    (tmp_path / WHEEL).write_bytes(b"stale")
    path = download(
        candidate(index.file_url(WHEEL), real_hash(world)), tmp_path, transport=Transport()
    )
    assert file_sha256(path) == real_hash(world)


@pytest.mark.parametrize(
    ("make_url", "reason"),
    [
        (lambda index: index.file_url("nosuch-1.0-py3-none-any.whl"), "HTTP 404 Not Found"),  # gone
        (lambda index: closed_port_url() + "x.whl", "connection refused (3 retries)"),  # down
    ],
)  # fmt: skip
def test_fetch_errors_name_the_url(
    index: IndexServer, tmp_path: Path, make_url: object, reason: str
) -> None:
    url = make_url(index)  # type: ignore[operator]
    with pytest.raises(IndexReadError) as raised:
        download(
            candidate(url, name="nosuch-1.0-py3-none-any.whl"), tmp_path, transport=Transport()
        )
    assert str(raised.value) == f"cannot fetch {url}: {reason}"
    assert list(tmp_path.iterdir()) == []


def test_missing_local_file(tmp_path: Path) -> None:
    url = (tmp_path / WHEEL).as_uri()
    with pytest.raises(IndexReadError, match=r"cannot read .*: no such file or directory"):
        download(candidate(url), tmp_path / "dl", transport=Transport())


def test_served_wrong_hash_is_caught(world: World, index: IndexServer, tmp_path: Path) -> None:
    from variant_bridge.indexes import find_candidates

    with index.configured(wrong_hash=frozenset({WHEEL})):
        files = find_candidates(
            "tinyvar", index_urls=[index.url], python_version="3.11", transport=Transport()
        )
    tampered = files.candidate(WHEEL)
    assert tampered is not None
    assert tampered.sha256 != real_hash(world)
    with pytest.raises(HashMismatch, match=f"got {real_hash(world)}"):
        download(tampered, tmp_path, transport=Transport())
    assert list(tmp_path.iterdir()) == []
    ok = files.candidate("tinyvar-1.0.0-py3-none-any.whl")
    assert ok is not None
    assert download(dataclasses.replace(ok), tmp_path, transport=Transport()).name == ok.name
