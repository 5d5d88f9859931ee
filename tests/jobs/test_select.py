"""Choosing per package: find-links and a loopback index, bridged ranking, reasons, duplicates."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jobs.conftest import choose
from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.cli.select import choice_json
from variant_bridge.environment import CondaRecord, Environment, Source, Toolkit, VirtualPackage
from variant_bridge.errors import InvalidTarget, SelectionError
from variant_bridge.indexes import Downloads, open_sources
from variant_bridge.indexes.transport import Transport
from variant_bridge.jobs.select import parse_request
from variant_bridge.platform_tags import TargetPython

PY = TargetPython.parse("3.12.7")
BASE = (
    VirtualPackage("__glibc", "2.36"),
    VirtualPackage("__archspec", "1", "haswell"),
    VirtualPackage("__unix", "0"),
    VirtualPackage("__linux", "6.1"),
)


def _env(cuda: str | None, toolkit: str | None = None, *records: CondaRecord) -> Environment:
    vps = BASE + (
        (VirtualPackage("__cuda", cuda, source=Source.override("CONDA_OVERRIDE_CUDA")),)
        if cuda
        else ()
    )
    tk = Toolkit("cuda-version", toolkit, Source.PREFIX) if toolkit else None
    return Environment("linux-64", vps, tk, conda_packages=records, python="3.12.7")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    make_release(
        root,
        "gpupkg",
        "1.0",
        {
            "cu129": ["nvidia :: cuda_version_lower_bound :: 12.9"],
            "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"],
            "null": [],
        },
        requires=["nvidia-cublas-cu12==12.6.4.1", "numpy>=1"],
    )
    make_wheel(root, "plainpkg", "2.0")
    make_wheel(root, "nvidia-cublas-cu12", "12.6.4.1")  # the dependencies, so the tree resolves
    make_wheel(root, "numpy", "2.0")
    return root


@pytest.fixture(scope="module")
def index(wheels: Path) -> Iterator[IndexServer]:
    with IndexServer(wheels) as server:
        yield server


@pytest.mark.parametrize(
    ("env", "policy", "label"),
    [
        (_env("12.9", "12.6"), None, "cu126"),  # toolkit policy: the prefix's toolkit decides
        (_env("12.9", "12.6"), "driver", "cu129"),  # driver policy: what uv alone would pick
        (_env("12.9"), None, "cu129"),  # no toolkit: driver policy by default
        (_env(None), None, "null"),  # no driver: the null variant
        (_env("12.4"), None, "null"),  # driver too old for every variant
    ],
)
def test_choice_follows_the_bridged_view(
    wheels: Path, env: Environment, policy: str | None, label: str
) -> None:
    choice, *_ = choose(["gpupkg"], env=env, python=PY, find_links=[wheels], policy=policy)  # type: ignore[arg-type]
    assert choice.selected is not None
    assert choice.selected.label == label


def test_every_file_gets_a_reason_in_conda_terms(wheels: Path) -> None:
    choice, *_ = choose(["gpupkg"], env=_env("12.9", "12.6"), python=PY, find_links=[wheels])
    reasons = {v.label: v.reason for v in choice.selection.verdicts}
    assert "toolkit is cuda-version 12.6" in reasons["cu129"]
    assert set(reasons) == {"cu129", "cu126", "null", None}
    data = choice_json(choice)
    assert data["selected"]["label"] == "cu126"
    assert data["selected"]["properties"] == ["nvidia :: cuda_version_lower_bound :: 12.6"]
    by_label = {c["label"]: c for c in data["candidates"]}
    assert by_label["cu129"]["compatible"] is False
    assert by_label["cu129"]["rank"] is None
    assert by_label["cu126"]["rank"] == 1
    assert by_label[None]["rank"] == 3  # the non-variant wheel comes after null


def test_loopback_index_gives_the_same_choice(wheels: Path, index: IndexServer) -> None:
    env = _env("12.9", "12.6")
    local, *_ = choose(["gpupkg==1.0"], env=env, python=PY, find_links=[wheels])
    remote, *_ = choose(["gpupkg==1.0"], env=env, python=PY, index_urls=[index.url])
    assert remote.selected is not None
    assert local.selected is not None
    assert remote.selected.label == local.selected.label == "cu126"
    assert remote.selected.url.startswith("http://127.0.0.1")
    assert remote.selected.sha256  # the index advertised a hash


def test_duplicated_cuda_libraries_are_named(wheels: Path) -> None:
    cublas = CondaRecord("libcublas", "12.6.77", "h0_0")
    choice, *_ = choose(
        ["gpupkg"], env=_env("12.9", "12.6", cublas), python=PY, find_links=[wheels]
    )
    (dup,) = choice.duplicates
    assert (dup.pypi, dup.conda, dup.conda_version) == (
        "nvidia-cublas-cu12",
        "libcublas",
        "12.6.77",
    )
    assert "nvidia-cublas-cu12==12.6.4.1" in dup.message
    assert "libcublas 12.6.77" in dup.message
    assert choice_json(choice)["duplicates"][0]["conda"] == "libcublas"


def test_no_duplicates_without_the_conda_library(wheels: Path) -> None:
    choice, *_ = choose(["gpupkg"], env=_env("12.9", "12.6"), python=PY, find_links=[wheels])
    assert choice.duplicates == ()
    assert choice.requirements == ("nvidia-cublas-cu12==12.6.4.1", "numpy>=1")
    assert choice_json(choice)["requirements_checked"] is True


def test_nothing_compatible_lists_every_rejection(tmp_path: Path) -> None:
    make_release(tmp_path, "onlygpu", "1.0", {"cu129": ["nvidia :: cuda_version_lower_bound :: 12.9"]},
                 non_variant=False)  # fmt: skip
    choice, *_ = choose(["onlygpu"], env=_env(None), python=PY, find_links=[tmp_path])
    assert choice.selected is None
    assert "onlygpu-1.0-py3-none-any-cu129.whl: variant cu129: needs an NVIDIA driver" in (
        choice.failure()
    )


@pytest.mark.parametrize(
    ("request_text", "error", "message"),
    [
        ("nosuchpkg", SelectionError, "no files for 'nosuchpkg'"),  # unknown package
        ("gpupkg @ https://x/y.whl", InvalidTarget, "URLs and markers are not supported"),  # direct URL
        ("gpupkg==", InvalidTarget, "expected NAME or NAME==VERSION"),  # malformed
        ("gpupkg==9.9", SelectionError, "no version"),  # pinned version that does not exist
    ],
)  # fmt: skip
def test_bad_requests(
    wheels: Path, request_text: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        choose([request_text], env=_env(None), python=PY, find_links=[wheels])


def test_a_source_is_required() -> None:
    with pytest.raises(
        InvalidTarget, match="Give at least one --find-links DIR or --index-url URL"
    ):
        choose(["gpupkg"], env=_env(None), python=PY)


def test_parse_request_keeps_the_specifier() -> None:
    assert str(parse_request("GPUpkg>=1,<2").specifier) == "<2,>=1"


@pytest.mark.parametrize(
    ("requests", "message"),
    [
        (["gpupkg[cuda]"], "extras are not supported"),  # extras would be dropped silently
        (["gpupkg", "GPUpkg==1.0"], "'GPUpkg' is requested more than once"),  # same project twice
    ],
)
def test_requests_that_cannot_be_honoured(wheels: Path, requests: list[str], message: str) -> None:
    with pytest.raises(InvalidTarget, match=message):
        choose(requests, env=_env(None), python=PY, find_links=[wheels])


@pytest.mark.parametrize(
    "url", ["not a url", "wheels/dir", "ftp://example.org/simple", "http://[::1", "http://"]
)
def test_index_urls_must_be_urls(url: str) -> None:
    with pytest.raises(
        InvalidTarget, match=r"index URL .*: expected an http://, https:// or file:// URL"
    ):
        open_sources(index_urls=[url])


def test_a_corrupt_wheel_of_the_chosen_version_is_an_error(tmp_path: Path) -> None:
    make_release(
        tmp_path,
        "gpupkg",
        "1.0",
        {"cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"], "null": []},
    )
    (tmp_path / "gpupkg-1.0-py3-none-any-cu126.whl").write_bytes(b"truncated")
    with pytest.raises(
        SelectionError, match=r"gpupkg-1\.0-py3-none-any-cu126\.whl in .*: not a readable wheel"
    ):
        choose(["gpupkg"], env=_env("12.9"), python=PY, find_links=[tmp_path])


def test_remote_requirements_are_read_with_range_requests(
    wheels: Path, index: IndexServer, tmp_path: Path
) -> None:
    cublas = CondaRecord("libcublas", "12.6.77", "h0_0")
    env = _env("12.9", "12.6", cublas)
    index.requests.clear()
    ranged, *_ = choose(["gpupkg"], env=env, python=PY, index_urls=[index.url])
    assert [d.conda for d in ranged.duplicates] == ["libcublas"]
    wheel_requests = [r for r in index.requests if r.path.endswith(".whl")]
    assert wheel_requests
    assert all(r.status == 206 for r in wheel_requests)  # parts of it, never the whole wheel


def test_remote_requirements_from_a_server_without_ranges_need_the_download(
    wheels: Path, index: IndexServer, tmp_path: Path
) -> None:
    cublas = CondaRecord("libcublas", "12.6.77", "h0_0")
    env = _env("12.9", "12.6", cublas)
    with index.configured(ranges=False):
        without, *_ = choose(["gpupkg"], env=env, python=PY, index_urls=[index.url])
        assert without.requirements is None  # no PEP 658 file, no ranges, no download allowed
        assert choice_json(without)["requirements_checked"] is False  # no clean bill in --json
        with_download, *_ = choose(
            ["gpupkg"],
            env=env,
            python=PY,
            index_urls=[index.url],
            downloads=Downloads(tmp_path, transport=Transport()),
        )
    assert [d.conda for d in with_download.duplicates] == ["libcublas"]
    assert (tmp_path / "gpupkg-1.0-py3-none-any-cu126.whl").is_file()  # install reuses it


def test_the_highest_version_with_a_wheel_for_the_target_is_chosen(tmp_path: Path) -> None:
    # 2.0 only has Windows wheels; a linux-64 target gets 1.0, as pip would choose, and is told why.
    make_wheel(tmp_path, "tagged", "1.0")
    make_wheel(tmp_path, "tagged", "2.0", tags="cp312-cp312-win_amd64")
    choice, *_ = choose(["tagged"], env=_env(None), python=PY, find_links=[tmp_path])
    assert choice.files.version == "1.0"
    assert (
        "tagged-2.0-cp312-cp312-win_amd64.whl",
        "no wheel of 2.0 fits the target's platform tags",
    ) in [(s.filename, s.reason) for s in choice.files.skipped]
    pinned, *_ = choose(["tagged==2.0"], env=_env(None), python=PY, find_links=[tmp_path])
    assert pinned.selected is None  # a pin is honoured, and the mismatch explained
    assert "built for Windows, the target is Linux" in pinned.failure()


@pytest.mark.parametrize(
    ("corrupt", "cuda", "blocks"),
    [
        ("gpupkg-1.0-py3-none-any-cu126.whl", "12.9", True),  # the best match is damaged
        ("gpupkg-1.0-py3-none-any.whl", "12.9", False),  # plain wheel: ranks after cu126 anyway
        ("gpupkg-1.0-py3-none-any-cu129.whl", "12.6", False),  # cu129 unsupported with __cuda 12.6
        ("gpupkg-1.0-py3-none-any-null.whl", "12.9", False),  # null: ranks after cu126 anyway
        ("gpupkg-1.0-py3-none-any-null.whl", None, True),  # without CUDA null is the best match
    ],
)
def test_a_damaged_file_blocks_only_when_it_could_win(
    tmp_path: Path, corrupt: str, cuda: str | None, blocks: bool
) -> None:
    make_release(tmp_path, "gpupkg", "1.0", {"cu129": ["nvidia :: cuda_version_lower_bound :: 12.9"],
                 "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"], "null": []})  # fmt: skip
    (tmp_path / corrupt).write_bytes(b"truncated")
    if blocks:
        with pytest.raises(SelectionError, match="not a readable wheel"):
            choose(["gpupkg"], env=_env(cuda), python=PY, find_links=[tmp_path])
    else:
        choice, *_ = choose(["gpupkg"], env=_env(cuda), python=PY, find_links=[tmp_path])
        assert choice.selected is not None
        assert (corrupt, "not a readable wheel") in [
            (s.filename, s.reason[:20]) for s in choice.files.skipped
        ]


@pytest.mark.parametrize("ranges", [True, False], ids=["ranges", "no-ranges"])
def test_no_file_is_downloaded_twice(tmp_path: Path, ranges: bool) -> None:
    # No variants.json and no PEP 658 metadata: each wheel's variant.json and METADATA are read
    # together (by ranges, or from the one whole download), and the chosen one is then read for
    # its requirements and staged without fetching it again.
    make_release(tmp_path / "wheels", "gpupkg", "1.0",
                 {"cu129": ["nvidia :: cuda_version_lower_bound :: 12.9"], "null": []},
                 variants_json=False, requires=["numpy>=1"])  # fmt: skip
    make_wheel(tmp_path / "wheels", "numpy", "2.0")
    with IndexServer(tmp_path / "wheels", ranges=ranges) as index:
        downloads = Downloads(tmp_path / "downloads", transport=Transport())
        choice, *_ = choose(
            ["gpupkg"], env=_env("12.9"), python=PY, index_urls=[index.url], downloads=downloads
        )
        assert choice.selected is not None
        assert choice.requirements == ("numpy>=1",)
        whole = [r.path for r in index.requests if r.path.startswith("/files/") and not r.range]
        tails = [r.path for r in index.requests if r.range == "bytes=-65536"]
        assert sorted(tails) == sorted(set(tails))  # each wheel's tail once
        assert sorted(whole) == sorted(set(whole))  # each file whole at most once
        assert (whole == []) is ranges  # with ranges, nothing whole to choose
        assert downloads.get(choice.selected).is_file()  # what install stages from
        whole_now = [r.path for r in index.requests if r.path.startswith("/files/") and not r.range]
        assert sorted(whole_now) == sorted(set(whole_now))  # ... never fetched twice
