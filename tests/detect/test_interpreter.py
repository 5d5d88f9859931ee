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
from variant_bridge.platform_tags import PythonSource

LINUX = Environment("linux-64", (VirtualPackage("__glibc", "2.28"),))


def test_version_argument_is_taken_as_is() -> None:
    target = resolve_target_python("3.12", LINUX)
    assert (str(target.version), target.executable, target.source) == (
        "3.12",
        None,
        PythonSource.OPTION,
    )


def test_interpreter_argument_is_probed() -> None:
    target = resolve_target_python(sys.executable, LINUX)
    assert target.executable == sys.executable
    assert str(target.version) == "{}.{}.{}".format(*sys.version_info[:3])


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


def _unrunnable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 3\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"pyvenv.cfg": "implementation = CPython\nversion_info = 3.12.7\n", "lib/python3.12/": ""}, ("3.12.7", "")),  # uv venv
        ({"pyvenv.cfg": "home = /usr/bin\nversion = 3.11.2\n", "lib/python3.11/": ""}, ("3.11.2", "")),  # python -m venv
        ({"pyvenv.cfg": "version = 3.13.1\n", "lib/python3.13t/": ""}, ("3.13.1", "t")),  # free-threaded
        ({"conda-meta/python-3.12.7-hc5c86c4_0_cpython.json": "{}", "lib/python3.12/": ""}, ("3.12.7", "")),  # conda prefix
    ],
)  # fmt: skip
def test_an_interpreter_in_a_venv_or_prefix_is_read_not_run(
    tmp_path: Path, files: dict[str, str], expected: tuple[str, str]
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        if name.endswith("/"):
            (tmp_path / name).mkdir()
        else:
            (tmp_path / name).write_text(text)
    python = _unrunnable(tmp_path / "bin" / "python")  # running it would fail
    target = resolve_target_python(str(python), LINUX)
    assert (str(target.version), target.abiflags) == expected
    assert (target.executable, target.implementation) == (str(python), "cpython")


@pytest.mark.parametrize(
    "files",
    [
        {"pyvenv.cfg": "implementation = PyPy\nversion_info = 3.10.14\n", "lib/python3.10/": ""},  # not CPython
        {"pyvenv.cfg": "version = 3.10.14\n", "lib/pypy3.10/": ""},  # no lib/python3.10
        {"pyvenv.cfg": "version = 3.12\n"},  # nothing to tell the ABI by
    ],
)  # fmt: skip
def test_an_interpreter_the_files_do_not_describe_is_run(
    tmp_path: Path, files: dict[str, str]
) -> None:
    for name, text in files.items():
        if name.endswith("/"):
            (tmp_path / name).mkdir(parents=True)
        else:
            (tmp_path / name).write_text(text)
    python = _unrunnable(tmp_path / "bin" / "python")
    with pytest.raises(InvalidTarget, match="cannot run it as a Python interpreter"):
        resolve_target_python(str(python), LINUX)


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
    assert target.source is PythonSource.PREFIX
    assert target.executable == str(tmp_path / "bin" / "python")
    assert str(target.version) == "3.12.7"  # the prefix's conda record, not a probe


def test_locked_python_version_is_used_without_interpreter() -> None:
    env = Environment("linux-64", python="3.13.1", origin="pixi.lock default/linux-64")
    target = resolve_target_python(None, env)
    assert (str(target.version), target.executable) == ("3.13.1", None)


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
