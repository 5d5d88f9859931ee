"""The shared corpus of real files as test parameters (``../shared/corpus`` beside the checkout,
as CI has it; a checkout elsewhere names it with ``VARIANT_BRIDGE_CORPUS``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import corpus_missing, find_corpus


def corpus_dir() -> Path:
    """The corpus folder; the calling test skips with one line when it is not there."""
    folder = find_corpus()
    if folder is None:
        pytest.skip(corpus_missing())
    return folder


def corpus_files(pattern: str) -> list[object]:
    """The corpus files matching *pattern*, as pytest parameters; a missing corpus is one
    parameter that skips, saying where it was looked for."""
    folder = find_corpus()
    files = sorted(folder.glob(pattern)) if folder is not None else []
    if files:
        return [pytest.param(f, id=f.parent.name) for f in files]
    if folder is None:
        reason = corpus_missing()
        return [pytest.param(Path(pattern), id="corpus-missing", marks=pytest.mark.skip(reason))]
    return [pytest.param(folder / pattern, id="corpus-missing")]


def read_corpus_file(path: Path) -> str:
    """The text of a corpus file; a clear failure when the corpus is there but the file is not."""
    if not path.is_file():
        pytest.fail(f"{path} missing from the real-world corpus")
    return path.read_text(encoding="utf-8")
