"""CLI test helpers: click's CliRunner (stdout and stderr apart) and the installed script."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from variant_bridge.cli import _native, main

SCRIPT = Path(sys.executable).with_name("variant-bridge")


class Cli:
    """``cli("detect", "--json", env={...})`` -> click's Result, as a user would see it: exit code,
    stdout and stderr apart (exceptions are not re-raised into the test)."""

    def __call__(self, *args: str, env: Mapping[str, str | None] | None = None) -> Result:
        try:
            return CliRunner(env=dict(env or {})).invoke(main, list(args))
        finally:
            # index, convert and solve ask their process to end with os._exit (cli/_native.py);
            # here the process goes on: a later `conda variant` test would be ended by it.
            _native._requested.clear()


@pytest.fixture
def cli() -> Cli:
    return Cli()


def run_script(
    *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``variant-bridge`` script in a fresh process, with a minimal environment
    (no CONDA_* or NV_* from the host) plus *env*."""
    base = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**base, **(env or {})},
        timeout=120,
    )
