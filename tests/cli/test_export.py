"""``variant-bridge export`` as a user runs it: outputs, refusals, and nothing lost on failure."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from tests.cli.conftest import Cli
from tests.export.conftest import OVERRIDES, ExportWorld, build_export_world
from tests.worlds.channel import Channel
from variant_bridge import atomic
from variant_bridge.cli import _Group, main
from variant_bridge.cli.export import export as export_command

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomlkit as tomllib


def entry_point() -> click.Group:
    """``variant-bridge`` itself once ``export`` is registered there; until then a group with the
    same error mapping (without touching the real one, whose docs test lists its commands)."""
    if "export" in main.commands:
        return main
    group = _Group("variant-bridge")
    group.add_command(export_command)
    return group


class ExportCli(Cli):
    def __call__(self, *args: str, env: Mapping[str, str | None] | None = None) -> Result:
        return CliRunner(env=dict(env or {})).invoke(entry_point(), list(args))


@pytest.fixture
def cli() -> Cli:
    return ExportCli()


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, cuda_channel: Channel) -> ExportWorld:
    return build_export_world(tmp_path_factory.mktemp("cli-export-world"), cuda_channel)


@pytest.fixture
def prefix(world: ExportWorld, tmp_path: Path) -> Path:
    """A private copy of the world's prefix, free to corrupt."""
    copy = tmp_path / "env"
    shutil.copytree(world.prefix, copy, symlinks=True)
    return copy


def args(world: ExportWorld, *extra: str, prefix: Path | None = None) -> list[str]:
    return [
        "export",
        "--prefix",
        str(prefix or world.prefix),
        "--find-links",
        str(world.wheels),
        *extra,
    ]


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_prints_environment_yml_by_default(cli: Cli, world: ExportWorld) -> None:
    result = cli(*args(world), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    assert data["name"] == "env"
    assert "cuda-version=12.6=h0_3" in data["dependencies"]
    assert result.stdout.startswith("# Produced by variant-bridge ")
    assert f"export --prefix {world.prefix} --find-links {world.wheels}" in result.stdout
    assert result.stderr == ""


def test_writes_a_new_file_and_says_so(cli: Cli, world: ExportWorld, tmp_path: Path) -> None:
    target = tmp_path / "environment.yml"
    result = cli(*args(world, "-o", str(target)), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert yaml.safe_load(target.read_text())["dependencies"][-1]["pip"][0].startswith("--find")
    assert result.stderr.startswith(f"wrote {target}: 3 conda dependencies, 3 PyPI packages")


def test_never_overwrites_without_force(cli: Cli, world: ExportWorld, tmp_path: Path) -> None:
    target = tmp_path / "environment.yml"
    target.write_bytes(b"# mine, hand-written\n")
    result = cli(*args(world, "-o", str(target)), env=OVERRIDES)
    assert result.exit_code == 1
    assert "exists; pass --force to overwrite it" in one_error_line(result.stderr)
    assert target.read_bytes() == b"# mine, hand-written\n"
    forced = cli(*args(world, "-o", str(target), "--force"), env=OVERRIDES)
    assert forced.exit_code == 0, forced.stderr
    assert yaml.safe_load(target.read_text())["name"] == "env"


def test_a_failure_mid_write_leaves_the_old_file_intact(
    cli: Cli, world: ExportWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "environment.yml"
    old = b"name: old\n" * 1000
    target.write_bytes(old)

    def disk_full(_temporary: Path, written: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "fault_hook", disk_full)
    result = cli(*args(world, "-o", str(target), "--force"), env=OVERRIDES)
    assert result.exit_code == 1
    line = one_error_line(result.stderr)
    assert "No space left on device" in line
    assert "nothing was changed" in line
    assert target.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["environment.yml"]  # no temporary


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("pixi.toml", "pixi-toml"),  # the format follows the file name
        ("environment.yaml", "environment-yml"),
    ],
)
def test_the_format_follows_the_output_name(
    cli: Cli, world: ExportWorld, tmp_path: Path, name: str, fmt: str
) -> None:
    target = tmp_path / name
    assert cli(*args(world, "-o", str(target)), env=OVERRIDES).exit_code == 0
    text = target.read_text()
    if fmt == "pixi-toml":
        assert tomllib.loads(text)["workspace"]["requires-pixi"] == ">=0.71"
    else:
        assert "dependencies" in yaml.safe_load(text)


def test_update_a_pixi_toml_in_place(cli: Cli, world: ExportWorld, tmp_path: Path) -> None:
    manifest = tmp_path / "pixi.toml"
    original = (
        '# hand-written, keep me\n[workspace]\nname = "proj"\nchannels = []\n'
        'platforms = ["linux-64"]\n\n[tasks]\nserve = "python -m http.server"  # dev only\n'
    )
    manifest.write_text(original)
    manifest.chmod(0o640)
    result = cli(*args(world, "--update", str(manifest)), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith(f"updated {manifest}:")
    text = manifest.read_text()
    assert text.startswith('# hand-written, keep me\n[workspace]\nname = "proj"\n')
    assert '[tasks]\nserve = "python -m http.server"  # dev only\n' in text
    assert tomllib.loads(text)["pypi-dependencies"]["plainpkg"] == "==2.0"
    assert manifest.stat().st_mode & 0o777 == 0o640
    again = cli(*args(world, "--update", str(manifest)), env=OVERRIDES)
    assert again.exit_code == 0
    assert "left unchanged" in again.stderr
    assert manifest.read_text() == text


def test_update_a_missing_manifest_is_an_error(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    result = cli(*args(world, "--update", str(tmp_path / "pixi.toml")), env=OVERRIDES)
    assert result.exit_code == 1
    assert "does not exist; --update edits an existing" in one_error_line(result.stderr)


@pytest.mark.parametrize(
    "extra",
    [
        ["--lockfile", "pixi.lock"],  # --prefix and --lockfile together
        ["--update", "pixi.toml", "-o", "out.toml"],  # two destinations
        ["--update", "pixi.toml", "--format", "environment-yml"],  # yml cannot be updated
        ["-o", "pyproject.toml"],  # would clobber a project's pyproject
        ["--environment", "cuda"],  # lock options without a lock
        ["--format", "conda-lock"],  # unknown format
    ],
)
def test_usage_errors_exit_2(cli: Cli, world: ExportWorld, extra: list[str]) -> None:
    result = cli(*args(world, *extra), env=OVERRIDES)
    assert result.exit_code == 2, result.stderr


def test_corrupt_conda_meta_json_names_the_file_and_writes_nothing(
    cli: Cli, world: ExportWorld, prefix: Path, tmp_path: Path
) -> None:
    broken = next((prefix / "conda-meta").glob("libcublas-*.json"))
    broken.write_text('{"name": "libcublas", "version": ')
    target = tmp_path / "out.yml"
    result = cli(*args(world, "-o", str(target), prefix=prefix), env=OVERRIDES)
    assert result.exit_code == 1
    assert str(broken) in one_error_line(result.stderr)
    assert not target.exists()


def test_a_broken_history_names_the_file_and_writes_nothing(
    cli: Cli, world: ExportWorld, prefix: Path, tmp_path: Path
) -> None:
    history = prefix / "conda-meta" / "history"
    history.write_text("==> 2026-01-01 <==\n# update specs: ['python'\n")
    target = tmp_path / "out.yml"
    result = cli(*args(world, "--from-history", "-o", str(target), prefix=prefix), env=OVERRIDES)
    assert result.exit_code == 1
    line = one_error_line(result.stderr)
    assert str(history) in line
    assert "line 2" in line
    assert not target.exists()


def test_an_unreadable_lock_names_the_file(cli: Cli, tmp_path: Path) -> None:
    lock = tmp_path / "pixi.lock"
    lock.write_text("version: 6\nenvironments: [this is not a lock\n")
    target = tmp_path / "out.yml"
    result = cli("export", "--lockfile", str(lock), "-o", str(target), env=OVERRIDES)
    assert result.exit_code == 1
    assert str(lock) in one_error_line(result.stderr)
    assert not target.exists()


def test_an_unpinnable_variant_wheel_fails_naming_it(cli: Cli, world: ExportWorld) -> None:
    result = cli("export", "--prefix", str(world.prefix), env=OVERRIDES)
    assert result.exit_code == 1
    line = one_error_line(result.stderr)
    assert "tinyvar 1.0 [cu126]" in line
    assert "--allow-unpinned" in line
    allowed = cli("export", "--prefix", str(world.prefix), "--allow-unpinned", env=OVERRIDES)
    assert allowed.exit_code == 0, allowed.stderr
    assert "tinyvar==1.0" in yaml.safe_load(allowed.stdout)["dependencies"][-1]["pip"]


def test_from_history_with_a_lock_is_refused(cli: Cli, world: ExportWorld) -> None:
    result = cli("export", "--lockfile", str(world.lockfile), "--from-history", env=OVERRIDES)
    assert result.exit_code == 1
    assert "--from-history needs a prefix" in one_error_line(result.stderr)


def test_nothing_to_export(cli: Cli) -> None:
    result = cli("export", env=OVERRIDES)
    assert result.exit_code == 1
    assert "nothing to export" in one_error_line(result.stderr)


def test_json_summary(cli: Cli, world: ExportWorld) -> None:
    result = cli(*args(world, "--format", "pixi-toml", "--json"), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["format"] == "pixi-toml"
    assert summary["output"] is None
    assert summary["content"]["workspace"]["platforms"] == [
        {"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "8.0"}}
    ]
    assert [w["label"] for w in summary["variant_wheels"]] == ["cu126", "cu126"]
    assert summary["host_requirements"][0]["spec"] == "__cuda >=12.6"


def test_export_from_a_lock(cli: Cli, world: ExportWorld) -> None:
    result = cli("export", "--lockfile", str(world.lockfile), "--no-builds", env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    deps = yaml.safe_load(result.stdout)["dependencies"]
    assert deps[:3] == ["cuda-version=12.6", "libcublas=12.6.77", "python=3.12.7"]
