"""The interpreter a wheel is chosen for (and installed into), resolved and probed.

Default: the prefix's python when the environment has one, else the running interpreter. Its
wheel tags are :mod:`variant_bridge.platform_tags`' business.
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
from pathlib import Path

from variant_bridge.environment import Environment
from variant_bridge.errors import InvalidTarget
from variant_bridge.platform_tags import TargetPython

__all__ = ["resolve_target_python"]

_VERSION_RE = re.compile(r"[0-9]+\.[0-9]+(\.[0-9]+)?")
_PROBE_TIMEOUT = 30
_PROBE = (
    "import json, sys, sysconfig; print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3],"
    " 'implementation': sys.implementation.name,"
    " 'abiflags': getattr(sys, 'abiflags', '')"
    " or ('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else '')}))"
)


def _probe(executable: str) -> TargetPython:
    # Its own session, so that a timeout ends whatever it started too (a wrapper script's
    # children would otherwise keep the pipes open and the wait going).
    try:
        process = subprocess.Popen(
            [executable, "-c", _PROBE],
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
        data = json.loads(out)
    except ValueError as e:
        raise InvalidTarget(
            f"--python {executable!r}: cannot run it as a Python interpreter ({e})"
        ) from e
    return TargetPython(
        version=data["version"],
        executable=executable,
        implementation=data["implementation"],
        abiflags=data["abiflags"],
    )


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
        running interpreter.
    :raises InvalidTarget: *python* is neither a version nor a runnable interpreter.
    """
    if python is not None:
        if _VERSION_RE.fullmatch(python):
            return TargetPython(version=python, source="--python")
        found = shutil.which(python) or (python if Path(python).is_file() else None)
        if found is None:
            raise InvalidTarget(
                f"--python {python!r}: expected a version like 3.12 or a Python interpreter"
            )
        probed = _probe(found)
        return TargetPython(
            probed.version, probed.executable, probed.implementation, probed.abiflags, "--python"
        )
    if prefix is not None:
        interpreter = _prefix_interpreter(Path(prefix))
        if interpreter is not None:
            version = env.python or _probe(str(interpreter)).version
            return TargetPython(version=version, executable=str(interpreter), source="prefix")
        if env.python is not None:
            # Wheels can still be chosen for the prefix's Python; installing needs --python.
            return TargetPython(version=env.python, source=f"{prefix} has no bin/python")
    if env.python is not None:
        return TargetPython(version=env.python, source=env.origin)
    return TargetPython(
        version="{}.{}.{}".format(*sys.version_info[:3]),
        executable=sys.executable,
        implementation=sys.implementation.name,
        abiflags=getattr(sys, "abiflags", ""),
        source="running",
    )
