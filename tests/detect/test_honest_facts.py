"""Honest environment facts (§11): an unreadable toolkit is an error naming its file, an
impossible toolkit is reported with the rule, every fact carries its source, and ``--strict``
refuses whatever this machine would supply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.worlds.channel import Channel
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, solve
from variant_bridge.detect import detect_environment
from variant_bridge.detect.machine import host_platform
from variant_bridge.environment import Source
from variant_bridge.errors import DetectionError, InvalidTarget
from variant_bridge.translate import read_conda_specs, supported_properties


@pytest.fixture(scope="module")
def prefix_130(cuda_channel: Channel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prefix130")
    specs = ["cuda-version 13.0.*", "python"]
    records = solve([cuda_channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=13.0"))
    return install_prefix(records, root / "env", root / "cache", specs)


def test_a_toolkit_record_whose_version_cannot_be_read_is_an_error_naming_it(
    prefix_126: Path, tmp_path: Path
) -> None:
    prefix = tmp_path / "env"
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True)
    (record,) = (prefix_126 / "conda-meta").glob("cuda-version-*.json")
    data = json.loads(record.read_text())
    data["version"] = "twelve.six"
    (meta / record.name).write_text(json.dumps(data))
    with pytest.raises(DetectionError) as info:
        detect_environment(prefix=prefix, env={"CONDA_OVERRIDE_CUDA": "12.9"})
    message = str(info.value)
    assert message.startswith(str(meta / record.name))
    assert "cuda-version 'twelve.six' is not a CUDA toolkit version like 12.6" in message


def test_a_detected_toolkit_beside_an_older_driver_is_a_warning_with_the_rule(
    prefix_130: Path,
) -> None:
    env = detect_environment(prefix=prefix_130, env={"CONDA_OVERRIDE_CUDA": "12.9"})
    (warning,) = [n for n in env.notes if n.startswith("warning:")]
    assert warning == (
        "warning: cuda-version=13.0 (conda-meta) is impossible beside __cuda=12.9 "
        "(CONDA_OVERRIDE_CUDA): cuda-version 13.0 constrains __cuda >=13, so conda could not "
        "have solved it beside __cuda=12.9"
    )
    # The policy still says what it compared: no CUDA 13 lower bound fits a 12.9 driver.
    assert supported_properties(env).policy == "toolkit"


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        (["cuda=12.9", "cuda_version=13.3"], ("--target cuda_version='13.3': cuda-version 13.3 "
         "constrains __cuda >=13, so conda could not have solved it beside __cuda=12.9")),
        (["cuda=12.9", "cuda_version=12.x"], ("--target cuda_version='12.x': expected a CUDA "
         "toolkit version like 12.6")),
        (["cuda_version=12.6", "cudatoolkit=11.8"], "declare one toolkit"),
    ],
)  # fmt: skip
def test_a_declared_impossible_toolkit_is_an_error(targets: list[str], message: str) -> None:
    with pytest.raises(InvalidTarget) as info:
        detect_environment(platform="linux-64", targets=targets, env={})
    assert message in str(info.value)


def test_from_conda_refuses_an_impossible_toolkit() -> None:
    with pytest.raises(InvalidTarget, match=r"cuda-version 13\.3 constrains __cuda >=13"):
        read_conda_specs(["cuda-version=13.3", "__cuda=12.9"], platform="linux-64")
    # Without a driver nothing is excluded: cuda-version only constrains __cuda.
    read_conda_specs(["cuda-version=13.3"], platform="linux-64")


def test_a_declared_toolkit_wins_over_the_prefixs(prefix_126: Path) -> None:
    env = detect_environment(
        prefix=prefix_126, targets=["cuda_version=12.4"], env={"CONDA_OVERRIDE_CUDA": "12.9"}
    )
    assert env.toolkit is not None
    assert (env.toolkit.version, env.toolkit.source) == ("12.4", Source.TARGET)
    assert "cuda-version=12.6 (conda-meta) overridden by --target: cuda-version=12.4" in env.notes


def test_every_fact_has_a_source(prefix_126: Path) -> None:
    env = detect_environment(prefix=prefix_126, env={"CONDA_OVERRIDE_CUDA": "12.9"})
    assert (env.platform_source, env.python_source) == (Source.PREFIX, Source.PREFIX)
    declared = detect_environment(platform="osx-arm64", targets=["python=3.12"], env={})
    assert (declared.platform_source, declared.python_source) == (Source.TARGET, Source.TARGET)


def test_strict_refuses_this_machines_facts() -> None:
    with pytest.raises(DetectionError) as info:
        detect_environment(strict=True, env={})
    message = str(info.value)
    assert message.startswith("--strict: these facts come from this machine")
    assert f"platform {host_platform()} (this machine's)" in message


def test_strict_accepts_a_declared_machine() -> None:
    env = detect_environment(
        platform="linux-64",
        targets=["cuda=12.8", "cuda_arch=9.0", "archspec=haswell", "glibc=2.28"],
        env={},
        strict=True,
    )
    sources = {vp.name: vp.source for vp in env.virtual_packages}
    assert sources["__cuda"] == Source.TARGET
    assert sources["__linux"] == Source.PLATFORM_DEFAULT
