"""The maintainer guide's demo, for real and offline: one matrix (docs/examples/vbdemo), conda
packages built by py-rattler-build from a local channel, variant wheels made by ``variantlib
make-variant --no-isolation`` (validated by the bridge's plugins) and ``generate-index-json``;
``check`` says both sides agree, and names exactly what breaks when one side changes."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.worlds.maintainer import (
    DEMO,
    build_channel,
    make_plain_wheels,
    run_script,
    variant_bridge,
    write_stub_recipes,
)
from tests.worlds.wheels import make_wheel
from variant_bridge.environment import VirtualPackage
from variant_bridge.jobs.check import CheckRequest, run_check
from variant_bridge.jobs.context import open_downloads
from variant_bridge.jobs.specs import FetchSpec
from variant_bridge.release_check import CheckReport, Level, Topic
from variant_bridge.solve.solver import solve_specs

PLATFORMS = {
    "null": "manylinux_2_17_x86_64",
    "cu126": "manylinux_2_17_x86_64",
    "cu128": "manylinux_2_17_x86_64",
    "cu129": "manylinux_2_17_x86_64",
    "cu130": "manylinux_2_28_x86_64",
}


@dataclass(frozen=True)
class Demo:
    project: Path
    channel: Path
    dist: Path
    packages: list[Path]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    project = tmp_path_factory.mktemp("vbdemo")
    shutil.copytree(DEMO, project, dirs_exist_ok=True)
    # 1. the matrix writes both sides' files
    made = variant_bridge("matrix", "-o", "generated", cwd=project)
    assert made.returncode == 0, made.stderr
    generated = project / "generated"
    shutil.copy(generated / "variants.yaml", project / "recipe" / "variants.yaml")
    # 2. conda: stubs shaped like conda-forge's, then vbdemo, from a local channel
    recipes = write_stub_recipes(project / "stubs")
    recipe = (project / "recipe" / "recipe.yaml", project / "recipe" / "variants.yaml")
    channel = project / "channel"
    built = build_channel([*recipes, recipe], channel, project / "scratch")
    # 3. wheels: the generated [variant] table, one plain wheel per build, make-variants.sh
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text() + "\n" + (generated / "pyproject-variant.toml").read_text()
    )
    make_plain_wheels(project, PLATFORMS)
    made = run_script(generated / "make-variants.sh", project)
    assert made.returncode == 0, made.stderr[-2000:]
    assert "Loading plugin for namespace nvidia via variant_bridge.providers.plugins" in made.stderr
    packages = [p for p in built if p.name.startswith("vbdemo-")]
    return Demo(project, channel, project / "dist", packages)


def check(conda: Path, wheels: Path) -> CheckReport:
    with open_downloads(FetchSpec(no_cache=True, quiet=True)) as downloads:
        return run_check(CheckRequest(conda=(conda,), wheels=str(wheels)), downloads)


def problems(report: CheckReport) -> set[tuple[Topic, str]]:
    return {(f.topic, f.subject) for f in report.findings if f.level > Level.INFO}


def test_the_conda_packages_carry_the_matrix(demo: Demo) -> None:
    found = {}
    for package in demo.packages:
        match = re.fullmatch(
            r"vbdemo-1\.0\.0-(cpu|cuda\d+)_h[0-9a-f]{7}_(\d+)\.conda", package.name
        )
        assert match is not None, package.name
        found[match[1]] = int(match[2])
    # per-minor offsets: no two CUDA minors tie, the newest toolkit has the highest number
    assert found == {"cpu": 0, "cuda126": 1, "cuda128": 2, "cuda129": 3, "cuda130": 4}


def test_each_cuda_package_constrains_the_gpus_it_runs_on(demo: Demo) -> None:
    import json as _json

    repodata = _json.loads((demo.channel / "linux-64" / "repodata.json").read_text())
    constrains = {
        record["build"].split("_")[0]: record.get("constrains", [])
        for name, record in repodata["packages.conda"].items()
        if name.startswith("vbdemo-")
    }
    assert constrains == {
        "cpu": [],
        "cuda126": ["__cuda_arch >=5.0"],  # sm_50..sm_90 real code, PTX 9.0 for newer GPUs
        "cuda128": ["__cuda_arch >=8.0,<11|>=12.0"],
        "cuda129": ["__cuda_arch >=8.0,<11|>=12.0"],
        "cuda130": ["__cuda_arch >=8.0"],
    }


MACHINE = (VirtualPackage("__glibc", "2.28"), VirtualPackage("__unix", "0"),
           VirtualPackage("__linux", "6.8"))  # fmt: skip


@pytest.mark.parametrize(
    ("driver", "gpu", "build"),
    [
        ("12.9", "5.0", "cuda126"),  # cu128/cu129 have no sm_50 code: the constraint says so
        ("12.9", "9.0", "cuda129"),  # the newest toolkit the driver runs
        ("12.9", None, "cuda129"),  # stock conda has no __cuda_arch: nothing is constrained
        ("13.0", "5.0", "cuda126"),
        ("13.0", "12.0", "cuda130"),
        ("13.0", "11.0", "cuda130"),  # Thor: only the 13.0 build has sm_110 code
    ],
)
def test_rattler_solves_the_build_with_code_for_the_gpu(
    demo: Demo, driver: str, gpu: str | None, build: str
) -> None:
    machine = [*MACHINE, VirtualPackage("__cuda", driver)]
    if gpu is not None:
        machine.append(VirtualPackage("__cuda_arch", gpu))
    solved = solve_specs(["vbdemo"], [demo.channel], platform="linux-64", virtual_packages=machine)
    (vbdemo,) = [p for p in solved if p.name == "vbdemo"]
    assert vbdemo.build.startswith(f"{build}_"), vbdemo.build


def test_generate_index_json_writes_the_expected_variants_json(demo: Demo) -> None:
    expected = json.loads((demo.project / "generated" / "vbdemo-1.0.0-variants.json").read_text())
    written = json.loads((demo.dist / "vbdemo-1.0.0-variants.json").read_text())
    assert written == expected
    assert sorted(written["variants"]) == ["cu126", "cu128", "cu129", "cu130", "null"]


@pytest.mark.parametrize("conda", ["channel", "recipe/recipe.yaml", "generated/variants.yaml"])
def test_both_sides_agree(demo: Demo, conda: str) -> None:
    report = check(demo.project / conda, demo.dist)
    assert problems(report) == set(), [str(f) for f in report.findings if f.level > Level.INFO]
    if conda != "generated/variants.yaml":  # a variant file alone knows no name or version
        assert (Topic.VERSION, "release") in {(f.topic, f.subject) for f in report.findings}


def test_the_command_agrees_too_and_exits_0_every_time(demo: Demo) -> None:
    # py-rattler can crash at interpreter exit after reading packages: the command reads them in
    # a child process, so its own exit status is the check's.
    for _ in range(3):
        done = variant_bridge("check", "--conda", "channel", "--wheels", "dist", cwd=demo.project)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        assert "0 error(s), 0 warning(s)" in done.stdout


def test_a_conda_minor_dropped_is_named(demo: Demo, tmp_path: Path) -> None:
    channel = tmp_path / "channel"
    shutil.copytree(demo.channel / "linux-64", channel)
    for package in channel.glob("vbdemo-1.0.0-cuda128_*"):
        package.unlink()
    report = check(channel, demo.dist)
    assert problems(report) == {(Topic.CUDA, "wheel cu128")}


def remade(demo: Demo, folder: Path, label: str, platform: str, *properties: str) -> Path:
    """A copy of the wheels with one variant made again from a plain wheel of *platform*."""
    shutil.copytree(demo.dist, folder)
    for old in folder.glob(f"*-{label}.whl"):
        old.unlink()
    (folder / "vbdemo-1.0.0-variants.json").unlink()
    plain = make_wheel(folder.parent / "plain", "vbdemo", "1.0.0", tags=f"py3-none-{platform}")
    args = [f"-p={p}" for p in properties]
    script = folder.parent / "remake.sh"
    script.write_text(
        f"set -e\nvariantlib make-variant --no-isolation -f {plain} -o {folder} "
        f"--pyproject-toml {demo.project / 'pyproject.toml'} --variant-label {label} "
        + " ".join(f"'{a}'" for a in args)
        + f"\nvariantlib generate-index-json -d {folder}\n"
    )
    done = run_script(script, folder.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return folder


def test_a_changed_sm_list_is_named(demo: Demo, tmp_path: Path) -> None:
    sm = ("80_real", "90_real", "120_real", "120_virtual")  # 100_real dropped
    dist = remade(
        demo, tmp_path / "dist", "cu129", PLATFORMS["cu129"],
        "nvidia :: cuda_version_lower_bound :: 12.9", *(f"nvidia :: sm_arch :: {v}" for v in sm),
    )  # fmt: skip
    report = check(demo.channel, dist)
    assert problems(report) == {(Topic.SM_ARCH, "CUDA 12.9 <-> cu129")}
    (finding,) = [f for f in report.findings if f.topic is Topic.SM_ARCH and f.level is Level.WARN]
    assert finding.message == "SM architectures differ: conda only 100_real; wheel only -"


def test_a_raised_glibc_floor_is_named(demo: Demo, tmp_path: Path) -> None:
    sm = ("50_real", "60_real", "70_real", "75_real", "80_real", "86_real", "90_real",
          "90_virtual")  # fmt: skip
    dist = remade(
        demo, tmp_path / "dist", "cu126", "manylinux_2_28_x86_64",
        "nvidia :: cuda_version_lower_bound :: 12.6", *(f"nvidia :: sm_arch :: {v}" for v in sm),
    )  # fmt: skip
    report = check(demo.channel, dist)
    assert problems(report) == {(Topic.GLIBC, "CUDA 12.6 <-> cu126")}


def test_make_variant_refuses_what_the_plugins_do_not_know(demo: Demo, tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="invalid according to the plugins"):
        remade(
            demo,
            tmp_path / "dist",
            "cu102",
            PLATFORMS["cu126"],
            "nvidia :: cuda_version_lower_bound :: 10.2",
        )


@pytest.mark.parametrize("source", ["channel", "recipe/recipe.yaml"])
def test_the_matrix_read_back_from_the_conda_side_is_the_declared_one(
    demo: Demo, source: str
) -> None:
    import yaml

    declared = yaml.safe_load((demo.project / "generated" / "variants.yaml").read_text())
    done = variant_bridge(
        "matrix", "--from-conda", source, "--project", "vbdemo", "--emit", "variants-yaml",
        cwd=demo.project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert yaml.safe_load(done.stdout) == declared


def test_the_guides_check_again_block_is_what_check_prints(demo: Demo) -> None:
    """docs/maintainers.md "Check again": its lines (the block elides some with ``...``), in
    order, are what ``check`` prints on the demo's packages and wheels."""
    doc = (DEMO.parents[2] / "docs" / "maintainers.md").read_text()
    marker = "<!-- verified: tests/integration/test_maintainer_demo.py (first and last lines) -->"
    block = doc.split(marker, 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    expected = [line for line in block.splitlines()[1:] if line != "..."]
    done = variant_bridge("check", "--conda", "channel", "--wheels", "dist", cwd=demo.project)
    seen = done.stdout.splitlines()
    assert (seen[0], seen[-1]) == (expected[0], expected[-1])
    position = 0
    for line in expected:
        assert line in seen[position:], line
        position = seen.index(line, position) + 1
