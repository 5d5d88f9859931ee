"""Find-links locations: directories, file:// URLs and HTML pages of links."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.indexes.conftest import World
from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_wheel
from variant_bridge.errors import IndexReadError
from variant_bridge.indexes import ProblemKind
from variant_bridge.indexes.findlinks import list_find_links, location_name, wheel_requires_python
from variant_bridge.indexes.transport import Transport


def test_directory_lists_every_file_with_requires_python(world: World) -> None:
    files = {f.filename: f for f in list_find_links(world.root, transport=Transport())}
    assert len(files) == len(list(world.root.iterdir()))
    wheel = files["tinyvar-1.1.0-py3-none-any-cu128.whl"]
    assert wheel.requires_python == ">=3.99"  # read from the wheel's METADATA
    assert wheel.path == world.root / wheel.filename
    assert wheel.url == wheel.path.as_uri()
    assert (wheel.flat, wheel.sha256, wheel.yanked, wheel.problem) == (True, None, None, None)
    assert files["tinyvar-1.0.0-py3-none-any.whl"].requires_python is None
    assert files["tinyvar-1.0.0.tar.gz"].requires_python is None


def test_only_the_projects_wheels_are_opened(world: World) -> None:
    files = {
        f.filename: f for f in list_find_links(world.root, project="TinyVar", transport=Transport())
    }
    assert files["tinyvar-1.1.0-py3-none-any.whl"].requires_python == ">=3.99"
    assert files["brokenvar-1.0.0-py3-none-any-bad.whl"].problem is None  # not opened


def test_file_url_equals_path(world: World) -> None:
    assert list_find_links(world.root.as_uri(), transport=Transport()) == list_find_links(
        world.root, transport=Transport()
    )


def test_hidden_and_partial_files_are_ignored(tmp_path: Path) -> None:
    make_wheel(tmp_path, "hid", "1.0")
    # what an interrupted download leaves behind must never be offered
    (tmp_path / ".hid-1.0-py3-none-any.whl.abc.part").write_bytes(b"partial")
    (tmp_path / "sub").mkdir()
    assert [f.filename for f in list_find_links(tmp_path, transport=Transport())] == [
        "hid-1.0-py3-none-any.whl"
    ]


def test_unreadable_wheel_gets_a_problem(tmp_path: Path) -> None:
    (tmp_path / "bad-1.0-py3-none-any.whl").write_bytes(b"no zip")
    (file,) = list_find_links(tmp_path, transport=Transport())
    assert file.problem is not None
    assert file.problem.kind is ProblemKind.UNREADABLE_WHEEL
    assert file.problem.text.startswith("not a readable wheel")


@pytest.mark.parametrize(
    ("requires_python", "expected"),
    [
        (None, None),  # no Requires-Python header
        (">=3.10", ">=3.10"),  # read as written
        ("  >=3.9, <4  ", ">=3.9, <4"),  # surrounding blanks trimmed
    ],
)
def test_wheel_requires_python(
    tmp_path: Path, requires_python: str | None, expected: str | None
) -> None:
    wheel = make_wheel(tmp_path, "rp", "1.0", requires_python=requires_python)
    assert wheel_requires_python(wheel) == expected


def test_links_page(world: World, index: IndexServer) -> None:
    files = {f.filename: f for f in list_find_links(index.links_url, transport=Transport())}
    assert set(files) == {p.name for p in world.root.iterdir()}
    wheel = files["tinyvar-1.1.0-py3-none-any.whl"]
    assert wheel.url == index.file_url(wheel.filename)
    assert wheel.requires_python == ">=3.99"
    assert wheel.sha256 is not None
    assert wheel.flat
    assert wheel.source == index.links_url


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", r"find-links directory '.*/missing' does not exist"),  # typo
        (lambda p: make_wheel(p, "w", "1.0"), r"location '.*\.whl' is not a directory"),  # a file
    ],
)  # fmt: skip
def test_bad_locations(tmp_path: Path, make: object, message: str) -> None:
    location = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(IndexReadError, match=message):
        list_find_links(location, transport=Transport())


def test_location_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert location_name("wheels") == str(tmp_path / "wheels")
    assert location_name(tmp_path.as_uri()) == str(tmp_path)
    assert location_name("http://h/links/") == "http://h/links/"
