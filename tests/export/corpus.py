"""The shared corpus of real files (``../shared/corpus`` beside the checkout, as CI has it; a
checkout elsewhere names it with ``VARIANT_BRIDGE_CORPUS``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def corpus_dir() -> Path:
    override = os.environ.get("VARIANT_BRIDGE_CORPUS")
    return Path(override) if override else REPO / ".." / "shared" / "corpus"


def corpus_files(pattern: str) -> list[object]:
    """The corpus files matching *pattern*, as pytest parameters; a missing corpus is one
    parameter that fails, saying where it was looked for."""
    folder = corpus_dir()
    files = sorted(folder.glob(pattern)) if folder.is_dir() else []
    if files:
        return [pytest.param(f, id=f.parent.name) for f in files]
    return [pytest.param(folder / pattern, id="corpus-missing")]


def read_corpus_file(path: Path) -> str:
    """The text of a corpus file; a clear failure when the corpus is not there."""
    if not path.is_file():
        pytest.fail(
            f"{path} missing: put the shared corpus beside the checkout (../shared/corpus) or "
            "name it with VARIANT_BRIDGE_CORPUS"
        )
    return path.read_text(encoding="utf-8")
