"""The target interpreter: resolved from --python, the prefix, a lock or the running one, and
probed (its tags: tests/test_platform_tags.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from variant_bridge.detect.interpreter import resolve_target_python
from variant_bridge.environment import Environment, VirtualPackage
from variant_bridge.errors import InvalidTarget

LINUX = Environment("linux-64", (VirtualPackage("__glibc", "2.28"),))


def test_version_argument_is_taken_as_is() -> None:
    target = resolve_target_python("3.12", LINUX)
    assert (target.version, target.executable, target.source) == ("3.12", None, "--python")


def test_interpreter_argument_is_probed() -> None:
    target = resolve_target_python(sys.executable, LINUX)
    assert target.executable == sys.executable
    assert target.version == "{}.{}.{}".format(*sys.version_info[:3])


@pytest.mark.parametrize(
    "value",
    [
        "/no/such/python",  # not a file
        "three.twelve",  # neither a version nor an interpreter
    ],
)
def test_bad_python_argument_is_one_clear_error(value: str) -> None:
    with pytest.raises(InvalidTarget, match=r"expected a version like 3\.12"):
        resolve_target_python(value, LINUX)


def test_a_file_that_is_no_interpreter_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(InvalidTarget, match="cannot run it as a Python interpreter"):
        resolve_target_python(str(fake), LINUX)


def test_prefix_python_wins_over_the_running_one(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    os.symlink(sys.executable, tmp_path / "bin" / "python")
    env = Environment("linux-64", python="3.12.7")
    target = resolve_target_python(None, env, prefix=tmp_path)
    assert target.source == "prefix"
    assert target.executable == str(tmp_path / "bin" / "python")
    assert target.version == "3.12.7"  # the prefix's conda record, not a probe


def test_locked_python_version_is_used_without_interpreter() -> None:
    env = Environment("linux-64", python="3.13.1", origin="pixi.lock default/linux-64")
    target = resolve_target_python(None, env)
    assert (target.version, target.executable) == ("3.13.1", None)


def test_running_interpreter_is_the_last_resort() -> None:
    assert resolve_target_python(None, Environment("linux-64")).executable == sys.executable


def test_a_hanging_interpreter_times_out_and_leaves_nothing_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wrapper whose child keeps the pipes open: the whole process group must go.
    marker = "61.25"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nsleep {marker}\n")
    fake.chmod(0o755)
    monkeypatch.setattr("variant_bridge.detect.interpreter._PROBE_TIMEOUT", 1)
    with pytest.raises(InvalidTarget, match=r"no answer within 1 s"):
        resolve_target_python(str(fake), LINUX)
    assert not [p for p in _command_lines() if f"sleep {marker}" in p]


def _command_lines() -> list[str]:
    lines = []
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            lines.append(entry.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # the process ended meanwhile
            continue
    return lines


def test_a_failing_interpreter_says_how_it_failed(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(
        InvalidTarget, match=r"cannot run it as a Python interpreter \(exit status 3\)"
    ):
        resolve_target_python(str(fake), LINUX)
