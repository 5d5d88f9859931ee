"""conda-style errors: what goes wrong inside a hook reaches the user as conda's one line
(``CondaVariantError: ...``, exit 1), never a traceback in their conda command."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from conda.exceptions import CondaError

from variant_bridge.errors import VariantBridgeError, clip
from variant_bridge.errors import one_line as joined

__all__ = ["CondaVariantError", "conda_errors", "one_line"]


class CondaVariantError(CondaError):  # type: ignore[misc]  # conda is untyped
    """A variant-bridge failure inside a conda command (conda prints ``CondaVariantError:
    message`` and exits 1)."""

    def __init__(self, message: str) -> None:
        # No keyword arguments: conda then shows the message as it is (no %-formatting).
        super().__init__(one_line(message))


def one_line(message: str) -> str:
    """A multi-line library message joined into one line, cut as the CLI cuts it
    (:func:`variant_bridge.errors.one_line`)."""
    return joined(message)


@contextlib.contextmanager
def conda_errors(doing: str) -> Iterator[None]:
    """Turn what fails inside into a :class:`CondaVariantError` naming *doing*; conda's own
    errors and exits pass through as they are.

    An unexpected exception is a bug of variant-bridge: still one line, saying so.
    """
    try:
        yield
    except (CondaError, SystemExit, KeyboardInterrupt):
        raise
    except VariantBridgeError as e:
        raise CondaVariantError(f"{doing}: {e}") from e
    except OSError as e:
        where = f": {e.filename!r}" if e.filename else ""
        raise CondaVariantError(f"{doing}: {e.strerror or e}{where}") from e
    except Exception as e:
        raise CondaVariantError(
            f"{doing}: unexpected {type(e).__name__}: {clip(str(e), limit=300)} (this is a bug "
            "in variant-bridge)"
        ) from e
