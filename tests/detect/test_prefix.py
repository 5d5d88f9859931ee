"""Reading a real conda prefix (variant_bridge.detect.prefix, through detect_environment)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.worlds.channel import Channel
from tests.worlds.prefix import (
    HOST_VIRTUAL_PACKAGES,
    add_dist_info,
    conda_python_package,
    install_prefix,
    site_packages,
    solve,
    variant_json,
)
from variant_bridge.detect import detect_environment
from variant_bridge.detect.machine import host_platform
from variant_bridge.detect.prefix import read_dist_info, read_dist_info_variant, read_prefix
from variant_bridge.environment import Environment, Source, Toolkit
from variant_bridge.errors import DetectionError, InvalidMetadata, InvalidTarget
from variant_bridge.properties import VariantProperty

SPECS = ("libcublas", "cuda-version 12.6.*", "python", "condalib")
WHEEL_URL = "https://example.org/wheels/tinyvar-0.1.0-py3-none-any-cu128.whl"
WHEEL_SHA = "ab" * 32


@dataclass(frozen=True)
class PrefixWorld:
    prefix: Path
    records: list[Any]


@pytest.fixture(scope="module")
def world(cuda_channel: Channel, tmp_path_factory: pytest.TempPathFactory) -> PrefixWorld:
    """libcublas 12.6 + python + a conda-installed Python package, then pip/uv installs."""
    root = tmp_path_factory.mktemp("prefix-world")
    extra = Channel(root / "extra").add([conda_python_package("condalib", "1.0")])
    records = solve([cuda_channel, extra], SPECS, [*HOST_VIRTUAL_PACKAGES, "__cuda=12.8"])
    prefix = install_prefix(records, root / "env", root / "pkgs", SPECS)
    site = site_packages(prefix)
    add_dist_info(
        site, "requests", "2.32.3", requires=["idna<4,>=2.5", "urllib3<3,>=1.21.1"], installer="pip"
    )
    add_dist_info(
        site,
        "tinyvar",
        "0.1.0",
        variant=variant_json("cu128", {"nvidia": {"cuda_version_lower_bound": ["12.8"]}}),
        direct_url={"url": WHEEL_URL, "archive_info": {"hashes": {"sha256": WHEEL_SHA}}},
    )
    # A directory pip left behind mid-install: no METADATA.
    (site / "broken-1.0.dist-info").mkdir()
    # pip's temporary rename of a package being uninstalled.
    (site / "~ld-1.0.dist-info").mkdir()
    return PrefixWorld(prefix, records)


@pytest.fixture(scope="module")
def detected(world: PrefixWorld) -> Environment:
    return detect_environment(prefix=world.prefix, env={})


def test_conda_records_are_read(detected: Environment, world: PrefixWorld) -> None:
    assert [str(r) for r in detected.conda_packages] == sorted(str(r) for r in world.records)
    cublas = detected.conda_package("libcublas")
    assert cublas is not None
    solved = next(r for r in world.records if r.name.normalized == "libcublas")
    assert (cublas.version, cublas.build, cublas.subdir) == ("12.6.77", "h0_0", "linux-64")
    assert cublas.sha256 == solved.sha256.hex()
    assert cublas.md5 == solved.md5.hex()
    assert cublas.url == solved.url
    assert cublas.channel == solved.channel
    assert cublas.depends == ("cuda-version >=12.6,<12.7.0a0", "__glibc >=2.17,<3.0.a0")
    assert cublas.requested_specs == ("libcublas",)
    version = detected.conda_package("cuda-version")
    assert version is not None
    assert version.constrains == ("__cuda >=12", "cudatoolkit ==12.6|12.6.*")


def test_toolkit_python_platform_origin(detected: Environment, world: PrefixWorld) -> None:
    assert detected.toolkit == Toolkit("cuda-version", "12.6", Source.PREFIX)
    assert detected.python == "3.12.7"
    assert detected.platform == "linux-64"
    assert detected.origin == f"prefix {world.prefix}"
    assert detected.default_policy() == "toolkit"


def test_pypi_side_leaves_out_what_conda_installed(
    detected: Environment, world: PrefixWorld
) -> None:
    # condalib's dist-info is listed in its conda-meta record: it is conda's, not pip's.
    assert (site_packages(world.prefix) / "condalib-1.0.dist-info" / "METADATA").is_file()
    assert detected.conda_package("condalib") is not None
    assert [str(d) for d in detected.python_packages] == [
        "requests==2.32.3",
        "tinyvar==0.1.0 [cu128]",
    ]


def test_plain_dist_info(detected: Environment, world: PrefixWorld) -> None:
    requests = detected.python_packages[0]
    assert requests.requires == ("idna<4,>=2.5", "urllib3<3,>=1.21.1")
    assert requests.installer == "pip"
    assert requests.variant is None
    assert requests.direct_url is None
    assert requests.location == str(site_packages(world.prefix) / "requests-2.32.3.dist-info")


def test_variant_dist_info(detected: Environment) -> None:
    tinyvar = detected.python_packages[1]
    assert tinyvar.variant is not None
    assert tinyvar.variant.label == "cu128"
    assert tinyvar.variant.properties == (
        VariantProperty("nvidia", "cuda_version_lower_bound", "12.8"),
    )
    assert tinyvar.installer == "uv"
    assert tinyvar.direct_url == WHEEL_URL
    assert tinyvar.sha256 == WHEEL_SHA


def test_incomplete_dist_info_is_noted_not_fatal(detected: Environment, world: PrefixWorld) -> None:
    broken = site_packages(world.prefix) / "broken-1.0.dist-info"
    assert f"skipped {broken}: no METADATA (incomplete install?)" in detected.notes
    assert not any("~ld" in note for note in detected.notes)


def test_virtual_packages_come_from_the_machine(detected: Environment) -> None:
    if host_platform() != "linux-64":
        pytest.skip("the world prefix is linux-64")
    assert {vp.source for vp in detected.virtual_packages} == {Source.DETECTED}


def test_conda_prefix_variable_is_the_default(world: PrefixWorld) -> None:
    env = detect_environment(env={"CONDA_PREFIX": str(world.prefix), "CONDA_OVERRIDE_CUDA": "12.8"})
    assert env.origin == f"prefix {world.prefix} ($CONDA_PREFIX)"
    assert env.toolkit == Toolkit("cuda-version", "12.6", Source.PREFIX)
    assert env.cuda is not None
    assert (env.cuda.version, env.cuda.source) == ("12.8", Source.override("CONDA_OVERRIDE_CUDA"))


def test_empty_conda_prefix_means_no_prefix() -> None:
    env = detect_environment(env={"CONDA_PREFIX": ""})
    assert env.origin == "this machine"
    assert env.conda_packages == ()


def test_platform_must_match_the_prefix(world: PrefixWorld) -> None:
    with pytest.raises(InvalidTarget, match=r"platform 'osx-arm64' does not match the prefix's"):
        detect_environment(prefix=world.prefix, platform="osx-arm64", env={})


# --- hand-made prefixes for the error paths ---------------------------------------------------

MakePrefix = Callable[..., Path]


@pytest.fixture
def make_prefix(tmp_path: Path, world: PrefixWorld) -> MakePrefix:
    """A prefix holding copies of the world's real records plus *extra* conda-meta files."""

    def make(extra: dict[str, str | bytes] | None = None, copy: bool = True) -> Path:
        prefix = tmp_path / "env"
        meta = prefix / "conda-meta"
        meta.mkdir(parents=True)
        if copy:
            for record in (world.prefix / "conda-meta").glob("*.json"):
                shutil.copy(record, meta / record.name)
        for name, content in (extra or {}).items():
            data = content.encode() if isinstance(content, str) else content
            (meta / name).write_bytes(data)
        return prefix

    return make


def _conda_style(**fields: Any) -> str:
    """A record as conda writes it: singular `requested_spec`, nullable url."""
    record = {
        "name": "foo",
        "version": "1.0",
        "build": "0",
        "build_number": 0,
        "subdir": "linux-64",
        "depends": [],
        "url": None,
        "channel": None,
        "requested_spec": "foo >=1",
        "files": [],
    }
    record.update(fields)
    return json.dumps(record)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"name": ', "foo-1.0-0.json: invalid JSON at line 1, column 10: Expecting value"),  # eof
        (
            '{"name": "foo",}',
            "foo-1.0-0.json: invalid JSON at line 1, column 16: Expecting",
        ),  # comma
        (b'{"name": "\xff"}', "foo-1.0-0.json: not UTF-8 text"),  # binary garbage
        ('{"size": ' + "9" * 4301 + "}", "foo-1.0-0.json: invalid JSON: a number of more than"),
        ("[" * 50_000 + "]" * 50_000, "foo-1.0-0.json: invalid JSON: nested too deeply"),
        ("[1, 2]", "foo-1.0-0.json: expected a JSON object (a conda package record), got list"),
        ('{"name": "foo", "build": "0"}', "foo-1.0-0.json: 'version' must be a non-empty string"),
        (_conda_style(version=""), "foo-1.0-0.json: 'version' must be a non-empty string, got ''"),
        (_conda_style(depends="bar"), "foo-1.0-0.json: 'depends' must be a list of strings"),
        (_conda_style(build_number="3"), "foo-1.0-0.json: 'build_number' must be an integer"),
        (_conda_style(build_number=True), "foo-1.0-0.json: 'build_number' must be an integer"),
        (_conda_style(url=5), "foo-1.0-0.json: 'url' must be a non-empty string, got 5"),
        (  # the fuzz run's 5,131-character line: the version is quoted shortened
            _conda_style(name="cuda-version", version="9" * 5000 + ".6"),
            "cuda-version '" + "9" * 80 + "…' (5002 characters) is not a CUDA toolkit version",
        ),
        (
            _conda_style(depends=["x"] * 3000 + [1]),
            "'depends' must be a list of strings, got ['x', ",
        ),
        (  # rattler refuses it (export built a record of it: an internal error in the fuzz run)
            _conda_style(build="h" + "9" * 5000),
            "(5001 characters) is longer than the 64 characters a conda build string may have",
        ),
    ],
)
def test_invalid_record_names_the_file(
    make_prefix: MakePrefix, content: str | bytes, message: str
) -> None:
    prefix = make_prefix({"foo-1.0-0.json": content})
    with pytest.raises(DetectionError) as info:
        detect_environment(prefix=prefix, env={})
    text = str(info.value)
    assert text.startswith(str(prefix / "conda-meta"))
    assert message in text
    assert "\n" not in text
    assert len(text) < 500


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_conda_meta_is_skipped_with_a_note(make_prefix: MakePrefix) -> None:
    # Reading a FIFO blocks until someone writes to it: detection would hang forever.
    prefix = make_prefix({"foo-1.0-0.json": _conda_style()})
    fifo = prefix / "conda-meta" / "trap-1.0-0.json"
    os.mkfifo(fifo)
    env = detect_environment(prefix=prefix, env={})
    assert env.conda_package("foo") is not None
    assert f"skipped {fifo}: a FIFO, not a conda record" in env.notes


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_variant_json_is_an_error_not_a_hang(tmp_path: Path) -> None:
    dist_info = tmp_path / "tinyvar-1.0.dist-info"
    dist_info.mkdir()
    os.mkfifo(dist_info / "variant.json")
    with pytest.raises(InvalidMetadata, match=r"variant\.json: cannot read: a FIFO"):
        read_dist_info_variant(dist_info)


def test_conda_written_record_is_accepted(make_prefix: MakePrefix) -> None:
    # rattler's PrefixRecord rejects url=null and drops `requested_spec`; conda writes both.
    prefix = make_prefix({"foo-1.0-0.json": _conda_style()})
    foo = detect_environment(prefix=prefix, env={}).conda_package("foo")
    assert foo is not None
    assert foo.url is None
    assert foo.requested_specs == ("foo >=1",)


def test_a_directory_named_like_a_record_is_skipped(make_prefix: MakePrefix) -> None:
    prefix = make_prefix()
    (prefix / "conda-meta" / "dir-1.0-0.json").mkdir()
    notes = read_prefix(prefix).notes
    assert (
        f"skipped {prefix / 'conda-meta' / 'dir-1.0-0.json'}: a directory, not a conda record"
        in notes
    )


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_record(make_prefix: MakePrefix) -> None:
    prefix = make_prefix({"foo-1.0-0.json": _conda_style()})
    (prefix / "conda-meta" / "foo-1.0-0.json").chmod(0)
    with pytest.raises(DetectionError, match=r"foo-1\.0-0\.json: cannot read: Permission denied"):
        read_prefix(prefix)


def test_cudatoolkit_is_the_toolkit_of_cuda_11(make_prefix: MakePrefix) -> None:
    prefix = make_prefix(
        {"cudatoolkit-11.8.0-h0.json": _conda_style(name="cudatoolkit", version="11.8.0")},
        copy=False,
    )
    assert read_prefix(prefix).toolkit == Toolkit("cudatoolkit", "11.8.0", Source.PREFIX)


def test_no_toolkit_means_driver_policy(make_prefix: MakePrefix) -> None:
    env = detect_environment(
        prefix=make_prefix({"foo-1.0-0.json": _conda_style()}, copy=False), env={}
    )
    assert env.toolkit is None
    assert env.default_policy() == "driver"
    assert env.python is None


def test_noarch_only_prefix_takes_the_host_platform(make_prefix: MakePrefix) -> None:
    prefix = make_prefix({"foo-1.0-0.json": _conda_style(subdir="noarch")}, copy=False)
    assert read_prefix(prefix).platform is None
    assert detect_environment(prefix=prefix, env={}).platform == host_platform()


def test_windows_prefix_reads_lib_site_packages(make_prefix: MakePrefix) -> None:
    prefix = make_prefix(
        {"python-3.12.7-h0.json": _conda_style(name="python", version="3.12.7", subdir="win-64")},
        copy=False,
    )
    add_dist_info(prefix / "Lib" / "site-packages", "colorama", "0.4.6")
    contents = read_prefix(prefix)
    assert contents.platform == "win-64"
    assert [d.name for d in contents.python_packages] == ["colorama"]
    if host_platform() != "win-64":  # another OS's prefix: nothing is read from this machine
        env = detect_environment(prefix=prefix, env={})
        assert [(str(vp), vp.source) for vp in env.virtual_packages] == [
            ("__archspec=1=x86_64", Source.PLATFORM_DEFAULT),
            ("__win=10.0=0", Source.PLATFORM_DEFAULT),
        ]


BAD_DIRECT_URLS = [
    ("{not json", "direct_url.json: invalid JSON at line 1, column 2"),  # a corrupt file
    ('{"dir_info": {}}', "direct_url.json: expected a PEP 610 object with a string 'url'"),  # shape
]


@pytest.mark.parametrize(("direct_url", "message"), BAD_DIRECT_URLS)
def test_bad_direct_url_is_a_note_for_detection(
    make_prefix: MakePrefix, direct_url: str, message: str
) -> None:
    # One broken direct_url.json made detect/env/run fail for the whole prefix, which they read
    # only for what is installed; the URL matters to export alone.
    prefix = make_prefix()
    dist_info = add_dist_info(site_packages(prefix), "tinyvar", "0.1.0")
    (dist_info / "direct_url.json").write_text(direct_url)
    env = detect_environment(prefix=prefix, env={})
    (dist,) = env.python_packages
    assert (dist.name, dist.direct_url, dist.sha256) == ("tinyvar", None, None)
    (note,) = [n for n in env.notes if "direct_url.json" in n]
    assert note.startswith(str(dist_info / "direct_url.json"))
    assert message in note
    assert note.endswith("ignored, so where tinyvar 0.1.0 was installed from is unknown")


@pytest.mark.parametrize(("direct_url", "message"), BAD_DIRECT_URLS)
def test_bad_direct_url_is_an_error_when_read_alone(
    make_prefix: MakePrefix, direct_url: str, message: str
) -> None:
    prefix = make_prefix()
    dist_info = add_dist_info(site_packages(prefix), "tinyvar", "0.1.0")
    (dist_info / "direct_url.json").write_text(direct_url)
    with pytest.raises(DetectionError) as info:
        read_dist_info(dist_info)
    assert str(info.value).startswith(str(dist_info / "direct_url.json"))
    assert message in str(info.value)


def test_legacy_direct_url_hash(make_prefix: MakePrefix) -> None:
    prefix = make_prefix()
    add_dist_info(
        site_packages(prefix),
        "tinyvar",
        "0.1.0",
        direct_url={"url": WHEEL_URL, "archive_info": {"hash": f"sha256={WHEEL_SHA}"}},
    )
    (dist,) = read_prefix(prefix).python_packages
    assert dist.sha256 == WHEEL_SHA


def test_malformed_variant_json_is_an_error(make_prefix: MakePrefix) -> None:
    prefix = make_prefix()
    dist_info = add_dist_info(site_packages(prefix), "tinyvar", "0.1.0")
    (dist_info / "variant.json").write_text('{"variants": 3}')
    with pytest.raises(InvalidMetadata):
        read_prefix(prefix)


def test_metadata_continuation_lines_and_missing_name(make_prefix: MakePrefix) -> None:
    prefix = make_prefix()
    add_dist_info(
        site_packages(prefix),
        "oldpkg",
        "2.0",
        metadata="Metadata-Version: 1.0\nSummary: a\n  folded line\n"
        "Requires-Dist: six;\n  python_version<'3'\n\nName: not-a-header\n",
    )
    (dist,) = read_prefix(prefix).python_packages
    # Name/Version fall back to the directory name; the folded requirement is joined.
    assert (dist.name, dist.version) == ("oldpkg", "2.0")
    assert dist.requires == ("six; python_version<'3'",)


def _not_a_prefix(tmp_path: Path, setup: str) -> Path:
    path = tmp_path / "env"
    if setup == "file":
        path.write_text("")
    elif setup == "no-conda-meta":
        (path / "lib").mkdir(parents=True)
    return path


# (what is at the path, the end of the message after the path). One case per line.
NOT_A_PREFIX = [
    ("missing", ": no such directory"),  # a mistyped --prefix
    ("file", ": not a directory"),  # a file given as prefix
    ("no-conda-meta", " is not a conda prefix (no conda-meta/)"),  # a plain venv
]


@pytest.mark.parametrize(("setup", "tail"), NOT_A_PREFIX)
def test_not_a_prefix_names_the_option(tmp_path: Path, setup: str, tail: str) -> None:
    path = _not_a_prefix(tmp_path, setup)
    with pytest.raises(DetectionError) as info:
        detect_environment(prefix=path, env={})
    assert str(info.value) == f"--prefix {path}{tail}"


@pytest.mark.parametrize(("setup", "tail"), NOT_A_PREFIX)
def test_stale_conda_prefix_names_the_variable(tmp_path: Path, setup: str, tail: str) -> None:
    # `error: /nonexistent: no such directory` did not say where the path came from.
    path = _not_a_prefix(tmp_path, setup)
    with pytest.raises(DetectionError) as info:
        detect_environment(targets=["platform=linux-64"], env={"CONDA_PREFIX": str(path)})
    assert str(info.value) == f"$CONDA_PREFIX={path}{tail} (unset it or pass --prefix)"


def test_a_path_too_long_is_one_short_line(tmp_path: Path) -> None:
    path = tmp_path / ("a" * 5000)
    with pytest.raises(DetectionError) as info:
        detect_environment(prefix=path, env={})
    message = str(info.value)
    assert message.startswith("--prefix /")
    assert "cannot read: File name too long" in message
    assert len(message) < 200


def test_only_the_header_of_metadata_is_read(tmp_path: Path) -> None:
    # A long description far beyond any document cap (a sparse file: 300 MiB on paper) is never
    # read: the name, version and requirements are all in the header block.
    dist_info = add_dist_info(tmp_path, "bigdoc", "1.0", requires=["nvidia-cublas-cu12==12.6.4.1"])
    with (dist_info / "METADATA").open("r+b") as f:
        f.truncate(300 * 1024 * 1024)
    dist = read_dist_info(dist_info)
    assert dist is not None
    assert (dist.name, dist.version, dist.requires) == (
        "bigdoc", "1.0", ("nvidia-cublas-cu12==12.6.4.1",),
    )  # fmt: skip


def test_crlf_metadata_header_ends_at_its_blank_line(tmp_path: Path) -> None:
    text = "Metadata-Version: 2.1\r\nName: crlf\r\nVersion: 2.0\r\nRequires-Dist: a\r\n\r\nRequires-Dist: not-a-header\r\n"
    dist = read_dist_info(add_dist_info(tmp_path, "crlf", "2.0", metadata=text))
    assert dist is not None
    assert (dist.name, dist.version, dist.requires) == ("crlf", "2.0", ("a",))


def test_a_metadata_header_without_end_is_refused_by_name(tmp_path: Path) -> None:
    line = "Requires-Dist: x" + "x" * 1000 + "\n"
    dist_info = add_dist_info(tmp_path, "endless", "1.0", metadata=line * 1100)
    with pytest.raises(DetectionError, match=r"METADATA: cannot read: header block longer than"):
        read_dist_info(dist_info)
