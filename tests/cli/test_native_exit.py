"""The executable's quick exit (cli/_native.py): taken only when nothing would be lost."""

from __future__ import annotations

import atexit
import threading

import pytest

from variant_bridge.cli import _native


def test_the_quick_exit_is_taken_only_when_no_other_thread_runs() -> None:
    assert _native.alone()
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        assert not _native.alone()  # a normal exit waits for it
    finally:
        release.set()
        worker.join()


def test_without_cpythons_exit_functions_runner_the_normal_exit_is_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(atexit, "_run_exitfuncs")
    assert not _native.alone()
