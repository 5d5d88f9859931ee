"""Hostile indexes (issue 12): every attack on the loopback index is refused in one clear line.

Each server misbehaves in one way (tests/worlds/index_server.py): ``file://`` links, a redirect
to ``ftp://``, a dripping or truncating server, a 1 GiB ``METADATA``, no hashes, a
``variants.json`` that lies about a wheel, an invalid entry on a page.
"""

from __future__ import annotations

import json
import time
import zipfile
from pathlib import Path

import pytest

from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.errors import (
    HashMismatch,
    IndexReadError,
    SelectionError,
    TruncatedRead,
    UnverifiedFile,
    VariantMismatch,
)
from variant_bridge.indexes import CoreMetadataReader, Downloads, find_candidates
from variant_bridge.indexes.transport import DeadlineExceeded, TooLarge, Transport
from variant_bridge.indexes.trust import HASH_OPT_OUT, verify

PY = "3.12"
CU126 = ("nvidia :: cuda_version_lower_bound :: 12.6",)
CU129 = ("nvidia :: cuda_version_lower_bound :: 12.9",)
WHEEL = "evil-1.0-py3-none-any-cu126.whl"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    make_release(root, "evil", "1.0", {"cu126": CU126, "null": []})
    return root


@pytest.fixture(scope="module")
def index(root: Path) -> IndexServer:
    with IndexServer(root) as server:
        yield server  # type: ignore[misc]


def _find(index: IndexServer, downloads: Downloads | None = None):  # type: ignore[no-untyped-def]
    if downloads is None:
        return find_candidates(
            "evil", index_urls=[index.url], python_version=PY, transport=Transport()
        )
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from variant_bridge.indexes import SimpleIndex, find_files

    return find_files(
        "evil",
        [SimpleIndex.parse(index.url)],
        spec=SpecifierSet(),
        python=Version(PY),
        downloads=downloads,
    )


def test_a_file_link_on_a_remote_index_is_skipped_never_read(
    index: IndexServer, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.whl"
    secret.write_bytes(b"a file of this machine")
    with index.configured(links={WHEEL: secret.as_uri()}):
        files = _find(index)
    assert WHEEL not in [c.name for c in files.candidates]
    (skipped,) = [s for s in files.skipped if s.filename == WHEEL]
    assert skipped.reason == (
        f"links to {secret.as_uri()}: a remote index may only point to http:// and https:// files"
    )


def test_a_redirect_to_ftp_is_refused(index: IndexServer, tmp_path: Path) -> None:
    (candidate,) = [c for c in _find(index).candidates if c.name == WHEEL]
    target = "ftp://127.0.0.1/evil.whl"
    with (
        index.configured(redirects={f"/files/{WHEEL}": target}),
        Downloads.temporary(transport=Transport()) as downloads,
        pytest.raises(IndexReadError) as info,
    ):
        downloads.get(candidate)
    assert str(info.value) == (
        f"cannot fetch {candidate.url}: it redirects to {target}; only http:// and https:// "
        "redirects are followed"
    )


def test_a_redirect_to_a_file_url_is_refused(index: IndexServer) -> None:
    with (
        index.configured(redirects={"/simple/evil/": "file:///etc/passwd"}),
        pytest.raises(IndexReadError, match=r"redirects to file:///etc/passwd; only http"),
    ):
        _find(index)


def test_a_dripping_server_is_cut_off_at_the_deadline(index: IndexServer) -> None:
    (candidate,) = [c for c in _find(index).candidates if c.name == WHEEL]
    transport = Transport(deadline=1.0, min_rate=1e12)  # 1 s in all, whatever the size
    start = time.monotonic()
    with (
        index.configured(drip={WHEEL: 0.2}),  # one byte every 0.2 s: each read is "on time"
        Downloads.temporary(transport=transport) as downloads,
        pytest.raises(DeadlineExceeded) as info,
    ):
        downloads.get(candidate)
    assert time.monotonic() - start < 30  # without the deadline: hours
    assert str(info.value).startswith(
        f"cannot fetch {candidate.url}: no complete answer within 1 s"
    )


def test_a_host_name_that_resolves_too_slowly_is_cut_off_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket
    import threading

    # No DNS server exists here: the system resolver, stuck for a name, is what is simulated.
    resolve = socket.getaddrinfo
    release = threading.Event()

    def stuck(host: str, *args: object, **kwargs: object) -> object:
        if host == "stuck.example":
            release.wait(30)
        return resolve(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", stuck)
    start = time.monotonic()
    try:
        with pytest.raises(DeadlineExceeded, match=r"^cannot fetch http://stuck\.example/simple/"):
            Transport(deadline=1.0).get("http://stuck.example/simple/")
    finally:
        release.set()
    assert time.monotonic() - start < 10  # without the bound: as long as the resolver hangs


def test_a_truncated_download_is_reported_as_truncated(index: IndexServer) -> None:
    (candidate,) = [c for c in _find(index).candidates if c.name == WHEEL]
    with (
        index.configured(truncate=frozenset({WHEEL})),
        Downloads.temporary(transport=Transport()) as downloads,
        pytest.raises(TruncatedRead) as info,
    ):
        downloads.get(candidate)
    assert not isinstance(info.value, HashMismatch)
    size = candidate.size
    assert size is not None
    assert str(info.value) == (
        f"{candidate.url}: truncated: the server sent {size // 2} of the {size} bytes it announced"
    )


def test_a_huge_pep658_metadata_is_refused_with_its_size_unread(index: IndexServer) -> None:
    with index.configured(core_metadata=True, huge_metadata=True):
        (candidate,) = [c for c in _find(index).candidates if c.name == WHEEL]
        before = len(index.requests)
        with Downloads.temporary(transport=Transport()) as downloads:
            with pytest.raises(TooLarge) as info:
                CoreMetadataReader(downloads)._pep658(candidate)
            assert info.value.size == 1 << 30
            assert f"is {1 << 30} bytes, more than the" in str(info.value)
            assert downloads.transport.received == 0  # refused from Content-Length alone
    assert [r.path for r in index.requests[before:]] == [f"/files/{WHEEL}.metadata"]


def test_an_unadvertised_metadata_file_is_never_fetched(index: IndexServer) -> None:
    before = len(index.requests)
    with Downloads.temporary(transport=Transport()) as downloads:
        files = _find(index, downloads)
        reader = CoreMetadataReader(downloads)
        for candidate in files.candidates:
            assert reader.read(candidate) is not None  # by range requests
    assert not [r for r in index.requests[before:] if r.path.endswith(".metadata")]


def test_no_hash_is_refused_unless_opted_out(index: IndexServer) -> None:
    with index.configured(hashes=False):
        (candidate,) = [c for c in _find(index).candidates if c.name == WHEEL]
    assert candidate.sha256 is None
    with Downloads.temporary(transport=Transport()) as downloads:
        before = len(index.requests)
        with pytest.raises(UnverifiedFile) as info:
            verify(candidate, downloads)
        assert index.requests[before:] == []  # refused before fetching anything
        assert "lists no sha256 for it" in str(info.value)
        assert f"(pass {HASH_OPT_OUT} to install" in str(info.value)
        unverified = verify(candidate, downloads, require_hashes=False)
    assert unverified.checked is False
    assert len(unverified.sha256) == 64


def test_a_find_links_file_is_hashed_and_pinned(root: Path, tmp_path: Path) -> None:
    files = find_candidates("evil", find_links=[root], python_version=PY, transport=Transport())
    (candidate,) = [c for c in files.candidates if c.name == WHEEL]
    assert candidate.sha256 is None  # a directory lists no hashes
    with Downloads.temporary(transport=Transport()) as downloads:
        verified = verify(candidate, downloads)
        assert verified.path.read_bytes() == (root / WHEEL).read_bytes()  # a copy, checked
    assert verified.checked is True
    assert verified.candidate.sha256 == verified.sha256


def test_a_lying_variants_json_is_caught_before_install(tmp_path: Path) -> None:
    # The index's variants.json says cu126 needs CUDA 12.6; the wheel was built for 12.9.
    make_release(tmp_path, "liar", "1.0", {"cu126": CU129})
    variants = tmp_path / "liar-1.0-variants.json"
    document = json.loads(variants.read_text())
    document["variants"]["cu126"]["nvidia"]["cuda_version_lower_bound"] = ["12.6"]
    variants.write_text(json.dumps(document))
    with IndexServer(tmp_path) as index:
        lying = index.file_url("liar-1.0-variants.json")
        files = find_candidates(
            "liar", index_urls=[index.url], python_version=PY, transport=Transport()
        )
        (candidate,) = [c for c in files.candidates if c.label == "cu126"]
        assert [str(p) for p in candidate.variant.properties] == list(CU126)  # as the index says
        with (
            Downloads.temporary(transport=Transport()) as downloads,
            pytest.raises(VariantMismatch) as info,
        ):
            verify(candidate, downloads)
    assert str(info.value) == (
        "liar-1.0-py3-none-any-cu126.whl: its own variant.json says 'cu126' is [nvidia :: "
        f"cuda_version_lower_bound :: 12.9], but {lying} says "
        "[nvidia :: cuda_version_lower_bound :: 12.6]: the index's variant metadata does not "
        "describe this wheel; refusing to install it"
    )


def test_an_invalid_entry_skips_that_file_not_the_project(index: IndexServer) -> None:
    from variant_bridge.indexes.download import Response
    from variant_bridge.indexes.simple import parse_project_page

    page = index.project_json("evil")
    page["files"][0]["size"] = "huge"  # fails validation: that one file only
    bad = page["files"][0]["filename"]
    response = Response(
        "http://i/simple/evil/", json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json"
    )
    files = parse_project_page(response, "evil", source="http://i/simple/")
    by_name = {f.filename: f for f in files}
    assert by_name[bad].problem is not None
    assert by_name[bad].problem.text.startswith("an invalid entry on http://i/simple/evil/: ")
    assert all(f.problem is None for name, f in by_name.items() if name != bad)


@pytest.mark.parametrize("links_page", [False, True], ids=["project page", "links page"])
def test_a_malformed_link_skips_that_file_not_the_page(links_page: bool) -> None:
    from variant_bridge.indexes.download import Response
    from variant_bridge.indexes.simple import parse_links_page, parse_project_page

    body = (
        b'<a href="http://[::1/evil-1.0-py3-none-any.whl">evil-1.0-py3-none-any.whl</a>'
        b'<a href="evil-1.0-py3-none-any-null.whl#sha256=' + b"a" * 64 + b'">'
        b"evil-1.0-py3-none-any-null.whl</a>"
    )
    response = Response("http://i/simple/evil/", body, "text/html")
    if links_page:
        files = parse_links_page(response, source="s")
    else:
        files = parse_project_page(response, "evil", source="s")
    bad, good = files
    assert bad.filename == "evil-1.0-py3-none-any.whl"
    assert bad.problem is not None
    assert bad.problem.text == "an invalid link on http://i/simple/evil/: Invalid IPv6 URL"
    assert good.problem is None
    assert good.url == "http://i/simple/evil/evil-1.0-py3-none-any-null.whl"
    assert good.sha256 == "a" * 64


def test_a_remote_wheel_with_a_lying_zip_header_is_refused_with_its_size(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "src", "huge", "1.0", label="cu126", properties=CU126)
    served = tmp_path / "served"
    served.mkdir()
    # METADATA deflated from 20 MB of one byte: small on the wire, too big to read.
    with (
        zipfile.ZipFile(wheel) as src,
        zipfile.ZipFile(served / wheel.name, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("METADATA"):
                data += b"#" * (20 * 1024 * 1024)
            dst.writestr(info.filename, data)
    with IndexServer(served) as index:
        (candidate,) = find_candidates(
            "huge", index_urls=[index.url], python_version=PY, transport=Transport()
        ).candidates
        with Downloads.temporary(transport=Transport()) as downloads:
            with pytest.raises(
                Exception, match=r"METADATA is \d+ bytes, more than the 16777216 read: refused"
            ):
                CoreMetadataReader(downloads).read(candidate)
            assert downloads.transport.received < 200_000  # the tail, not 20 MB inflated


def test_a_long_download_reports_progress(tmp_path: Path) -> None:
    import io
    import os

    (tmp_path / "big.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    shown: list[tuple[str, int | None]] = []
    counts: list[int] = []

    class Bar:
        def __init__(self, name: str, total: int | None) -> None:
            shown.append((name, total))

        def update(self, count: int) -> None:
            counts.append(count)

        def close(self) -> None:
            shown.append(("closed", None))

    with IndexServer(tmp_path) as index:
        Transport(progress=Bar).copy(index.file_url("big.bin"), io.BytesIO(), name="big.bin")
        Transport(progress=Bar).get(index.file_url("big.bin"))  # a document: no bar
    assert shown == [("big.bin", 3 * 1024 * 1024), ("closed", None)]
    assert sum(counts) == 3 * 1024 * 1024


def test_one_bad_entry_skips_that_file_with_its_reason_never_the_project(
    index: IndexServer,
) -> None:
    """Issue 22: a byte that is not UTF-8, a 5,000-digit version and an oddly tagged file on a
    JSON page are three skipped files; the project is still read and chosen from."""
    huge = "9" * 5000
    extra = tuple(
        {"filename": name, "url": f"../../files/{name}", "hashes": {"sha256": "0" * 64}}
        for name in (f"evil-{huge}-py3-none-any-cu126.whl", "evil-1.0-py3.-none-any-cu126.whl")
    )
    null = b'"evil-1.0-py3-none-any-null.whl"'
    with index.configured(
        extra={"evil": extra},
        mangle={"/simple/evil/": (null, null.replace(b"-null", b"-n\xffll"))},
    ):
        files = _find(index)
    assert [c.name for c in files.candidates] == [WHEEL, "evil-1.0-py3-none-any.whl"]
    reasons = {s.filename: s.reason for s in files.skipped}
    assert reasons.pop("evil-1.0-py3-none-any-n\ufffdll.whl") == (
        f"an invalid entry on {index.url}evil/: its filename is not UTF-8 text"
    )
    assert reasons.pop("evil-1.0-py3.-none-any-cu126.whl") == (
        "invalid wheel filename 'evil-1.0-py3.-none-any-cu126.whl': bad python tag 'py3.'"
    )
    ((name, reason),) = reasons.items()
    assert name == f"evil-{huge}-py3-none-any-cu126.whl"
    assert reason.endswith("(5000 characters) is not a PEP 440 version")
    assert len(reason) < 300  # quoted, shortened


def test_a_refusal_is_named_when_nothing_else_is_left(index: IndexServer, tmp_path: Path) -> None:
    """Issue 22: not just "no usable wheel": which file, and why."""
    secret = tmp_path / "secret.whl"
    secret.write_bytes(b"a file of this machine")
    links = {name: secret.as_uri() for name in (WHEEL, "evil-1.0-py3-none-any-null.whl",
                                                  "evil-1.0-py3-none-any.whl")}  # fmt: skip
    with index.configured(links=links), pytest.raises(SelectionError) as raised:
        _find(index)
    message = str(raised.value)
    assert message.startswith(f"no usable wheel for 'evil' in {index.url}: ")
    assert (
        f"{WHEEL}: links to {secret.as_uri()}: a remote index may only point to http:// and "
        "https:// files"
    ) in message


def test_verbose_lists_every_file_skipped_and_every_retry(
    index: IndexServer, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from variant_bridge.cli import main

    secret = tmp_path / "secret.whl"
    secret.write_bytes(b"a file of this machine")
    args = ["select", "evil", "--index-url", index.url, "--python", PY, "--platform", "linux-64",
            "-t", "cuda=12.9", "-t", "glibc=2.36", "-t", "archspec=haswell", "--no-cache",
            "--verbose"]  # fmt: skip
    with index.configured(links={WHEEL: secret.as_uri()}, fail={"/simple/evil/": 1}):
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    page = f"{index.url}evil/"
    retry = f"  retrying {page} in 0.25 s (HTTP 503 Service Unavailable; retry 1 of 3)"
    skipped = (
        f"  skipped {WHEEL}: links to {secret.as_uri()}: a remote index may only point to "
        "http:// and https:// files"
    )
    # Documents fetched ahead are logged as they are asked for: only the page comes first.
    assert lines[:2] == [f"GET {page}", retry]
    assert skipped in lines
