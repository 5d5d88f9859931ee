"""Fixtures of the solve tests: the CLI runner of tests/cli."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli


@pytest.fixture
def cli() -> Cli:
    return Cli()
