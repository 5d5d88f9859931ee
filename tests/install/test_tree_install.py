"""Installing the whole tree: exactly the chosen files, once; what is in place is left alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import run_script
from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.install import find_uv

pytestmark = pytest.mark.slow

LOWER = "nvidia :: cuda_version_lower_bound :: {}"
CUDA = {"cu129": [LOWER.format("12.9")], "cu126": [LOWER.format("12.6")]}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    make_release(root, "app", "1.0", {**CUDA, "null": []},
                 requires=["gpulib>=2", "colour>=0.1"])  # fmt: skip
    make_release(root, "gpulib", "2.1", CUDA, non_variant=False)  # only variants: uv alone fails
    make_wheel(root, "colour", "0.2")
    return root


def _venv(path: Path, *, with_pip: bool) -> Path:
    if with_pip:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    else:
        uv = find_uv()
        assert uv is not None
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(path)], check=True)
    return path / "bin" / "python"


def _dists(python: Path) -> dict[str, tuple[str, str | None, str | None]]:
    """name -> (version, variant label, direct_url.json url)."""
    code = (
        "import importlib.metadata as m, json\n"
        "out = {}\n"
        "for d in m.distributions():\n"
        "    v, u = d.read_text('variant.json'), d.read_text('direct_url.json')\n"
        "    out[d.metadata['Name']] = [d.version, next(iter(json.loads(v)['variants'])) if v"
        " else None, json.loads(u)['url'] if u else None]\n"
        "print(json.dumps(out))\n"
    )
    run = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return {k: tuple(v) for k, v in json.loads(run.stdout).items()}  # type: ignore[misc]


def _install(world: Path, python: Path, installer: str, *extra: str) -> dict[str, object]:
    result = run_script("install", "app", "-f", str(world), "-t", "cuda=12.6", "--python",
                        str(python), "--installer", installer, "--json", *extra)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_the_whole_tree_once_then_nothing(world: Path, tmp_path: Path, installer: str) -> None:
    python = _venv(tmp_path / "venv", with_pip=installer == "pip")
    first = _install(world, python, installer)
    names = [  # the requested package, then its dependencies
        "app-1.0-py3-none-any-cu126.whl",
        "colour-0.2-py3-none-any.whl",
        "gpulib-2.1-py3-none-any-cu126.whl",
    ]
    assert first["installed"] == names
    command = first["command"]
    assert isinstance(command, list)
    assert {"--no-deps", "--no-index", "--require-hashes"} <= set(command)  # nothing else
    dists = _dists(python)
    assert dists["app"][:2] == ("1.0", "cu126")
    assert dists["gpulib"][:2] == ("2.1", "cu126")  # the dependency's variant, bridged
    assert dists["gpulib"][2] == (world / names[2]).as_uri()  # its real origin
    assert dists["colour"] == ("0.2", None, None)  # a plain wheel records no origin

    second = _install(world, python, installer)
    assert (second["installed"], second["command"]) == ([], [])
    assert second["unchanged"] == [names[0], names[2]]  # the files chosen again: in place
    kept = [p["package"] for p in second["packages"] if p["verdict"] == "kept"]  # type: ignore[attr-defined]
    assert kept == ["colour"]  # a plain dependency already installed that satisfies the tree
    text = run_script("install", "app", "-f", str(world), "-t", "cuda=12.6", "--python",
                      str(python), "--installer", installer)  # fmt: skip
    assert "Nothing to install" in text.stdout


def test_a_variant_whose_origin_was_not_recorded_is_installed_again(
    world: Path, tmp_path: Path
) -> None:
    # What a run killed between the installer and the recording leaves: the next run repairs it.
    python = _venv(tmp_path / "venv", with_pip=False)
    _install(world, python, "uv")
    (direct,) = python.parent.parent.glob("lib/python*/site-packages/gpulib-*/direct_url.json")
    direct.unlink()
    again = _install(world, python, "uv")
    assert again["installed"] == ["gpulib-2.1-py3-none-any-cu126.whl"]
    assert _dists(python)["gpulib"][2] == (world / "gpulib-2.1-py3-none-any-cu126.whl").as_uri()


def test_an_installed_dependency_that_satisfies_is_kept(world: Path, tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv", with_pip=False)
    older = tmp_path / "older"
    make_wheel(older, "colour", "0.1.5")  # e.g. what conda or an earlier install put there
    uv = find_uv()
    assert uv is not None
    subprocess.run([uv, "pip", "install", "-q", "--python", str(python), "--no-index",
                    "--find-links", str(older), "colour"], check=True)  # fmt: skip
    data = _install(world, python, "uv")
    packages = {p["package"]: p for p in data["packages"]}  # type: ignore[attr-defined]
    assert packages["colour"]["verdict"] == "kept"
    assert packages["colour"]["sha256_checked"] is None
    assert "colour-0.2-py3-none-any.whl" not in data["installed"]  # type: ignore[operator]
    assert _dists(python)["colour"][0] == "0.1.5"
    # Asked for by name, it is chosen from the sources like any requested package.
    result = run_script("install", "colour", "-f", str(world), "--python", str(python), "--json")
    assert json.loads(result.stdout)["installed"] == ["colour-0.2-py3-none-any.whl"]


@pytest.fixture(scope="module")
def split_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``app`` in a find-links directory; its dependencies on an index (served by the test)."""
    root = tmp_path_factory.mktemp("split")
    make_release(root / "links", "app", "1.0", {**CUDA, "null": []},
                 requires=["gpulib>=2", "colour>=0.1"])  # fmt: skip
    make_release(root / "index", "gpulib", "2.1", CUDA, non_variant=False)
    make_wheel(root / "index", "colour", "0.2")
    return root / "links", root / "index"


def test_a_dependency_without_a_listed_hash_is_refused_unless_opted_out(
    split_world: tuple[Path, Path], tmp_path: Path
) -> None:
    links, served = split_world
    python = _venv(tmp_path / "venv", with_pip=False)
    with IndexServer(served, hashes=False) as index:
        args = ("install", "app", "-f", str(links), "--index-url", index.url, "-t", "cuda=12.6",
                "--python", str(python), "--json")  # fmt: skip
        refused = run_script(*args)
        assert refused.returncode == 1
        (line,) = refused.stderr.strip().splitlines()
        assert line.startswith("error: colour-0.2-py3-none-any.whl from http://")  # a dependency
        assert "lists no sha256 for it" in line
        assert "(pass --no-require-hashes to install files without a listed hash" in line
        assert "app" not in _dists(python)  # the gate runs before anything is installed

        allowed = run_script(*args, "--no-require-hashes")
    assert allowed.returncode == 0, allowed.stderr
    packages = {p["package"]: p for p in json.loads(allowed.stdout)["packages"]}
    assert packages["app"]["sha256_checked"] is True  # find-links: hashed here and pinned
    assert packages["gpulib"]["sha256_checked"] is False  # installed unverified, and said so
    assert packages["colour"]["sha256_checked"] is False
    assert all(len(p["sha256"]) == 64 for p in packages.values())
    assert _dists(python)["gpulib"][:2] == ("2.1", "cu126")


def test_a_dependency_whose_index_lies_about_its_variant_is_refused(tmp_path: Path) -> None:
    # gpulib's variants.json says cu126 needs CUDA 12.6; the cu126 wheel says 12.9.
    links, served = tmp_path / "links", tmp_path / "index"
    make_wheel(links, "app", "1.0", requires=["gpulib>=2"])
    make_release(served, "gpulib", "2.1", {"cu126": [LOWER.format("12.9")]}, non_variant=False)
    variants = served / "gpulib-2.1-variants.json"
    document = json.loads(variants.read_text())
    document["variants"]["cu126"]["nvidia"]["cuda_version_lower_bound"] = ["12.6"]
    variants.write_text(json.dumps(document))
    python = _venv(tmp_path / "venv", with_pip=False)
    with IndexServer(served) as index:
        result = run_script("install", "app", "-f", str(links), "--index-url", index.url,
                            "-t", "cuda=12.6", "--python", str(python))  # fmt: skip
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        "error: gpulib-2.1-py3-none-any-cu126.whl: its own variant.json says 'cu126' is "
        "[nvidia :: cuda_version_lower_bound :: 12.9], but http://"
    )
    assert "refusing to install it" in line
    assert "app" not in _dists(python)
