"""conda-meta/history: requested specs replayed as conda does, and broken files named."""

from __future__ import annotations

from pathlib import Path

import pytest

from variant_bridge.errors import DetectionError
from variant_bridge.export.history import parse_history, read_history, spec_name

CREATE = """\
==> 2026-05-01 10:00:00 <==
# cmd: conda create -n gpu -c conda-forge --channel=nvidia python=3.12 cuda-version=12.6
# conda version: 26.1.0
+conda-forge/linux-64::python-3.12.7-h0_0_cpython
+conda-forge/noarch::cuda-version-12.6-h0_3
# update specs: ['python=3.12', 'cuda-version=12.6']
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (CREATE, ("python=3.12", "cuda-version=12.6")),
        (  # a later install adds one spec and replaces another by name
            CREATE
            + "==> 2026-05-02 <==\n# cmd: conda install numpy 'python=3.13'\n"
            + "# update specs: ['numpy', 'python=3.13']\n",
            ("python=3.13", "cuda-version=12.6", "numpy"),
        ),
        (  # conda remove drops the spec
            CREATE + "==> 2026-05-03 <==\n# remove specs: ['cuda-version']\n",
            ("python=3.12",),
        ),
        (  # neutered specs replace a kept spec with conda's relaxed one
            CREATE + "==> 2026-05-04 <==\n# neutered specs: ['python=3.12.*']\n",
            ("python=3.12.*", "cuda-version=12.6"),
        ),
        (  # conda < 4.5 wrote comma-separated specs; commas inside version ranges continue
            "==> 2017-01-01 <==\n# install specs: python>=3.5.1,jupyter >=1.0.0,<2.0,numpy\n",
            ("python>=3.5.1", "jupyter >=1.0.0,<2.0", "numpy"),
        ),
        (  # channel-qualified specs keep their channel; features ("x@") are skipped
            "==> 2026-01-01 <==\n# update specs: ['conda-forge::numpy >=2', 'mkl@']\n",
            ("conda-forge::numpy >=2",),
        ),
        ("", ()),  # rattler and pixi create an empty history
        ("\n\n", ()),  # blank lines only
    ],
)
def test_requested_specs_replay_the_requests(text: str, expected: tuple[str, ...]) -> None:
    assert parse_history(text).requested_specs() == expected


def test_channels_come_from_the_recorded_command_lines_in_order() -> None:
    history = parse_history(CREATE + "==> 2026-05-02 <==\n# cmd: conda install -c pytorch x\n")
    assert history.channels() == ("conda-forge", "nvidia", "pytorch")


def test_an_unbalanced_quote_in_a_command_line_is_not_an_error() -> None:
    assert parse_history("==> d <==\n# cmd: conda install 'oops\n").channels() == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("==> d <==\nthis is not history\n", "line 2"),  # a line of unknown shape
        ("==> d <==\n# update specs: ['python'\n", "unreadable spec list"),  # cut-off list
        ("==> d <==\n# update specs: [1, 2]\n", "list of spec strings"),  # not strings
        ("==> d <==\n# update specs: ['>=3.12']\n", "not a package spec"),  # no package name
        ("==> d <==\n+\n", "line 2"),  # an empty package line
    ],
)
def test_a_broken_history_names_the_file_and_line(text: str, message: str) -> None:
    with pytest.raises(DetectionError, match=message) as info:
        parse_history(text, path="/env/conda-meta/history")
    assert "/env/conda-meta/history" in str(info.value)
    assert "\n" not in str(info.value)


def test_read_history_without_a_file_is_none(tmp_path: Path) -> None:
    (tmp_path / "conda-meta").mkdir()
    assert read_history(tmp_path) is None


def test_read_history_rejects_bytes_that_are_not_text(tmp_path: Path) -> None:
    (tmp_path / "conda-meta").mkdir()
    (tmp_path / "conda-meta" / "history").write_bytes(b"==> d <==\n\xff\xfe\x00garbage\n")
    with pytest.raises(DetectionError, match="not UTF-8") as info:
        read_history(tmp_path)
    assert str(tmp_path / "conda-meta" / "history") in str(info.value)


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("numpy", "numpy"),
        ("NumPy>=2", "numpy"),  # conda names are case-insensitive
        ("conda-forge::cuda-version 12.6.*", "cuda-version"),
        ("https://conda.anaconda.org/conda-forge::python=3.12", "python"),  # URL channel
        ("pytorch[build='cuda*']", "pytorch"),
    ],
)
def test_spec_name(spec: str, name: str) -> None:
    assert spec_name(spec) == name
