"""The command context: sources checked once in uv's order, one Downloads shaped by the fetch
spec, the target decided once (the --strict rule, supplied facts), as the library builds it."""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.environment import Source, SourceKind, VirtualPackage
from variant_bridge.errors import ConflictingOptions, InvalidTarget
from variant_bridge.indexes import FindLinks, IndexStrategy, SimpleIndex
from variant_bridge.indexes.transport import Progress, Transport
from variant_bridge.jobs.context import Context, Sources, open_downloads
from variant_bridge.jobs.select import parse_requests, select
from variant_bridge.jobs.specs import (
    EnvironmentSpec,
    FetchSpec,
    Misuse,
    PrefixHost,
    Reporter,
    SourceSpec,
)
from variant_bridge.jobs.target import Target
from variant_bridge.platform_tags import PythonSource

LOWER = "nvidia :: cuda_version_lower_bound :: {}"
# Another machine, declared in full: nothing of this one is read.
ELSEWHERE = ("cuda=12.9", "glibc=2.36", "archspec=haswell")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    make_release(root, "gpupkg", "1.0",
                 {"cu129": [LOWER.format("12.9")], "cu126": [LOWER.format("12.6")], "null": []},
                 requires=["helper>=1"])  # fmt: skip
    make_wheel(root, "helper", "1.0")
    return root


def _prefix(root: Path, python: str = "3.12.7") -> Path:
    """A conda prefix as detection reads it: its records (python, cuda-version), no interpreter."""
    meta = root / "conda-meta"
    meta.mkdir(parents=True)
    for name, version in (("python", python), ("cuda-version", "12.6")):
        record = {"name": name, "version": version, "build": "h0_0", "subdir": "linux-64"}
        (meta / f"{name}-{version}-h0_0.json").write_text(json.dumps(record))
    return root


def test_sources_are_checked_once_in_uvs_order() -> None:
    spec = SourceSpec(
        find_links=("./wheels",),
        index_url="https://main.example/simple/",
        extra_index_urls=("https://one.example/simple/", "https://two.example/simple/"),
        strategy="unsafe-best-match",
    )
    sources = Sources.of(spec)
    assert [s.name for s in sources][1:] == [
        "https://one.example/simple/",
        "https://two.example/simple/",
        "https://main.example/simple/",  # --index-url last, as uv consults it
    ]
    assert isinstance(sources[0], FindLinks)
    assert sources.default == SimpleIndex("https://main.example/simple/")
    assert [i.url for i in sources.extra_indexes] == [
        "https://one.example/simple/",
        "https://two.example/simple/",
    ]
    assert sources.strategy is IndexStrategy.UNSAFE_BEST_MATCH
    with pytest.raises(InvalidTarget, match="--extra-index-url 'ftp://x/simple'"):
        Sources.of(SourceSpec(extra_index_urls=("ftp://x/simple",)))


def test_positional_inputs_are_parsed_in_one_place(tmp_path: Path) -> None:
    url = (tmp_path / "simple").as_uri() + "/"
    sources, files = Sources.of_inputs(
        ["./wheels", "a-1.0-py3-none-any.whl", url, "https://x.example/simple/"],
        projects=["a"],
    )
    assert files == (Path("a-1.0-py3-none-any.whl"),)
    assert [type(s).__name__ for s in sources] == ["FindLinks", "SimpleIndex", "SimpleIndex"]
    assert sources[1].name == url  # a file:// URL is an index, not a find-links directory
    assert sources.strategy is IndexStrategy.UNSAFE_BEST_MATCH  # every input named is read
    with pytest.raises(ConflictingOptions, match="needs --project NAME") as refused:
        Sources.of_inputs([url])
    assert refused.value.kind is Misuse.INDEX_NEEDS_PROJECT


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        (FetchSpec(quiet=True, verbose=True), Misuse.QUIET_AND_VERBOSE),
        (FetchSpec(cache_dir=Path("c"), no_cache=True), Misuse.CACHE_DIR_AND_NO_CACHE),
        (FetchSpec(environ={"VARIANT_BRIDGE_HTTP_TIMEOUT": "soon"}), Misuse.BAD_DEADLINE),
        (FetchSpec(deadline=0), Misuse.BAD_DEADLINE),
    ],
)
def test_a_fetch_spec_that_contradicts_itself_is_a_usage_error(
    spec: FetchSpec, kind: Misuse
) -> None:
    with pytest.raises(ConflictingOptions) as refused:
        spec.check()
    assert refused.value.kind is kind


def _no_progress(name: str, total: int | None) -> Progress:
    raise AssertionError("no download here is large enough for a progress display")


def test_the_downloads_follow_the_fetch_spec(tmp_path: Path, wheels: Path) -> None:
    lines: list[str] = []
    reporter = Reporter(log=lines.append, progress=_no_progress)
    spec = FetchSpec(cache_dir=tmp_path / "cache", verbose=True, deadline=5)
    with IndexServer(wheels) as index, open_downloads(spec, reporter) as downloads:
        assert downloads.cache is not None
        assert downloads.cache.root == tmp_path / "cache"
        assert downloads.transport.deadline == 5
        page = index.url + "gpupkg/"
        downloads.transport.get(page)
    assert lines == [f"GET {page}"]
    assert not downloads.directory.exists()  # the scratch directory ends with the block
    with open_downloads(FetchSpec(no_cache=True, quiet=True), reporter) as quiet:
        assert (quiet.cache, quiet.transport.log, quiet.transport.progress) == (None, None, None)


def _failing_command(index: IndexServer, used: list[Transport]) -> None:
    """A command that fetches (one page twice, one ahead) and then fails."""
    page = index.url + "gpupkg/"
    with open_downloads(FetchSpec(no_cache=True)) as downloads:
        transport = downloads.transport
        used.append(transport)
        transport.get(page)
        ahead = transport.submit(lambda: transport.prefetch(index.url + "helper/"))
        assert ahead.result() is not None  # fetched ahead on the transport's pool
        transport.get(page)
        assert transport.connections == 1  # kept alive while the command runs
        raise InvalidTarget("the command fails")


def test_the_command_ends_with_its_transport_closed(wheels: Path) -> None:
    """The context owns the command's one transport: its kept-alive connections and its
    prefetching threads end with the block, also when the command fails."""
    before = set(threading.enumerate())
    used: list[Transport] = []
    with IndexServer(wheels) as index:
        with pytest.raises(InvalidTarget, match="the command fails"):
            _failing_command(index, used)
        (transport,) = used
        started = [t for t in set(threading.enumerate()) - before if t.name.startswith("fetch")]
        assert started == []  # the prefetching threads ended with the block
        assert transport.prefetch(index.url + "gpupkg/?again") is None  # nothing more ahead
        transport.get(index.url + "gpupkg/")  # a call after the block: its connection is gone
        assert transport.connections == 2


def test_the_target_is_decided_once_with_the_strict_rule(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path / "env")
    spec = EnvironmentSpec(prefix=prefix, targets=ELSEWHERE, platform="linux-64", environ={})
    target = Target.of(spec)
    assert target.python.source is PythonSource.ENVIRONMENT  # its records; no bin/python
    assert str(target.python.version) == "3.12.7"
    assert target.installed == ()  # not the prefix's own interpreter
    assert target.supported.policy == "toolkit"
    with pytest.raises(ConflictingOptions, match="--python or --target python="):
        Target.of(EnvironmentSpec(python="3.12", targets=("python=3.11",), environ={}))
    strict = EnvironmentSpec(platform="linux-64", targets=ELSEWHERE, strict=True, environ={})
    with pytest.raises(InvalidTarget, match="--strict: the target Python would be this machine"):
        Target.of(strict)
    assert Target.of(replace(strict, python="3.12")).python.source is (PythonSource.OPTION)
    # A command that only reads the environment (solve) has no interpreter rule.
    alone = Target.of(replace(strict, interpreter=False))
    assert alone.python.source is PythonSource.RUNNING


@pytest.mark.skipif(sys.platform != "linux", reason="supplied facts apply to this machine")
def test_a_host_supplies_this_machines_virtual_packages(tmp_path: Path) -> None:
    conda = Source.supplied("conda")
    supplied = (
        VirtualPackage("__cuda", "12.4", "0", conda),
        VirtualPackage("__glibc", "2.31", "0", conda),
        VirtualPackage("__unix", "0", "0", conda),
    )
    env = Target.of(EnvironmentSpec(virtual_packages=supplied, environ={})).env
    found = {vp.name: vp for vp in env.virtual_packages}
    assert (found["__cuda"].version, str(found["__cuda"].source)) == ("12.4", "conda")
    assert found["__cuda"].source.kind is SourceKind.SUPPLIED
    assert "__archspec" not in found  # rattler was not asked
    # Declarations still win over what the host supplied.
    declared = EnvironmentSpec(virtual_packages=supplied, targets=("cuda=12.9",), environ={})
    assert Target.of(declared).env.cuda == VirtualPackage("__cuda", "12.9", "0", Source.TARGET)


def test_a_host_fills_its_target_and_facts_where_the_user_gave_none(tmp_path: Path) -> None:
    asked: list[bool] = []

    def facts() -> tuple[VirtualPackage, ...]:
        asked.append(True)
        return (VirtualPackage("__cuda", "12.4", "0", Source.supplied("conda")),)

    host = PrefixHost("conda", tmp_path / "env", virtual_packages=facts)
    filled = host.fill(EnvironmentSpec())
    assert (filled.prefix, filled.virtual_packages) == (tmp_path / "env", facts())
    # The user's own --prefix or --lockfile wins over the host's default target.
    assert host.fill(EnvironmentSpec(prefix=Path("/p"))).prefix == Path("/p")
    assert host.fill(EnvironmentSpec(lockfile=Path("pixi.lock"))).prefix is None
    # --strict uses no fact of this machine: the host is not even asked; nor for `solve`'s spec
    # (conda_prefix off) is its target a default.
    asked.clear()
    assert host.fill(EnvironmentSpec(strict=True)).virtual_packages is None
    assert asked == []
    assert host.fill(EnvironmentSpec(conda_prefix=False)).prefix is None
    # A target the user named with the host's own options (conda's -n/-p) and --prefix again.
    named = PrefixHost("conda", tmp_path / "env", explicit=True)
    with pytest.raises(ConflictingOptions, match="-n/-p and --prefix/--lockfile") as twice:
        named.fill(EnvironmentSpec(prefix=Path("/p")))
    assert twice.value.kind is Misuse.TARGET_TWICE


def test_the_library_selects_as_the_cli_does(wheels: Path, tmp_path: Path) -> None:
    environment = EnvironmentSpec(platform="linux-64", targets=ELSEWHERE, python="3.12", environ={})
    with Context.open(
        SourceSpec(find_links=(str(wheels),)), environment, FetchSpec(no_cache=True)
    ) as ctx:
        choices = select(parse_requests(["gpupkg"]), ctx)
        assert [c.files.project for c in choices] == ["gpupkg", "helper"]
        assert choices[0].selected is not None
        assert choices[0].selected.label == "cu129"
    with (
        Context.open(None, environment, FetchSpec(no_cache=True)) as empty,
        pytest.raises(ConflictingOptions, match="Give at least one --find-links") as refused,
    ):
        select(parse_requests(["gpupkg"]), empty)
    assert refused.value.kind is Misuse.NO_SOURCE
