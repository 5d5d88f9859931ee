"""Acceptance (issue 16) as a user sees it: ``select`` of torch + torchvision (the real variants
files, torch pinning its CUDA components, torchvision pinning none) with ``--cuda``, the CPU
fallback warning, and a stack that shares no toolkit (``--allow-mix``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.worlds.torch_index import add_torchvision, build_torch_index

MACHINE = {"CONDA_OVERRIDE_CUDA": "12.9", "CONDA_OVERRIDE_CUDA_ARCH": "9.0", "CONDA_PREFIX": None}
ARGS = ("--python", "3.12", "--json")


@pytest.fixture(scope="module")
def world(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return add_torchvision(corpus, build_torch_index(corpus, tmp_path_factory.mktemp("stack")))


def _labels(stdout: str) -> dict[str, str | None]:
    return {
        c["package"]: (c["selected"] or {}).get("label")
        for c in json.loads(stdout)
        if c["package"] in ("torch", "torchvision")
    }


@pytest.mark.parametrize(
    ("cuda", "label"), [("12.6", "cuda12.6"), ("12.8", "cuda12.8"), ("12.9", "cuda12.8")]
)
def test_cuda_asks_for_that_toolkit_across_the_tree(
    cli: Cli, world: Path, cuda: str, label: str
) -> None:
    result = cli("select", "torch", "torchvision", "-f", str(world), "--cuda", cuda, *ARGS,
                 env=MACHINE)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert _labels(result.stdout) == {"torch": label, "torchvision": label}
    vision = next(c for c in json.loads(result.stdout) if c["package"] == "torchvision")
    assert vision["follows"] == {
        "toolkit": f"CUDA {label[4:]}", "anchor": f"torch 2.9.0 {label}",
        "reason": f"follows torch 2.9.0 {label} (CUDA {label[4:]})",
    }  # fmt: skip
    assert result.stderr == ""


def test_the_summary_names_the_requested_toolkit(cli: Cli, world: Path) -> None:
    result = cli("select", "torch", "-f", str(world), "--cuda", "12.6", "--python", "3.12",
                 "--no-deps", env=MACHINE)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "cuda-version=12.6 (--cuda), CUDA policy toolkit" in result.stdout
    assert (
        "variant cuda12.8: cuda12.8 pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8) but "
        "the requested toolkit is cuda-version 12.6"
    ) in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--cuda", "12"),
            "Invalid value for '--cuda': '12': expected a CUDA MAJOR.MINOR, e.g. 12.6",
        ),
        (
            ("--cuda", "12.6", "-t", "cuda_version=12.8"),
            (
                "--cuda 12.6 asks for another toolkit than cuda-version=12.8 (--target): the solved "
                "toolkit decides; drop --cuda, or change the environment's cuda-version"
            ),
        ),
    ],
)
def test_a_bad_or_contradicting_cuda_is_a_usage_error(
    cli: Cli, world: Path, args: tuple[str, ...], message: str
) -> None:
    result = cli("select", "torch", "-f", str(world), *args, *ARGS, env=MACHINE)
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_toolkit_no_driver_allows_is_one_line(cli: Cli, world: Path) -> None:
    result = cli("select", "torch", "-f", str(world), "--cuda", "13.0", *ARGS, env=MACHINE)
    assert result.exit_code == 1
    assert result.stderr == (
        "error: --cuda 13.0: cuda-version 13.0 constrains __cuda >=13, so conda could not have "
        "solved it beside __cuda=12.9\n"
    )


def test_a_cpu_build_beside_a_driver_is_one_warning_naming_what_excluded_the_cuda_builds(
    cli: Cli, world: Path
) -> None:
    result = cli("select", "torch", "-f", str(world), "-t", "cuda_version=11.8", "--no-deps",
                 *ARGS, env=MACHINE)  # fmt: skip
    assert result.exit_code == 0
    assert _labels(result.stdout) == {"torch": "null"}
    assert result.stderr == (
        "warning: torch 2.9.0: the null variant (a CPU build) was chosen although the CUDA driver "
        "is present (__cuda=12.9): cuda-version 11.8 (--target) is older than every CUDA build "
        "(cuda12.6 CUDA 12.6, cuda12.8 CUDA 12.8, cuda13.0 CUDA 13.0)\n"
    )


def test_a_driver_older_than_every_build_is_named(cli: Cli, world: Path) -> None:
    result = cli("select", "torch", "-f", str(world), "--no-deps", *ARGS,
                 env={**MACHINE, "CONDA_OVERRIDE_CUDA": "11.8"})  # fmt: skip
    assert result.exit_code == 0
    assert "__cuda=11.8 (CONDA_OVERRIDE_CUDA) is older than every CUDA build's driver floor " in (
        result.stderr
    )


def test_no_cpu_warning_without_a_driver(cli: Cli, world: Path) -> None:
    result = cli("select", "torch", "-f", str(world), "--no-deps", *ARGS,
                 env={**MACHINE, "CONDA_OVERRIDE_CUDA": ""})  # fmt: skip
    assert result.exit_code == 0
    assert _labels(result.stdout) == {"torch": "null"}
    assert result.stderr == ""


def test_a_stack_without_a_common_toolkit_fails_unless_the_mix_is_allowed(
    cli: Cli, corpus: Path, tmp_path: Path
) -> None:
    root = add_torchvision(corpus, build_torch_index(corpus, tmp_path / "w"),
                           labels=("cuda13.0", "null"))  # fmt: skip
    failed = cli("select", "torch", "torchvision", "-f", str(root), *ARGS, env=MACHINE)
    assert failed.exit_code == 1
    assert failed.stdout == ""
    (line,) = failed.stderr.splitlines()
    assert line.startswith("error: torchvision 0.24.0 requires torch 2.9.0, but no CUDA toolkit")
    assert line.endswith("pass --allow-mix to keep each package's own choice")
    mixed = cli("select", "torch", "torchvision", "-f", str(root), "--allow-mix", *ARGS,
                env=MACHINE)  # fmt: skip
    assert mixed.exit_code == 0
    assert _labels(mixed.stdout) == {"torch": "cuda12.8", "torchvision": "null"}
    warning, fallback = mixed.stderr.splitlines()
    assert warning.startswith("warning: torchvision 0.24.0 requires torch 2.9.0, but no CUDA")
    assert warning.endswith("(--allow-mix: each package keeps its own choice)")
    assert fallback == (
        "warning: torchvision 0.24.0: the null variant (a CPU build) was chosen although the CUDA "
        "driver is present (__cuda=12.9): __cuda=12.9 (CONDA_OVERRIDE_CUDA) is older than every "
        "CUDA build's driver floor (cuda13.0 13.0)"
    )
