"""Reading TOML files for the maintainer commands (tomllib where it exists, else tomlkit)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from variant_bridge.errors import ReleaseInputError

__all__ = ["load_toml"]


def load_toml(path: Path) -> dict[str, Any]:
    """The document as plain data.

    :raises ReleaseInputError: unreadable or not TOML (one line naming the file).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise ReleaseInputError(f"cannot read {path!s}: {reason or e}") from None
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ReleaseInputError(f"{path!s}: not TOML: {e}") from None
    import tomlkit  # Python 3.10
    from tomlkit.exceptions import TOMLKitError

    try:
        data: dict[str, Any] = tomlkit.loads(text).unwrap()
    except TOMLKitError as e:
        raise ReleaseInputError(f"{path!s}: not TOML: {e}") from None
    return data
