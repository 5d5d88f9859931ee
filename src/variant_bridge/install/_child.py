"""Child processes that do not outlive the command (an installer, the target interpreter).

A command killed with ``kill -9`` runs no cleanup: its children would go on alone, an installer
half-way through changing the environment with nobody left to verify or record the result. On
Linux each child asks the kernel to kill it when its parent dies (``PR_SET_PDEATHSIG``); the
next ``install`` then finds the environment as the killed run left it and repairs it. Other
systems have no such request; there the child finishes on its own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = ["dies_with_parent"]

_PR_SET_PDEATHSIG = 1


def dies_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has Linux kill the child when this process dies (even by ``kill
    -9``), so an interrupted install leaves no installer running; ``None`` elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import signal

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:  # runs in the child between fork and exec: nothing but C calls
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)

    return preexec
