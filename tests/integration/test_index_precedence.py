"""Index precedence as uv 0.13.9 has it, checked against the real uv on loopback indexes.

Three loopback indexes and a find-links directory hold different versions of the same projects.
For each arrangement of ``--index-url``/``--extra-index-url``/``--find-links`` and
``--index-strategy``, ``variant-bridge select`` must pick the version ``uv pip compile`` picks
(or fail where uv fails), and name the first index's refusal the way uv hints at it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.install import find_uv

pytestmark = pytest.mark.slow

SCRIPT = Path(sys.executable).with_name("variant-bridge")
LOWER = "nvidia :: cuda_version_lower_bound :: {}"
PYTHON = "{}.{}".format(*sys.version_info[:2])  # uv finds it at once (another version: seconds)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    root = tmp_path_factory.mktemp("precedence")
    # "variants": the variant index; "mirror": a plain index with a newer plain release (the
    # shadowing case of the issue); "other": more versions; "links": a find-links directory.
    make_release(root / "variants", "foo", "1.0", {"cu126": [LOWER.format("12.6")]})
    make_wheel(root / "mirror", "foo", "2.0")
    make_wheel(root / "other", "foo", "1.5")
    make_wheel(root / "mirror", "bar", "1.0")
    make_wheel(root / "links", "foo", "3.0")
    make_wheel(root / "links", "bar", "0.5")
    make_wheel(root / "other", "onlyother", "1.0")
    with (
        IndexServer(root / "variants") as variants,
        IndexServer(root / "mirror") as mirror,
        IndexServer(root / "other") as other,
    ):
        yield {"variants": variants.url, "mirror": mirror.url, "other": other.url,
               "links": str(root / "links")}  # fmt: skip


def _args(servers: dict[str, object], spec: list[str]) -> list[str]:
    """``["index-url=mirror", "extra=variants"]`` -> the option list."""
    out: list[str] = []
    for item in spec:
        option, _, name = item.partition("=")
        flag = {"index-url": "--index-url", "extra": "--extra-index-url",
                "links": "--find-links", "strategy": "--index-strategy"}[option]  # fmt: skip
        out += [flag, str(servers.get(name, name))]
    return out


def _uv(args: list[str], requirement: str) -> str | None:
    uv = find_uv()
    assert uv is not None
    proc = subprocess.run(
        [uv, "pip", "compile", "-q", "--no-header", "--no-annotate", "--python-version", PYTHON,
         "--no-config", "--no-cache", *args, "-"],
        input=requirement, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return None
    (line,) = proc.stdout.split()
    return line.split("==")[1]


def _bridge(args: list[str], requirement: str) -> tuple[str | None, str]:
    proc = subprocess.run(
        [str(SCRIPT), "select", requirement, *args, "--platform", "linux-64",
         "-t", "glibc=2.36", "-t", "cuda=12.9", "--python", PYTHON, "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return None, proc.stderr
    choice, *_ = json.loads(proc.stdout)
    return str(choice["version"]), proc.stderr


CASES = [
    # uv: extra indexes come first, then --index-url; the first that has the project wins.
    (["index-url=mirror", "extra=variants"], "foo", "1.0"),
    (["index-url=variants", "extra=mirror"], "foo", "2.0"),
    (["index-url=mirror", "extra=other", "extra=variants"], "foo", "1.5"),
    (["index-url=mirror", "extra=variants", "strategy=unsafe-best-match"], "foo", "2.0"),
    (["index-url=mirror", "extra=variants"], "foo>=2", None),  # found on variants: no 2.0
    (["index-url=mirror", "extra=variants"], "onlyother", None),
    (["index-url=other", "extra=variants"], "onlyother", "1.0"),  # 404 on variants: next
    # find-links are merged with the one index consulted.
    (["index-url=mirror", "links=links"], "foo", "3.0"),
    (["index-url=mirror", "links=links"], "bar", "1.0"),
    (["index-url=mirror", "links=links"], "bar<1", "0.5"),
    (["index-url=mirror", "extra=variants", "links=links"], "foo<3", "1.0"),
]


@pytest.mark.parametrize(("spec", "requirement", "expected"), CASES)
def test_select_picks_what_uv_picks(
    servers: dict[str, object], spec: list[str], requirement: str, expected: str | None
) -> None:
    args = _args(servers, spec)
    assert _uv(args, requirement) == expected  # the world is what this table says
    version, stderr = _bridge(args, requirement)
    assert version == expected, stderr


def test_the_refusal_says_later_indexes_were_not_consulted(servers: dict[str, object]) -> None:
    version, stderr = _bridge(_args(servers, ["index-url=mirror", "extra=variants"]), "foo>=2")
    assert version is None
    assert f"no version of 'foo' matches '>=2' in {servers['variants']}" in stderr
    assert f"later indexes ({servers['mirror']}) were not consulted" in stderr
    assert "--index-strategy unsafe-best-match" in stderr
    assert stderr.count("\n") == 1
