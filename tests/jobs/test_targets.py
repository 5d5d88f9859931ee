"""Node classes: one targets file, one choice per class, from a machine with no GPU, on the real
torch 2.9.0 / torchvision 0.24.0 variant metadata (docs/clusters.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.worlds.cluster import build_cluster, write_targets
from tests.worlds.index_server import IndexServer
from variant_bridge.errors import ConflictingOptions, InvalidTarget, SelectionError
from variant_bridge.jobs.select import parse_requests
from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, Misuse, SourceSpec
from variant_bridge.jobs.targets import (
    ClassChoices,
    for_class,
    node_targets,
    open_classes,
    select_classes,
)
from variant_bridge.platform_tags import PythonSource

PY312 = EnvironmentSpec(python="3.12")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Path, Path]:
    return build_cluster(corpus, tmp_path_factory.mktemp("cluster"))


def labels(results: tuple[ClassChoices, ...], project: str) -> dict[str, str | None]:
    found = {}
    for result in results:
        choice = next(c for c in result.choices if c.files.project == project)
        found[result.name] = choice.chosen.filename.label if choice.chosen else None
    return found


def test_each_class_gets_its_build_of_torch_and_torchvision(
    cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    wheels, nodes = cluster
    sources = SourceSpec(find_links=(str(wheels),))
    with open_classes(nodes, sources, PY312, FetchSpec(cache_dir=tmp_path)) as classes:
        results = select_classes(parse_requests(["torch", "torchvision"]), classes)
    assert [r.name for r in results] == ["h100", "mi300", "pvc", "cpu"]
    # h100: a CUDA build, the one its toolkit's pins name; mi300: the ROCm build listing
    # gfx942 for its runtime; pvc: the xpu build for its declared device IP; no GPU: the null
    # variant (PyTorch's CPU build)
    assert labels(results, "torch") == {
        "h100": "cuda12.6", "mi300": "rocm6.4", "pvc": "xpu", "cpu": "null"
    }  # fmt: skip
    vision = labels(results, "torchvision")
    assert str(vision["h100"]).startswith("cuda")
    assert {k: v for k, v in vision.items() if k != "h100"} == {
        "mi300": "rocm6.4", "pvc": "xpu", "cpu": "null"
    }  # fmt: skip
    # each class's tree is its own: the CUDA components for h100 only, triton-rocm for mi300
    trees = {r.name: {c.files.project for c in r.choices} for r in results}
    assert "nvidia-cublas" in trees["h100"]
    assert "nvidia-cublas" not in trees["mi300"] | trees["pvc"] | trees["cpu"]
    assert "triton-rocm" in trees["mi300"]
    assert trees["cpu"] == {"torch", "torchvision", "numpy", "pillow"}
    # the reasons say what decided
    torch = {r.name: r.choices[0].chosen for r in results}
    assert "gfx942" in str(torch["mi300"] and torch["mi300"].reason)
    assert "12.60.7" in str(torch["pvc"] and torch["pvc"].reason)


def test_every_file_is_fetched_once_for_all_classes(cluster: tuple[Path, Path]) -> None:
    wheels, nodes = cluster
    with IndexServer(wheels, core_metadata=True) as server:
        sources = SourceSpec(index_url=server.url)
        with open_classes(nodes, sources, PY312, FetchSpec(no_cache=True)) as classes:
            results = select_classes(parse_requests(["torch"]), classes)
            downloads = {id(one.ctx.downloads) for one in classes}
        requested = Counter(server.paths_requested())
    assert len(downloads) == 1
    assert labels(results, "torch")["mi300"] == "rocm6.4"
    # the project page and the release's variants file serve all four classes
    assert requested["/simple/torch/"] == 1
    assert requested["/files/torch-2.9.0-variants.json"] == 1
    assert [p for p, n in requested.items() if n > 1] == []


def test_a_class_is_a_declared_machine_and_its_python(tmp_path: Path) -> None:
    nodes = write_targets(
        tmp_path,
        "classes:\n"
        "  old: {platform: linux-64, cuda: '12.4', cuda_arch: '8.0', python: '3.11'}\n"
        "  new: {platform: linux-aarch64, cuda: '12.8', cuda_arch: '9.0'}\n",
    )
    environ = {"CONDA_OVERRIDE_CUDA": "11.2", "CONDA_OVERRIDE_GLIBC": "2.17"}
    found = node_targets(nodes, EnvironmentSpec(python="3.12", environ=environ))
    assert [node.name for node, _ in found] == ["old", "new"]
    (_, old), (_, new) = found
    # the class's own Python wins over --python, which is every other class's
    assert str(old.python.version) == "3.11"
    assert old.python.source is PythonSource.ENVIRONMENT
    assert str(new.python.version) == "3.12"
    assert new.env.platform == "linux-aarch64"
    # nothing of this machine, nor of its override variables
    assert old.env.cuda is not None
    assert old.env.cuda.version == "12.4"
    assert old.env.glibc is not None
    assert old.env.glibc.version == "2.28"  # pixi's default, not the 2.17 override


@pytest.mark.parametrize(
    ("spec", "option"),
    [
        (EnvironmentSpec(prefix=Path("/opt/env")), "--prefix"),
        (EnvironmentSpec(lockfile=Path("pixi.lock")), "--lockfile"),
        (EnvironmentSpec(environment="cuda"), "--environment"),
        (EnvironmentSpec(platform="linux-64"), "--platform"),
        (EnvironmentSpec(targets=("cuda=12.8",)), "--target"),
    ],
)
def test_targets_exclude_the_options_of_one_environment(
    tmp_path: Path, spec: EnvironmentSpec, option: str
) -> None:
    nodes = write_targets(tmp_path)
    with pytest.raises(ConflictingOptions) as info, open_classes(nodes, environment=spec):
        pass
    assert info.value.kind is Misuse.TARGETS_AND_ENVIRONMENT
    assert str(info.value).endswith(f"cannot be combined with {option}")


def test_a_class_without_a_python_is_named(tmp_path: Path) -> None:
    nodes = write_targets(tmp_path, "classes:\n  h100: {platform: linux-64, cuda: '12.8'}\n")
    with pytest.raises(InvalidTarget, match=r"nodes.yaml: class 'h100': no target Python"):
        node_targets(nodes)
    # solve's targets take the Python from the solve: none needed
    ((_, target),) = node_targets(nodes, EnvironmentSpec(interpreter=False))
    assert target.env.cuda is not None


def test_an_error_of_one_class_names_it() -> None:
    with pytest.raises(SelectionError) as info, for_class("nodes.yaml", "mi300"):
        raise SelectionError("no version of 'torch' matches ==9")
    assert str(info.value) == "nodes.yaml: class 'mi300': no version of 'torch' matches ==9"
    with pytest.raises(ConflictingOptions) as conflict, for_class("nodes.yaml", "mi300"):
        raise ConflictingOptions(Misuse.NO_SOURCE, "no source")
    assert conflict.value.kind is Misuse.NO_SOURCE


def test_no_source_is_a_usage_error(tmp_path: Path) -> None:
    nodes = write_targets(tmp_path)
    with open_classes(nodes, None, PY312) as classes, pytest.raises(ConflictingOptions):
        select_classes(parse_requests(["torch"]), classes)
