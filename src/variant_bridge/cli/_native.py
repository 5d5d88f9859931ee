"""Ending the process after py-rattler's native work without its exit-time crash.

py-rattler 0.28 can die while the interpreter finalizes after ``rattler.index`` or a solve
(SIGSEGV or SIGABRT, "PyGILState_Release ... finalizing"; shared/reference/maintainers.md §2.8):
the work is done and its output written, yet the exit status says it failed. Commands that ran
rattler's native work ask :func:`cli.run` (the executable only; tests call the commands in
process) to flush stdout/stderr and end with :func:`os._exit`, which skips the finalization that
crashes, keeping the command's own status.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["exit_now", "request_clean_exit", "requested"]

_requested: list[bool] = []


def request_clean_exit() -> None:
    """Called by a command before it runs rattler's native work."""
    _requested.append(True)


def requested() -> bool:
    return bool(_requested)


def exit_now(status: object) -> None:
    """Flush and end the process now with the status ``sys.exit(status)`` would give."""
    code = status if isinstance(status, int) else 0 if status is None else 1
    if not isinstance(status, int) and status is not None:
        print(status, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)
