"""Finding a pixi workspace as pixi does, its environments, and what its manifest declares
(issue 19): layouts written here, and the real manifests of ``../shared/corpus``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.export.corpus import corpus_files
from tests.worlds.lockfile import LockedPlatform, write_lockfile
from variant_bridge.detect.workspace import (
    PIXI_SOURCE,
    Workspace,
    WorkspaceError,
    WorkspaceProblem,
    environment_name,
    find_workspace,
)

WORKSPACE = '[workspace]\nname = "w"\nchannels = ["conda-forge"]\nplatforms = ["linux-64"]\n'


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_found_upwards_from_a_subdirectory(tmp_path: Path) -> None:
    manifest = write(tmp_path / "ws" / "pixi.toml", WORKSPACE)
    deep = tmp_path / "ws" / "a" / "b"
    deep.mkdir(parents=True)
    found = find_workspace(deep, environ={})
    assert found.manifest == manifest
    assert found.lockfile == tmp_path / "ws" / "pixi.lock"
    assert found.envs_dir == tmp_path / "ws" / ".pixi" / "envs"
    assert found.found_by == "search"


def test_pyproject_with_tool_pixi_is_a_workspace(tmp_path: Path) -> None:
    text = '[project]\nname = "p"\n\n[tool.pixi.workspace]\nchannels = []\nplatforms = []\n'
    manifest = write(tmp_path / "pyproject.toml", text)
    assert find_workspace(tmp_path, environ={}).manifest == manifest


def test_plain_pyproject_and_package_manifests_are_passed_over(tmp_path: Path) -> None:
    outer = write(tmp_path / "pixi.toml", WORKSPACE)
    # A plain pyproject.toml (no [tool.pixi]) and a package's pixi.toml are no workspace.
    write(tmp_path / "lib" / "pyproject.toml", '[project]\nname = "lib"\n')
    write(tmp_path / "pkg" / "pixi.toml", '[package]\nname = "pkg"\nversion = "1"\n')
    write(tmp_path / "pkg" / "pyproject.toml", "[tool.pixi.workspace]\nchannels = []\n")
    assert find_workspace(tmp_path / "lib", environ={}).manifest == outer
    # pixi reads only the pixi.toml of a folder that has one.
    assert find_workspace(tmp_path / "pkg", environ={}).manifest == outer


def test_legacy_project_table_is_a_workspace(tmp_path: Path) -> None:
    manifest = write(tmp_path / "pixi.toml", '[project]\nname = "old"\nplatforms = []\n')
    assert find_workspace(tmp_path, environ={}).manifest == manifest


def test_manifest_path_file_or_folder_wins(tmp_path: Path) -> None:
    write(tmp_path / "pixi.toml", WORKSPACE)
    other = write(tmp_path / "other" / "pixi.toml", WORKSPACE)
    assert find_workspace(tmp_path, manifest_path=other, environ={}).manifest == other
    by_folder = find_workspace(tmp_path, manifest_path=other.parent, environ={})
    assert by_folder.manifest == other
    assert by_folder.found_by == "--manifest-path"


def test_pixi_run_manifest_variable_is_used(tmp_path: Path) -> None:
    other = write(tmp_path / "other" / "pixi.toml", WORKSPACE)
    found = find_workspace(tmp_path, environ={"PIXI_PROJECT_MANIFEST": str(other)})
    assert (found.manifest, found.found_by) == (other, "$PIXI_PROJECT_MANIFEST")
    # --manifest-path still wins over it.
    mine = write(tmp_path / "mine" / "pixi.toml", WORKSPACE)
    environ = {"PIXI_PROJECT_MANIFEST": str(other)}
    assert find_workspace(tmp_path, manifest_path=mine, environ=environ).manifest == mine


def test_environment_name_defaults() -> None:
    assert environment_name("cuda", {"PIXI_ENVIRONMENT_NAME": "x"}) == "cuda"
    assert environment_name(None, {"PIXI_ENVIRONMENT_NAME": "x"}) == "x"
    assert environment_name(None, {}) is None


@pytest.mark.parametrize(
    ("layout", "kind", "text"),
    [
        ({}, WorkspaceProblem.NOT_FOUND, "no pixi workspace in "),
        (
            {"pyproject.toml": '[project]\nname = "p"\n'},
            WorkspaceProblem.NOT_FOUND,
            "--manifest-path",
        ),
        ({"pixi.toml": "[workspace\n"}, WorkspaceProblem.BAD_MANIFEST, "not valid TOML"),
    ],
)
def test_no_workspace_is_one_clear_error(
    tmp_path: Path, layout: dict[str, str], kind: WorkspaceProblem, text: str
) -> None:
    for name, content in layout.items():
        write(tmp_path / name, content)
    with pytest.raises(WorkspaceError, match=text) as caught:
        find_workspace(tmp_path, environ={})
    assert caught.value.kind is kind
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("given", "text"),
    [
        ("missing.toml", "--manifest-path .*missing.toml: no such file"),
        ("plain/pyproject.toml", "not a pixi workspace manifest"),
        ("plain", "no pixi.toml, nor pyproject.toml with \\[tool.pixi\\], in that folder"),
    ],
)
def test_bad_manifest_path(tmp_path: Path, given: str, text: str) -> None:
    write(tmp_path / "plain" / "pyproject.toml", '[project]\nname = "p"\n')
    with pytest.raises(WorkspaceError, match=text):
        find_workspace(tmp_path, manifest_path=tmp_path / given, environ={})


MULTI = (
    WORKSPACE
    + """
[system-requirements]
cuda = "12.0"

[feature.cuda.system-requirements]
cuda = "12.6"
libc = { family = "glibc", version = "2.28" }

[feature.cpu.dependencies]
numpy = "*"

[feature.test.dependencies]
pytest = "*"

[environments]
cuda = ["cuda", "test"]
cpu = { features = ["cpu"], no-default-feature = true }
mixed = ["cpu", "test"]
"""
)


def installed(workspace: Workspace, *names: str) -> Workspace:
    for name in names:
        (workspace.envs_dir / name / "conda-meta").mkdir(parents=True, exist_ok=True)
    return workspace


def test_environments_and_their_features(tmp_path: Path) -> None:
    workspace = find_workspace(write(tmp_path / "pixi.toml", MULTI).parent, environ={})
    installed(workspace, "default", "cuda", "cpu", "mixed")
    assert workspace.manifest_environments == {
        "default": (),
        "cuda": ("cuda", "test"),
        "cpu": ("cpu",),
        "mixed": ("cpu", "test"),
    }
    assert workspace.environment().feature() is None
    assert workspace.environment("cuda").feature() == "cuda"  # named after the environment
    assert workspace.environment("cpu").feature() == "cpu"  # its only feature
    assert workspace.environment("mixed").feature("test") == "test"
    with pytest.raises(WorkspaceError, match=r"combines the features cpu, test; .* --feature"):
        workspace.environment("mixed").feature()
    with pytest.raises(WorkspaceError, match="has no feature 'gpu' \\(its features: cpu, test\\)"):
        workspace.environment("mixed").feature("gpu")


def test_unknown_environment_lists_the_known_ones(tmp_path: Path) -> None:
    workspace = find_workspace(write(tmp_path / "pixi.toml", MULTI).parent, environ={})
    with pytest.raises(
        WorkspaceError, match="no environment 'gpu' \\(known: cpu, cuda, default, mixed\\)"
    ) as caught:
        workspace.environment("gpu")
    assert caught.value.kind is WorkspaceProblem.UNKNOWN_ENVIRONMENT


def test_not_installed_and_not_locked(tmp_path: Path) -> None:
    workspace = find_workspace(write(tmp_path / "pixi.toml", MULTI).parent, environ={})
    with pytest.raises(
        WorkspaceError,
        match=r"not installed .* there is no pixi\.lock: run `pixi install -e cuda` first",
    ) as caught:
        workspace.environment("cuda")
    assert caught.value.kind is WorkspaceProblem.NOT_INSTALLED
    # A lock that does not lock it yet.
    write_lockfile(workspace.lockfile, {"default": [LockedPlatform("linux-64")]})
    with pytest.raises(WorkspaceError, match=r"pixi\.lock does not lock it yet") as caught:
        workspace.environment("cuda")
    assert caught.value.kind is WorkspaceProblem.NOT_LOCKED
    # Locked but not installed: usable, from the lock.
    assert not workspace.environment("default").installed


def test_an_environment_only_the_lock_knows(tmp_path: Path) -> None:
    workspace = find_workspace(write(tmp_path / "pixi.toml", WORKSPACE).parent, environ={})
    write_lockfile(workspace.lockfile, {"old": [LockedPlatform("linux-64")]})
    env = workspace.environment("old")
    assert (env.name, env.installed, env.features) == ("old", False, ())
    (workspace.envs_dir / "old" / "conda-meta").mkdir(parents=True)
    assert workspace.environment("old").installed


def test_declared_machine_per_environment(tmp_path: Path) -> None:
    workspace = find_workspace(write(tmp_path / "pixi.toml", MULTI).parent, environ={})
    installed(workspace, "default", "cuda", "cpu")

    def declared(env: str) -> dict[str, str]:
        packages = workspace.environment(env).declared("linux-64")
        assert all(vp.source == PIXI_SOURCE for vp in packages)
        return {vp.name: vp.version for vp in packages}

    assert declared("default") == {"__cuda": "12.0"}
    assert declared("cuda") == {"__cuda": "12.6", "__glibc": "2.28"}  # the highest of each
    assert declared("cpu") == {}  # no-default-feature: the top level does not apply


def test_rich_platform_declares_driver_and_gpu(tmp_path: Path) -> None:
    text = (
        '[workspace]\nchannels = []\nplatforms = [{ platform = "linux-64", cuda = '
        '{ driver = "12.8", arch = "9.0" }, glibc = "2.34" }, "osx-arm64"]\n'
    )
    workspace = installed(
        find_workspace(write(tmp_path / "pixi.toml", text).parent, environ={}), "default"
    )
    env = workspace.environment()
    assert {vp.name: vp.version for vp in env.declared("linux-64")} == {
        "__cuda": "12.8",
        "__cuda_arch": "9.0",
        "__glibc": "2.34",
    }
    assert env.declared("osx-arm64") == ()


@pytest.mark.parametrize(
    ("declaration", "where", "expected"),
    [
        ('[system-requirements]\ncuda = "abc"\n', "[system-requirements]", "__cuda 'abc'"),
        (f'[system-requirements]\ncuda = "{"9" * 5000}.8"\n', "[system-requirements]", "__cuda"),
        ('[system-requirements]\nlibc = { family = "glibc", version = "2.x" }\n',
         "[system-requirements]", "__glibc '2.x'"),
        (('[feature.gpu.system-requirements]\ncuda = "12.8.1.1"\n'
         '[environments]\ngpu = ["gpu"]\n'), "[feature.gpu.system-requirements]", "__cuda"),
    ],
)  # fmt: skip
def test_a_declaration_that_is_no_version_is_a_bad_manifest(
    tmp_path: Path, declaration: str, where: str, expected: str
) -> None:
    """pixi refuses these manifests; the extension says which key holds what (``cuda = "abc"``
    was taken as __cuda=abc; a 5,000-digit driver was an internal error in the fuzz run)."""
    text = '[workspace]\nchannels = []\nplatforms = ["linux-64"]\n' + declaration
    name = "gpu" if "gpu" in declaration else "default"
    workspace = installed(find_workspace(write(tmp_path / "pixi.toml", text).parent, environ={}),
                          name)  # fmt: skip
    env = workspace.environment(name)
    with pytest.raises(WorkspaceError) as raised:
        env.declared("linux-64")
    assert raised.value.kind is WorkspaceProblem.BAD_MANIFEST
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'pixi.toml'}: {where} declares {expected}")
    assert len(message) < 400
    rich = '[workspace]\nchannels = []\nplatforms = [{ platform = "linux-64", cuda = "twelve" }]\n'
    workspace = find_workspace(write(tmp_path / "pixi.toml", rich).parent, environ={})
    workspace = installed(workspace, "default")
    with pytest.raises(WorkspaceError, match="the platform entry 'linux-64' declares __cuda"):
        workspace.environment().declared("linux-64")


@pytest.mark.parametrize("manifest", corpus_files("real/pixi-locks/*/pixi.toml"))
def test_real_workspaces_are_found_with_their_environments(tmp_path: Path, manifest: Path) -> None:
    """Each real manifest, found from a subfolder of a copy of it; every environment its lock
    has is one the workspace knows (from the manifest, or the lock)."""
    import rattler

    copy = write(tmp_path / "ws" / "pixi.toml", manifest.read_text(encoding="utf-8"))
    lock = manifest.with_name("pixi.lock")
    (tmp_path / "ws" / "pixi.lock").write_bytes(lock.read_bytes())
    (tmp_path / "ws" / "src").mkdir()
    workspace = find_workspace(tmp_path / "ws" / "src", environ={})
    assert workspace.manifest == copy
    locked = sorted(name for name, _ in rattler.LockFile.from_path(lock).environments())
    assert workspace.locked_environments() == tuple(locked)
    for name in locked:
        env = workspace.environment(name)
        assert (env.name, env.installed) == (name, False)
