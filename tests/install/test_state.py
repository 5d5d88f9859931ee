"""The inspection of the target interpreter reads only what it needs, each file up to a cap, and
an install that fails after the installer ran says exactly what it changed.

Real parts: a uv venv of this interpreter, dist-infos as installers leave them (one holding a
sparse 10 GiB ``METADATA``: costless on disk, ruinous to read whole), real wheels, real uv.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.cli.conftest import run_script
from tests.worlds.wheels import make_wheel
from variant_bridge.install import find_uv, read_state
from variant_bridge.install._state import MAX_HEADER

pytestmark = pytest.mark.slow

BOMB = 10 * 1024**3
"""The size of the hostile ``METADATA`` (sparse: no disk, but 10 GiB to whoever reads it)."""


def _venv(path: Path) -> Path:
    uv = find_uv()
    assert uv is not None
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(path)], check=True)
    (site,) = path.glob("lib/python*/site-packages")
    return site


def _dist_info(site: Path, name: str, headers: bytes, *, size: int = 0) -> Path:
    """A dist-info whose ``METADATA`` starts with *headers*, extended (sparse) to *size*."""
    dist_info = site / f"{name}-1.0.dist-info"
    dist_info.mkdir()
    metadata = dist_info / "METADATA"
    metadata.write_bytes(headers)
    if size:
        os.truncate(metadata, size)
    (dist_info / "INSTALLER").write_text("uv\n")
    (dist_info / "RECORD").write_text("")
    return dist_info


def test_a_10_gib_metadata_is_read_up_to_its_headers(tmp_path: Path) -> None:
    site = _venv(tmp_path / "venv")
    headers = b"Metadata-Version: 2.1\nName: bomb\nVersion: 1.0\nRequires-Dist: helper>=1\n\n"
    _dist_info(site, "bomb", headers, size=BOMB)  # a body of 10 GiB of NUL bytes
    # No blank line at all: a header of 10 GiB (everything after "Summary: " is NUL bytes).
    endless = b"Metadata-Version: 2.1\nName: endless\nVersion: 2.0\nSummary: "
    _dist_info(site, "endless", endless, size=BOMB)
    state = read_state(str(tmp_path / "venv" / "bin" / "python"))
    bomb, cut = state.get("bomb"), state.get("endless")
    assert bomb is not None
    assert cut is not None
    assert (bomb.version, bomb.requires) == ("1.0", ("helper>=1",))
    assert cut.version == "2.0"  # the lines before the cap; the line the cap cut is left out


def test_the_header_block_is_capped_and_the_small_files_too(tmp_path: Path) -> None:
    site = _venv(tmp_path / "venv")
    long = b"X-Filler: " + b"x" * 100 + b"\n"
    lines = long * (MAX_HEADER // len(long) + 10)
    _dist_info(site, "late", b"Name: late\nVersion: 1.0\n" + lines + b"Requires-Dist: gone\n\n")
    info = _dist_info(site, "labelled", b"Name: labelled\nVersion: 1.0\n\n")
    (info / "variant.json").write_bytes(b'{"variants": {"cu126": {}}}')
    huge = _dist_info(site, "huge", b"Name: huge\nVersion: 1.0\n\n")
    with (huge / "variant.json").open("wb") as f:  # 20 MiB: above the cap, never parsed
        f.truncate(20 * 1024 * 1024)
    state = read_state(str(tmp_path / "venv" / "bin" / "python"))
    late = state.get("late")
    assert late is not None
    assert late.requires == ()  # past the header cap: not read
    labelled, big = state.get("labelled"), state.get("huge")
    assert labelled is not None
    assert labelled.variant_label == "cu126"
    assert big is not None
    assert big.variant_label is None


def test_an_install_failing_after_the_installer_ran_says_what_it_changed(tmp_path: Path) -> None:
    """uv refuses ``liar`` (its METADATA says 1.1, its name 1.0), ``honest`` installed or not:
    the error says whether the target was changed, and how."""
    made = make_wheel(tmp_path / "made", "liar", "1.0")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(made) as src, zipfile.ZipFile(wheels / made.name, "w") as dst:
        for member in src.infolist():
            data = src.read(member)
            if member.filename.endswith(".dist-info/METADATA"):
                data = data.replace(b"Version: 1.0", b"Version: 1.1")
            dst.writestr(member, data)
    make_wheel(wheels, "honest", "1.0", requires=["liar"])
    _venv(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    result = run_script(
        "install", "honest", "-f", str(wheels), "--python", str(python), "--installer", "uv"
    )
    assert result.returncode == 1, result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: uv failed (exit 2): ")
    assert "Wheel version does not match filename (1.1 != 1.0)" in line
    # uv installs the two in parallel: whether honest lands before liar's failure stops it is
    # uv's race, so the error is checked against what the target holds afterwards.
    if read_state(str(python)).get("honest") is not None:
        assert line.endswith(f"; {python} was changed: installed honest==1.0")
    else:
        assert line.endswith(f"; {python} was not changed")
