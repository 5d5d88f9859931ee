"""JSON decoding that never breaks: every failure is one error naming the document.

:func:`json.loads` fails in more ways than :class:`json.JSONDecodeError`: an integer of more
than 4,300 digits raises a bare :class:`ValueError` (CPython's limit on int/str conversion), a
document nested a few thousand levels deep raises :class:`RecursionError`, bytes that are not
UTF-8 raise :class:`UnicodeDecodeError`. Every reader of JSON the user or an index controls
(``conda-meta``, ``variant.json``, ``*-variants.json``, ``direct_url.json``, index pages) goes
through :func:`loads`, which turns each into the caller's error class with the document's name.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from variant_bridge.errors import VariantBridgeError

__all__ = ["loads"]


class _BadConstantError(ValueError):
    pass


def _reject_constant(name: str) -> NoReturn:
    raise _BadConstantError(name)


def _digit_limit() -> int:
    get = getattr(sys, "get_int_max_str_digits", None)  # Python >= 3.11 (and 3.10.7+)
    return int(get()) if get is not None else 4300


def loads(
    data: str | bytes,
    *,
    source: str,
    error: type[VariantBridgeError],
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    parse_int: Callable[[str], Any] | None = None,
) -> Any:
    """*data* decoded as JSON (``bytes`` may be UTF-8/16/32); ``NaN`` and ``Infinity`` refused.

    :param source: how the error names the document (a path, a URL, ``wheel!member``).
    :param error: the error class to raise (``DetectionError``, ``InvalidMetadata``...).
    :param parse_int: read integers with this instead (e.g. to keep a huge one as a marker
        that one entry of the document rejects, instead of refusing the whole document).
    :raises error: ``{source}: invalid JSON at line L, column C: ...``, ``...: not UTF-8 text``,
        ``...: a number of more than 4300 digits``, ``...: nested too deeply``.
    """
    try:
        return json.loads(
            data,
            object_pairs_hook=object_pairs_hook,
            parse_constant=_reject_constant,
            parse_int=parse_int,
        )
    except json.JSONDecodeError as e:
        raise error(f"{source}: invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from e
    except UnicodeDecodeError as e:
        raise error(f"{source}: not UTF-8 text: {e.reason} at byte {e.start}") from e
    except _BadConstantError as e:
        raise error(f"{source}: invalid JSON: {e} is not a JSON value") from e
    except RecursionError as e:
        raise error(f"{source}: invalid JSON: nested too deeply to read") from e
    except ValueError as e:  # json raises nothing else: the int/str conversion limit
        raise error(f"{source}: invalid JSON: a number of more than {_digit_limit()} digits") from e
