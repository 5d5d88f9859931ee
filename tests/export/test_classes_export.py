"""``export --targets``: each node class's choice on the real torch 2.9.0 / torchvision 0.24.0
metadata, written as one file per class (environment.yml replayed as conda runs it, pylock.toml)
or as one pixi manifest with a platform per class, validated against pixi's schema
(docs/clusters.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib
import yaml

from tests.cli.conftest import Cli
from tests.export.pixi_toml.test_schema import problems
from tests.worlds.channel import Channel
from tests.worlds.cluster import build_cluster, write_targets
from tests.worlds.prefix import solve
from variant_bridge.indexes import file_sha256

# What stock conda knows of each class's nodes: its own virtual packages (no __cuda_arch, no
# __amdgpu_arch: those need conda plugins).
STOCK = ("__unix=0", "__linux=5.14", "__glibc=2.28")
NODES = {
    "h100": (*STOCK, "__archspec=1=sapphirerapids", "__cuda=12.8"),
    "mi300": (*STOCK, "__archspec=1=zen4"),
    "pvc": (*STOCK, "__archspec=1=sapphirerapids"),
    "cpu": (*STOCK, "__archspec=1=zen3"),
}
LABELS = {"h100": "cuda12.6", "mi300": "rocm6.4", "pvc": "xpu", "cpu": "null"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Path, Path]:
    return build_cluster(corpus, tmp_path_factory.mktemp("cluster"))


def export(cluster: tuple[Path, Path], *args: str) -> tuple[int, str, str]:
    wheels, nodes = cluster
    result = Cli()("export", "torch", "torchvision", "-f", str(wheels), "--targets", str(nodes),
                   "--python", "3.12", *args)  # fmt: skip
    return result.exit_code, result.stdout, result.stderr


def pip_lines(data: dict[str, object]) -> list[str]:
    deps = data["dependencies"]
    assert isinstance(deps, list)
    found = next(d for d in deps if isinstance(d, dict))
    return list(found["pip"])


def test_one_environment_yml_per_class_each_with_its_build(
    cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "cluster"
    code, stdout, stderr = export(cluster, "-o", str(out), "--cache-dir", str(tmp_path / "c"))
    assert code == 0, stderr
    assert stdout == ""
    assert sorted(p.name for p in out.iterdir()) == ["cpu", "h100", "mi300", "pvc"]
    for name, label in LABELS.items():
        text = (out / name / "environment.yml").read_text()
        data = yaml.safe_load(text)
        assert data["name"] == name
        assert f"# from class {name} of {cluster[1]} (linux-64)." in text
        # each class's variant wheels are copies in its own folder: the plain names collide
        lines = pip_lines(data)
        torch = next(line for line in lines if line.startswith("file:./variant-wheels/torch-"))
        assert torch.endswith(f"# torch 2.9.0 [{label}]") or f"[{label}]" in text
        assert (out / name / "variant-wheels" / "torch-2.9.0-py3-none-any.whl").is_file()
        assert f"torch 2.9.0 [{label}]" in text
        assert "--no-index" in lines
        assert f"wrote {out / name / 'environment.yml'}: class {name!r}" in stderr
    h100 = yaml.safe_load((out / "h100" / "environment.yml").read_text())
    assert h100["dependencies"][:3] == ["python=3.12", "cuda-version=12.6", "__cuda >=12.0"]
    assert any(
        line.startswith("nvidia-cublas==12.6.4.1 --hash=sha256:") for line in pip_lines(h100)
    )
    mi300 = (out / "mi300" / "environment.yml").read_text()
    assert "#   AMD GPU: __amdgpu_arch=9.4.2 (--target)" in mi300
    assert "#   ROCm runtime: rocm=6.4 (--target)" in mi300
    # no conda plugin is known to provide __amdgpu_arch: said so, in words
    assert "(needs a conda plugin; NOT a dependency, stock conda lacks it)" in mi300
    assert "stock conda has no __amdgpu_arch (a conda plugin provides it)" in mi300
    assert "nvidia-cublas" not in mi300
    assert "triton-rocm==3.6.0 --hash=sha256:" in mi300
    # what the wheels expect of conda, and whether anything pins it: the toolkit for h100,
    # nothing for the ROCm runtime of mi300 (declared with --target, not a conda package)
    assert (
        "# The variant wheels also expect (not added as dependencies): rocm-core 6.4.* "
        "(not pinned: no rocm-core among the dependencies)"
    ) in mi300.splitlines()
    assert "toolkit is pinned" not in mi300
    # the xpu builds' six Intel device IPs are one fact, said once for both wheels
    intel = "torch 2.9.0 [xpu], torchvision 0.24.0 [xpu]: intel :: device_ip has no conda "
    intel += (
        "counterpart (no conda virtual package describes an Intel GPU); the bridge never maps it"
    )
    assert [line for line in stderr.splitlines() if "intel ::" in line] == [
        f"note: class 'pvc': {intel}"
    ]
    pvc = (out / "pvc" / "environment.yml").read_text()
    assert [line for line in pvc.splitlines() if "intel ::" in line] == [f"# Note: {intel}"]
    assert (
        "# The variant wheels also expect (not added as dependencies): cuda-version >=12.0,<13 "
        "(pinned above: cuda-version=12.6)"
    ) in (out / "h100" / "environment.yml").read_text().splitlines()


def test_each_class_file_replays_as_conda_runs_it(
    cluster: tuple[Path, Path], cuda_channel: Channel, tmp_path: Path
) -> None:
    """conda's solve of each class's lines for that class's nodes (stock conda's virtual
    packages); the pip lines pin the very files. (pip itself cannot install these torch
    wheels: their METADATA keeps the variant markers of the real declaration, which only an
    installer with wheel-variant support reads; tests/export/test_conda_replay.py replays the
    pip step with a wheel whose markers were decided.)"""
    from rattler import MatchSpec
    from rattler.exceptions import SolverError

    out = tmp_path / "cluster"
    code, _, stderr = export(cluster, "-o", str(out), "--cache-dir", str(tmp_path / "c"))
    assert code == 0, stderr
    for name, machine in NODES.items():
        data = yaml.safe_load((out / name / "environment.yml").read_text())
        specs = [d for d in data["dependencies"] if isinstance(d, str)]
        solved = {r.name.normalized: str(r.version) for r in
                  solve([cuda_channel], [MatchSpec(s) for s in specs], machine)}  # fmt: skip
        assert solved["python"].startswith("3.12.")
        assert ("cuda-version" in solved) is (name == "h100")
    assert solved_version(cuda_channel, out / "h100", NODES["h100"]) == "12.6"
    # the H100 file on a node whose driver is too old: conda refuses it up front
    old = (*(vp for vp in NODES["h100"] if not vp.startswith("__cuda")), "__cuda=11.8")
    with pytest.raises(SolverError, match="__cuda"):
        solved_version(cuda_channel, out / "h100", old)

    # the pip lines name the very files, each by its sha256 (pip's hash-checking mode)
    wheels = cluster[0]
    for name in NODES:
        folder = out / name
        for line in pip_lines(yaml.safe_load((folder / "environment.yml").read_text())):
            if line.startswith("file:./"):
                path, _, digest = line.removeprefix("file:").partition("#sha256=")
                assert file_sha256(folder / path) == digest.split()[0]
            elif "--hash=sha256:" in line:
                pin, _, digest = line.partition(" --hash=sha256:")
                project, version = pin.split("==")
                (wheel,) = wheels.glob(f"{project.replace('-', '_')}-{version}-*.whl")
                assert file_sha256(wheel) == digest


def solved_version(channel: Channel, folder: Path, machine: tuple[str, ...]) -> str:
    from rattler import MatchSpec

    data = yaml.safe_load((folder / "environment.yml").read_text())
    specs = [MatchSpec(d) for d in data["dependencies"] if isinstance(d, str)]
    return next(str(r.version) for r in solve([channel], specs, machine)
                if r.name.normalized == "cuda-version")  # fmt: skip


def test_one_pylock_per_class(cluster: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "locks"
    code, _, stderr = export(cluster, "--format", "pylock", "-o", str(out),
                             "--cache-dir", str(tmp_path / "c"))  # fmt: skip
    assert code == 0, stderr
    for name, label in LABELS.items():
        lock = tomllib.loads((out / name / "pylock.toml").read_text())
        torch = next(p for p in lock["packages"] if p["name"] == "torch")
        assert torch["tool"]["variant-bridge"]["label"] == label
        assert torch["wheels"][0]["path"] == "./variant-wheels/torch-2.9.0-py3-none-any.whl"
        assert all(w.get("hashes", {}).get("sha256") for p in lock["packages"] for w in p["wheels"])


def test_one_pixi_manifest_with_a_platform_per_class(
    cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    manifest = tmp_path / "ws" / "pixi.toml"
    manifest.parent.mkdir()
    code, _, stderr = export(cluster, "-o", str(manifest), "--cache-dir", str(tmp_path / "c"))
    assert code == 0, stderr
    text = manifest.read_text()
    assert problems(text) == []
    data = tomllib.loads(text)
    platforms = data["workspace"]["platforms"]
    assert platforms == [
        {"name": "h100", "platform": "linux-64", "cuda": {"driver": "12.8", "arch": "9.0"},
         "archspec": "sapphirerapids"},
        {"name": "mi300", "platform": "linux-64", "archspec": "zen4", "__amdgpu": "0",
         "__amdgpu_arch": "9.4.2"},
        {"name": "pvc", "platform": "linux-64", "archspec": "sapphirerapids"},
        {"name": "cpu", "platform": "linux-64", "archspec": "zen3"},
    ]  # fmt: skip
    assert data["workspace"]["requires-pixi"] == ">=0.71"
    # what every class shares at the top; each class's own pins in its target table
    assert data["dependencies"] == {"python": "3.12.*"}
    assert data["pypi-dependencies"] == {"numpy": "==2.3.4", "pillow": "==12.0.0"}
    target = data["target"]
    assert target["h100"]["dependencies"] == {"cuda-version": "12.6.*"}
    for name, label in LABELS.items():
        pypi = target[name]["pypi-dependencies"]
        assert pypi["torch"] == {"path": f"./variant-wheels/{name}/torch-2.9.0-py3-none-any.whl"}
        assert (manifest.parent / pypi["torch"]["path"]).is_file()
        assert f"variant {label}, sha256=" in text
    assert "nvidia-cublas" in target["h100"]["pypi-dependencies"]
    assert target["h100"]["activation"]["env"]["NV_VARIANT_PROVIDER_FORCE_SM_ARCH"] == "9.0"
    assert "activation" not in target["mi300"]
    assert (
        "#   The variant wheels also expect (not added as dependencies): rocm-core 6.4.* "
        "(not pinned: no rocm-core among the dependencies)"
    ) in text.splitlines()
    # pixi checks no AMD GPU: on a cpu node, the mi300 platform (a CPU by presence) is taken
    assert "every node of class 'cpu' also satisfies 'mi300'" not in stderr
    assert "pixi cannot tell the nodes of classes 'mi300' and 'pvc' apart" in stderr
    assert "pixi cannot tell the nodes of classes 'mi300' and 'cpu' apart" in stderr


def test_wiring_errors_name_the_class_and_write_nothing(
    cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    wheels, _ = cluster
    cases = {
        "classes:\n  h100_sxm: {platform: linux-64, cuda: '12.8', cuda_arch: '9.0'}\n": (
            "class 'h100_sxm' cannot name a pixi platform"
        ),
        "classes:\n  a: {platform: linux-64, archspec: zen3}\n"
        "  b: {platform: linux-64, archspec: zen3, device_ip: '12.60.7'}\n": (
            "classes 'a' and 'b' declare the same pixi platform (platform linux-64, archspec "
            "zen3), and pixi refuses two names for one definition"
        ),
    }
    for text, message in cases.items():
        folder = tmp_path / f"case{len(message)}"
        nodes = write_targets(folder, text)
        (folder / "ws").mkdir()
        result = Cli()("export", "torch", "-f", str(wheels), "--targets", str(nodes),
                       "--python", "3.12", "-o", str(folder / "ws" / "pixi.toml"),
                       "--cache-dir", str(tmp_path / "c"))  # fmt: skip
        assert result.exit_code == 1
        assert result.stderr.startswith(f"error: {nodes}: {message}"), result.stderr
        assert list((folder / "ws").iterdir()) == []  # no manifest, no copies
    # the strict mode: a class whose wheels need what its entry cannot state
    nodes = write_targets(
        tmp_path / "strict",
        "classes:\n  h100: {platform: linux-64, cuda: '12.8', cuda_arch: '9.0'}\n",
    )
    result = Cli()("export", "torch", "-f", str(wheels), "--targets", str(nodes), "--python",
                   "3.12", "--strict-host-requirements", "-o", str(tmp_path / "strict" / "pixi.toml"),
                   "--cache-dir", str(tmp_path / "c"))  # fmt: skip
    assert result.exit_code == 1
    assert "cannot declare the linux-64 platform for pixi" in result.stderr
    assert not (tmp_path / "strict" / "pixi.toml").exists()
    assert not (tmp_path / "strict" / "variant-wheels").exists()


def test_an_existing_file_is_refused_before_anything_is_chosen(
    cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "cluster"
    (out / "pvc").mkdir(parents=True)
    (out / "pvc" / "environment.yml").write_text("mine\n")
    code, _, stderr = export(cluster, "-o", str(out))
    assert code == 1
    assert (
        stderr.strip()
        == f"error: '{out / 'pvc' / 'environment.yml'}' exists; pass --force to overwrite it"
    )
    assert sorted(p.name for p in out.iterdir()) == ["pvc"]
    assert (out / "pvc" / "environment.yml").read_text() == "mine\n"
    code, _, stderr = export(cluster, "-o", str(out), "--force", "--cache-dir", str(tmp_path / "c"))
    assert code == 0, stderr
    assert "xpu" in (out / "pvc" / "environment.yml").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--update", "pixi.toml"), "--update cannot be used with it"),
        (("--wheels-dir", "w"), "--wheels-dir cannot be used with it"),
        (("--from-history",), "--from-history cannot be used with it"),
        ((), "--targets writes one file per class: pass -o DIR"),
        (("-o", "environment.yml"), "with --targets, -o names the folder of the classes' files"),
        (("--prefix", "/opt/env", "-o", "out"), "cannot be combined with --prefix"),
    ],
)
def test_usage_errors(cluster: tuple[Path, Path], args: tuple[str, ...], message: str) -> None:
    code, _, stderr = export(cluster, *args)
    assert code == 2
    assert message in stderr


def test_packages_without_targets_are_a_usage_error() -> None:
    result = Cli()("export", "torch", "-f", "wheels")
    assert result.exit_code == 2
    assert "PKG arguments are chosen for each node class of --targets FILE" in result.stderr


def test_from_an_index_every_file_is_fetched_once(
    cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    """Two classes that get the same build (the null variant, for a CPU class and a class whose
    Intel GPU is not declared) share its download; the index's hashes pin every wheel."""
    from collections import Counter

    from tests.worlds.index_server import IndexServer

    wheels, _ = cluster
    nodes = write_targets(
        tmp_path,
        "classes:\n"
        "  h100: {platform: linux-64, cuda: '12.8', cuda_arch: '9.0', cuda_version: '12.6'}\n"
        "  cpu: {platform: linux-64, archspec: zen3}\n"
        "  arc: {platform: linux-64, archspec: alderlake}\n",
    )
    out = tmp_path / "cluster"
    with IndexServer(wheels, core_metadata=True) as server:
        result = Cli()("export", "torch", "--index-url", server.url, "--targets", str(nodes),
                       "--python", "3.12", "-o", str(out), "--no-cache")  # fmt: skip
        requested = Counter(server.paths_requested())
        url = server.url
    assert result.exit_code == 0, result.stderr
    assert [p for p, n in requested.items() if n > 1] == []
    assert requested["/files/torch-2.9.0-py3-none-any-null.whl"] == 1
    for name in ("cpu", "arc"):
        text = (out / name / "environment.yml").read_text()
        assert "torch 2.9.0 [null]" in text
        assert f"--index-url {url}" in text
    h100 = pip_lines(yaml.safe_load((out / "h100" / "environment.yml").read_text()))
    assert any(line.startswith("nvidia-cublas==12.6.4.1 --hash=sha256:") for line in h100)
