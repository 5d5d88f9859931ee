"""Indexing into a channel that already exists (issue 23): wheels already there are not copied
again, a changed one is replaced whole, and conda packages added since are indexed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.worlds.channel import Channel, Pkg, write_package
from tests.worlds.wheels import make_wheel
from variant_bridge.indexes import FindLinks, file_sha256
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.index import IndexRequest, index_wheels
from variant_bridge.jobs.specs import FetchSpec
from variant_bridge.jobs.target import Target
from variant_bridge.solve.channel import place_wheel


def test_a_wheel_already_in_the_channel_is_not_copied_again(tmp_path: Path) -> None:
    source = make_wheel(tmp_path / "src", "placed", "1.0")
    destination = tmp_path / "channel" / "wheels" / source.name
    assert place_wheel(source, destination, file_sha256(source)) is True
    before = destination.stat()
    assert place_wheel(source, destination, file_sha256(source)) is False
    assert destination.stat().st_ino == before.st_ino  # the same file, untouched
    # Other bytes under the same name: replaced whole (a new file renamed over the old one).
    changed = make_wheel(tmp_path / "other", "placed", "1.0", requires=["numpy"])
    assert place_wheel(changed, destination, file_sha256(changed)) is True
    assert destination.read_bytes() == changed.read_bytes()
    assert destination.stat().st_ino != before.st_ino
    assert sorted(p.name for p in destination.parent.iterdir()) == [source.name]  # no leftovers


def test_indexing_again_keeps_the_wheels_and_indexes_new_conda_packages(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "gpulib", "1.0")
    channel = tmp_path / "channel"
    Channel(channel).add([Pkg("zlib", "1.3.1", "h0_0")])
    request = IndexRequest(channel)
    sources = Sources((FindLinks.parse(wheels),))
    target = Target.of_platform("linux-64")
    with Context.open(sources, target, FetchSpec(no_cache=True)) as ctx:
        index_wheels(request, ctx)
    copy = channel / "wheels" / "gpulib-1.0-py3-none-any.whl"
    first = copy.stat()
    write_package(channel, Pkg("bzip2", "1.0.8", "h0_0"))  # added since, not indexed yet
    with Context.open(sources, target, FetchSpec(no_cache=True)) as ctx:
        index_wheels(request, ctx)
    repodata = json.loads((channel / "linux-64" / "repodata.json").read_text())
    assert sorted(r["name"] for r in repodata["packages"].values()) == ["bzip2", "zlib"]
    assert [r["name"] for r in repodata["v3"]["whl"].values()] == ["gpulib"]
    assert copy.stat().st_ino == first.st_ino
