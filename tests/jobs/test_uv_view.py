"""Reading a uv command line: which packages, which sources, in uv's order of precedence."""

from __future__ import annotations

import pytest

from variant_bridge.indexes import IndexStrategy
from variant_bridge.jobs.uv_view import parse_uv_command

A, B, C = (f"https://{h}.example/simple/" for h in "abc")


def test_sources_in_uv_order_and_the_packages_named() -> None:
    parsed = parse_uv_command(
        ["/usr/bin/uv", "pip", "install", "--extra-index-url", B, f"--index-url={C}",
         "--index", A, "-f", "/wheels", "--python", "/v/bin/python", "torch==2.9", "./local.whl",
         "--index-strategy", "unsafe-best-match"],
        {},
    )  # fmt: skip
    assert parsed is not None
    assert [s.name for s in parsed.sources] == ["/wheels", A, B, C]  # --index, extra, default
    assert parsed.sources.default is not None
    assert parsed.sources.default.url == C  # what `variant-bridge install --index-url` repeats
    assert [str(r) for r in parsed.requirements] == ["torch==2.9"]  # a path is not a name
    assert parsed.sources.strategy is IndexStrategy.UNSAFE_BEST_MATCH


def test_uv_environment_variables_add_indexes() -> None:
    parsed = parse_uv_command(
        ["uv", "pip", "compile", "numpy"], {"UV_INDEX_URL": C, "UV_EXTRA_INDEX_URL": f"{A} {B}"}
    )
    assert parsed is not None
    assert [s.name for s in parsed.sources] == [A, B, C]


@pytest.mark.parametrize(
    "argv",
    [
        ["pip", "install", "--index-url", A, "torch"],  # not uv
        ["uv", "pip", "list"],
        ["uv", "run", "--index", A, "python"],
        ["uv", "pip", "install", "torch"],  # PyPI only: nothing of the user's to look into
        ["uv", "pip", "install", "--index-url", A, "-r", "requirements.txt"],  # no name
        ["uv", "pip", "install", "--index-url", "ftp://x/", "torch"],  # uv reports that itself
    ],
)
def test_other_commands_are_left_alone(argv: list[str]) -> None:
    assert parse_uv_command(argv, {}) is None


def test_a_request_with_an_unreadable_version_is_left_to_uv() -> None:
    """``x>1.999…`` (5,000 digits) parses as a requirement but no version compares with it (the
    fuzz run's ``run -- uv pip install`` was an internal error): uv reports it, the others are
    still looked into."""
    huge = "x>1." + "9" * 5000
    parsed = parse_uv_command(["uv", "pip", "install", "-f", "/wheels", huge, "depa"], {})
    assert parsed is not None
    assert [str(r) for r in parsed.requirements] == ["depa"]
    assert parse_uv_command(["uv", "pip", "install", "--index-url", A, huge], {}) is None
