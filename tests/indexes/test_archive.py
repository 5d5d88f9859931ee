"""Paths and sizes taken from archives are checked in one place before anything is written:
member names, RECORD entries, entry points, links and the zip caps, on real wheels built by hand
with hostile members (issue 22, docs/security.md "Archives")."""

from __future__ import annotations

import re
import stat
import zipfile
from pathlib import Path

import pytest

from tests.worlds.wheels import make_wheel
from variant_bridge.errors import UnsafeArchive
from variant_bridge.indexes.archive import (
    ArchiveLimits,
    WheelArchive,
    entry_point_name,
    link_target,
    member_path,
)


@pytest.mark.parametrize(
    "name",
    ["pkg/__init__.py", "pkg-1.0.dist-info/RECORD", "pkg-1.0.data/scripts/tool", "a/b/", "x"],
)
def test_paths_inside_their_root_are_kept(name: str) -> None:
    assert member_path(name, archive="w.whl") == name.rstrip("/")


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../../../tmp/OUTSIDE", "'..'"),
        ("pkg/../../x", "'..'"),
        ("pkg-1.0.data/scripts/../../../../x", "'..'"),
        ("/tmp/OUTSIDE_abs", "an absolute path"),
        ("C:/Windows/x", "a drive letter"),
        ("pkg\\..\\x", "a backslash"),
        ("pkg/\x00x", "a control character"),
        ("pkg//x", "an empty or '.' component"),
        ("./pkg/x", "an empty or '.' component"),
        ("", "an empty path"),
    ],
)
def test_paths_leaving_their_root_are_refused_naming_them(name: str, why: str) -> None:
    with pytest.raises(UnsafeArchive) as error:
        member_path(name, archive="evil-1.0-py3-none-any.whl")
    assert str(error.value).startswith("evil-1.0-py3-none-any.whl: member ")
    assert why in str(error.value)
    assert str(error.value).endswith("refused")


@pytest.mark.parametrize(
    ("path", "target", "ok"),
    [
        ("lib/libx.so", "libx.so.1", True),
        ("lib/python3/x", "../../share/x", True),
        ("lib/x", "../../etc/passwd", False),
        ("x", "..", False),
        ("lib/x", "/etc/passwd", False),
        ("lib/x", "", False),
    ],
)
def test_links_must_point_inside_the_root(path: str, target: str, ok: bool) -> None:
    if ok:
        link_target(path, target, archive="p.tar.bz2")
    else:
        with pytest.raises(UnsafeArchive, match="outside the package's root"):
            link_target(path, target, archive="p.tar.bz2")


@pytest.mark.parametrize("name", ["../evil", "a/b", "..", "", "x\x1b[2J"])
def test_entry_point_names_must_be_file_names(name: str) -> None:
    with pytest.raises(UnsafeArchive, match="is not a file name"):
        entry_point_name(name, archive="w.whl")


def _add_raw(wheel: Path, name: str, data: bytes, *, mode: int = 0o644) -> None:
    with zipfile.ZipFile(wheel, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
        info.external_attr = mode << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, data)


@pytest.fixture
def honest(tmp_path: Path) -> Path:
    return make_wheel(
        tmp_path,
        "tinyvar",
        "1.0",
        files={
            "tinyvar-1.0.dist-info/entry_points.txt": "[console_scripts]\ntiny = tinyvar:main\n"
        },
    )


def test_an_honest_wheel_opens_with_its_entry_points(honest: Path) -> None:
    with WheelArchive(honest) as wheel:
        assert wheel.dist_info == "tinyvar-1.0.dist-info"
        assert [(p.group, p.name, p.value) for p in wheel.entry_points] == [
            ("console_scripts", "tiny", "tinyvar:main")
        ]
        names = {i.filename for i in wheel.files}
        assert "tinyvar/__init__.py" in names
        with wheel.open(next(i for i in wheel.files if i.filename == "tinyvar/__init__.py")) as f:
            assert b"__version__" in f.read()


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        ("../../../../tmp/OUTSIDE_trav", "member '../../../../tmp/OUTSIDE_trav' has a '..'"),
        ("/tmp/OUTSIDE_abs", "member '/tmp/OUTSIDE_abs' has an absolute path"),
        ("tinyvar/../../../../x", "has a '..' component"),
        ("tinyvar-1.0.data/scripts/../../../../x", "has a '..' component"),
    ],
)
def test_hostile_member_names_refuse_the_wheel(honest: Path, member: str, expected: str) -> None:
    _add_raw(honest, member, b"pwned\n")
    with pytest.raises(UnsafeArchive) as error:
        WheelArchive(honest)
    assert str(error.value).startswith(honest.name)
    assert expected in str(error.value)


def test_a_traversal_line_in_record_refuses_the_wheel(tmp_path: Path) -> None:
    record = "tinyvar/__init__.py,,\n../../../../etc/cron.d/x,sha256=AAAA,5\n"
    wheel = make_wheel(tmp_path, "tinyvar", "1.0")
    with zipfile.ZipFile(wheel) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    members["tinyvar-1.0.dist-info/RECORD"] = record.encode()
    wheel.unlink()
    for name, data in members.items():
        _add_raw(wheel, name, data)
    with pytest.raises(UnsafeArchive, match=r"RECORD: member '\.\./\.\./\.\./\.\./etc/cron"):
        WheelArchive(wheel)


def test_a_symlink_member_pointing_out_refuses_the_wheel(honest: Path) -> None:
    _add_raw(honest, "tinyvar/evil", b"../../../../etc", mode=stat.S_IFLNK | 0o777)
    with pytest.raises(
        UnsafeArchive, match=re.escape("link 'tinyvar/evil' points to '../../../../etc'")
    ):
        WheelArchive(honest)


def test_a_symlink_member_inside_is_accepted(honest: Path) -> None:
    _add_raw(honest, "tinyvar/alias.py", b"__init__.py", mode=stat.S_IFLNK | 0o777)
    with WheelArchive(honest):
        pass


def test_a_duplicate_member_refuses_the_wheel(honest: Path) -> None:
    with pytest.warns(UserWarning, match="Duplicate name"):
        _add_raw(honest, "tinyvar/__init__.py", b"other\n")
    with pytest.raises(UnsafeArchive, match="appears twice"):
        WheelArchive(honest)


@pytest.mark.parametrize("name", ["../../bin/evil", "a/b", ".."])
def test_an_entry_point_that_is_not_a_file_name_refuses_the_wheel(
    tmp_path: Path, name: str
) -> None:
    text = f"[console_scripts]\n{name} = tinyvar:main\n"
    wheel = make_wheel(
        tmp_path, "tinyvar", "1.0", files={"tinyvar-1.0.dist-info/entry_points.txt": text}
    )
    with pytest.raises(UnsafeArchive, match="is not a file name"):
        WheelArchive(wheel)


def test_entry_points_over_the_cap_are_refused_with_the_figure(tmp_path: Path) -> None:
    text = "[console_scripts]\n" + "".join(f"s{i} = tinyvar:main\n" for i in range(10_001))
    wheel = make_wheel(
        tmp_path, "tinyvar", "1.0", files={"tinyvar-1.0.dist-info/entry_points.txt": text}
    )
    with pytest.raises(UnsafeArchive, match="more than 10000 entry points: refused"):
        WheelArchive(wheel)


def test_a_zip_bomb_member_is_refused_by_its_ratio_before_it_is_inflated(honest: Path) -> None:
    _add_raw(honest, "tinyvar/bomb.bin", bytes(8 * 1024 * 1024))
    with pytest.raises(UnsafeArchive) as error:
        WheelArchive(honest)
    message = str(error.value)
    assert "member 'tinyvar/bomb.bin' inflates" in message
    assert "to 8388608 (ratio" in message
    assert "more than 200)" in message


def test_member_count_and_total_size_caps_give_their_figures(honest: Path) -> None:
    with pytest.raises(UnsafeArchive, match=r"\d+ members, more than 2: refused"):
        WheelArchive(honest, limits=ArchiveLimits(members=2))
    with pytest.raises(UnsafeArchive, match="more than 100 bytes uncompressed"):
        WheelArchive(honest, limits=ArchiveLimits(total=100))


def test_a_zip_without_one_dist_info_is_not_a_wheel(tmp_path: Path) -> None:
    target = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as zf:
        zf.writestr("x/__init__.py", "")
    with pytest.raises(UnsafeArchive, match=r"no top-level \.dist-info"):
        WheelArchive(target)


def test_install_refuses_a_wheel_with_a_path_outside_the_target_before_running_the_installer(
    honest: Path, tmp_path: Path
) -> None:
    """The check runs where the installer would take the file, for every wheel of the tree."""
    import subprocess
    import sys

    from tests.cli.conftest import Cli

    _add_raw(honest, "../../../../OUTSIDE_install", b"pwned\n")
    target = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    result = Cli()("install", "tinyvar", "-f", str(honest.parent), "--python",
                   str(target / "bin" / "python"), "--installer", "uv")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "member '../../../../OUTSIDE_install' has a '..' component" in result.stderr
    assert not list(target.glob("lib/python*/site-packages/tinyvar*"))
