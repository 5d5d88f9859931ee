"""What the user asked for: the requested specs and ``-c`` channels of ``conda-meta/history``,
replayed the way conda replays them (``update|install|create`` specs add or replace by name,
``remove|uninstall`` drop, ``neutered`` relax), and the channel list of a pixi.lock environment.
Parsing is strict: a broken line or non-UTF-8 bytes are an error naming the file and line
(docs/share.md, "environment.yml"; rattler and pixi record ``requested_specs`` per record instead).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from variant_bridge.errors import DetectionError, NotRegularFileError
from variant_bridge.indexes.local import read_regular

__all__ = [
    "History",
    "Request",
    "Revision",
    "lock_channels",
    "parse_history",
    "read_history",
    "spec_name",
]

_HEADER_RE = re.compile(r"==>\s*(?P<date>.*?)\s*<==")
_CMD_RE = re.compile(r"#\s*cmd:\s*(?P<cmd>.*)")
_SPECS_RE = re.compile(r"#\s*(?P<action>\w+)\s+specs:\s*(?P<specs>.*)")
_NAME_RE = re.compile(r"\s*(?P<name>[A-Za-z0-9_][A-Za-z0-9_.\-]*)")
# A comma-separated old-style list continues a spec when the next part starts like a version.
_CONTINUATION_RE = re.compile(r"\s*[<>=!~0-9*]")

_ADD = frozenset({"update", "install", "create"})
_REMOVE = frozenset({"remove", "uninstall"})
_NEUTER = frozenset({"neutered"})


@dataclass(frozen=True, slots=True)
class Request:
    """One ``# <action> specs: [...]`` line."""

    action: str
    specs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Revision:
    """One transaction: its date, command line, package changes and spec requests."""

    date: str
    command: str | None = None
    linked: tuple[str, ...] = ()
    unlinked: tuple[str, ...] = ()
    requests: tuple[Request, ...] = ()


@dataclass(frozen=True, slots=True)
class History:
    """A parsed ``conda-meta/history`` file."""

    path: str
    revisions: tuple[Revision, ...] = ()

    def requested_specs(self) -> tuple[str, ...]:
        """The specs the user asked for and did not remove, in first-requested order."""
        specs: dict[str, str] = {}
        for revision in self.revisions:
            for request in revision.requests:
                for spec in request.specs:
                    name = spec_name(spec)
                    if request.action in _ADD or (request.action in _NEUTER and name in specs):
                        specs[name] = spec
                    elif request.action in _REMOVE:
                        specs.pop(name, None)
        return tuple(specs.values())

    def channels(self) -> tuple[str, ...]:
        """Channels named with ``-c``/``--channel`` on recorded command lines, in order."""
        seen: dict[str, None] = {}
        for revision in self.revisions:
            for channel in _command_channels(revision.command or ""):
                seen.setdefault(channel.rstrip("/"), None)
        return tuple(seen)


def spec_name(spec: str) -> str:
    """The package name of a MatchSpec string (``conda-forge::numpy >=1`` -> ``numpy``)."""
    _, _, rest = spec.rpartition("::")
    match = _NAME_RE.match(rest)
    return match["name"].lower() if match else rest.strip().lower()


def read_history(prefix: str | os.PathLike[str]) -> History | None:
    """Read ``<prefix>/conda-meta/history``; ``None`` when the file does not exist.

    :raises DetectionError: the file cannot be read or is broken (the message names it).
    """
    path = Path(prefix) / "conda-meta" / "history"
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return None
    except NotRegularFileError as e:  # a FIFO would block the read forever
        raise DetectionError(str(e)) from e
    except OSError as e:
        raise DetectionError(f"cannot read {str(path)!r}: {e.strerror or e}") from e
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DetectionError(
            f"broken conda history {str(path)!r}: not UTF-8 text (byte {e.start})"
        ) from e
    return parse_history(text, path=str(path))


def parse_history(text: str, *, path: str = "conda-meta/history") -> History:
    """Parse the text of a history file.

    :raises DetectionError: a line of unknown shape or an unreadable spec list (names path:line).
    """
    revisions: list[Revision] = []
    current: _Builder | None = None
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line:
            continue
        header = _HEADER_RE.fullmatch(line)
        if header is not None:
            if current is not None:
                revisions.append(current.build())
            current = _Builder(date=header["date"])
            continue
        if current is None:
            # conda always starts with a header; tolerate files that do not (hand-written ones).
            current = _Builder(date="")
        if line.startswith("#"):
            cmd = _CMD_RE.fullmatch(line)
            specs = _SPECS_RE.fullmatch(line)
            if cmd is not None:
                current.command = cmd["cmd"].strip()
            elif specs is not None:
                parsed = _parse_specs(specs["specs"].strip(), where=f"{path!r} line {number}")
                current.requests.append(Request(specs["action"].lower(), parsed))
            continue
        if line[0] in "+-" and len(line) > 1:
            (current.linked if line[0] == "+" else current.unlinked).append(line[1:])
            continue
        raise DetectionError(
            f"broken conda history {path!r} line {number}: {line[:60]!r} is not a "
            "'==> date <==' header, a '#' comment or a '+'/'-' package line"
        )
    if current is not None:
        revisions.append(current.build())
    return History(path=path, revisions=tuple(revisions))


@dataclass(slots=True)
class _Builder:
    date: str
    command: str | None = None
    linked: list[str] = field(default_factory=list)
    unlinked: list[str] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)

    def build(self) -> Revision:
        return Revision(
            self.date, self.command, tuple(self.linked), tuple(self.unlinked), tuple(self.requests)
        )


def _parse_specs(text: str, *, where: str) -> tuple[str, ...]:
    if not text:
        return ()
    if text.startswith("["):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError) as e:
            raise DetectionError(
                f"broken conda history {where}: unreadable spec list {text[:60]!r}"
            ) from e
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            raise DetectionError(
                f"broken conda history {where}: expected a list of spec strings, got {text[:60]!r}"
            )
        items = [s.strip() for s in value]
    else:
        items = []
        for part in text.split(","):
            if items and _CONTINUATION_RE.match(part):
                items[-1] += "," + part.strip()
            else:
                items.append(part.strip())
    specs: list[str] = []
    for spec in items:
        # conda skips features ("name@") and empty entries when it replays history.
        if not spec or spec.endswith("@"):
            continue
        if _NAME_RE.match(spec.rpartition("::")[2]) is None:
            raise DetectionError(f"broken conda history {where}: {spec!r} is not a package spec")
        specs.append(spec)
    return tuple(specs)


def _command_channels(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError:
        # A recorded command line is free text; an odd quote there says nothing about channels.
        return []
    channels: list[str] = []
    for i, arg in enumerate(argv):
        if arg in ("-c", "--channel") and i + 1 < len(argv):
            channels.append(argv[i + 1])
        elif arg.startswith("--channel="):
            channels.append(arg.partition("=")[2])
        elif arg.startswith("-c") and len(arg) > 2 and not arg.startswith("--"):
            channels.append(arg[2:])
    return channels


def lock_channels(lockfile: str | os.PathLike[str], environment: str | None) -> tuple[str, ...]:
    """The channel URLs of a pixi.lock environment, highest priority first.

    :raises DetectionError: the lock file cannot be read.
    """
    import rattler  # heavy: only for an export from a lock file

    try:
        lock = rattler.LockFile.from_path(Path(lockfile))
        env = lock.environment(environment or "default")
        channels = env.channels() if env is not None else []
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # pyo3 panics derive from BaseException
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise DetectionError(f"{lockfile}: not a readable lock file: {first}") from e
    return tuple(str(c) for c in channels)
