"""The maintainer commands' input files: regular files only, read up to a cap, parsed safely.

``check`` and ``matrix`` read what a maintainer points them at: ``.ci_support`` YAML, variant
configurations, TOML declarations, ``*-variants.json``, recipes and packages (the last two read
by rattler in a child). A FIFO would block a read forever and ``/dev/zero`` never ends, so every
input is opened without blocking and checked to be a regular file on the open descriptor
(:mod:`variant_bridge.indexes.local`, every command's one reader), and read up to
:data:`MAX_INPUT`. Parsers meet hostile text with one line too: YAML or TOML nested thousands
deep (Python's recursion limit) and integers of thousands of digits (Python's ``int`` conversion
limit) are errors naming the file, never a crash.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import Any

from variant_bridge.errors import NotRegularFileError, ReleaseInputError
from variant_bridge.indexes.local import check_regular as regular
from variant_bridge.indexes.local import read_regular

__all__ = ["MAX_INPUT", "MAX_PACKAGE", "check_regular", "load_toml", "load_yaml", "read_input"]

MAX_INPUT = 64 * 1024 * 1024
"""The largest text input read (a ``.ci_support`` file is a few KB, conda-forge-pinning's
``conda_build_config.yaml`` 40 KB)."""

MAX_PACKAGE = 16 * 1024 * 1024 * 1024
"""The largest conda package handed to rattler (whose ``info`` section alone is read)."""


def read_input(path: Path, *, limit: int = MAX_INPUT) -> bytes:
    """The bytes of the regular file *path*, at most *limit*.

    :raises ReleaseInputError: missing, not a regular file (a FIFO, a device, a directory),
        larger than *limit*, or unreadable (one line naming it).
    """
    try:
        return read_regular(path, max_bytes=limit)
    except OSError as e:
        raise _refused(path, e) from None


def check_regular(path: Path, *, limit: int = MAX_INPUT) -> None:
    """Refuse *path* unless it is a regular file of at most *limit* bytes (for files another
    reader opens: py-rattler-build, py-rattler).

    :raises ReleaseInputError: as :func:`read_input`.
    """
    try:
        regular(path, max_bytes=limit)
    except OSError as e:
        raise _refused(path, e) from None


def _refused(path: Path, error: OSError) -> ReleaseInputError:
    """The shared reader's refusal (indexes.local) as a maintainer input's one line."""
    if isinstance(error, NotRegularFileError):
        return ReleaseInputError(str(error))
    if error.errno == errno.ENOENT:
        return ReleaseInputError(f"{path}: no such file")
    if error.errno == errno.EFBIG:
        return ReleaseInputError(f"{path}: {error.strerror}")
    return ReleaseInputError(f"cannot read {path}: {error.strerror or error}")


def _text(path: Path, data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReleaseInputError(f"{path}: not {what}: not UTF-8 text") from None


def load_yaml(path: Path, *, what: str = "YAML") -> Any:
    """The YAML document of *path* (PyYAML's safe loader, libyaml's when built with it).

    :raises ReleaseInputError: unreadable, not YAML (with its line), nested too deeply, or
        holding a number too long to read.
    """
    import yaml

    text = _text(path, read_input(path), what)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        line = getattr(getattr(e, "problem_mark", None), "line", None)
        at = f" (line {line + 1})" if line is not None else ""
        problem = getattr(e, "problem", None)
        said = f": {' '.join(str(problem).split())[:120]}" if problem else ""
        raise ReleaseInputError(f"{path}: not {what}{at}{said}") from None
    except RecursionError:
        raise ReleaseInputError(f"{path}: not {what}: nested too deeply") from None
    except ValueError as e:  # int() of thousands of digits
        raise ReleaseInputError(f"{path}: not {what}: {_value_error(e)}") from None


def _value_error(error: ValueError) -> str:
    text = str(error)
    if "digits" in text:
        return f"a number longer than {sys.get_int_max_str_digits()} digits"
    return text.split("\n", 1)[0][:200]


def load_toml(path: Path) -> dict[str, Any]:
    """The TOML document of *path* as plain data (tomllib where it exists, else tomlkit).

    :raises ReleaseInputError: unreadable, not TOML, nested too deeply, or holding a number too
        long to read (one line naming the file).
    """
    text = _text(path, read_input(path), "TOML")
    try:
        return _parse_toml(text)
    except RecursionError:
        raise ReleaseInputError(f"{path}: not TOML: nested too deeply") from None
    except _TomlError as e:
        raise ReleaseInputError(f"{path}: not TOML: {e.args[0] if e.args else e}") from None
    except ValueError as e:
        raise ReleaseInputError(f"{path}: not TOML: {_value_error(e)}") from None


class _TomlError(Exception):
    """A TOML syntax error, either parser's."""


def _parse_toml(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise _TomlError(str(e)) from None
    import tomlkit  # Python 3.10
    from tomlkit.exceptions import TOMLKitError

    try:
        data: dict[str, Any] = tomlkit.loads(text).unwrap()
    except TOMLKitError as e:
        raise _TomlError(str(e)) from None
    return data
