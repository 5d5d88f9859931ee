"""Where installed variant wheels came from: direct_url.json, find-links and a real HTTP index."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from packaging.version import Version

from tests.export.conftest import ExportWorld, installed_label, uv_install
from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_wheel
from variant_bridge.detect.prefix import read_dist_info
from variant_bridge.environment import PythonDistribution
from variant_bridge.errors import DetectionError, ExportError
from variant_bridge.export.origins import (
    Places,
    establish_origin,
    is_variant_distribution,
    read_direct_url,
)
from variant_bridge.indexes import Downloads, open_sources
from variant_bridge.indexes.transport import Transport

pytestmark = pytest.mark.slow


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def look(
    find_links: Sequence[str | os.PathLike[str]] = (), index_urls: Sequence[str] = ()
) -> Places:
    """Where ``export --find-links/--index-url`` looks wheels up (downloads in a folder of
    their own, removed with the test's temporary directories)."""
    downloads = Downloads(Path(tempfile.mkdtemp(prefix="vb-test-origins-")), transport=Transport())
    return Places(open_sources(find_links, index_urls), downloads, Version("3.12"))


def dist(world: ExportWorld, name: str) -> PythonDistribution:
    [dist_info] = world.site.glob(f"{name}-*.dist-info")
    found = read_dist_info(dist_info)
    assert found is not None
    return found


def test_found_in_find_links_by_its_record(export_world: ExportWorld) -> None:
    # uv installed tinyvar from find-links: no direct_url.json, so the files must match.
    origin = establish_origin(
        dist(export_world, "tinyvar"), look(find_links=[str(export_world.wheels)])
    )
    wheel = export_world.installed["tinyvar"]
    assert (origin.url, origin.sha256) == (wheel.as_uri(), sha256(wheel))
    assert origin.source == str(export_world.wheels)
    assert origin.note is None


def test_without_a_place_to_look_it_is_unpinned_with_the_reason(export_world: ExportWorld) -> None:
    origin = establish_origin(dist(export_world, "tinyvar"))
    assert origin.url is None
    assert origin.source == "no direct_url.json and no --find-links/--index-url to look it up in"


def test_a_local_direct_url_gets_the_files_hash(export_world: ExportWorld) -> None:
    # uv records file:// URLs with an empty archive_info: the hash is computed from the file.
    origin = establish_origin(dist(export_world, "gpuext"))
    wheel = export_world.installed["gpuext"]
    assert (origin.url, origin.sha256, origin.source) == (
        wheel.as_uri(),
        sha256(wheel),
        "direct_url.json",
    )
    assert origin.note is not None
    assert "on this machine" in origin.note


def test_a_rebuilt_wheel_with_the_same_label_is_not_taken_for_the_installed_one(
    export_world: ExportWorld, tmp_path: Path
) -> None:
    # Same name, version and label, other variant.json: its RECORD hashes differ.
    make_wheel(
        tmp_path,
        "tinyvar",
        "1.0",
        label="cu126",
        properties=["nvidia :: cuda_version_lower_bound :: 12.8"],
    )
    origin = establish_origin(dist(export_world, "tinyvar"), look(find_links=[str(tmp_path)]))
    assert origin.url is None
    assert "matches the installed files" in origin.source


def test_another_label_of_the_release_is_not_taken(
    export_world: ExportWorld, tmp_path: Path
) -> None:
    shutil.copy(export_world.wheels / "tinyvar-1.0-py3-none-any-cu128.whl", tmp_path)
    shutil.copy(export_world.wheels / "tinyvar-1.0-variants.json", tmp_path)
    origin = establish_origin(dist(export_world, "tinyvar"), look(find_links=[str(tmp_path)]))
    assert origin.url is None


def test_found_on_a_real_http_index(export_world: ExportWorld, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with IndexServer(export_world.wheels) as index:
        uv_install(site, "--index-url", index.url, "tinyvar==1.0", offline=False)
        assert installed_label(site, "tinyvar") == "cu126"
        [dist_info] = site.glob("tinyvar-*.dist-info")
        installed = read_dist_info(dist_info)
        assert installed is not None
        origin = establish_origin(installed, look(index_urls=[index.url]))
        wheel = export_world.installed["tinyvar"]
        assert origin.url == index.file_url(wheel.name)
        assert origin.sha256 == sha256(wheel)
        # the file was fetched to compare its RECORD: the index's hash was checked on the way
        assert f"/files/{wheel.name}" in index.paths_requested("/files/")


def test_an_https_direct_url_with_a_hash_is_taken_as_recorded(tmp_path: Path) -> None:
    dist_info = tmp_path / "torch-2.9.0.dist-info"
    dist_info.mkdir()
    url = "https://download.example/whl/torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl"
    (dist_info / "direct_url.json").write_text(
        json.dumps({"url": url, "archive_info": {"hashes": {"sha256": "AB" * 32}}})
    )
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n")
    torch = read_dist_info(dist_info)
    assert torch is not None
    assert is_variant_distribution(torch)  # labelled filename, even without variant.json
    origin = establish_origin(torch)
    assert (origin.url, origin.sha256, origin.source) == (url, "ab" * 32, "direct_url.json")


@pytest.mark.parametrize(
    "content",
    [
        "{not json",  # cut off by a crash
        '{"archive_info": {}}',  # no url
        '["https://x/y.whl"]',  # not an object
    ],
)
def test_a_corrupt_direct_url_json_names_the_file(tmp_path: Path, content: str) -> None:
    (tmp_path / "direct_url.json").write_text(content)
    with pytest.raises(DetectionError) as info:
        read_direct_url(tmp_path)
    assert str(tmp_path / "direct_url.json") in str(info.value)


def test_a_locked_path_becomes_a_file_url_with_its_hash(export_world: ExportWorld) -> None:
    wheel = export_world.installed["tinyvar"]
    locked = PythonDistribution("tinyvar", "1.0", location=str(wheel))
    origin = establish_origin(locked)
    assert (origin.url, origin.sha256, origin.source) == (
        wheel.as_uri(),
        sha256(wheel),
        "pixi.lock",
    )


def test_a_locked_url_keeps_its_fragment_hash() -> None:
    locked = PythonDistribution(
        "torch",
        "2.9.0",
        location="https://x/torch-2.9.0-py3-none-any-cu128.whl#sha256=" + "cd" * 32,
    )
    origin = establish_origin(locked)
    assert (origin.url, origin.sha256) == (
        "https://x/torch-2.9.0-py3-none-any-cu128.whl",
        "cd" * 32,
    )


def point_direct_url_at(dist_info: Path, wheel: Path, sha256: str | None) -> None:
    archive = {"hashes": {"sha256": sha256}} if sha256 else {}
    (dist_info / "direct_url.json").write_text(
        json.dumps({"url": wheel.as_uri(), "archive_info": archive})
    )


@pytest.mark.parametrize(
    ("recorded", "file", "pinned_to"),
    [
        (True, "same", "recorded"),  # the file is still the installed one
        (True, "changed", None),  # QA: exported with the recorded hash of a file that changed
        (True, "missing", "recorded"),  # gone: the recorded hash is all there is
        (False, "same", "file"),  # uv records none: the file's own hash
    ],
)
def test_a_local_direct_url_file_is_checked_against_its_recorded_hash(
    world_copy: ExportWorld, tmp_path: Path, recorded: bool, file: str, pinned_to: str | None
) -> None:
    installed = world_copy.installed["gpuext"]
    wheel = tmp_path / installed.name
    shutil.copy(installed, wheel)
    [dist_info] = world_copy.site.glob("gpuext-*.dist-info")
    point_direct_url_at(dist_info, wheel, sha256(installed) if recorded else None)
    if file == "changed":
        shutil.copy(world_copy.installed["tinyvar"], wheel)  # other bytes under the same name
    elif file == "missing":
        wheel.unlink()
    origin = establish_origin(dist(world_copy, "gpuext"))
    if pinned_to is None:
        assert origin.url is None
        assert origin.source == (
            f"{wheel} has sha256 {sha256(wheel)}, but direct_url.json recorded "
            f"{sha256(installed)} (the file changed after the install)"
        )
    else:
        assert (origin.url, origin.sha256) == (wheel.as_uri(), sha256(installed))


def test_a_locked_local_wheel_is_checked_against_the_locks_hash(
    export_world: ExportWorld, tmp_path: Path
) -> None:
    # QA: `export --lockfile` copied the lock's sha256 for a local wheel without checking it
    wheel = tmp_path / export_world.installed["gpuext"].name
    shutil.copy(export_world.installed["tinyvar"], wheel)  # rebuilt since the lock
    locked = PythonDistribution(
        "gpuext", "0.3", location=str(wheel), sha256=sha256(export_world.installed["gpuext"])
    )
    with pytest.raises(ExportError) as info:
        establish_origin(locked)
    message = str(info.value)
    assert f"pixi.lock records sha256 {sha256(export_world.installed['gpuext'])}" in message
    assert f"the file has sha256 {sha256(wheel)}" in message
    shutil.copy(export_world.installed["gpuext"], wheel)  # restored: pinned with its hash
    origin = establish_origin(locked)
    assert (origin.url, origin.sha256) == (wheel.as_uri(), sha256(wheel))
    assert origin.size == wheel.stat().st_size


def test_a_staging_copy_named_by_direct_url_is_never_exported(world_copy: ExportWorld) -> None:
    # What an installer records when handed a copy in variant-bridge's temporary folder.
    staging = Path(tempfile.gettempdir()) / "variant-bridge-xyz" / "gpuext-0.3-py3-none-any.whl"
    [dist_info] = world_copy.site.glob("gpuext-*.dist-info")
    point_direct_url_at(dist_info, staging, None)
    origin = establish_origin(dist(world_copy, "gpuext"))
    assert origin.url is None
    assert "temporary staging copy" in origin.source
    # where it can be looked up, the real file is pinned instead
    found = establish_origin(dist(world_copy, "gpuext"), look(find_links=[world_copy.wheels]))
    assert found.url == world_copy.installed["gpuext"].as_uri()
