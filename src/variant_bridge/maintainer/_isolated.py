"""Run rattler work in a child process, so a crash at the child's exit cannot fail a command.

py-rattler 0.28 and py-rattler-build 0.73 can die at interpreter exit after their work is done
(SIGSEGV or SIGABRT from ``PyGILState_Release`` while finalizing, shared/reference/maintainers.md
§2.8). A command that renders recipes or reads packages in its own process would then exit 139
after printing a correct answer. Here the work runs in a fresh interpreter that writes its result
to a pipe of its own *before* it exits: once the parent holds the whole result, the child's exit
status no longer matters. A child that dies before answering is an error naming its signal.

A plain ``python -c`` child is used rather than :mod:`multiprocessing`: a spawned child re-runs
the caller's main script, which a library user's script need not guard. The answer comes back
on the child's stdout (what the work prints is sent to its stderr), which works on every OS.
"""

from __future__ import annotations

import pickle
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any, TypeVar

from variant_bridge.errors import ReleaseInputError

__all__ = ["run_isolated"]

T = TypeVar("T")

_CHILD = """\
import os, pickle, sys
# The result goes to the original stdout; anything the work prints goes to stderr instead.
stream = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
sys.stdout = sys.stderr
data = sys.stdin.buffer.read()
size = int(sys.argv[1])
sys.path[:] = pickle.loads(data[:size])
func, args = pickle.loads(data[size:])
from variant_bridge.errors import VariantBridgeError
try:
    result = (True, func(*args))
except VariantBridgeError as e:
    result = (False, e)
except Exception as e:  # its class may not unpickle in the parent: send it as text
    result = (False, RuntimeError(f"{type(e).__name__}: {e}"))
stream.write(pickle.dumps(result))
stream.close()
"""


def _status(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def run_isolated(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in a child interpreter; its result (or its error) back here.

    *func* must be importable (a module-level function) and its arguments and result picklable.

    :raises VariantBridgeError: what *func* raised; :raises ReleaseInputError: the child died
        before answering (its signal and last line of output named).
    """
    path = pickle.dumps(list(sys.path))
    work = pickle.dumps((func, args))
    with tempfile.TemporaryFile() as log:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(len(path))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        answer, _ = child.communicate(path + work)
        code = child.returncode  # ignored once answered: the work is done (module docstring)
        if not answer:
            log.seek(0)
            lines = [line for line in log.read().decode(errors="replace").splitlines() if line]
            last = f": {lines[-1].strip()}" if lines else ""
            raise ReleaseInputError(
                f"the rattler worker died before answering ({_status(code)}){last}"
            )
    ok, payload = pickle.loads(answer)
    if ok:
        return payload  # type: ignore[no-any-return]
    raise payload
