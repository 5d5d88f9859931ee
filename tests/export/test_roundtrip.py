"""Round trips on the real world: what an export says solves, hashes and parses back to the
environment it came from."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.export.conftest import (
    OVERRIDES,
    SOLVE_VIRTUAL_PACKAGES,
    UV,
    ExportWorld,
    export_context,
    export_prefix,
    installed_label,
)
from tests.worlds.prefix import solve
from variant_bridge.detect import detect_environment
from variant_bridge.environment import Source
from variant_bridge.export import environment_yml, pixi_toml, render
from variant_bridge.jobs.export import ExportRequest, prepare_export

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomlkit as tomllib

pytestmark = pytest.mark.slow


def conda_specs(environment_yml_text: str) -> list[str]:
    data = yaml.safe_load(environment_yml_text)
    return [d for d in data["dependencies"] if isinstance(d, str)]


def pip_lines(environment_yml_text: str) -> list[str]:
    data = yaml.safe_load(environment_yml_text)
    [pip] = [d["pip"] for d in data["dependencies"] if isinstance(d, dict)]
    return list(pip)


def resolve(world: ExportWorld, specs: list[str]) -> set[tuple[str, str, str]]:
    from rattler import MatchSpec

    # conda's `name=version=build` is only accepted by rattler's lenient parser, as by conda.
    records = solve([world.channel], [MatchSpec(s) for s in specs], SOLVE_VIRTUAL_PACKAGES)
    return {(r.name.normalized, str(r.version), str(r.build)) for r in records}


@pytest.mark.parametrize(
    "options",
    [
        {},  # name=version=build
        {"pin": "version"},  # name=version
        {"from_history": True},  # requested specs (rattler's) + the cuda-version pin
    ],
    ids=["builds", "version", "from-history"],
)
def test_exported_conda_dependencies_resolve_to_the_same_packages(
    export_world: ExportWorld, options: dict[str, bool]
) -> None:
    model = export_prefix(export_world, **options)
    specs = conda_specs(render(model, "environment-yml"))
    assert any(s.startswith("cuda-version=12.6") for s in specs)
    assert any(s.startswith("__cuda ") for s in specs)  # the host requirement is solvable too
    resolved = resolve(export_world, specs)
    assert resolved == export_world.record_set
    assert ("cuda-version", "12.6", "h0_3") in resolved


def test_the_host_requirements_reject_a_machine_the_wheels_cannot_run_on(
    export_world: ExportWorld,
) -> None:
    from rattler import MatchSpec
    from rattler.exceptions import SolverError

    model = export_prefix(export_world)
    specs = conda_specs(render(model, "environment-yml"))
    old_driver = [v for v in SOLVE_VIRTUAL_PACKAGES if not v.startswith("__cuda=")]
    with pytest.raises(SolverError, match="__cuda"):
        solve([export_world.channel], [MatchSpec(s) for s in specs], [*old_driver, "__cuda=12.4"])


def file_of(url: str) -> Path:
    assert url.startswith("file:")
    return Path(unquote(urlsplit(url).path))


def test_every_pip_line_parses_and_direct_references_hash_to_their_files(
    export_world: ExportWorld,
) -> None:
    model = export_prefix(export_world)
    lines = pip_lines(render(model, "environment-yml"))
    assert lines[0] == f"--find-links {export_world.wheels.as_uri()}"
    requirements = [Requirement(line) for line in lines if not line.startswith("--")]
    by_name = {canonicalize_name(r.name): r for r in requirements}
    assert set(by_name) == {"gpuext", "plainpkg", "tinyvar"}
    assert str(by_name["plainpkg"].specifier) == "==2.0"
    for name in ("gpuext", "tinyvar"):
        url = by_name[name].url
        assert url is not None
        location, _, fragment = url.partition("#sha256=")
        wheel = file_of(location)
        assert wheel == export_world.installed[name]  # the exact file uv installed
        assert fragment == hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_the_lock_exports_the_same_conda_part_as_the_prefix_it_produced(
    export_world: ExportWorld,
) -> None:
    from_prefix = export_prefix(export_world)
    with export_context(lockfile=export_world.lockfile) as ctx:
        from_lock = prepare_export(ExportRequest(), ctx)
    prefix_yml = environment_yml.to_dict(from_prefix)
    lock_yml = environment_yml.to_dict(from_lock)
    assert prefix_yml["channels"] == lock_yml["channels"]
    assert conda_specs(render(from_prefix, "environment-yml")) == conda_specs(
        render(from_lock, "environment-yml")
    )
    assert (
        pixi_toml.to_dict(from_prefix)["dependencies"]
        == pixi_toml.to_dict(from_lock)["dependencies"]
    )
    assert from_prefix.platform_declaration == from_lock.platform_declaration
    # the locked wheels are pinned to the same files
    assert [str(p) for p in from_prefix.pip] == [str(p) for p in from_lock.pip]


NO_GPU = {**OVERRIDES, "CONDA_OVERRIDE_CUDA": "", "CONDA_OVERRIDE_CUDA_ARCH": ""}


@pytest.fixture(scope="module")
def gpu_machine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What uv sees on the machine OVERRIDES describes: a fake ``nvidia-smi`` (uv's GPU probe,
    driver 12.9, compute capability 9.0) first on PATH."""
    from tests.integration.test_uv_agreement import FAKE_NVIDIA_SMI

    bin_dir = tmp_path_factory.mktemp("fake-gpu")
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_NVIDIA_SMI)
    smi.chmod(0o755)
    return {"PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])}


def uv_choice(world: ExportWorld, site: Path, environ: dict[str, str]) -> str | None:
    """The label real uv installs for tinyvar 1.0 from the world's wheels with *environ*."""
    subprocess.run(
        [
            str(UV),
            "pip",
            "install",
            "--preview-features",
            "wheel-variants",
            "--no-deps",
            "--offline",
            "--target",
            str(site),
            "--python",
            sys.executable,
            "--quiet",
            "--find-links",
            str(world.wheels),
            "tinyvar==1.0",
        ],
        check=True,
        env={**os.environ, **environ, "UV_NO_CACHE": "1"},
        capture_output=True,
        timeout=120,
    )
    return installed_label(site, "tinyvar")


@pytest.mark.parametrize(
    "machine",
    [
        OVERRIDES,  # the machine the wheels were chosen on (driver 12.9, GPU 9.0)
        NO_GPU,  # QA: exported from a GPU-less machine, the activation said "none"
    ],
    ids=["gpu", "no-gpu"],
)
def test_the_pixi_manifest_matches_the_environment(
    export_world: ExportWorld, machine: dict[str, str], tmp_path: Path, gpu_machine: dict[str, str]
) -> None:
    # tinyvar cu126 has kernels for 8.x and 9.x only: pixi cannot state that (see test_render);
    # the default export declares the driver floor and says the rest
    model = export_prefix(export_world, environ=machine)
    manifest = tomllib.loads(render(model, "pixi-toml"))
    assert manifest["pypi-dependencies"] == {
        "gpuext": {"path": str(export_world.installed["gpuext"])},
        "plainpkg": "==2.0",
        "tinyvar": {"path": str(export_world.installed["tinyvar"])},
    }
    # the wheels' driver floor (__cuda >=12.6) and GPU floor (8.0): what pixi can state
    [platform] = manifest["workspace"]["platforms"]
    assert platform["cuda"]["driver"] == "12.6"
    assert platform["cuda"]["arch"] == "8.0"
    # [activation.env] pins the toolkit's 12.6 (not "none", not 12.0), and the target GPU
    # where this machine has one
    env = manifest["activation"]["env"]
    assert env["NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"] == "12.6"
    assert env.get("NV_VARIANT_PROVIDER_FORCE_SM_ARCH") == (
        machine["CONDA_OVERRIDE_CUDA_ARCH"] or None
    )
    # ... and real uv, run with them as pixi would on the GPU machine, picks the installed label
    assert uv_choice(export_world, tmp_path / "site", {**gpu_machine, **env}) == "cu126"
    installed = {(r.name.normalized, str(r.version), str(r.build)) for r in export_world.records}
    assert {
        (name, dep["version"].removeprefix("=="), dep["build"])
        for name, dep in manifest["dependencies"].items()
    } == installed


@pytest.mark.parametrize(
    ("exported_on", "later"),
    [
        # the same machine: driver 12.9, GPU 9.0
        (OVERRIDES, OVERRIDES),
        # exported on a GPU-less CI runner, used on the GPU machine
        (NO_GPU, OVERRIDES),
    ],
    ids=["same-machine", "exported-without-gpu"],
)
def test_inside_the_environment_uv_and_select_agree_and_pins_stay_pins(
    export_world: ExportWorld,
    tmp_path: Path,
    gpu_machine: dict[str, str],
    exported_on: dict[str, str],
    later: dict[str, str],
) -> None:
    # QA: `pixi run variant-bridge select` read the exported driver pin (12.6) as the driver
    # of a 12.9 machine
    model = export_prefix(export_world, environ=exported_on, host_requirements=False)
    activation = dict(model.activation_env)
    inside = {**later, **activation}  # what `pixi run` sets, on the machine it runs on
    env = detect_environment(prefix=export_world.prefix, env=inside)
    assert env.cuda is not None
    assert (env.cuda.version, str(env.cuda.source)) == ("12.9", "CONDA_OVERRIDE_CUDA")
    assert env.cuda_arch is not None
    assert env.cuda_arch.version == "9.0"
    pins = [n for n in env.notes if n.startswith("exported pin: ")]
    assert pins
    assert all("is not a fact about this machine" in n for n in pins)
    # select, run the way a user runs it inside the environment, and real uv agree
    chosen = select_label(export_world, inside)
    uv_sees = {**gpu_machine, **activation}
    assert chosen == uv_choice(export_world, tmp_path / "site", uv_sees) == "cu126"
    # with nothing declaring the GPU, its fact comes from detection, never from the pin
    detected = detect_environment(prefix=export_world.prefix, env={**activation, "X": "1"})
    for vp in (detected.cuda, detected.cuda_arch):
        assert vp is None or vp.source == Source.DETECTED
    # a value set after activation is the user's again: a fact
    mine = {**inside, "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.8"}
    overridden = detect_environment(prefix=export_world.prefix, env=mine)
    assert not any("DRIVER_VERSION" in n for n in overridden.notes if "exported pin" in n)


def select_label(world: ExportWorld, environ: dict[str, str]) -> str | None:
    """What `variant-bridge select` chooses for tinyvar 1.0 in the world's prefix."""
    from click.testing import CliRunner

    from variant_bridge.cli import main

    args = ["select", "tinyvar==1.0", "--prefix", str(world.prefix), "-f", str(world.wheels)]
    result = CliRunner(env=environ).invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    [choice] = json.loads(result.stdout)
    label: str | None = choice["selected"]["label"]
    return label


def test_the_declared_platform_solves_the_pinned_packages(export_world: ExportWorld) -> None:
    from rattler import MatchSpec

    model = export_prefix(export_world, host_requirements=False)
    declared = model.platform_declaration
    vps = [v for v in SOLVE_VIRTUAL_PACKAGES if not v.startswith(("__cuda=", "__cuda_arch="))]
    vps += [f"__cuda={declared.cuda}", f"__cuda_arch={declared.cuda_arch}"]
    specs = conda_specs(render(model, "environment-yml"))
    records = solve([export_world.channel], [MatchSpec(s) for s in specs], vps)
    assert {(r.name.normalized, str(r.version), str(r.build)) for r in records} == (
        export_world.record_set
    )


def test_from_history_pins_the_toolkit_the_user_never_asked_for(world_copy: ExportWorld) -> None:
    # The user asked for python and libcublas only; the solver picked cuda-version 12.6 then.
    # Re-solved without the pin, the same request now gives 12.9 (the newest the driver allows).
    (world_copy.prefix / "conda-meta" / "history").write_text(
        "==> 2026-05-01 10:00:00 <==\n"
        f"# cmd: conda create -p {world_copy.prefix} -c {world_copy.channel.url} python libcublas\n"
        "# update specs: ['python 3.12.*', 'libcublas']\n"
    )
    model = export_prefix(world_copy, from_history=True)
    specs = conda_specs(render(model, "environment-yml"))
    assert specs[:3] == ["python 3.12.*", "libcublas", "cuda-version=12.6"]
    assert resolve(world_copy, specs) == world_copy.record_set
    unpinned = resolve(world_copy, ["python 3.12.*", "libcublas"])
    assert ("cuda-version", "12.9", "h0_3") in unpinned  # what the pin prevents


def test_without_variant_wheels_the_pins_keep_uv_on_the_environments_toolkit(
    world_copy: ExportWorld, tmp_path: Path, gpu_machine: dict[str, str]
) -> None:
    # QA: a cuda-version 12.6 export with no variant wheels pinned the driver to 12.0; uv in the
    # environment then installed the CPU build of a wheel whose CUDA build needs 12.6
    for dist_info in world_copy.site.glob("*.dist-info"):
        if dist_info.name.startswith(("tinyvar-", "gpuext-")):
            shutil.rmtree(dist_info)
    model = export_prefix(world_copy, environ=NO_GPU, host_requirements=False)
    assert not any(p.label for p in model.pip)
    activation = dict(model.activation_env)
    assert activation["NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"] == "12.6"
    later = {**OVERRIDES, **activation}
    assert select_label(world_copy, later) == "cu126"  # the toolkit's build, not cu128
    assert uv_choice(world_copy, tmp_path / "site", {**gpu_machine, **activation}) == "cu126"
