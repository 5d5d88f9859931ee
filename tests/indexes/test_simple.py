"""Simple index pages: content negotiation, both forms parsed alike, file:// indexes, bad pages."""

from __future__ import annotations

import dataclasses
import json
import shutil
import urllib.request
from pathlib import Path

import pytest

from tests.indexes.conftest import World
from tests.worlds.index_server import HTML_TYPE, JSON_TYPE, IndexServer
from variant_bridge.errors import IndexReadError
from variant_bridge.indexes.download import Response, fetch
from variant_bridge.indexes.simple import (
    ACCEPT,
    list_project_files,
    parse_project_page,
    project_url,
)
from variant_bridge.indexes.transport import Transport


@pytest.mark.parametrize(
    ("index_url", "project", "expected"),
    [
        ("http://x/simple", "Foo_Bar", "http://x/simple/foo-bar/"),  # normalised name, one slash
        ("http://x/simple/", "foo.bar", "http://x/simple/foo-bar/"),  # trailing slash kept single
    ],
)
def test_project_url(index_url: str, project: str, expected: str) -> None:
    assert project_url(index_url, project) == expected


@pytest.mark.parametrize(
    ("accept", "forms", "content_type"),
    [
        (ACCEPT, ("json", "html"), JSON_TYPE),  # we prefer JSON when offered
        (ACCEPT, ("html",), "text/html"),  # and take a static HTML index as it is
        ("text/html", ("json", "html"), "text/html"),  # an old client still gets HTML
        (None, ("json", "html"), "text/html"),  # no preference: HTML (PEP 691)
        (f"{HTML_TYPE}, {JSON_TYPE};q=0.5", ("json", "html"), HTML_TYPE),  # q-values honoured
    ],
)
def test_content_negotiation(
    index: IndexServer, accept: str | None, forms: tuple[str, ...], content_type: str
) -> None:
    with index.configured(forms=forms):
        response = fetch(f"{index.url}tinyvar/", accept=accept, transport=Transport())
    assert response is not None
    assert response.content_type == content_type


def test_json_only_index_refuses_an_html_client(index: IndexServer) -> None:
    with (
        index.configured(forms=("json",)),
        pytest.raises(IndexReadError, match=r"tinyvar/: HTTP 406 Not Acceptable"),
    ):
        fetch(f"{index.url}tinyvar/", accept="text/html", transport=Transport())


def test_non_normalised_project_page_redirects(index: IndexServer) -> None:
    response = fetch(f"{index.url}TinyVar", accept=ACCEPT, transport=Transport())
    assert response is not None
    assert response.url == f"{index.url}tinyvar/"


def test_both_forms_list_the_same_files(index: IndexServer) -> None:
    yanked = {"tinyvar-1.0.0-py3-none-any-null.whl": "bad <null>", "tinyvar-1.0.0.tar.gz": True}
    with index.configured(yanked=yanked):
        as_json = list_project_files(index.url, "tinyvar", transport=Transport())
        with index.configured(forms=("html",)):
            as_html = list_project_files(index.url, "tinyvar", transport=Transport())
    assert as_json is not None
    assert as_html is not None
    # HTML has no sizes; everything else must agree, escaping included
    assert [dataclasses.replace(f, size=None) for f in as_json] == as_html
    by_name = {f.filename: f for f in as_html}
    assert by_name["tinyvar-1.0.0-py3-none-any-null.whl"].yanked == "bad <null>"
    assert by_name["tinyvar-1.0.0.tar.gz"].yanked is True
    assert by_name["tinyvar-1.1.0-py3-none-any.whl"].requires_python == ">=3.99"
    assert by_name["tinyvar-1.0.0-py3-none-any.whl"].requires_python is None
    # PEP 825 PR #5100: the index file carries no yanked / requires-python
    variants_file = by_name["tinyvar-1.0.0-variants.json"]
    assert (variants_file.yanked, variants_file.requires_python) == (None, None)
    assert all(f.sha256 and len(f.sha256) == 64 for f in as_html)
    assert all(f.url.startswith(f"{index.base}/files/") for f in as_html)


def test_unknown_project_is_none_not_an_error(index: IndexServer) -> None:
    assert list_project_files(index.url, "nosuch", transport=Transport()) is None


def test_file_index_reads_index_html(world: World, index: IndexServer, tmp_path: Path) -> None:
    # A static tree as `pip download`-style mirrors lay it out: simple/{project}/index.html.
    page = tmp_path / "simple" / "tinyvar" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(index.project_html("tinyvar"))
    shutil.copytree(world.root, tmp_path / "files")
    files = list_project_files((tmp_path / "simple").as_uri(), "tinyvar", transport=Transport())
    assert files is not None
    wheel = next(f for f in files if f.filename == "tinyvar-1.0.0-py3-none-any.whl")
    assert wheel.url == (tmp_path / "files" / wheel.filename).as_uri()
    assert (
        list_project_files((tmp_path / "simple").as_uri(), "nosuch", transport=Transport()) is None
    )


@pytest.mark.parametrize(
    ("content_type", "body", "message"),
    [
        (JSON_TYPE, b"{not json", r"invalid simple index page http://i/p/: "),  # broken JSON
        (JSON_TYPE, b'{"files": []}', r"invalid simple index page http://i/p/: "),  # no meta
        (JSON_TYPE, b'{"meta": {"api-version": "2.0"}, "name": "p", "files": []}', r"2\.0"),  # v2
        ("application/zip", b"PK", r"unsupported content type 'application/zip' from http://i/p/"),
    ],
)  # fmt: skip
def test_bad_pages_are_index_errors(content_type: str, body: bytes, message: str) -> None:
    response = Response("http://i/p/", body, content_type)
    with pytest.raises(IndexReadError, match=message) as raised:
        parse_project_page(response, "p", source="http://i/")
    assert "\n" not in str(raised.value)


def test_the_server_answers_real_urllib_clients(index: IndexServer) -> None:
    request = urllib.request.Request(index.url, headers={"Accept": JSON_TYPE})
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.headers.get_content_type() == JSON_TYPE
        assert b'"tinyvar"' in answer.read()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"size": "HUGE"}, "'size' must be a whole number of bytes, not a number of 5000 digits"),
        ({"size": True}, "'size' must be a whole number of bytes, not True"),
        ({"hashes": {"sha256": "xyz"}}, "its sha256 'xyz' is not 64 hex digits"),
        ({"hashes": ["sha256"]}, "'hashes' must map hash names to hex digests"),
        ({"yanked": 3}, "'yanked' must be true, false or a reason, not 3"),
        ({"url": "http://[::1/x.whl"}, "Invalid IPv6 URL"),
        ({"filename": None}, "no 'filename'"),
    ],
)  # fmt: skip
def test_one_unreadable_json_entry_is_one_skipped_file(
    change: dict[str, object], reason: str
) -> None:
    good = {"filename": "p-1.0-py3-none-any.whl", "url": "p-1.0-py3-none-any.whl", "hashes": {}}
    bad = {**good, "filename": "p-2.0-py3-none-any.whl", **change}
    page = {"meta": {"api-version": "1.1"}, "name": "p", "files": [bad, good]}
    body = json.dumps(page).encode().replace(b'"HUGE"', b"9" * 5000)
    files = parse_project_page(Response("http://i/p/", body, JSON_TYPE), "p", source="s")
    assert [f.problem.text if f.problem else None for f in files] == [
        f"an invalid entry on http://i/p/: {reason}",
        None,
    ]
    assert files[1].url == "http://i/p/p-1.0-py3-none-any.whl"


def test_html_links_follow_the_base_but_a_remote_page_never_points_home() -> None:
    body = (
        b'<html><head><base href="http://mirror/files/"></head><body>'
        b'<a href="p-1.0-py3-none-any.whl#sha256=' + b"A" * 64 + b'" data-yanked="">'
        b"p-1.0-py3-none-any.whl</a>"
        b'<a href="file:///etc/p-2.0-py3-none-any.whl" data-core-metadata="true">'
        b"p-2.0-py3-none-any.whl</a></body></html>"
    )
    files = parse_project_page(Response("http://i/p/", body, "text/html"), "p", source="s")
    first, second = files
    assert (first.url, first.sha256, first.yanked) == (
        "http://mirror/files/p-1.0-py3-none-any.whl", "a" * 64, True,
    )  # fmt: skip
    assert second.core_metadata is True
    assert second.problem is not None
    assert second.problem.text.endswith(
        "a remote index may only point to http:// and https:// files"
    )


def test_a_future_html_api_version_is_refused() -> None:
    body = b'<meta name="pypi:repository-version" content="2.0"><a href="x.whl">x.whl</a>'
    with pytest.raises(IndexReadError, match=r"simple API version 2\.0 is not supported"):
        parse_project_page(Response("http://i/p/", body, "text/html"), "p", source="s")


def test_every_real_index_page_of_the_corpus_reads_whole(corpus: Path) -> None:
    """The published variants test index (84 pages, ~20,000 files): every link is a file, none
    is refused, and each keeps its sha256 (these pages were read by pypi-simple before; ours
    gives the same files, checked when it was replaced)."""
    import re

    pages = sorted(corpus.rglob("index.html"))
    assert len(pages) > 50
    for page in pages:
        body = page.read_bytes()
        url = f"https://example.org/simple/{page.parent.name}/"
        files = parse_project_page(Response(url, body, "text/html"), page.parent.name, source=url)
        assert len(files) == len(re.findall(rb"<a\s", body)), page
        assert all(f.problem is None and f.url.startswith("https://") for f in files), page
        hashed = [f for f in files if "#sha256=" in f.url]
        assert hashed == []  # the fragment went to sha256
