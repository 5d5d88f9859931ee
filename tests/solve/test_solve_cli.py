"""``variant-bridge index`` and ``solve`` as a user runs them: a local conda channel, variant
wheels with real METADATA, a rattler-installed prefix with a real interpreter, a rattler-written
pixi.lock read back by ``detect`` and ``export``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, run_script
from tests.worlds.channel import Channel, Pkg, cuda_packages
from tests.worlds.wheels import make_release

HERE_PYTHON = "{}.{}.{}".format(*sys.version_info[:3])
MACHINE = ("-t", "cuda=12.9", "-t", "cuda_arch=9.0", "-t", "glibc=2.36")
SM = ["nvidia :: sm_arch :: 80_real", "nvidia :: sm_arch :: 90_real"]


@pytest.fixture(scope="module")
def conda(tmp_path_factory: pytest.TempPathFactory) -> Channel:
    """cuda-version 12.6/12.8/12.9 and a python record of the running interpreter's version (the
    prefix's interpreter is a venv of it)."""
    python = Pkg("python", HERE_PYTHON, "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",))
    return Channel(tmp_path_factory.mktemp("conda")).add(
        [*cuda_packages(["12.6", "12.8", "12.9"]), python]
    )


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    make_release(
        root, "gpulib", "1.0",
        {
            "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6", *SM],
            "cu128": ["nvidia :: cuda_version_lower_bound :: 12.8", *SM],
            "null": [],
        },
        namespace_priorities=["nvidia"], non_variant=False, requires_python=">=3.9",
    )  # fmt: skip
    return root


def test_index_writes_whl_records_beside_the_conda_packages(
    cli: Cli, conda: Channel, wheels: Path, tmp_path: Path
) -> None:
    channel = tmp_path / "channel"
    # A conda package already in the channel is indexed too.
    Channel(channel).add([Pkg("zlib", "1.3.1", "h0_0")])
    result = cli("index", str(wheels), "-o", str(channel), "--subdir", "linux-64", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["priority"] == "cells"
    repodata = json.loads((channel / "linux-64" / "repodata.json").read_text())
    assert any(r["name"] == "zlib" for r in repodata["packages"].values())
    records = repodata["v3"]["whl"]
    cu128 = [r for r in records.values() if r["build"].startswith("cu128")]
    assert cu128
    for record in cu128:
        assert "cuda-version >=12.8,<13" in record["depends"]
        assert "__cuda_arch >=8.0,<10.0" in record["depends"] or "__cuda_arch" in " ".join(
            record["depends"]
        )
        assert record["url"].startswith("../wheels/")
        wheel = channel / "wheels" / record["url"].removeprefix("../wheels/")
        assert record["size"] == wheel.stat().st_size
    # Indexing again replaces the project's records instead of piling them up.
    again = cli("index", str(wheels), "-o", str(channel), "--subdir", "linux-64", "--json")
    assert again.exit_code == 0
    assert len(
        json.loads((channel / "linux-64" / "repodata.json").read_text())["v3"]["whl"]
    ) == len(records)


def test_solve_picks_the_newest_build_the_driver_runs_with_its_toolkit(
    cli: Cli, conda: Channel, wheels: Path
) -> None:
    result = cli("solve", "gpulib", "-f", str(wheels), "-c", str(conda.path), "--strict",
                 "--platform", "linux-64", *MACHINE, "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["toolkit"] == "12.9"
    (wheel,) = data["wheels"]
    assert wheel["label"] == "cu128"
    assert wheel["why"].startswith("cu128: rank 1")


def test_a_pinned_toolkit_takes_its_build(cli: Cli, conda: Channel, wheels: Path) -> None:
    result = cli("solve", "gpulib", "cuda-version 12.6.*", "-f", str(wheels), "-c",
                 str(conda.path), "--strict", "--platform", "linux-64", *MACHINE, "--json")  # fmt: skip
    data = json.loads(result.stdout)
    assert (data["toolkit"], data["wheels"][0]["label"]) == ("12.6", "cu126")


def test_no_solution_is_one_line(cli: Cli, conda: Channel, wheels: Path) -> None:
    result = cli("solve", "gpulib", "cuda-version 11.8.*", "-f", str(wheels), "-c",
                 str(conda.path), "--strict", "--platform", "linux-64", *MACHINE)  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith("error: no solution for gpulib cuda-version 11.8.*")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("command", ["index", "convert"])
def test_an_unreadable_wheel_is_one_line_and_nothing_is_written(
    cli: Cli, wheels: Path, tmp_path: Path, command: str
) -> None:
    corrupt = tmp_path / "in" / "broken-1.0-py3-none-any.whl"
    corrupt.parent.mkdir()
    corrupt.write_bytes(b"not a zip")
    out = tmp_path / "out"
    named = cli(command, str(corrupt), "-o", str(out))  # named one by one: an error
    assert (named.exit_code, named.stdout) == (1, "")
    assert (
        named.stderr
        == f"error: {corrupt}: not a readable wheel (zip) file: File is not a zip file\n"
    )
    found = cli(command, str(corrupt.parent), "-o", str(out))  # found in a folder, nothing else
    assert found.exit_code == 1
    verb = {"index": "indexed", "convert": "converted"}[command]
    assert found.stderr.startswith(f"error: no wheel could be {verb}: {corrupt}: not a readable")
    assert not out.exists()
    shutil.copy(corrupt, wheels / corrupt.name)  # beside readable wheels: skipped, with why
    try:
        beside = cli(command, str(wheels), "-o", str(out))
    finally:
        (wheels / corrupt.name).unlink()
    assert beside.exit_code == 0, beside.stderr
    assert f"skipped {corrupt.name}: " in beside.stdout


def test_a_remote_channel_is_a_usage_error(cli: Cli, wheels: Path) -> None:
    result = cli("solve", "gpulib", "-f", str(wheels), "-c", "https://conda.example/ch")
    assert result.exit_code == 2
    assert "expected a local channel directory" in result.stderr


@pytest.mark.slow
def test_prefix_gets_conda_packages_and_the_wheel_and_detect_sees_both(
    cli: Cli, conda: Channel, wheels: Path, tmp_path: Path
) -> None:
    prefix = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    result = cli("solve", "gpulib", "python", "-f", str(wheels), "-c", str(conda.path),
                 "--strict", "--platform", "linux-64", *MACHINE, "--into", str(prefix),
                 "--installer", "uv")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"Installed into {prefix}" in result.stdout
    detected = cli("detect", "--prefix", str(prefix), "--json")
    assert detected.exit_code == 0, detected.output
    env = json.loads(detected.stdout)
    assert env["toolkit"]["version"] == "12.9"
    (dist,) = [d for d in env["variant_wheels"] if d["name"] == "gpulib"]
    assert dist["label"] == "cu128"


@pytest.mark.slow
def test_lockfile_is_read_back_by_detect_and_export(
    cli: Cli, conda: Channel, wheels: Path, tmp_path: Path
) -> None:
    lock = tmp_path / "pixi.lock"
    result = cli("solve", "gpulib", "python", "-f", str(wheels), "-c", str(conda.path),
                 "--strict", "--platform", "linux-64", *MACHINE, "--write-lock", str(lock))  # fmt: skip
    assert result.exit_code == 0, result.output
    text = lock.read_text()
    assert "sha256:" in text
    # pixi's installer takes standard filenames: the variant wheel is locked as its copy
    assert "- pypi: ./variant-wheels/gpulib-1.0-py3-none-any.whl" in text
    detected = cli("detect", "--lockfile", str(lock), "--json")
    assert detected.exit_code == 0, detected.output
    env = json.loads(detected.stdout)
    assert env["toolkit"]["version"] == "12.9"
    (dist,) = [d for d in env["variant_wheels"] if d["name"] == "gpulib"]
    assert dist["label"] == "cu128"
    # The lock declares the machine it was solved for (records chosen per __cuda_arch).
    assert {"__cuda=12.9=0", "__cuda_arch=9.0=0"} <= {
        f"{v['name']}={v['version']}={v['build']}" for v in env["virtual_packages"]
    }
    out = tmp_path / "environment.yml"
    exported = cli("export", "--lockfile", str(lock), "--format", "environment-yml", "-o", str(out))
    assert exported.exit_code == 0, exported.output
    assert "gpulib" in out.read_text()


@pytest.mark.slow
def test_the_executable_exits_0_after_rattler_work_every_time(conda: Channel, wheels: Path,
                                                             tmp_path: Path) -> None:  # fmt: skip
    # py-rattler 0.28 can crash while the interpreter finalizes after indexing (SIGSEGV/SIGABRT
    # in 2 of 6 bare runs): the command's own status must survive.
    for n in range(5):
        done = run_script("index", str(wheels), "-o", str(tmp_path / f"ch{n}"), "--subdir",
                          "linux-64")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "gpulib 1.0" in done.stdout
    failed = run_script("solve", "gpulib", "-f", str(wheels), "-c", str(tmp_path / "missing"))
    assert failed.returncode == 2


def test_prefix_from_an_index_without_hashes_is_refused_unless_opted_out(
    cli: Cli, conda: Channel, wheels: Path, tmp_path: Path
) -> None:
    # The trust gate of `install` holds for the wheels a solve installs too.
    from tests.worlds.index_server import IndexServer

    prefix = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    with IndexServer(wheels) as index, index.configured(hashes=False):
        args = ("solve", "gpulib", "python", "--index-url", index.url, "-c", str(conda.path),
                "--strict", "--platform", "linux-64", *MACHINE, "--into", str(prefix),
                "--installer", "uv", "--no-cache")  # fmt: skip
        refused = cli(*args)
        assert refused.exit_code == 1
        assert "lists no sha256 for it" in refused.stderr
        assert "--no-require-hashes" in refused.stderr
        assert not prefix.joinpath("conda-meta").exists()  # refused before the prefix was touched
        allowed = cli(*args, "--no-require-hashes")
    assert allowed.exit_code == 0, allowed.output
    detected = json.loads(cli("detect", "--prefix", str(prefix), "--json").stdout)
    assert [d["label"] for d in detected["variant_wheels"] if d["name"] == "gpulib"] == ["cu128"]


def test_prefix_without_python_is_refused_before_anything_is_installed(
    cli: Cli, wheels: Path, tmp_path: Path
) -> None:
    """The wheels go into the prefix's interpreter or nowhere, never variant-bridge's own."""
    # A python record without an interpreter (the world's python packages lay only a text file).
    python = Pkg("python", HERE_PYTHON, "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",))
    channel = Channel(tmp_path / "conda").add([*cuda_packages(["12.9"]), python])
    prefix = tmp_path / "env"
    before = {d.name for d in Path(sys.prefix).glob("lib/python*/site-packages/*")}
    result = cli("solve", "gpulib", "python", "-f", str(wheels), "-c", str(channel.path),
                 "--strict", "--platform", "linux-64", *MACHINE, "--into", str(prefix))  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "has no bin/python and no package of the solution provides one" in result.stderr
    assert not prefix.exists()
    after = {d.name for d in Path(sys.prefix).glob("lib/python*/site-packages/*")}
    assert after == before


def _hostile_package(channel: Path, path: str, *, link: str | None = None) -> None:
    """A conda package whose paths.json (and tar) name *path*, or a link there to *link*."""
    import hashlib
    import io
    import tarfile

    index = {"name": "evil", "version": "1.0", "build": "h0_0", "build_number": 0,
             "depends": [], "subdir": "linux-64", "platform": "linux", "arch": "x86_64"}  # fmt: skip
    entry = (
        {"_path": path, "path_type": "softlink"}
        if link is not None
        else {
            "_path": path,
            "path_type": "hardlink",
            "sha256": hashlib.sha256(b"x").hexdigest(),
            "size_in_bytes": 1,
        }
    )
    info = {
        "info/index.json": json.dumps(index).encode(),
        "info/paths.json": json.dumps({"paths": [entry], "paths_version": 1}).encode(),
        "info/files": f"{path}\n".encode(),
    }
    target = channel / "linux-64" / "evil-1.0-h0_0.tar.bz2"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(target, "w:bz2") as tf:
        for name, data in info.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            tf.addfile(member, io.BytesIO(data))
        member = tarfile.TarInfo(path if link is not None else "lib/placeholder")
        if link is not None:
            member.type, member.linkname = tarfile.SYMTYPE, link
            tf.addfile(member)
        else:
            member.size = 1
            tf.addfile(member, io.BytesIO(b"x"))


@pytest.mark.parametrize(
    ("path", "link", "expected"),
    [
        ("../../OUTSIDE_trav/x", None, "member '../../OUTSIDE_trav/x' has a '..' component"),
        ("lib/escape", "../../../../etc", "link 'lib/escape' points to '../../../../etc'"),
    ],
)
def test_prefix_refuses_a_conda_package_with_a_path_outside_it_and_writes_nothing(
    cli: Cli, tmp_path: Path, path: str, link: str | None, expected: str
) -> None:
    channel = Channel(tmp_path / "conda").add([])
    _hostile_package(channel.path, path, link=link)
    channel = Channel(channel.path).add([])  # re-index with the hostile package
    prefix = tmp_path / "p" / "env"
    result = cli("solve", "evil", "-c", str(channel.path), "--strict", "--platform", "linux-64",
                 *MACHINE, "--into", str(prefix))  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "evil-1.0-h0_0.tar.bz2: " in result.stderr
    assert expected in result.stderr
    assert not prefix.exists()
    assert sorted(p.name for p in (tmp_path / "p").glob("*")) == []


def _whole_wheels(index: object) -> list[str]:
    from tests.worlds.index_server import IndexServer

    assert isinstance(index, IndexServer)
    return [r.path for r in index.requests
            if r.path.startswith("/files/") and r.path.endswith(".whl") and not r.range]  # fmt: skip


def test_index_from_an_index_url_lists_every_url_and_uses_the_cache(
    cli: Cli, wheels: Path, tmp_path: Path
) -> None:
    from tests.worlds.index_server import IndexServer

    cache = str(tmp_path / "cache")
    with IndexServer(wheels) as index:
        base = ("index", index.url, "--project", "gpulib", "--subdir", "linux-64")
        first = cli(*base, "-o", str(tmp_path / "a"), "--cache-dir", cache, "-v")
        assert first.exit_code == 0, first.output
        assert f"GET {index.url}gpulib/" in first.stderr.splitlines()
        assert _whole_wheels(index) == []  # hashes, sizes and metadata without downloading
        read = len(index.requests)
        second = cli(*base, "-o", str(tmp_path / "b"), "--cache-dir", cache)
        assert second.exit_code == 0, second.output
        assert [r.path for r in index.requests[read:] if r.path.endswith(".whl")] == []
        assert "GET " not in second.stderr  # no --verbose, no lines


def test_index_and_convert_take_a_file_url_as_an_index(
    cli: Cli, wheels: Path, tmp_path: Path
) -> None:
    # A file:// simple index (project pages as index.html, as pip reads it) is an index, not a
    # find-links directory: it needs --project, and its project page is read.
    import hashlib

    page = tmp_path / "simple" / "gpulib" / "index.html"
    page.parent.mkdir(parents=True)
    links = [
        f'<a href="{wheel.as_uri()}#sha256={hashlib.sha256(wheel.read_bytes()).hexdigest()}">'
        f"{wheel.name}</a>"
        for wheel in sorted(wheels.iterdir())
    ]
    page.write_text("<html><body>" + "".join(links) + "</body></html>")
    url = (tmp_path / "simple").as_uri() + "/"
    refused = cli("index", url, "-o", str(tmp_path / "ch"))
    assert refused.exit_code == 2
    assert "needs --project NAME" in refused.stderr
    done = cli("index", url, "--project", "gpulib", "-o", str(tmp_path / "ch"),
               "--subdir", "linux-64", "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    labels = {r["label"] for r in json.loads(done.stdout)["releases"][0]["records"]}
    assert {"cu126", "cu128"} <= labels


def test_convert_fetches_each_wheel_once_and_verbose_lists_it(
    cli: Cli, wheels: Path, tmp_path: Path
) -> None:
    from tests.worlds.index_server import IndexServer

    with IndexServer(wheels) as index:
        result = cli("convert", index.url, "--project", "gpulib", "-o", str(tmp_path / "ch"),
                     "--subdir", "linux-64", "--no-cache", "-v", "--json")  # fmt: skip
        assert result.exit_code == 0, result.output
        fetched = _whole_wheels(index)
        base = index.base
    assert fetched
    assert sorted(fetched) == sorted(set(fetched))
    for path in fetched:
        assert f"GET {base}{path}" in result.stderr.splitlines()
    assert len(json.loads(result.stdout)["packages"]) >= 3


def test_solve_index_url_names_one_index_and_old_spellings_say_the_new_names(
    cli: Cli, wheels: Path
) -> None:
    twice = cli("solve", "gpulib", "--index-url", "http://a.example/simple",
                "--index-url", "http://b.example/simple")  # fmt: skip
    assert twice.exit_code == 2
    assert "--extra-index-url" in twice.stderr
    for old, new in (("--prefix", "--into PREFIX"), ("--lockfile", "--write-lock FILE")):
        moved = cli("solve", "gpulib", "-f", str(wheels), old, "x")
        assert moved.exit_code == 2
        assert f"use {new}" in moved.stderr
