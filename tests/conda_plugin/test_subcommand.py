"""``conda variant ...``: the CLI's commands inside conda, against conda's target (``-n``/``-p``,
else the active environment, else base, as conda resolves them), with conda's virtual packages,
the plugin's settings as source defaults, and the CLI's output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conda_plugin.conftest import Conda
from tests.worlds.prefix import running_has
from tests.worlds.wheels import make_release


@pytest.fixture
def ml(conda: Conda, prefix_126: Path) -> Path:
    """``envs/ml``: a conda environment with cuda-version 12.6 (conda's envs dir)."""
    link = conda.envs / "ml"
    link.symlink_to(prefix_126, target_is_directory=True)
    return link


def _facts(out: str) -> dict[str, tuple[str, str]]:
    return {vp["name"]: (vp["version"], vp["source"]) for vp in json.loads(out)["virtual_packages"]}


def test_help_lists_the_clis_commands_under_conda_variant(conda: Conda) -> None:
    ran = conda.variant("--help")
    assert ran.code == 0
    assert ran.out.startswith("Usage: conda variant [OPTIONS] COMMAND [ARGS]...")
    listed = {line.split()[0] for line in ran.out.split("Commands:")[1].splitlines() if line}
    assert {"detect", "select", "install", "doctor", "export", "env", "run"} <= listed
    assert "    conda variant doctor --prefix" in ran.out  # examples as conda users type them
    assert "variant-bridge detect" not in ran.out


def test_detect_reads_the_named_environment_with_condas_virtual_packages(
    conda: Conda, ml: Path
) -> None:
    # conda's own override setting (.condarc override_virtual_packages) is something only conda
    # knows: the bridge alone would see no driver here.
    conda.reset(override_virtual_packages={"cuda": "12.8"})
    ran = conda.variant("detect", "-n", "ml", "--json")
    assert ran.code == 0, ran.err
    detected = json.loads(ran.out)
    assert detected["origin"] == f"prefix {ml}"
    assert detected["toolkit"]["version"] == "12.6"
    facts = _facts(ran.out)
    assert facts["__cuda"] == ("12.8", "conda")
    assert facts["__glibc"] == ("2.36", "conda")
    assert facts["__archspec"] == ("1", "conda")
    # The provider answers from conda's facts: CUDA 12.8 and below (toolkit policy: <= 12.6).
    assert detected["supported"]["nvidia"]["cuda_version_lower_bound"][0] == "12.6"


def test_the_text_output_names_conda_as_the_source(conda: Conda, ml: Path) -> None:
    conda.reset(override_virtual_packages={"cuda": "12.8"})
    ran = conda.variant("-p", str(ml), "detect")
    assert ran.code == 0, ran.err
    assert f"Environment: prefix {ml}" in ran.out
    line = next(line for line in ran.out.splitlines() if "__cuda=" in line)
    assert line.split() == ["__cuda=12.8=0", "conda"]


def test_the_active_environment_is_the_default_target_then_base(
    conda: Conda, ml: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONDA_PREFIX", str(ml))
    ran = conda.variant("detect", "--json")
    assert ran.code == 0, ran.err
    assert json.loads(ran.out)["origin"] == f"prefix {ml}"
    monkeypatch.delenv("CONDA_PREFIX")
    # Nothing active: conda's target is base (here a root prefix that does not exist).
    ran = conda.variant("detect")
    assert ran.code == 1
    assert ran.err.startswith("error: ")
    assert str(conda.root) in ran.err
    assert len(ran.err.strip().splitlines()) == 1


def test_an_environment_that_is_none_is_condas_own_error(conda: Conda, tmp_path: Path) -> None:
    from conda.exceptions import EnvironmentLocationNotFound

    with pytest.raises(EnvironmentLocationNotFound) as unknown:
        conda.variant("detect", "-n", "nope")
    assert str(unknown.value) == f"Not a conda environment: {conda.envs / 'nope'}"
    with pytest.raises(EnvironmentLocationNotFound):
        conda.variant("-p", str(tmp_path / "missing"), "doctor")


def test_the_environment_named_twice_or_where_none_is_read_is_a_usage_error(
    conda: Conda, ml: Path
) -> None:
    ran = conda.variant("detect", "-n", "ml", "--prefix", str(ml))
    assert ran.code == 2
    assert "-n/-p and --prefix/--lockfile both name the environment" in ran.err
    ran = conda.variant("translate", "-n", "ml", "nvidia :: sm_arch :: 90_real")
    assert ran.code == 2
    assert "conda variant translate reads no environment: -n/-p do not apply" in ran.err


def test_bad_input_is_the_clis_one_line_error(conda: Conda, ml: Path) -> None:
    ran = conda.variant("detect", "-n", "ml", "--target", "cuda=abc")
    assert ran.code == 1
    (line,) = ran.err.strip().splitlines()
    assert line.startswith("error: --target cuda='abc'")
    assert conda.variant("detect", "--no-such-option").code == 2


def test_commands_that_read_no_environment_run_as_in_the_cli(conda: Conda) -> None:
    ran = conda.variant("translate", "nvidia :: cuda_version_lower_bound :: 12.8", "--json")
    assert ran.code == 0, ran.err
    assert "__cuda >=12.8" in ran.out


@pytest.mark.slow
def test_the_plugins_sources_setting_is_the_default_find_links(
    conda: Conda, ml: Path, tmp_path: Path
) -> None:
    wheels = tmp_path / "wheels"
    make_release(wheels, "gpulib", "1.0", {
        "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"],
        "cu128": ["nvidia :: cuda_version_lower_bound :: 12.8"],
        "null": [],
    })  # fmt: skip
    conda.reset(override_virtual_packages={"cuda": "12.9"},
                condarc_plugins={"variant_bridge_find_links": (str(wheels),)})  # fmt: skip
    ran = conda.variant("select", "gpulib", "-n", "ml", "--python", "3.12", "--json")
    assert ran.code == 0, ran.err
    (chosen,) = json.loads(ran.out)
    assert (
        chosen["selected"]["label"] == "cu126"
    )  # the prefix's toolkit is 12.6; the driver runs 12.9


@pytest.mark.slow
def test_install_into_an_environment_without_python_refuses(
    conda: Conda, ml: Path, tmp_path: Path
) -> None:
    """``envs/ml`` records Python but has no ``bin/python``: nothing is installed, and never
    into the interpreter conda (and the plugin) run on."""
    from tests.worlds.wheels import make_wheel

    wheels = make_wheel(tmp_path / "wheels", "straytarget", "1.0").parent
    before = sorted(p.name for p in ml.rglob("*"))
    ran = conda.variant("install", "straytarget", "-n", "ml", "-f", str(wheels))
    assert ran.code == 1, ran.out
    (line,) = ran.err.splitlines()
    assert line.startswith("error: no interpreter to install into")
    assert f"{ml} has no bin/python" in line
    assert sorted(p.name for p in ml.rglob("*")) == before
    assert not running_has("straytarget")
