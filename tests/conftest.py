"""Shared fixtures: offline test worlds built in tmp_path, and a clean override environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.worlds.channel import Channel, base_packages, cuda_packages, microarch_packages
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, solve

# CI never goes red at random: there, hypothesis runs a fixed, derandomized sequence and keeps no
# example database (a failure found once would otherwise replay forever). Locally it explores.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

# Variables that change detection; tests start without them so the host cannot leak in.
_DETECTION_PREFIXES = ("CONDA_OVERRIDE_", "NV_VARIANT_PROVIDER_FORCE_", "CONDA_PREFIX")


@pytest.fixture(autouse=True)
def _clean_detection_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(_DETECTION_PREFIXES)]:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _own_download_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Each test gets an empty download cache: never the user's, never another test's.
    monkeypatch.setenv("VARIANT_BRIDGE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


CORPUS_VARIABLE = "VARIANT_BRIDGE_CORPUS"


def find_corpus() -> Path | None:
    """The real-world corpus: ``$VARIANT_BRIDGE_CORPUS``, else ``shared/corpus`` beside the
    checkout (CI checks shared/ out there; a git worktree sits deeper, so look upwards)."""
    override = os.environ.get(CORPUS_VARIABLE)
    if override:
        return Path(override) if Path(override).is_dir() else None
    root = Path(__file__).resolve().parents[1]
    for parent in root.parents:
        candidate = parent / "shared" / "corpus"
        if candidate.is_dir():
            return candidate
    return None


def corpus_missing() -> str:
    """The one line a test that needs the corpus skips with."""
    where = os.environ.get(CORPUS_VARIABLE) or "../shared/corpus beside the checkout"
    return f"real-world corpus missing: set {CORPUS_VARIABLE} or put shared/corpus there ({where})"


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real-world corpus; tests that need it skip with one line when it is not there."""
    found = find_corpus()
    if found is None:
        pytest.skip(corpus_missing())
    return found


@pytest.fixture(scope="session")
def cuda_channel(tmp_path_factory: pytest.TempPathFactory) -> Channel:
    """A local channel with cuda-version 11.8 .. 13.0, components, microarch levels and python."""
    path: Path = tmp_path_factory.mktemp("channel")
    return Channel(path).add(cuda_packages() + microarch_packages() + base_packages())


@pytest.fixture(scope="session")
def prefix_126(cuda_channel: Channel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A conda prefix whose solved toolkit is cuda-version 12.6 (solved for a 12.9 driver)."""
    root = tmp_path_factory.mktemp("prefix126")
    specs = ["cuda-version 12.6.*", "cuda-cudart", "python"]
    records = solve([cuda_channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
    return install_prefix(records, root / "env", root / "cache", specs)
