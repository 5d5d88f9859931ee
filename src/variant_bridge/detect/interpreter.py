"""The interpreter a wheel is chosen for (and installed into), resolved and probed.

Default: the prefix's python when the environment has one, else the running interpreter. An
interpreter given by path is read from its environment's files when they say enough (a venv's
``pyvenv.cfg``, a conda prefix's python record, and the ``lib/pythonX.Y[t]`` directory that tells
CPython and its ABI apart), else run once to ask. Its wheel tags are
:mod:`variant_bridge.platform_tags`' business.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.version import Version

from variant_bridge.environment import Environment
from variant_bridge.errors import InvalidTarget
from variant_bridge.platform_tags import PythonSource, TargetPython

__all__ = ["resolve_target_python", "running_python", "site_packages"]

_VERSION_RE = re.compile(r"[0-9]+\.[0-9]+(\.[0-9]+)?")
_PROBE_TIMEOUT = 30
_PROBE = (
    "import json, sys, sysconfig; print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3],"
    " 'implementation': sys.implementation.name,"
    " 'abiflags': getattr(sys, 'abiflags', '')"
    " or ('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else '')}))"
)
_SITE = (
    "import json, sysconfig;"
    " print(json.dumps([sysconfig.get_path('purelib'), sysconfig.get_path('platlib')]))"
)


def _ask(executable: str, code: str) -> Any:
    """Run *code* in *executable* and read the JSON it prints.

    :raises InvalidTarget: it cannot be run, does not answer in time, or answers nonsense.
    """
    # Its own session, so that a timeout ends whatever it started too (a wrapper script's
    # children would otherwise keep the pipes open and the wait going).
    try:
        process = subprocess.Popen(
            [executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as e:
        raise InvalidTarget(
            f"--python {executable!r}: cannot run it as a Python interpreter ({e.strerror or e})"
        ) from e
    try:
        out, _ = process.communicate(timeout=_PROBE_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise InvalidTarget(
            f"--python {executable!r}: no answer within {_PROBE_TIMEOUT} s; is it a Python "
            "interpreter?"
        ) from e
    try:
        if process.returncode != 0:
            raise ValueError(f"exit status {process.returncode}")
        return json.loads(out)
    except ValueError as e:
        raise InvalidTarget(
            f"--python {executable!r}: cannot run it as a Python interpreter ({e})"
        ) from e


def _probe(executable: str) -> TargetPython:
    data = _ask(executable, _PROBE)
    return TargetPython.parse(
        str(data["version"]),
        executable=executable,
        implementation=data["implementation"],
        abiflags=data["abiflags"],
    )


def site_packages(executable: str) -> tuple[Path, ...]:
    """Where *executable* installs distributions (``purelib``, then ``platlib`` when another),
    asked of it once.

    :raises InvalidTarget: it cannot be run as a Python interpreter.
    """
    paths = _ask(executable, _SITE)
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise InvalidTarget(f"--python {executable!r}: its site-packages answer is not a list")
    return tuple(Path(p) for p in dict.fromkeys(paths))


def _config(path: Path) -> dict[str, str]:
    """``key = value`` lines of a ``pyvenv.cfg``; empty when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    pairs = (line.partition("=") for line in text.splitlines())
    return {key.strip().lower(): value.strip() for key, sep, value in pairs if sep}


def _conda_python(root: Path) -> str | None:
    """The version of a conda prefix's ``python`` record, from its file name."""
    for record in (root / "conda-meta").glob("python-[0-9]*.json"):
        version = record.name[len("python-") :].partition("-")[0]
        if _VERSION_RE.fullmatch(version):
            return version
    return None


def _read_layout(executable: str) -> TargetPython | None:
    """What probing *executable* would say, read from the files around it; ``None``: ask it.

    Only a CPython in a venv or a conda prefix qualifies: ``pyvenv.cfg`` (or the python record)
    gives the version, and ``lib/pythonX.Y`` (``lib/pythonX.Yt`` free-threaded) the ABI.
    """
    path = Path(executable)  # not resolved: a venv's bin/python links to the base interpreter
    if os.name == "nt" or path.parent.name != "bin":
        return None
    root = path.parent.parent
    config = _config(root / "pyvenv.cfg")
    if config.get("implementation", "cpython").lower() != "cpython":
        return None
    version = config.get("version_info") or config.get("version") or _conda_python(root)
    if version is None or not _VERSION_RE.fullmatch(version):
        return None
    major_minor = ".".join(version.split(".")[:2])
    lib = root / "lib"
    gil, free_threaded = (
        (lib / f"python{major_minor}").is_dir(),
        (lib / f"python{major_minor}t").is_dir(),
    )
    if gil == free_threaded:  # neither (another implementation?) or both: ask
        return None
    return TargetPython.parse(version, executable=executable, abiflags="t" if free_threaded else "")


def _prefix_interpreter(prefix: Path) -> Path | None:
    for candidate in (prefix / "bin" / "python", prefix / "python.exe"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def resolve_target_python(
    python: str | None, env: Environment, *, prefix: str | os.PathLike[str] | None = None
) -> TargetPython:
    """The interpreter to choose wheels for.

    :param python: ``--python``: a version (``3.12``) or an interpreter (path or name on PATH);
        ``None``: the prefix's python when it has one (or the version a lock file pins), else the
        running interpreter. A *prefix* without an interpreter gives a target without one
        (``executable`` ``None``), never the running interpreter: nothing installs into it.
    :raises InvalidTarget: *python* is neither a version nor a runnable interpreter, or the
        environment's Python version is not one.
    """
    if python is not None:
        if _VERSION_RE.fullmatch(python):
            return TargetPython.parse(python, source=PythonSource.OPTION)
        found = shutil.which(python) or (python if Path(python).is_file() else None)
        if found is None:
            raise InvalidTarget(
                f"--python {python!r}: expected a version like 3.12 or a Python interpreter"
            )
        probed = _read_layout(found) or _probe(found)
        return replace(probed, source=PythonSource.OPTION)
    if prefix is not None:
        interpreter = _prefix_interpreter(Path(prefix))
        if interpreter is not None:
            version = env.python or str(_probe(str(interpreter)).version)
            return TargetPython.parse(
                version, executable=str(interpreter), source=PythonSource.PREFIX
            )
        # Never the running interpreter: the wheels belong in the prefix's, or nowhere. They can
        # still be chosen (for the prefix's Python, else the running one's version); installing
        # needs --python.
        there = Path(prefix).is_dir()
        missing = f"{prefix} {'has no bin/python' if there else 'does not exist'}"
        if env.python is not None:
            return TargetPython.parse(env.python, source=PythonSource.ENVIRONMENT, origin=missing)
        return replace(running_python(), executable=None, origin=f"{missing}; the running version")
    if env.python is not None:
        return TargetPython.parse(env.python, source=PythonSource.ENVIRONMENT, origin=env.origin)
    return running_python()


def running_python() -> TargetPython:
    """The interpreter variant-bridge runs on."""
    return TargetPython(
        Version("{}.{}.{}".format(*sys.version_info[:3])),
        executable=sys.executable,
        implementation=sys.implementation.name,
        abiflags=getattr(sys, "abiflags", ""),
        source=PythonSource.RUNNING,
    )
