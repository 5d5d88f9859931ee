"""``solve --lockfile pixi.lock`` writes a lock pixi's installer can use and a pixi.toml beside it
that the lock satisfies (issue 17): variant wheels locked as their plain-named copies with their
hashes, the indexes and find-links of the solve as real locks list them, a rich platform that
declares what the lock's platform declares; read back by rattler, ``detect`` and ``export``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import tomlkit
import yaml

from tests.cli.conftest import Cli
from tests.export.pixi_toml.test_schema import problems
from tests.solve.test_solve_cli import MACHINE, SM
from tests.worlds.channel import Channel, Pkg, cuda_packages
from tests.worlds.wheels import make_release, make_wheel

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("lock-world")
    python = Pkg("python", "3.12.7", "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",))
    conda = Channel(root / "conda").add([*cuda_packages(["12.6", "12.8", "12.9"]), python])
    wheels = root / "wheels"
    make_release(
        wheels, "gpulib", "1.0",
        {
            "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6", *SM],
            "cu128": ["nvidia :: cuda_version_lower_bound :: 12.8", *SM],
            "null": [],
        },
        namespace_priorities=["nvidia"], non_variant=False, requires_python=">=3.9",
    )  # fmt: skip
    make_wheel(wheels, "plainpkg", "2.0")
    return conda.path, wheels


def _solve(world: tuple[Path, Path], lock: Path) -> Any:
    conda, wheels = world
    return Cli()("solve", "gpulib", "plainpkg", "python", "-f", str(wheels), "-c", str(conda),
                 "--strict", "--platform", "linux-64", *MACHINE, "--write-lock", str(lock))  # fmt: skip


def test_the_lock_names_standard_files_with_hashes_and_its_indexes(
    world: tuple[Path, Path], tmp_path: Path
) -> None:
    import rattler

    lock = tmp_path / "pixi.lock"
    result = _solve(world, lock)
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(lock.read_text())
    pypi = {e["name"]: e for e in data["packages"] if "pypi" in e}
    gpulib = pypi["gpulib"]
    assert gpulib["pypi"] == "./variant-wheels/gpulib-1.0-py3-none-any.whl"
    copy = tmp_path / "variant-wheels" / "gpulib-1.0-py3-none-any.whl"
    original = next(world[1].glob("gpulib-1.0-*-cu128.whl"))
    assert copy.read_bytes() == original.read_bytes()
    assert gpulib["sha256"] == hashlib.sha256(copy.read_bytes()).hexdigest()
    assert pypi["plainpkg"]["pypi"].endswith("/plainpkg-2.0-py3-none-any.whl")
    assert pypi["plainpkg"]["sha256"]
    environment = data["environments"]["default"]
    assert environment["indexes"] == ["https://pypi.org/simple"]
    assert environment["find-links"] == [{"path": str(world[1])}]
    # rattler reads it back, with every locked wheel
    read = rattler.LockFile.from_path(lock).default_environment()
    assert read is not None
    names = {p.name for p in read.pypi_packages()["linux-64"]}
    assert names == {"gpulib", "plainpkg"}


def test_the_pixi_toml_beside_is_satisfied_by_the_lock(
    world: tuple[Path, Path], tmp_path: Path
) -> None:
    from rattler import MatchSpec

    lock = tmp_path / "pixi.lock"
    assert _solve(world, lock).exit_code == 0
    manifest = tmp_path / "pixi.toml"
    text = manifest.read_text()
    assert problems(text) == []  # pixi's schema
    data = tomlkit.parse(text).unwrap()
    locked = yaml.safe_load(lock.read_text())
    # the rich platform declares exactly the lock platform's virtual packages, by its name
    [platform] = data["workspace"]["platforms"]
    [lock_platform] = locked["platforms"]
    assert platform["name"] == lock_platform["name"] == "linux-64"
    declared = {f"__cuda={platform['cuda']['driver']}", f"__cuda_arch={platform['cuda']['arch']}",
                f"__glibc={platform['glibc']}", f"__archspec=1={platform['archspec']}"}  # fmt: skip
    assert declared == set(lock_platform["virtual-packages"])
    assert data["workspace"]["channels"] == [
        c["url"] for c in locked["environments"]["default"]["channels"]
    ]
    # every conda dependency is satisfied by a locked record, every PyPI one is a locked file
    records = {e["conda"].rsplit("/", 1)[1]: e for e in locked["packages"] if "conda" in e}
    for name, spec in data["dependencies"].items():
        match = MatchSpec(f"{name} {spec['version']} {spec['build']}")
        assert any(match.name.normalized == n.rsplit("-", 2)[0] for n in records), name
    pypi = {e["pypi"] for e in locked["packages"] if "pypi" in e}
    for name, spec in data["pypi-dependencies"].items():
        assert spec["path"] in pypi or str((tmp_path / spec["path"]).resolve()) in pypi, name
    assert data["pypi-options"]["find-links"] == [{"path": str(world[1])}]


def test_a_second_lock_updates_the_users_pixi_toml_keeping_their_lines(
    world: tuple[Path, Path], tmp_path: Path
) -> None:
    manifest = tmp_path / "pixi.toml"
    mine = '# our project\n[workspace]\nname = "ours"\n\n[tasks]\nrun = "python -m gpulib"  # go\n'
    manifest.write_text(mine)
    lock = tmp_path / "pixi.lock"
    assert _solve(world, lock).exit_code == 0
    after = manifest.read_text()
    assert after.startswith(mine.split("\n\n", maxsplit=1)[0])
    assert 'run = "python -m gpulib"  # go\n' in after
    assert problems(after) == []
    again = _solve(world, lock)
    assert again.exit_code == 0
    assert manifest.read_text() == after  # re-locking the same solution changes nothing


def test_detect_and_export_read_the_lock_back(world: tuple[Path, Path], tmp_path: Path) -> None:
    lock = tmp_path / "pixi.lock"
    assert _solve(world, lock).exit_code == 0
    detected = Cli()("detect", "--lockfile", str(lock), "--json")
    assert detected.exit_code == 0, detected.output
    env = json.loads(detected.stdout)
    (gpulib,) = [d for d in env["variant_wheels"] if d["name"] == "gpulib"]
    assert gpulib["label"] == "cu128"  # the plain-named copy still says which variant it is
    out = tmp_path / "environment.yml"
    exported = Cli()("export", "--lockfile", str(lock), "-o", str(out))
    assert exported.exit_code == 0, exported.output
    pip = next(d for d in yaml.safe_load(out.read_text())["dependencies"] if isinstance(d, dict))
    assert any(line.startswith("file:./variant-wheels/gpulib-1.0-py3-none-any.whl#sha256=")
               for line in pip["pip"])  # fmt: skip
