"""The options of every command that fetches: --verbose, --quiet, --cache-dir, --no-cache, and
install's --no-require-hashes, as a user sees them on the loopback index."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release
from variant_bridge.indexes.cache import Cache, default_cache_dir
from variant_bridge.indexes.transport import Transport

MACHINE = (
    "--platform",
    "linux-64",
    "-t",
    "glibc=2.36",
    "-t",
    "archspec=haswell",
    "-t",
    "cuda=12.9",
)
LOWER = "nvidia :: cuda_version_lower_bound :: {}"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexServer]:
    root = tmp_path_factory.mktemp("wheels")
    make_release(root, "gpupkg", "1.0", {"cu129": [LOWER.format("12.9")], "null": []},
                 variants_json=False)  # fmt: skip
    with IndexServer(root) as server:
        yield server


def _select(cli: Cli, index: IndexServer, *extra: str):  # type: ignore[no-untyped-def]
    return cli("select", "gpupkg", "--index-url", index.url, *MACHINE, "--python", "3.12", *extra)


def test_verbose_lists_every_url_fetched(cli: Cli, index: IndexServer, tmp_path: Path) -> None:
    result = _select(cli, index, "--cache-dir", str(tmp_path), "-v")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert f"GET {index.url}gpupkg/" in lines
    for label in ("cu129", "null"):
        assert (
            f"GET {index.file_url(f'gpupkg-1.0-py3-none-any-{label}.whl')} (bytes=-65536)" in lines
        )


def test_the_cache_is_shared_across_commands(cli: Cli, index: IndexServer, tmp_path: Path) -> None:
    assert _select(cli, index, "--cache-dir", str(tmp_path)).exit_code == 0
    before = len(index.requests)
    assert _select(cli, index, "--cache-dir", str(tmp_path)).exit_code == 0
    assert index.paths_requested()[before:] == ["/simple/gpupkg/"]  # members from the cache
    before = len(index.requests)
    assert _select(cli, index, "--no-cache").exit_code == 0
    assert len([r for r in index.requests[before:] if r.path.startswith("/files/")]) == 2


def test_the_default_cache_is_the_variable(cli: Cli, index: IndexServer, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("VARIANT_BRIDGE_CACHE_DIR", str(tmp_path / "mine"))
    assert _select(cli, index).exit_code == 0
    assert list((tmp_path / "mine" / "members").rglob("*.json"))


def test_quiet_silences_the_notes(cli: Cli, index: IndexServer, tmp_path: Path) -> None:
    with index.configured(ranges=False):
        loud = _select(cli, index, "--no-cache")
        quiet = _select(cli, index, "--no-cache", "-q")
    assert "does not answer HTTP range requests: whole wheels are downloaded" in loud.stderr
    assert quiet.exit_code == 0
    assert quiet.stderr == ""


def test_contradicting_options_are_usage_errors(cli: Cli, index: IndexServer) -> None:
    assert _select(cli, index, "-q", "-v").exit_code == 2
    assert _select(cli, index, "--no-cache", "--cache-dir", "x").exit_code == 2


def test_install_refuses_a_file_without_a_hash_unless_opted_out(
    cli: Cli, index: IndexServer
) -> None:
    args = ("install", "gpupkg", "--index-url", index.url, *MACHINE, "--python", sys.executable,
            "--dry-run", "--json", "--no-cache")  # fmt: skip
    with index.configured(hashes=False):
        refused = cli(*args)
        allowed = cli(*args, "--no-require-hashes")
    assert refused.exit_code == 1
    assert "lists no sha256 for it" in refused.stderr
    assert "(pass --no-require-hashes to install files without a listed hash" in refused.stderr
    assert allowed.exit_code == 0, allowed.stderr
    (package,) = json.loads(allowed.stdout)["packages"]
    assert package["sha256_checked"] is False
    assert len(package["sha256"]) == 64


def test_install_checks_the_index_hash(cli: Cli, index: IndexServer) -> None:
    result = cli("install", "gpupkg", "--index-url", index.url, *MACHINE, "--python",
                 sys.executable, "--dry-run", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (package,) = json.loads(result.stdout)["packages"]
    assert package["sha256_checked"] is True


@pytest.mark.parametrize(
    ("environ", "platform", "expected"),
    [
        ({"VARIANT_BRIDGE_CACHE_DIR": "/c"}, "linux", "/c"),
        ({"XDG_CACHE_HOME": "/x"}, "linux", "/x/variant-bridge"),
        ({"XDG_CACHE_HOME": "relative"}, "linux", "~/.cache/variant-bridge"),  # XDG: ignored
        ({}, "linux", "~/.cache/variant-bridge"),
        ({}, "darwin", "~/Library/Caches/variant-bridge"),
        ({"LOCALAPPDATA": "/l"}, "win32", "/l/variant-bridge/Cache"),
    ],
)
def test_default_cache_dir_follows_platformdirs(
    environ: dict[str, str], platform: str, expected: str
) -> None:
    assert default_cache_dir(environ, platform) == Path(expected).expanduser()


def test_a_damaged_cache_entry_is_replaced(index: IndexServer, tmp_path: Path) -> None:
    from variant_bridge.indexes import Downloads, find_candidates

    (candidate,) = [
        c for c in find_candidates("gpupkg", index_urls=[index.url], python_version="3.12", transport=Transport()).candidates
        if c.label == "cu129"
    ]  # fmt: skip
    assert candidate.sha256 is not None
    cache = Cache(tmp_path)
    with Downloads.temporary(cache=cache, transport=Transport()) as downloads:
        path = downloads.get(candidate)
    path.write_bytes(b"tampered in the cache")
    with Downloads.temporary(cache=cache, transport=Transport()) as downloads:
        assert downloads.get(candidate) == path
        assert downloads.sha256(candidate) == candidate.sha256
    assert path.read_bytes() != b"tampered in the cache"


@pytest.mark.parametrize("value", ["abc", "0", "-5"])
def test_a_bad_timeout_variable_is_a_usage_error(cli: Cli, index: IndexServer, value: str) -> None:
    result = cli("select", "gpupkg", "--index-url", index.url, *MACHINE, "--python", "3.12",
                 env={"VARIANT_BRIDGE_HTTP_TIMEOUT": value})  # fmt: skip
    assert result.exit_code == 2
    assert "$VARIANT_BRIDGE_HTTP_TIMEOUT" in result.stderr


def test_downloads_land_in_the_cache_the_rest_in_a_swept_scratch_directory(
    cli: Cli, index: IndexServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib
    import tempfile

    from variant_bridge.indexes.scratch import scratch_root
    from variant_bridge.jobs.context import open_downloads
    from variant_bridge.jobs.specs import FetchSpec

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    cached = FetchSpec(tmp_path / "cache", quiet=True)
    uncached = FetchSpec(no_cache=True, quiet=True)
    with contextlib.ExitStack() as command:  # the command's context: closed when it ends
        with_cache = command.enter_context(open_downloads(cached))
        without = command.enter_context(open_downloads(uncached))
        assert with_cache.cache is not None
        assert with_cache.cache.root == tmp_path / "cache"
        assert without.cache is None
        for downloads in (with_cache, without):  # killed, the next command sweeps them
            assert downloads.directory.parent == scratch_root()
    assert not with_cache.directory.exists()
    assert not without.directory.exists()

    with index.configured(ranges=False):  # wheels downloaded whole to read their variant.json
        assert _select(cli, index, "--cache-dir", str(tmp_path / "cache")).exit_code == 0
        assert _select(cli, index, "--no-cache").exit_code == 0
    wheels = sorted(p.name for p in (tmp_path / "cache" / "wheels").rglob("*.whl"))
    assert wheels == ["gpupkg-1.0-py3-none-any-cu129.whl", "gpupkg-1.0-py3-none-any-null.whl"]
    assert [p.name for p in scratch_root().iterdir()] == []  # nothing left behind
