"""Ending the process after py-rattler's native work without its exit-time crash.

py-rattler 0.28 can die while the interpreter finalizes after ``rattler.index`` or a solve
(SIGSEGV or SIGABRT, "PyGILState_Release ... finalizing"; shared/reference/maintainers.md §2.8):
the work is done and its output written, yet the exit status says it failed. Commands that ran
rattler's native work ask :func:`cli.run` (the executable only; tests call the commands in
process) to flush stdout/stderr and end with :func:`os._exit`, which skips the finalization that
crashes, keeping the command's own status.

Every other command the executable runs ends the same way once it has returned and no other thread
runs, after the exit functions (:mod:`atexit`) a normal exit runs: its files, thread pools and
scratch folders are closed by then, so the interpreter's teardown of every module's objects (~2%
of a cold ``install --dry-run``) would free memory the process is about to give back anyway.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys

__all__ = ["alone", "exit_now", "request_clean_exit", "requested"]

_requested: list[bool] = []


def request_clean_exit() -> None:
    """Called by a command before it runs rattler's native work."""
    _requested.append(True)


def requested() -> bool:
    return bool(_requested)


def alone() -> bool:
    """Whether no thread but this one runs (a normal exit would wait for the others) and the
    exit functions can be run first (``atexit._run_exitfuncs`` is CPython's; elsewhere the
    command takes the normal exit)."""
    if not hasattr(atexit, "_run_exitfuncs"):
        return False
    threading = sys.modules.get("threading")  # never imported: no thread was started with it
    return threading is None or threading.active_count() == 1


def exit_now(status: object, *, exit_functions: bool = False) -> None:
    """Flush and end the process now with the status ``sys.exit(status)`` would give; with
    *exit_functions*, after running the :mod:`atexit` functions as a normal exit does."""
    code = status if isinstance(status, int) else 0 if status is None else 1
    if not isinstance(status, int) and status is not None:
        print(status, file=sys.stderr)
    if exit_functions:
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)
