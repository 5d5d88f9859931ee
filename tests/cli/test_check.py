"""``variant-bridge check``: findings, --json, exit codes, and one clear line for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.worlds.wheels import make_wheel

ARCHS_12_9 = "12.9=5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX"


def real_args(corpus: Path) -> list[str]:
    maint = corpus / "maint"
    return [
        "--conda", str(maint / "pytorch-cpu-2.10.0"),
        "--arch-list", ARCHS_12_9,
        "--wheels", str(maint / "variant-repack" / "torch-2.10.0-variants.json"),
        "--wheel-tag", "cp312-cp312-manylinux_2_28_x86_64",
    ]  # fmt: skip


def test_text_report_of_the_real_release(cli: Cli, corpus: Path) -> None:
    result = cli("check", *real_args(corpus))
    assert result.exit_code == 1  # CUDA 13 wheels without any conda CUDA 13 build
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "conda: CUDA 12.9 (1 builds); wheels: cuda12.6, cuda12.8, cuda13.0, null, rocm7.0, "
        "rocm7.1, xpu"
    )
    assert (
        "ERROR wheel cuda13.0: toolkit 13.0 and its whole major have no conda build (conda: 12.9)"
        in lines
    )
    assert "      fix: add CUDA 13.0 to the conda matrix or drop the cuda13.0 wheels" in lines
    assert lines[-1].startswith("1 error(s), ")
    assert result.stderr == ""


def test_json_report(cli: Cli, corpus: Path) -> None:
    result = cli("check", "--json", *real_args(corpus))
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (data["ok"], data["worst"]) == (False, "error")
    (build,) = data["conda"]["builds"]
    assert (build["cuda"], build["glibc"], build["arch_source"]) == (
        "12.9",
        "2.17",
        "--arch-list 12.9",
    )
    assert build["python"] == ["3.10", "3.11", "3.12", "3.13"]
    cuda128 = next(v for v in data["wheels"]["variants"] if v["label"] == "cuda12.8")
    assert (cuda128["toolkit"], cuda128["toolkit_from"]) == ("12.8", "label")
    lower = next(
        f
        for f in data["findings"]
        if f["topic"] == "lower-bound" and f["subject"] == "wheel cuda12.8"
    )
    assert lower["level"] == "warn"
    assert lower["fix"].startswith("declare nvidia :: cuda_version_lower_bound :: 12.8, which")


def test_fail_on_warn(cli: Cli, corpus: Path) -> None:
    maint = corpus / "maint"
    args = [
        "check", "--conda", str(maint / "pytorch-cpu"), "--wheels",
        str(maint / "variant-repack" / "torch-2.10_variant_config.toml"), "--project", "torch",
        "--arch-list", "12.9=5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",
        "--arch-list", "13.0=7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX",
    ]  # fmt: skip
    assert cli(*args).exit_code == 0  # warnings only
    assert cli(*args, "--fail-on", "warn").exit_code == 1


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (
            ["--arch-list", "13=8.0;Hopper"],
            "error: --arch-list 13: unknown CUDA architecture 'Hopper'",
        ),
        (["--arch-list", "all"], "error: --arch-list: 'all' depends on the nvcc version"),
        (
            ["--wheel-tag", "manylinux_2_28_x86_64"],
            "error: --wheel-tag 'manylinux_2_28_x86_64': expected PYTHON-ABI-PLATFORM",
        ),
    ],
)
def test_bad_options_are_one_line(cli: Cli, corpus: Path, extra: list[str], says: str) -> None:
    result = cli("check", *real_args(corpus), *extra)
    assert result.exit_code == 1
    assert result.stderr.startswith(says)
    assert result.stderr.count("\n") == 1


def test_bad_inputs_are_one_line(cli: Cli, corpus: Path, tmp_path: Path) -> None:
    variants = tmp_path / "variants.yaml"
    variants.write_text("cuda_compiler_version: [12.9\n")
    wheels = str(corpus / "maint" / "variant-repack" / "torch-2.10.0-variants.json")
    result = cli("check", "--conda", str(variants), "--wheels", wheels)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {variants}: not a valid variant configuration")
    assert result.stderr.count("\n") == 1
    for version in ("1.0", "2.0"):
        make_wheel(
            tmp_path / "dist", "demo", version, label="null", namespace_priorities=["nvidia"]
        )
    ci = corpus / "maint" / "pytorch-cpu-2.10.0"
    result = cli("check", "--conda", str(ci), "--wheels", str(tmp_path / "dist"))
    assert result.exit_code == 1
    assert "wheels of different versions (1.0 (1 wheels), 2.0 (1 wheels))" in result.stderr
    assert result.stderr.count("\n") == 1


def test_usage_errors_exit_2(cli: Cli, corpus: Path) -> None:
    assert cli("check", "--wheels", "dist").exit_code == 2  # no --conda
    assert cli("check", *real_args(corpus), "--fail-on", "info").exit_code == 2


def final_args(corpus: Path) -> list[str]:
    maint = corpus / "maint"
    return [
        "--conda", str(maint / "pytorch-cpu-2.10.0-final" / ".ci_support"),
        "--arch-list", ARCHS_12_9,
        "--arch-list", "13.0=7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX",
        "--wheels", str(maint / "variant-repack" / "torch-2.10.0-variants.json"),
        "--wheel-tag", "cp312-cp312-manylinux_2_28_x86_64",
        "--wheel-tag", "cp313-cp313t-manylinux_2_28_x86_64",
    ]  # fmt: skip


def test_json_findings_carry_rule_ids_and_fields(cli: Cli, corpus: Path) -> None:
    result = cli("check", "--format", "json", *final_args(corpus), "--platform", "linux-64")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    sm = next(f for f in data["findings"] if f["rule"] == "sm-arch-differ" and f["cuda"] == "12.9")
    assert sm == {
        "rule": "sm-arch-differ",
        "level": "warn",
        "topic": "sm-arch",
        "subject": "CUDA 12.9 <-> cuda12.8",
        "message": "SM architectures differ: conda only 50_real 60_real 120_virtual; wheel only -",
        "fix": "add sm_arch 50_real 60_real 120_virtual to the wheel variant",
        "platforms": ["linux-64"],
        "cuda": "12.9",
        "label": "cuda12.8",
        "conda_builds": [sm["conda_builds"][0]],
        "conda_only": ["50_real", "60_real", "120_virtual"],
        "wheel_only": [],
        "toolkit_from": "label",
    }
    assert sm["conda_builds"][0].endswith("cuda_compiler_version12.9is_rcFalse.yaml")
    python = next(f for f in data["findings"] if f["rule"] == "python-differ")
    assert python["wheel_only"] == ["3.13t"]
    assert {b["platform"] for b in data["conda"]["builds"]} == {"linux-64"}
    assert result.stderr == ""


def test_github_annotations(cli: Cli, corpus: Path) -> None:
    result = cli("check", "--format", "github", *final_args(corpus))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    sm = next(line for line in lines if "SM architectures differ" in line and "12.9" in line)
    assert sm.startswith("::warning file=")
    assert ",title=check sm-arch-differ::CUDA 12.9 <-> cuda12.8: SM architectures differ" in sm
    assert sm.endswith("(fix: add sm_arch 50_real 60_real 120_virtual to the wheel variant)")
    # the file is the first conda build's, as GitHub finds it from the checkout
    assert "pytorch-cpu-2.10.0-final/.ci_support/linux_64_" in sm
    assert not [line for line in lines if line.startswith("::notice")]  # INFO only with -v
    assert lines[-1] == "0 error(s), 14 warning(s), 4 ok"
    verbose = cli("check", "--format", "github", "-v", *final_args(corpus))
    notices = [line for line in verbose.stdout.splitlines() if line.startswith("::notice ")]
    assert any(",title=check family-without-wheels::" in line for line in notices)


def test_a_failure_is_a_json_error_object(cli: Cli, corpus: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    args = ["check", "--conda", str(missing), "--wheels", str(corpus / "maint" / "variant-repack"
            / "torch-2.10.0-variants.json")]  # fmt: skip
    result = cli(*args, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "ok": False,
        "error": {"type": "ReleaseInputError", "message": f"{missing}: no such file or folder"},
    }
    assert result.stderr == f"error: {missing}: no such file or folder\n"
    result = cli(*args, "--format", "github")
    assert result.exit_code == 1
    assert result.stdout == (
        f"::error title=variant-bridge check::{missing}: no such file or folder\n"
    )


def test_platform_selects_builds_and_wheels(cli: Cli, corpus: Path) -> None:
    result = cli("check", *final_args(corpus), "--platform", "linux-aarch64")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "conda: CUDA 12.9, 13.0 + CPU (4 builds); wheels: -"
    # the wheel tags given are x86_64 only: nothing for aarch64
    assert lines[1].startswith(
        "WARN  conda builds (linux-aarch64): CUDA 12.9, CUDA 13.0, CPU, but no wheel read is for "
        "linux-aarch64"
    )
    result = cli("check", *final_args(corpus), "--platform", "linux-ppc64le")
    assert result.exit_code == 1
    assert result.stderr == (
        "error: no conda build for linux-ppc64le (the conda side builds for linux-64, "
        "linux-aarch64, osx-64, osx-arm64, win-64)\n"
    )


def test_json_and_format_together(cli: Cli, corpus: Path) -> None:
    assert cli("check", *final_args(corpus), "--json", "--format", "github").exit_code == 2
    assert cli("check", *final_args(corpus), "--json", "--format", "json").exit_code == 0
