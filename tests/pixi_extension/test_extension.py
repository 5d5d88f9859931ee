"""``pixi variant ...`` on a pixi workspace built from real parts (issue 19): a pixi.toml with two
environments, a rattler-written pixi.lock locking both, ``.pixi/envs/<env>`` installed by rattler
(:mod:`tests.worlds.pixi_workspace`); run from a subdirectory, for both environments, plus the
errors. pixi itself is on no registry reachable here; it runs the same executable with the same
arguments (tested with the installed ``pixi-variant`` script)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomlkit
from click.testing import CliRunner, Result

from tests.worlds.pixi_workspace import ENVIRONMENTS, PixiWorkspace, make_workspace
from tests.worlds.prefix import running_has
from variant_bridge.cli import main as variant_bridge
from variant_bridge.pixi_extension import main

SCRIPT = Path(sys.executable).with_name("pixi-variant")
LABELS = {"default": "cu126", "legacy": "cu124"}


@pytest.fixture(autouse=True)
def _outside_pixi_run(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PIXI_PROJECT_MANIFEST", "PIXI_ENVIRONMENT_NAME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> PixiWorkspace:
    """Both environments installed; the tests reading it change nothing."""
    return make_workspace(tmp_path_factory.mktemp("ws"))


@pytest.fixture
def fresh(tmp_path: Path) -> PixiWorkspace:
    return make_workspace(tmp_path)


@pytest.fixture
def inside(workspace: PixiWorkspace) -> Iterator[Path]:
    """The working directory: deep inside the workspace."""
    old = Path.cwd()
    os.chdir(workspace.subdir)
    try:
        yield workspace.subdir
    finally:
        os.chdir(old)


def pixi_variant(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Result:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner(env=env).invoke(main, list(args), prog_name="pixi variant")
    finally:
        os.chdir(old)


def as_json(result: Result) -> dict:  # type: ignore[type-arg]
    assert result.exit_code == 0, result.output + result.stderr
    data: dict = json.loads(result.stdout)  # type: ignore[type-arg]
    return data


# -- help ---------------------------------------------------------------------------------------


def test_help_reads_like_pixis(tmp_path: Path) -> None:
    result = pixi_variant("--help", cwd=tmp_path)  # needs no workspace
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith("Usage: pixi variant [OPTIONS] <COMMAND>")
    assert text.index("Commands:") < text.index("Options:")  # pixi's order
    for command in ("add", "detect", "select", "doctor", "export"):
        assert f"\n  {command} " in text
    assert "-e, --environment <ENVIRONMENT>" in text
    assert "--manifest-path <MANIFEST_PATH>" in text


@pytest.mark.parametrize("command", ["add", "detect", "select", "doctor", "export"])
def test_each_command_takes_pixis_options_not_a_prefix(tmp_path: Path, command: str) -> None:
    text = pixi_variant(command, "--help", cwd=tmp_path).stdout
    assert f"Usage: pixi variant {command} " in text
    assert "-e, --environment <ENVIRONMENT>" in text
    assert "--manifest-path <MANIFEST_PATH>" in text
    assert "--prefix" not in text
    assert "--lockfile" not in text


# -- reading the workspace's environments -------------------------------------------------------


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_detect_each_environment_from_a_subdirectory(workspace: PixiWorkspace, name: str) -> None:
    data = as_json(pixi_variant("detect", "-e", name, "--json", cwd=workspace.subdir))
    assert data["origin"] == f"prefix {workspace.prefix(name)}"
    assert data["toolkit"]["version"] == ENVIRONMENTS[name]
    assert data["toolkit"]["source"] == "conda-meta"
    # No GPU here: the driver the manifest declares for the environment stands in.
    cuda = next(vp for vp in data["virtual_packages"] if vp["name"] == "__cuda")
    assert (cuda["version"], cuda["source"]) == (
        {"default": "12.8", "legacy": "12.4"}[name],
        "pixi manifest",
    )


def test_default_environment_and_group_level_options(
    workspace: PixiWorkspace, tmp_path: Path
) -> None:
    default = as_json(pixi_variant("detect", "--json", cwd=workspace.subdir))
    assert default["origin"] == f"prefix {workspace.prefix('default')}"
    # Given before the command, from outside the workspace (as pixi passes them on).
    given = ("--manifest-path", str(workspace.root), "-e", "legacy", "detect", "--json")
    assert (
        as_json(pixi_variant(*given, cwd=tmp_path))["origin"]
        == f"prefix {workspace.prefix('legacy')}"
    )
    by_file = ("detect", "--manifest-path", str(workspace.manifest), "--json")
    assert as_json(pixi_variant(*by_file, cwd=tmp_path))["origin"] == default["origin"]


def test_under_pixi_run_its_variables_name_the_workspace(
    workspace: PixiWorkspace, tmp_path: Path
) -> None:
    env = {"PIXI_PROJECT_MANIFEST": str(workspace.manifest), "PIXI_ENVIRONMENT_NAME": "legacy"}
    data = as_json(pixi_variant("detect", "--json", cwd=tmp_path, env=env))
    assert data["origin"] == f"prefix {workspace.prefix('legacy')}"
    # -e still wins over the environment pixi runs in.
    data = as_json(pixi_variant("detect", "-e", "default", "--json", cwd=tmp_path, env=env))
    assert data["origin"] == f"prefix {workspace.prefix('default')}"


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_select_chooses_for_each_environments_toolkit(workspace: PixiWorkspace, name: str) -> None:
    args = ("select", "gpulib", "-f", str(workspace.wheels), "-e", name, "--json")
    choices = as_json(pixi_variant(*args, cwd=workspace.subdir))
    chosen = {c["package"]: c["selected"] for c in choices}  # type: ignore[index]
    assert chosen["gpulib"]["label"] == LABELS[name]
    assert chosen["nvidia-cublas-cu12"]["filename"].startswith(
        {"default": "nvidia_cublas_cu12-12.6", "legacy": "nvidia_cublas_cu12-12.4"}[name]
    )


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_export_is_the_clis_export_of_the_environment(workspace: PixiWorkspace, name: str) -> None:
    ours = as_json(pixi_variant("export", "-e", name, "--json", cwd=workspace.subdir))
    prefix = str(workspace.prefix(name))
    theirs = json.loads(
        CliRunner().invoke(variant_bridge, ["export", "--prefix", prefix, "--json"]).stdout
    )
    assert ours["content"] == theirs["content"]
    assert {"name": f"proj-{name}" if name != "default" else "proj"}.items() <= ours[
        "content"
    ].items()


# -- an environment not installed yet -------------------------------------------------------------


def test_an_environment_not_installed_is_read_from_the_lock(fresh: PixiWorkspace) -> None:
    shutil.rmtree(fresh.prefix("legacy"))
    result = pixi_variant("detect", "-e", "legacy", "--json", cwd=fresh.subdir)
    data = as_json(result)
    assert data["origin"] == "pixi.lock legacy/linux-64"
    assert (data["toolkit"]["version"], data["toolkit"]["source"]) == ("12.4", "pixi.lock")
    assert (
        "note: environment 'legacy' is not installed yet (.pixi/envs/legacy does not exist): "
        "read from pixi.lock; `pixi install -e legacy` installs it"
    ) in result.stderr
    choices = as_json(
        pixi_variant(
            "select", "gpulib", "-f", str(fresh.wheels), "-e", "legacy", "--json", cwd=fresh.subdir
        )
    )
    assert choices[0]["selected"]["label"] == "cu124"  # type: ignore[index]
    # add installs into the environment: it must be there.
    result = pixi_variant(
        "add", "gpulib", "-f", str(fresh.wheels), "-e", "legacy", cwd=fresh.subdir
    )
    assert result.exit_code == 1
    assert result.stderr == (
        "error: environment 'legacy' is not installed yet (.pixi/envs/legacy does not exist): run "
        "`pixi install -e legacy` first; `pixi variant add` installs into it\n"
    )


# -- errors ---------------------------------------------------------------------------------------


def test_outside_a_workspace_one_clear_error(tmp_path: Path) -> None:
    for command in (("detect",), ("add", "gpulib", "-f", str(tmp_path)), ("doctor",)):
        result = pixi_variant(*command, cwd=tmp_path)
        assert result.exit_code == 1
        assert result.stderr == (
            f"error: no pixi workspace in {tmp_path} or any folder above it (no pixi.toml, nor "
            "pyproject.toml with [tool.pixi]); run inside a workspace or pass --manifest-path\n"
        )


def test_unknown_environment_lists_the_known_ones(workspace: PixiWorkspace) -> None:
    result = pixi_variant("detect", "-e", "cuda", cwd=workspace.subdir)
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: {workspace.manifest}: no environment 'cuda' (known: default, legacy); pass one "
        "with -e/--environment\n"
    )


# -- add ------------------------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _installed_label(prefix: Path) -> str:
    (variant,) = prefix.glob("lib/python*/site-packages/gpulib-1.0.dist-info/variant.json")
    return next(iter(json.loads(variant.read_text())["variants"]))


def _copy_label(copy: Path) -> str:
    """The variant a plain-named copy is (its own ``variant.json``)."""
    with zipfile.ZipFile(copy) as archive:
        document = json.loads(archive.read("gpulib-1.0.dist-info/variant.json"))
    return next(iter(document["variants"]))


def _user_lines_kept(before: str, after: str) -> None:
    """Every line of the user's manifest is still there, in the same order."""
    remaining = iter(after.splitlines())
    for line in before.splitlines():
        assert any(line == other for other in remaining), f"lost or moved: {line!r}"


def test_add_installs_and_records_both_environments(fresh: PixiWorkspace) -> None:
    from tests.export.pixi_toml.test_schema import problems

    original = fresh.manifest.read_text()
    lock = fresh.lockfile.read_bytes()
    for name in ENVIRONMENTS:
        result = pixi_variant(
            "add", "gpulib", "-f", str(fresh.wheels), "-e", name, cwd=fresh.subdir
        )
        assert result.exit_code == 0, result.output + result.stderr
        assert _installed_label(fresh.prefix(name)) == LABELS[name]
        advice = f"pixi install{'' if name == 'default' else ' -e ' + name}"
        assert f"pixi.lock was not changed: run `{advice}` (or `pixi lock`)" in result.stderr
    after = fresh.manifest.read_text()
    _user_lines_kept(original, after)
    assert problems(after) == []  # pixi's own schema
    assert fresh.lockfile.read_bytes() == lock  # never edited
    data = tomlkit.parse(after).unwrap()
    default_copy = fresh.root / "variant-wheels" / "gpulib-1.0-py3-none-any.whl"
    legacy_copy = fresh.root / "variant-wheels" / "legacy" / "gpulib-1.0-py3-none-any.whl"
    assert data["pypi-dependencies"]["gpulib"] == {
        "path": "./variant-wheels/gpulib-1.0-py3-none-any.whl"
    }
    assert data["pypi-dependencies"]["nvidia-cublas-cu12"] == "==12.6.4.1"
    legacy = data["feature"]["legacy"]
    assert legacy["pypi-dependencies"]["gpulib"] == {
        "path": "./variant-wheels/legacy/gpulib-1.0-py3-none-any.whl"
    }
    assert legacy["pypi-dependencies"]["nvidia-cublas-cu12"] == "==12.4.5.8"
    assert legacy["pypi-options"]["find-links"] == [{"path": str(fresh.wheels)}]
    # The copies carry what was installed (their variant markers decided, which pixi's uv
    # cannot read): pixi install gets the same files.
    for name, copy in (("default", default_copy), ("legacy", legacy_copy)):
        original = fresh.wheels / f"gpulib-1.0-py3-none-any-{LABELS[name]}.whl"
        assert _sha256(copy) != _sha256(original)
        (installed,) = fresh.prefix(name).glob("lib/python*/site-packages/gpulib-1.0.dist-info")
        with zipfile.ZipFile(copy) as archive:
            for member in ("METADATA", "variant.json"):
                packed = archive.read(f"gpulib-1.0.dist-info/{member}")
                assert packed == (installed / member).read_bytes(), member
    # Again: nothing to install, nothing to record.
    result = pixi_variant("add", "gpulib", "-f", str(fresh.wheels), cwd=fresh.subdir)
    assert result.exit_code == 0
    assert "the manifest already records this environment" in result.stderr
    assert fresh.manifest.read_text() == after


def test_add_into_an_environment_without_python_refuses_and_changes_nothing(
    tmp_path: Path,
) -> None:
    """``.pixi/envs/default`` exists but holds no Python (a workspace whose manifest lost it):
    ``add`` refuses before installing or recording anything, and never installs into the
    interpreter pixi-variant runs on."""
    fresh = make_workspace(tmp_path, installed=())
    (fresh.prefix("default") / "conda-meta").mkdir(parents=True)
    manifest = fresh.manifest.read_bytes()
    result = pixi_variant("add", "gpulib", "-f", str(fresh.wheels), cwd=fresh.subdir)
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: no interpreter to install into")
    assert f"{fresh.prefix('default')} has no bin/python" in line
    assert fresh.manifest.read_bytes() == manifest
    assert sorted(p.name for p in fresh.prefix("default").rglob("*")) == ["conda-meta"]
    assert not (fresh.root / "variant-wheels").exists()
    assert not running_has("gpulib")


def test_add_replacing_a_build_replaces_its_copy_and_offers_its_own_leftover_removal(
    fresh: PixiWorkspace,
) -> None:
    """The environment's driver goes away (``-t cuda=``): the null build replaces cu126, the
    copy the manifest's own entry names is replaced by the new build's, and the nvidia wheel
    cu126 required is listed with this command's way to remove it, then removed by it."""
    wheels = ("-f", str(fresh.wheels))
    assert pixi_variant("add", "gpulib", *wheels, cwd=fresh.subdir).exit_code == 0
    copy = fresh.root / "variant-wheels" / "gpulib-1.0-py3-none-any.whl"
    assert _copy_label(copy) == "cu126"

    replaced = pixi_variant("add", "gpulib", *wheels, "-t", "cuda=", cwd=fresh.subdir)
    assert replaced.exit_code == 0, replaced.output + replaced.stderr
    assert _installed_label(fresh.prefix("default")) == "null"
    assert _copy_label(copy) == "null"
    assert "Left behind (the replaced builds required them, nothing requires them now): " in (
        replaced.stdout
    )
    line = next(x for x in replaced.stdout.splitlines() if "remove them with:" in x)
    assert line.endswith("(or run `pixi variant add` again with --remove-leftovers)")
    assert "install again" not in replaced.stdout
    assert "nvidia-cublas-cu12" in tomlkit.parse(fresh.manifest.read_text())["pypi-dependencies"]

    args = ("add", "gpulib", *wheels, "-t", "cuda=", "--remove-leftovers", "--json")
    data = as_json(pixi_variant(*args, cwd=fresh.subdir))
    assert data["install"]["leftovers"]["removed"] is True
    assert [w["name"] for w in data["install"]["leftovers"]["wheels"]] == ["nvidia-cublas-cu12"]
    site = fresh.prefix("default")
    assert not list(site.glob("lib/python*/site-packages/nvidia_cublas_cu12-*.dist-info"))
    # the manifest no longer records what is no longer installed (its own entry)
    assert (
        "nvidia-cublas-cu12" not in tomlkit.parse(fresh.manifest.read_text())["pypi-dependencies"]
    )


def test_add_no_copy_records_the_variant_file(fresh: PixiWorkspace) -> None:
    args = ("add", "gpulib", "-f", str(fresh.wheels), "--no-copy", "--json")
    data = as_json(pixi_variant(*args, cwd=fresh.subdir))
    assert data["environment"] == "default"
    assert data["lockfile"]["changed"] is False
    wheel = fresh.wheels / "gpulib-1.0-py3-none-any-cu126.whl"
    recorded = tomlkit.parse(fresh.manifest.read_text()).unwrap()["pypi-dependencies"]["gpulib"]
    assert recorded in ({"path": str(wheel)}, {"url": wheel.as_uri()})
    assert not (fresh.root / "variant-wheels").exists()


def test_doctor_reports_what_the_health_check_reports(fresh: PixiWorkspace) -> None:
    assert pixi_variant("add", "gpulib", "-f", str(fresh.wheels), cwd=fresh.subdir).exit_code == 0
    ours = as_json(pixi_variant("doctor", "--json", cwd=fresh.subdir))
    # The CLI on the same prefix, told the driver the manifest declares (no GPU here).
    prefix = str(fresh.prefix("default"))
    cli = CliRunner(env={"CONDA_OVERRIDE_CUDA": "12.8"})
    theirs = json.loads(cli.invoke(variant_bridge, ["doctor", "--prefix", prefix, "--json"]).stdout)
    for key in ("origin", "toolkit", "place", "healthy", "worst", "findings"):
        assert ours[key] == theirs[key], key
    assert [f["kind"] for f in ours["findings"]] == ["duplicate-library"]
    text = pixi_variant("doctor", cwd=fresh.subdir).stdout
    assert (
        "info: nvidia-cublas-cu12 12.6.4.1 (PyPI, CUDA 12.6) and libcublas 12.6.77 (conda" in text
    )


def test_installed_script_runs_as_pixi_runs_it(workspace: PixiWorkspace) -> None:
    """pixi finds ``pixi-variant`` on PATH and runs it with the remaining arguments."""
    path = f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    found = shutil.which("pixi-variant", path=path)
    assert found is not None
    proc = subprocess.run(
        [found, "detect", "-e", "legacy", "--json"],
        cwd=workspace.subdir,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": path, "HOME": os.environ.get("HOME", "/tmp")},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["origin"] == f"prefix {workspace.prefix('legacy')}"


def test_add_from_an_index_adds_it_as_an_extra_index(fresh: PixiWorkspace) -> None:
    """The variant index is added to PyPI (extra-index-urls), never in its place: the workspace's
    other PyPI dependencies resolve as before."""
    from tests.worlds.index_server import IndexServer

    with IndexServer(fresh.wheels) as index:
        url = index.url
        result = pixi_variant("add", "gpulib", "--index-url", url, cwd=fresh.subdir)
    assert result.exit_code == 0, result.output + result.stderr
    data = tomlkit.parse(fresh.manifest.read_text()).unwrap()
    assert data["pypi-options"] == {"extra-index-urls": [url]}
    assert data["pypi-dependencies"]["gpulib"] == {
        "path": "./variant-wheels/gpulib-1.0-py3-none-any.whl"
    }
    assert _installed_label(fresh.prefix("default")) == "cu126"


def test_add_to_a_pyproject_workspace(fresh: PixiWorkspace) -> None:
    """A pyproject.toml with [tool.pixi] is a workspace too; its other tables stay as they are."""
    from tests.export.pixi_toml.test_schema import problems

    pixi = fresh.manifest.read_text()
    tables = "".join(
        f"[tool.pixi.{line[1:]}\n" if line.startswith("[") else f"{line}\n"
        for line in pixi.splitlines()
    )
    pyproject = fresh.root / "pyproject.toml"
    original = f'[project]\nname = "proj"\nversion = "1.0"\n\n{tables}'
    pyproject.write_text(original)
    fresh.manifest.unlink()
    result = pixi_variant(
        "add", "gpulib", "-f", str(fresh.wheels), "-e", "legacy", cwd=fresh.subdir
    )
    assert result.exit_code == 0, result.output + result.stderr
    after = pyproject.read_text()
    _user_lines_kept(original, after)
    data = tomlkit.parse(after).unwrap()
    assert data["project"] == {"name": "proj", "version": "1.0"}
    recorded = data["tool"]["pixi"]["feature"]["legacy"]["pypi-dependencies"]["gpulib"]
    assert recorded == {"path": "./variant-wheels/legacy/gpulib-1.0-py3-none-any.whl"}
    assert problems(tomlkit.dumps(data["tool"]["pixi"])) == []
    assert _installed_label(fresh.prefix("legacy")) == "cu124"
