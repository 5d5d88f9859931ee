"""Rattler work in a child interpreter: a crash at the child's exit does not fail the work."""

from __future__ import annotations

import atexit
import os
import signal

import pytest

from variant_bridge.errors import ReleaseInputError
from variant_bridge.maintainer._isolated import run_isolated


def answer_then_crash_at_exit(value: int) -> int:
    # What py-rattler 0.28 does after index_fs/run_build: the work is done, then the
    # interpreter dies while finalizing (SIGSEGV, exit status 139 from a shell).
    atexit.register(lambda: os.kill(os.getpid(), signal.SIGSEGV))
    return value * 2


def abort_before_answering() -> int:
    print("about to abort", flush=True)
    os.abort()


def chatty() -> str:
    print("building vbdemo ...")  # rattler-build's progress: must not spoil the answer
    os.write(1, b"raw bytes on fd 1\n")
    return "done"


def refuse() -> None:
    raise ReleaseInputError("recipe.yaml: the recipe does not render: no such key")


def fail_unexpectedly() -> None:
    raise KeyError("boom")


def test_a_crash_after_the_answer_does_not_lose_it() -> None:
    assert run_isolated(answer_then_crash_at_exit, 21) == 42


def test_what_the_work_prints_does_not_spoil_the_answer() -> None:
    assert run_isolated(chatty) == "done"


def test_a_child_that_dies_before_answering_is_one_clear_error() -> None:
    with pytest.raises(ReleaseInputError) as info:
        run_isolated(abort_before_answering)
    assert str(info.value) == (
        "the rattler worker died before answering (signal SIGABRT): about to abort"
    )


def test_the_childs_errors_come_back_as_they_were_raised() -> None:
    with pytest.raises(ReleaseInputError, match="the recipe does not render: no such key"):
        run_isolated(refuse)
    with pytest.raises(RuntimeError, match="KeyError: 'boom'"):
        run_isolated(fail_unexpectedly)
