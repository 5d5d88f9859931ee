"""``variant-bridge export`` as a user runs it: outputs, refusals, and nothing lost on failure."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from tests.cli.conftest import Cli
from tests.export.conftest import OVERRIDES, ExportWorld, build_export_world
from tests.worlds.channel import Channel
from tests.worlds.index_server import IndexServer
from variant_bridge.cli import _Group, main
from variant_bridge.cli.export import export as export_command
from variant_bridge.export.model import VARIANT_FILENAMES_NOTE
from variant_bridge.jobs import export as export_job

CLI_MD = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()

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
    # the pip lines name variant files: said in the header and once on stderr
    assert VARIANT_FILENAMES_NOTE in " ".join(result.stdout.replace("# ", "").split())
    assert (
        result.stderr.count("note: the variant wheels are pinned by their variant filenames") == 1
    )


def test_writes_a_new_file_and_says_so(cli: Cli, world: ExportWorld, tmp_path: Path) -> None:
    target = tmp_path / "environment.yml"
    result = cli(*args(world, "-o", str(target)), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    pip = yaml.safe_load(target.read_text())["dependencies"][-1]["pip"]
    # Every wheel came from the find-links folder or is a copy beside the file: no index.
    assert pip[:2] == ["--no-index", f"--find-links {world.wheels.as_uri()}"]
    assert any(line.startswith("plainpkg==2.0 --hash=sha256:") for line in pip)
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

    monkeypatch.setattr(  # the file system the command writes to fails
        export_job,
        "run_export",
        functools.partial(export_job.run_export, after_chunk=disk_full),
    )
    options = ["-o", str(target), "--force", "--pin-filenames"]  # no copies: the write fails
    result = cli(*args(world, *options), env=OVERRIDES)
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
    # tinyvar's GPU range has an upper bound no pixi platform can state: said, not refused
    result = cli(*args(world, "-o", str(target)), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    text = target.read_text()
    if fmt == "pixi-toml":
        assert tomllib.loads(text)["workspace"]["requires-pixi"] == ">=0.71"
        assert "note: tinyvar 1.0 [cu126] needs __cuda_arch >=8.0,<9|>=9.0,<10" in result.stderr
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
    update = ["--update", str(manifest), "--no-host-requirements"]
    result = cli(*args(world, *update), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith(f"updated {manifest}:")
    text = manifest.read_text()
    assert text.startswith(original)  # every line of the user's, then the export's tables
    assert tomllib.loads(text)["pypi-dependencies"]["plainpkg"] == "==2.0"
    # the user's empty channel list stays; a note names the channel to add
    assert f"workspace.channels is yours and does not list {world.channel.url}" in result.stderr
    assert manifest.stat().st_mode & 0o777 == 0o640
    # the variant wheels are copied beside the manifest, under names pixi's uv accepts
    pypi = tomllib.loads(text)["pypi-dependencies"]
    assert pypi["tinyvar"] == {"path": "./variant-wheels/tinyvar-1.0-py3-none-any.whl"}
    copy = tmp_path / "variant-wheels" / "tinyvar-1.0-py3-none-any.whl"
    assert copy.read_bytes() == world.installed["tinyvar"].read_bytes()
    again = cli(*args(world, *update), env=OVERRIDES)
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
    result = cli(*args(world, "--format", "environment-yml", "--json"), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    keys = ["format", "output", "changed", "content", "host_requirements", "variant_wheels"]
    assert list(summary) == [*keys, "notes"]
    documented = CLI_MD.split("## `variant-bridge export`", 1)[1].split("\n## ", 1)[0]
    [row] = [line for line in documented.splitlines() if line.startswith("| `--json`")]
    for key in summary:  # docs/cli.md said "(format, output, counts, notes)": no `counts`
        assert f"`{key}`" in row, key
    for key in summary["variant_wheels"][0]:
        assert f"`{key}`" in row, key
    assert summary["format"] == "environment-yml"
    assert summary["output"] is None
    # stock conda has no __cuda_arch: stated in the header and the summary, not a dependency
    assert "__cuda_arch >=8.0,<9|>=9.0,<10" not in summary["content"]["dependencies"]
    assert [w["label"] for w in summary["variant_wheels"]] == ["cu126", "cu126"]
    assert summary["host_requirements"][0]["spec"] == "__cuda >=12.6"
    arch = summary["host_requirements"][1]
    assert (arch["spec"], arch["plugin"]) == (
        "__cuda_arch >=8.0,<9|>=9.0,<10",
        "nvidia-virtual-packages",
    )
    strict = cli(*args(world, "--strict-host-requirements", "--json"), env=OVERRIDES)
    assert strict.exit_code == 0, strict.stderr
    content = json.loads(strict.stdout)["content"]
    assert "__cuda_arch >=8.0,<9|>=9.0,<10" in content["dependencies"]


def test_export_from_a_lock(cli: Cli, world: ExportWorld) -> None:
    result = cli("export", "--lockfile", str(world.lockfile), "--no-builds", env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    deps = yaml.safe_load(result.stdout)["dependencies"]
    assert deps[:3] == ["cuda-version=12.6", "libcublas=12.6.77", "python=3.12.7"]


def test_the_short_forms_and_help(cli: Cli, world: ExportWorld) -> None:
    # -f as in select/install (it was missing); -e says its default as the other options do
    result = cli("export", "--prefix", str(world.prefix), "-f", str(world.wheels), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert (
        f"--find-links {world.wheels.as_uri()}"
        in yaml.safe_load(result.stdout)["dependencies"][-1]["pip"]
    )
    help_text = " ".join(cli("export", "--help").stdout.split())
    assert "The pixi.lock environment (with --lockfile). Default: 'default'." in help_text


def test_an_empty_prefix_exports_empty_lists(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "empty" / "conda-meta").mkdir(parents=True)
    result = cli("export", "--prefix", str(tmp_path / "empty"), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    assert (data["channels"], data["dependencies"]) == ([], [])  # were YAML nulls


class FifoReader:
    """Unblocks a reader of *fifo* if one ever opens it (the code before the fix read an
    --update FIFO and hung); a correct export never opens it."""

    def __init__(self, fifo: Path) -> None:
        self.fifo, self.done, self.opened = fifo, threading.Event(), False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.done.wait(0.05):
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nobody reads it; ENOENT: replaced by a file
                continue
            self.opened = True
            os.close(fd)

    def __enter__(self) -> FifoReader:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


@pytest.mark.parametrize(
    "options",
    [
        ["-o", "{fifo}", "--force"],  # QA: `-o /dev/full --force` replaced the device (as root)
        ["-o", "{fifo}"],  # refused as what it is, not "exists; pass --force"
        ["--format", "pixi-toml", "--update", "{fifo}"],  # never read (it would block)
    ],
)
def test_an_output_that_is_not_a_regular_file_is_refused(
    cli: Cli, world: ExportWorld, tmp_path: Path, options: list[str]
) -> None:
    fifo = tmp_path / "out.yml"
    os.mkfifo(fifo)
    with FifoReader(fifo) as reader:
        result = cli(*args(world, *(o.format(fifo=fifo) for o in options)), env=OVERRIDES)
    assert result.exit_code == 1
    line = one_error_line(result.stderr)
    assert f"cannot write {str(fifo)!r}: it is a FIFO (named pipe), not a regular file" in line
    assert fifo.is_fifo()
    assert not reader.opened
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.yml"]


def test_a_local_wheel_that_changed_since_the_install_is_an_error_naming_both_hashes(
    cli: Cli, world: ExportWorld, prefix: Path, tmp_path: Path
) -> None:
    wheel = tmp_path / world.installed["gpuext"].name
    shutil.copy(world.installed["tinyvar"], wheel)  # other bytes under the installed name
    recorded = hashlib.sha256(world.installed["gpuext"].read_bytes()).hexdigest()
    actual = hashlib.sha256(wheel.read_bytes()).hexdigest()
    [dist_info] = (prefix / "lib").glob("python3*/site-packages/gpuext-*.dist-info")
    (dist_info / "direct_url.json").write_text(
        json.dumps({"url": wheel.as_uri(), "archive_info": {"hashes": {"sha256": recorded}}})
    )
    command = ["export", "--prefix", str(prefix), "-f", str(tmp_path)]
    result = cli(*command, env=OVERRIDES)
    assert result.exit_code == 1
    line = one_error_line(result.stderr)
    assert "gpuext 0.3 [cu126]" in line
    assert f"has sha256 {actual}, but direct_url.json recorded {recorded}" in line
    allowed = cli(*command, "--allow-unpinned", env=OVERRIDES)
    assert allowed.exit_code == 0, allowed.stderr
    assert "gpuext==0.3" in yaml.safe_load(allowed.stdout)["dependencies"][-1]["pip"]


def venv_python(path: Path, *, with_pip: bool) -> Path:
    command = [sys.executable, "-m", "venv", str(path)]
    subprocess.run(command if with_pip else [*command, "--without-pip"], check=True, timeout=300)
    return path / "bin" / "python"


def pip23_python(path: Path) -> Path:
    """A fresh venv whose pip is 23.x, the oldest pip the export must work with (conda
    environments pin old ones): the one ``venv`` bundles when it is 23, else from the registry."""
    python = venv_python(path, with_pip=True)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    version = subprocess.run([*pip, "--version"], capture_output=True, text=True, check=True)
    if not version.stdout.startswith("pip 23."):
        subprocess.run([*pip, "install", "-q", "pip==23.*"], check=True, timeout=300)
        version = subprocess.run([*pip, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("pip 23."), version.stdout
    return python


def installed_labels(python: Path) -> dict[str, str | None]:
    probe = (
        "import importlib.metadata as m, json\n"
        "out = {}\n"
        "for d in m.distributions():\n"
        "    t = d.read_text('variant.json')\n"
        "    out[d.metadata['Name']] = next(iter(json.loads(t)['variants'])) if t else None\n"
        "print(json.dumps(out))"
    )
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True)
    labels: dict[str, str | None] = json.loads(out.stdout)
    return {k: v for k, v in labels.items() if k in ("gpuext", "plainpkg", "tinyvar")}


def conda_pip_step(installer: str, share: Path, pip_lines: list[str], python: Path) -> str:
    """What `conda env create -f share/environment.yml` does with the pip section: the lines in a
    requirements file next to environment.yml, pip run from that directory
    (conda/env/installers/pip.py); uv as a user would run the same lines. No network."""
    requirements = share / "condaenv.test.requirements.txt"
    requirements.write_text("\n".join(pip_lines))
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    if installer == "pip":
        # --isolated: this machine's global pip config adds find-links and indexes
        command = [str(python), "-m", "pip", "--isolated", "install", "-U", "-r"]
        command += [str(requirements), "--exists-action=b", "--no-index"]
    else:
        command = [str(UV_BIN), "pip", "install", "--no-config", "--offline", "--no-index"]
        command += ["--python", str(python), "-r", str(requirements)]
    done = subprocess.run(
        command,
        check=False,
        cwd=share,
        capture_output=True,
        text=True,
        env={**clean, "UV_NO_CACHE": "1"},
        timeout=300,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


UV_BIN = Path(sys.executable).with_name("uv")


@pytest.mark.parametrize(
    ("installer", "copies", "refusal"),
    [
        # QA: `conda env create` failed at its pip step; the default now installs with pip 23
        ("pip", "default", None),
        # copies elsewhere are absolute `name @ file:///...#sha256=` pins: pip 23 and plain uv
        ("pip", "elsewhere", None),
        ("uv", "elsewhere", None),
        # uv reads the fragment of a relative `file:./x.whl#sha256=` as part of the path
        ("uv", "default", "to end in a supported file extension"),
        # the variant files themselves: only installers with wheel-variant support take them
        ("pip", "variant-filenames", "not a valid wheel filename"),
        ("uv", "variant-filenames", "wheel-variants"),
    ],
)
def test_an_exported_environment_yml_installs_with_pip_23(
    *,
    cli: Cli,
    world: ExportWorld,
    tmp_path: Path,
    installer: str,
    copies: str,
    refusal: str | None,
) -> None:
    share = tmp_path / "share"
    share.mkdir()
    target = share / "environment.yml"
    extra = {
        "default": [],
        "elsewhere": ["--wheels-dir", str(tmp_path / "elsewhere")],
        "variant-filenames": ["--pin-filenames"],
    }[copies]
    result = cli(*args(world, "-o", str(target), *extra), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert ("variant filenames" in result.stderr) is (copies == "variant-filenames")
    pip_lines = yaml.safe_load(target.read_text())["dependencies"][-1]["pip"]
    if installer == "pip":
        python = pip23_python(tmp_path / "venv")
    else:
        python = venv_python(tmp_path / "venv", with_pip=False)
    failure = conda_pip_step(installer, share, pip_lines, python)
    if refusal is not None:
        assert refusal in failure
        return
    assert failure == ""
    assert installed_labels(python) == {"gpuext": "cu126", "plainpkg": None, "tinyvar": "cu126"}
    folder = share / "variant-wheels" if copies == "default" else tmp_path / "elsewhere"
    for name in ("gpuext", "tinyvar"):
        copy = folder / f"{name}-{'0.3' if name == 'gpuext' else '1.0'}-py3-none-any.whl"
        digest = hashlib.sha256(copy.read_bytes()).hexdigest()
        if copies == "default":  # relative to the file: the folder can be moved or shared
            assert f"file:./variant-wheels/{copy.name}#sha256={digest}" in pip_lines
        else:
            assert f"{name} @ {copy.as_uri()}#sha256={digest}" in pip_lines
        assert copy.read_bytes() == world.installed[name].read_bytes()
        # the faithful pin to the exact variant file stays in the header
        assert f"{name} @ {world.installed[name].as_uri()}#sha256=" in target.read_text()


def test_a_shared_folder_installs_after_it_was_moved(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    share = tmp_path / "share"
    share.mkdir()
    local = share / "wheels"  # the find-links folder inside the project: written relative
    shutil.copytree(world.wheels, local)
    target = share / "environment.yml"
    export = ["export", "--prefix", str(world.prefix), "-f", str(local), "-o", str(target)]
    result = cli(*export, env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    moved = tmp_path / "elsewhere" / "share"
    moved.parent.mkdir()
    share.rename(moved)
    pip_lines = yaml.safe_load((moved / "environment.yml").read_text())["dependencies"][-1]["pip"]
    assert pip_lines[:2] == ["--no-index", "--find-links ./wheels"]
    assert not any(str(tmp_path) in line for line in pip_lines)  # no absolute path left
    python = pip23_python(tmp_path / "venv")
    assert conda_pip_step("pip", moved, pip_lines, python) == ""
    assert installed_labels(python) == {"gpuext": "cu126", "plainpkg": None, "tinyvar": "cu126"}


@pytest.mark.parametrize(
    ("manifest", "wheels", "expected"),
    [
        ("share/pixi.toml", "share/wheels", "./wheels/tinyvar-1.0-py3-none-any.whl"),
        ("proj/pixi.toml", "wheels", "../wheels/tinyvar-1.0-py3-none-any.whl"),
    ],
)
def test_pixi_paths_to_the_copies_are_relative_to_the_manifest(
    *, cli: Cli, world: ExportWorld, tmp_path: Path, manifest: str, wheels: str, expected: str
) -> None:
    target = tmp_path / manifest
    target.parent.mkdir()
    target.write_text('[workspace]\nplatforms = ["linux-64"]\n')
    update = ["--update", str(target), "--wheels-dir", str(tmp_path / wheels)]
    result = cli(*args(world, *update, "--no-host-requirements"), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    data = tomllib.loads(target.read_text())
    assert data["pypi-dependencies"]["tinyvar"] == {"path": expected}
    assert (target.parent / expected).resolve().read_bytes() == world.installed[
        "tinyvar"
    ].read_bytes()


def test_a_relative_find_links_is_written_absolute(
    cli: Cli, world: ExportWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file is read elsewhere: conda runs pip in the environment.yml's directory, and pixi
    # resolves paths against the manifest's.
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(world.wheels, tmp_path)
    result = cli("export", "--prefix", str(world.prefix), "-f", relative, env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(result.stdout)["dependencies"][-1]["pip"][1] == (
        f"--find-links {world.wheels.as_uri()}"  # a URL: one word for pip, whatever the path
    )


def wheels_left(share: Path) -> list[str]:
    return sorted(str(p.relative_to(share)) for p in share.rglob("*"))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # QA: "(nothing was changed)", but the wheel copies were there
        (["-o", "{share}/nodir/e.yml"], "does not exist (nothing was changed)"),
        (["--update", "{share}/missing.toml"], "does not exist; --update edits"),
        (["--update", "{share}/broken.toml"], "not valid TOML"),
        (["--update", "{share}/array.toml"], "dependencies must be a table"),  # found by apply
        # QA: a read-only manifest was silently replaced
        (["--update", "{share}/readonly.toml"], "is read-only"),
        # the platform cannot be declared: refused before any copy
        (
            ["-o", "{share}/pixi.toml", "--strict-host-requirements"],
            "cannot declare the linux-64 platform for pixi",
        ),
        # the default copies beside the file count too
        (["-o", "{share}/nodir/e.yml", "--wheels-dir", ""], "does not exist (nothing was"),
    ],
)
def test_a_failed_export_leaves_no_wheel_copies(
    cli: Cli, world: ExportWorld, tmp_path: Path, options: list[str], message: str
) -> None:
    share = tmp_path / "share"
    share.mkdir()
    (share / "broken.toml").write_text("[workspace\n")
    (share / "array.toml").write_text('dependencies = []\n[workspace]\nplatforms = ["linux-64"]\n')
    readonly = share / "readonly.toml"
    readonly.write_text('[workspace]\nplatforms = ["linux-64"]\n')
    readonly.chmod(0o444)
    before = wheels_left(share)
    extra = [o.format(share=share) for o in options]
    if extra[-1] == "":
        extra = extra[:-2]  # no --wheels-dir: the default folder beside the file
    else:
        extra += ["--wheels-dir", str(share / "s10" / "w")]
    if "--update" in extra:
        extra.append("--no-host-requirements")
    result = cli(*args(world, *extra), env=OVERRIDES)
    assert result.exit_code == 1
    assert message in one_error_line(result.stderr)
    assert wheels_left(share) == before  # no s10/, no s10/w/, no copies
    assert readonly.read_text() == '[workspace]\nplatforms = ["linux-64"]\n'
    assert readonly.stat().st_mode & 0o777 == 0o444


def test_a_write_failure_after_the_copies_removes_them(
    cli: Cli, world: ExportWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    share = tmp_path / "share"
    (share / "wheels").mkdir(parents=True)
    kept = share / "wheels" / "tinyvar-1.0-py3-none-any.whl"
    shutil.copy(world.installed["tinyvar"], kept)  # there before: the same bytes, kept

    def disk_full(temporary: Path, written: int) -> None:
        if temporary.name.startswith(".environment.yml."):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(  # the file system the command writes to fails
        export_job,
        "run_export",
        functools.partial(export_job.run_export, after_chunk=disk_full),
    )
    target = share / "environment.yml"
    result = cli(
        *args(world, "-o", str(target), "--wheels-dir", str(share / "wheels")), env=OVERRIDES
    )
    assert result.exit_code == 1
    assert "No space left on device" in one_error_line(result.stderr)
    assert wheels_left(share) == ["wheels", "wheels/tinyvar-1.0-py3-none-any.whl"]
    assert kept.read_bytes() == world.installed["tinyvar"].read_bytes()


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_find_links_directory_with_a_space_installs(
    cli: Cli, world: ExportWorld, tmp_path: Path, installer: str
) -> None:
    # QA: `--find-links /tmp/qa/my wheels` was written bare; pip splits the option line there
    wheels = tmp_path / "my wheels#1"
    shutil.copytree(world.wheels, wheels)
    share = tmp_path / "share"
    share.mkdir()
    target = share / "environment.yml"
    # absolute copies (uv refuses a relative `file:./x.whl#sha256=`, see above)
    options = ["-o", str(target), "--wheels-dir", str(tmp_path / "copies")]
    result = cli(
        "export", "--prefix", str(world.prefix), "-f", str(wheels), *options, env=OVERRIDES
    )
    assert result.exit_code == 0, result.stderr
    pip_lines = yaml.safe_load(target.read_text())["dependencies"][-1]["pip"]
    assert pip_lines[:2] == ["--no-index", f"--find-links {wheels.as_uri()}"]
    assert "%20" in pip_lines[1]
    if installer == "pip":
        python = pip23_python(tmp_path / "venv")
    else:
        python = venv_python(tmp_path / "venv", with_pip=False)
    # plainpkg==2.0 is found only through the find-links line (--no-index)
    assert conda_pip_step(installer, share, pip_lines, python) == ""
    assert installed_labels(python) == {"gpuext": "cu126", "plainpkg": None, "tinyvar": "cu126"}


def test_a_stale_conda_prefix_is_named_as_the_variable(cli: Cli, tmp_path: Path) -> None:
    # QA: "error: --prefix /gone: no such directory", naming an option nobody passed
    gone = tmp_path / "gone"
    result = cli("export", env={**OVERRIDES, "CONDA_PREFIX": str(gone)})
    assert result.exit_code == 1
    line = one_error_line(result.stderr)
    assert f"$CONDA_PREFIX={gone}" in line
    assert "(unset it or pass --prefix)" in line
    assert "--prefix " + str(gone) not in line


@pytest.mark.parametrize(
    ("option", "path"),
    [
        ("--prefix", "file.txt"),  # QA: exit 2 with click's usage text (file_okay=False)
        ("--lockfile", "."),  # QA: likewise (dir_okay=False)
    ],
)
def test_a_prefix_or_lockfile_of_the_wrong_kind_is_one_line(
    cli: Cli, tmp_path: Path, option: str, path: str
) -> None:
    (tmp_path / "file.txt").write_text("not a prefix\n")
    result = cli("export", option, str(tmp_path / path), env=OVERRIDES)
    assert result.exit_code == 1, result.stderr
    assert str(tmp_path) in one_error_line(result.stderr)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # QA: "error: unexpected ValueError: Invalid IPv6 URL"
        (["--index-url", "http://[::1"], "--index-url 'http://[::1': expected an http://"),
        (["--extra-index-url", "http://[::1"], "--extra-index-url 'http://[::1': expected"),
        (["-f", "http://[::1"], "--find-links 'http://[::1': expected a directory or an http"),
        (["--index-url", "http://"], "--index-url 'http://': expected"),  # QA: became http:/pkg/
        (["--extra-index-url", "nope"], "--extra-index-url 'nope': expected an http://, https://"),
        (["--index-url", "ftp://x/simple"], "--index-url 'ftp://x/simple': expected"),
        (["--index-url", "http://host:port/simple"], "--index-url 'http://host:port/simple'"),
        (["--index-url", "https://x/my index"], "percent-encode it"),  # pip would split it
    ],
)
def test_a_malformed_url_is_refused_naming_the_option(
    cli: Cli, world: ExportWorld, options: list[str], message: str
) -> None:
    result = cli("export", "--prefix", str(world.prefix), *options, env=OVERRIDES)
    assert result.exit_code == 1, result.stderr
    assert message in one_error_line(result.stderr)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "--name '': expected a non-empty environment name"),  # QA: silently became `env`
        ("a: b\nc", "':' is not allowed"),  # QA: written as-is; conda rejects it
        ("ml/gpu", "'/' is not allowed"),
        ("gpu#1", "'#' is not allowed"),
        ("my env", "' ' is not allowed"),  # conda refuses spaces too
    ],
)
def test_an_invalid_name_is_refused(
    cli: Cli, world: ExportWorld, tmp_path: Path, name: str, message: str
) -> None:
    target = tmp_path / "e.yml"
    result = cli(*args(world, "--name", name, "-o", str(target)), env=OVERRIDES)
    assert result.exit_code == 1, result.stderr
    assert message in one_error_line(result.stderr)
    assert not target.exists()


def test_a_prefix_directory_name_conda_refuses_becomes_a_valid_name(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    spaced = tmp_path / "my gpu env"
    shutil.copytree(world.prefix, spaced, symlinks=True)
    result = cli(*args(world, prefix=spaced), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(result.stdout)["name"] == "my-gpu-env"


def test_a_plain_wheel_from_another_index_is_noted(
    cli: Cli, world: ExportWorld, prefix: Path
) -> None:
    # What `variant-bridge install plainpkg --index-url http://127.0.0.1:.../simple` records.
    url = "http://127.0.0.1:8765/files/plainpkg-2.0-py3-none-any.whl"
    [dist_info] = (prefix / "lib").glob("python3*/site-packages/plainpkg-*.dist-info")
    sha256 = hashlib.sha256(world.installed["plainpkg"].read_bytes()).hexdigest()
    (dist_info / "direct_url.json").write_text(
        json.dumps({"url": url, "archive_info": {"hashes": {"sha256": sha256}}})
    )
    # environment.yml pins it to the URL it came from, by hash
    result = cli(*args(world, prefix=prefix), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    pip = yaml.safe_load(result.stdout)["dependencies"][-1]["pip"]
    assert f"plainpkg @ {url}#sha256={sha256}" in pip
    # a pixi manifest writes plain wheels as name==version: the note says where it came from
    result = cli(*args(world, "--format", "pixi-toml", prefix=prefix), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    note = f"plainpkg 2.0 was installed from {url}, not from PyPI"
    assert f"note: {note}" in result.stderr
    assert note in " ".join(result.stdout.replace("# ", "").split())
    assert "--index-url" in result.stderr.split(note, 1)[1].splitlines()[0]


def test_pylock_installs_with_uv_and_keeps_the_variant_labels(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    from packaging.pylock import Pylock

    share = tmp_path / "share"
    share.mkdir()
    target = share / "pylock.toml"
    result = cli(*args(world, "-o", str(target)), env=OVERRIDES)  # the format from the name
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith(f"wrote {target}: 3 PyPI packages (3 pinned to a file)")
    data = tomllib.loads(target.read_text())
    lock = Pylock.from_dict(data)  # valid per PEP 751, as packaging reads it
    lock.validate()
    by_name = {p.name: p for p in lock.packages}
    assert sorted(by_name) == ["gpuext", "plainpkg", "tinyvar"]
    tinyvar = by_name["tinyvar"]
    assert tinyvar.wheels is not None
    [wheel] = tinyvar.wheels
    copy = share / "variant-wheels" / "tinyvar-1.0-py3-none-any.whl"
    assert wheel.path == "./variant-wheels/tinyvar-1.0-py3-none-any.whl"
    assert wheel.size == copy.stat().st_size
    assert wheel.hashes == {"sha256": hashlib.sha256(copy.read_bytes()).hexdigest()}
    assert copy.read_bytes() == world.installed["tinyvar"].read_bytes()
    assert tinyvar.tool == {
        "variant-bridge": {
            "label": "cu126",
            "properties": [
                "nvidia :: cuda_version_lower_bound :: 12.6",
                "nvidia :: sm_arch :: 80_real",
                "nvidia :: sm_arch :: 90_real",
            ],
            "variant-file": "tinyvar-1.0-py3-none-any-cu126.whl",
            "installed-from": world.installed["tinyvar"].as_uri(),
        }
    }
    assert by_name["plainpkg"].tool is None  # a plain wheel, pinned to its file too
    # uv installs it (run from elsewhere: paths are relative to the lock) into a fresh venv
    python = venv_python(tmp_path / "venv", with_pip=False)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "NV_"))}
    command = [str(UV_BIN), "pip", "install", "--no-config", "--offline", "--no-index"]
    command += ["--preview-features", "pylock", "--python", str(python), "-r", str(target)]
    environ = {**clean, "UV_NO_CACHE": "1"}
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, env=environ, check=False
    )
    assert done.returncode == 0, done.stderr
    assert installed_labels(python) == {"gpuext": "cu126", "plainpkg": None, "tinyvar": "cu126"}


def test_pylock_pins_every_wheel_or_fails_naming_it(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    # without --find-links, plainpkg (installed by uv from find-links) has no file to pin
    target = tmp_path / "pylock.toml"
    bare = ["export", "--prefix", str(world.prefix), "-o", str(target)]
    result = cli(*bare, env=OVERRIDES)
    assert result.exit_code == 1
    line = one_error_line(result.stderr)
    assert "cannot pin wheels plainpkg 2.0: " in line
    assert "tinyvar 1.0 [cu126]: " in line  # installed from find-links: no direct_url.json
    assert not target.exists()
    allowed = cli(*bare, "--allow-unpinned", env=OVERRIDES)
    assert allowed.exit_code == 0, allowed.stderr
    text = target.read_text()
    assert "Left out (no file to pin; install them separately): plainpkg==2.0, tinyvar==1.0" in (
        " ".join(text.split())
    )
    # gpuext's direct_url.json names its file
    assert [p["name"] for p in tomllib.loads(text)["packages"]] == ["gpuext"]


@pytest.mark.parametrize(
    "extra",
    [
        ["-o", "{tmp}/pylock.toml", "--pin-filenames"],  # packaging and uv refuse the names
        ["--format", "pylock"],  # stdout: nowhere to put the copies the lock names
    ],
)
def test_pylock_never_names_variant_files(
    cli: Cli, world: ExportWorld, tmp_path: Path, extra: list[str]
) -> None:
    result = cli(*args(world, *[e.format(tmp=tmp_path) for e in extra]), env=OVERRIDES)
    assert result.exit_code == 2, result.stderr
    assert "variant" in result.stderr
    assert list(tmp_path.iterdir()) == []
    # with a folder for the copies, stdout works
    copies = tmp_path / "copies"
    ok = cli(*args(world, "--format", "pylock", "--wheels-dir", str(copies)), env=OVERRIDES)
    assert ok.exit_code == 0, ok.stderr
    assert 'path = "./' not in ok.stdout  # relative to the current folder only when inside it


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ("conda", "proj"),  # a conda prefix: the manifest's folder, not the env's
        ("pixi", "myproject"),  # QA: a pixi prefix was named after its env folder, `default`
    ],
)
def test_the_workspace_is_named_after_the_project(
    cli: Cli, world: ExportWorld, tmp_path: Path, layout: str, expected: str
) -> None:
    prefix = world.prefix
    if layout == "pixi":
        prefix = tmp_path / "myproject" / ".pixi" / "envs" / "default"
        shutil.copytree(world.prefix, prefix, symlinks=True)
    target = tmp_path / "proj" / "pixi.toml"
    target.parent.mkdir()
    extra = ["-o", str(target), "--no-host-requirements"]
    result = cli(*args(world, *extra, prefix=prefix), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert tomllib.loads(target.read_text())["workspace"]["name"] == expected


def test_update_from_history_keeps_a_multi_platform_manifest_byte_for_byte(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    # QA: `python = "3.12.*"  # our python, on every platform` moved to the linux-64 target
    # table (osx-arm64 lost python) and the comment on cuda-version became the tool's
    manifest = tmp_path / "pixi.toml"
    original = (
        '[workspace]\nname = "proj"\nchannels = ["conda-forge"]\n'
        'platforms = ["linux-64", "osx-arm64"]\n\n[dependencies]\n'
        'python = "3.12.*"  # our python, on every platform\n'
        'cuda-version = "12.6.*"  # pinned by hand\n'
    )
    manifest.write_text(original)
    update = ["--update", str(manifest), "--from-history", "--no-host-requirements"]
    result = cli(*args(world, *update), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    text = manifest.read_text()
    assert text.startswith(original)
    data = tomllib.loads(text)
    assert data["dependencies"] == {"python": "3.12.*", "cuda-version": "12.6.*"}
    assert data["target"]["linux-64"]["dependencies"] == {"libcublas": "*"}
    assert "cuda-version" not in result.stderr  # the user's pin is the toolkit's: no note
    again = cli(*args(world, *update), env=OVERRIDES)
    assert "left unchanged" in again.stderr
    assert manifest.read_text() == text


def test_copies_beside_the_manifest_are_announced_and_no_copy_pins_the_originals(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    target = tmp_path / "pixi.toml"
    result = cli(*args(world, "-o", str(target)), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    sizes = sum(world.installed[n].stat().st_size for n in ("gpuext", "tinyvar"))
    assert f"note: copied 2 variant wheels ({sizes / 1000:.1f} kB) into ./variant-wheels" in (
        result.stderr
    )
    assert "--no-copy pins the original files" in result.stderr
    # --no-copy: nothing copied, the variant files pinned (path, and the hash in the comment)
    other = tmp_path / "other" / "pixi.toml"
    other.parent.mkdir()
    result = cli(*args(world, "-o", str(other), "--no-copy"), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert not (other.parent / "variant-wheels").exists()
    assert "copied" not in result.stderr
    data = tomllib.loads(other.read_text())
    assert data["pypi-dependencies"]["tinyvar"] == {"path": str(world.installed["tinyvar"])}
    digest = hashlib.sha256(world.installed["tinyvar"].read_bytes()).hexdigest()
    assert f"variant cu126, sha256={digest}" in other.read_text()


def _whole_files(index: IndexServer) -> list[str]:
    """The files the index served whole (range reads of a wheel's members left out)."""
    return [r.path for r in index.requests if r.path.startswith("/files/") and not r.range]


def test_each_file_is_fetched_once_from_the_index_select_would_use(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    # Two indexes with the same wheels: as uv and select, --extra-index-url wins over
    # --index-url (first-index), and a wheel fetched to compare its RECORD (tinyvar: installed
    # from find-links, no hash recorded) is the file copied next to the export.
    with IndexServer(world.wheels) as main_index, IndexServer(world.wheels) as extra:
        out = tmp_path / "environment.yml"
        given = ["--index-url", main_index.url, "--extra-index-url", extra.url]
        result = cli("export", "--prefix", str(world.prefix), *given, "-o", str(out), "--json",
                     "--cache-dir", str(tmp_path / "cache"), env=OVERRIDES)  # fmt: skip
        assert result.exit_code == 0, result.stderr
        fetched = _whole_files(extra)
        assert sorted(set(fetched)) == sorted(fetched)  # no file twice
        tinyvar = world.installed["tinyvar"].name
        assert f"/files/{tinyvar}" in fetched
        assert main_index.requests == []  # the extra index has both projects
        pinned = {w["name"]: w["url"] for w in json.loads(result.stdout)["variant_wheels"]}
        assert pinned["tinyvar"] == extra.file_url(tinyvar)
        assert (out.parent / "variant-wheels" / "tinyvar-1.0-py3-none-any.whl").read_bytes() == (
            world.installed["tinyvar"].read_bytes()
        )

        # The same export again: every wheel comes from the cache.
        before = len(extra.requests)
        again = cli("export", "--prefix", str(world.prefix), *given, "-o", str(out), "--force",
                    "--cache-dir", str(tmp_path / "cache"), env=OVERRIDES)  # fmt: skip
        assert again.exit_code == 0, again.stderr
        assert [r for r in extra.requests[before:] if r.path.startswith("/files/") and not r.range
                and r.path.endswith(".whl")] == []  # fmt: skip


def test_verbose_lists_the_lookups_and_quiet_silences_the_notes(
    cli: Cli, world: ExportWorld, tmp_path: Path
) -> None:
    with IndexServer(world.wheels) as index:
        base = ["export", "--prefix", str(world.prefix), "--index-url", index.url, "--no-cache"]
        verbose = cli(*base, "-v", env=OVERRIDES)
        assert verbose.exit_code == 0, verbose.stderr
        assert f"GET {index.url}tinyvar/" in verbose.stderr.splitlines()
        quiet = cli(*base, "-q", env=OVERRIDES)
        assert quiet.exit_code == 0, quiet.stderr
        assert "note:" not in quiet.stderr
        assert "GET " not in quiet.stderr
