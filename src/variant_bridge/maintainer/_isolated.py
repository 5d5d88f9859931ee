"""Run rattler work in a child process, so a crash at the child's exit cannot fail a command.

py-rattler 0.28 and py-rattler-build 0.73 can die at interpreter exit after their work is done
(SIGSEGV or SIGABRT from ``PyGILState_Release`` while finalizing, shared/reference/maintainers.md
§2.8). A command that renders recipes or reads packages in its own process would then exit 139
after printing a correct answer. Here the work runs in a fresh (spawned) interpreter that sends
its result back through a pipe *before* it exits: once the parent holds the result, the child's
exit status no longer matters. A child that dies before answering is an error naming its signal.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from variant_bridge.errors import ReleaseInputError, VariantBridgeError

__all__ = ["run_isolated"]

T = TypeVar("T")


def _child(connection: Connection, func: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        result: tuple[bool, Any] = (True, func(*args))
    except VariantBridgeError as e:
        result = (False, e)
    except Exception as e:  # anything else crosses as text: its class may not unpickle
        result = (False, RuntimeError(f"{type(e).__name__}: {e}"))
    connection.send(result)
    connection.close()


def _status(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def run_isolated(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in a child interpreter; its result (or its error) back here.

    *func* must be importable (a module-level function) and its arguments and result picklable.

    :raises VariantBridgeError: what *func* raised; :raises ReleaseInputError: the child died
        before answering.
    """
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, func, args), daemon=True)
    process.start()
    sender.close()
    try:
        ok, payload = receiver.recv()
    except EOFError:
        process.join()
        raise ReleaseInputError(
            f"the rattler worker died before answering ({_status(process.exitcode)})"
        ) from None
    finally:
        receiver.close()
    process.join()  # its exit status is ignored: the work is done (see the module docstring)
    if ok:
        return payload  # type: ignore[no-any-return]
    raise payload
