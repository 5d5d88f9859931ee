"""Acceptance (issue 8): select torch from a world shaped like the real torch variant index.

The world (``tests/worlds/torch_index.py``) is the real ``torch-2.9.0-variants.json`` and wheels
whose METADATA pins the CUDA components per variant exactly as the torch 2.10 declaration does;
it is served by the loopback index with PEP 658 metadata. GPU 9.0 throughout. Without the
evidence of the pins, ``cuda12.8`` would win in a ``cuda-version 12.6`` prefix: both CUDA 12 builds
declare the same lower bound 12.0.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jobs.conftest import choose
from tests.worlds.index_server import IndexServer
from tests.worlds.torch_index import build_torch_index, publish_components_as_variants
from variant_bridge.cli.select import choice_json
from variant_bridge.environment import Environment, Source, Toolkit, VirtualPackage
from variant_bridge.jobs.select import PackageChoice
from variant_bridge.platform_tags import TargetPython

PY = TargetPython.parse("3.12.7")
GPU = "9.0"


def environment(*, driver: str | None, toolkit: str | None) -> Environment:
    override = Source.override("CONDA_OVERRIDE_CUDA")
    vps = [VirtualPackage("__glibc", "2.36"), VirtualPackage("__unix", "0")]
    if driver is not None:
        vps += [
            VirtualPackage("__cuda", driver, source=override),
            VirtualPackage("__cuda_arch", GPU, source=Source.override("CONDA_OVERRIDE_CUDA_ARCH")),
        ]
    tk = Toolkit("cuda-version", toolkit, Source.PREFIX) if toolkit else None
    return Environment("linux-64", tuple(vps), tk, python="3.12.7")


@pytest.fixture(scope="module")
def torch_index(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_torch_index(corpus, tmp_path_factory.mktemp("torch-index"))


@pytest.fixture(scope="module")
def index(torch_index: Path) -> Iterator[IndexServer]:
    with IndexServer(torch_index, core_metadata=True) as server:
        yield server


def select_torch(index: IndexServer, *, driver: str | None, toolkit: str | None) -> PackageChoice:
    choice, *_ = choose(
        ["torch"], env=environment(driver=driver, toolkit=toolkit), python=PY,
        index_urls=[index.url],
    )  # fmt: skip
    return choice


@pytest.mark.parametrize(
    ("toolkit", "driver", "label"),
    [
        ("12.6", "12.9", "cuda12.6"),  # cuda12.8's pinned CUDA 12.8 libraries do not fit 12.6
        ("12.8", "12.9", "cuda12.8"),
        ("12.9", "12.9", "cuda12.8"),  # both CUDA 12 builds fit; the package prefers cuda12.8
        ("13.0", "13.0", "cuda13.0"),
        (None, "12.9", "cuda12.8"),  # no toolkit: the driver policy, as uv (tests/integration)
        (None, "13.0", "cuda13.0"),
    ],
)
def test_the_toolkit_decides_by_the_pins(
    index: IndexServer, toolkit: str | None, driver: str, label: str
) -> None:
    choice = select_torch(index, driver=driver, toolkit=toolkit)
    assert choice.selected is not None
    assert choice.selected.label == label


def test_the_refusal_names_the_evidence(index: IndexServer) -> None:
    choice = select_torch(index, driver="12.9", toolkit="12.6")
    reasons = {v.label: v.reason for v in choice.selection.verdicts}
    assert reasons["cuda12.8"] == (
        "variant cuda12.8: cuda12.8 pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8) "
        "but the prefix's toolkit is cuda-version 12.6"
    )
    assert "toolkit CUDA 12.6: pins nvidia-cublas 12.6.4.1" in reasons["cuda12.6"]
    assert reasons["cuda13.0"].startswith("variant cuda13.0: needs CUDA driver >= 13.0")


def test_select_json_exposes_the_evidence_per_candidate(index: IndexServer) -> None:
    data = choice_json(select_torch(index, driver="12.9", toolkit="12.6"))
    by_label = {c["label"]: c for c in data["candidates"]}
    cuda128 = by_label["cuda12.8"]["toolkit"]
    assert cuda128["cuda"] == "12.8"
    assert cuda128["refused"].startswith("cuda12.8 pins nvidia-cublas 12.8.4.1")
    assert cuda128["read_from"]["source"] == "PEP 658 metadata file"
    pins = {e["pypi"]: e for e in cuda128["evidence"] if e["kind"] == "pinned-component"}
    assert pins["nvidia-cuda-runtime"] == {
        "kind": "pinned-component", "cuda": "12.8", "text":
        "pins nvidia-cuda-runtime 12.8.90 (conda: cuda-cudart, CUDA 12.8)",
        "pypi": "nvidia-cuda-runtime", "version": "12.8.90", "conda": "cuda-cudart",
        "rule": pins["nvidia-cuda-runtime"]["rule"],
    }  # fmt: skip
    assert "NVIDIA numbers the CUDA runtime" in pins["nvidia-cuda-runtime"]["rule"]
    lower = [e for e in cuda128["evidence"] if e["kind"] == "lower-bound"]
    assert [e["text"] for e in lower] == ["declares cuda_version_lower_bound 12.0"]
    # Rejected by their properties: not read; the null variant has nothing to read.
    for label in ("cuda13.0", "xpu", "rocm6.3", "null"):
        assert by_label[label]["toolkit"] is None


def test_one_metadata_request_per_candidate_and_no_wheel_download(index: IndexServer) -> None:
    index.requests.clear()
    select_torch(index, driver="13.0", toolkit=None)  # three CUDA builds pass their properties
    files = [r.path for r in index.requests if r.path.startswith("/files/torch-")]
    assert sorted(files) == [
        *(
            f"/files/torch-2.9.0-py3-none-any-{label}.whl.metadata"
            for label in ("cuda12.6", "cuda12.8", "cuda13.0")
        ),
        "/files/torch-2.9.0-variants.json",
    ]


def test_without_pep658_the_pins_are_read_by_range_requests(index: IndexServer) -> None:
    with index.configured(core_metadata=False):
        index.requests.clear()
        choice = select_torch(index, driver="12.9", toolkit="12.6")
    assert choice.selected is not None
    assert choice.selected.label == "cuda12.6"
    wheel_requests = [r for r in index.requests if r.path.endswith(".whl")]
    torch_requests = [r for r in wheel_requests if r.path.startswith("/files/torch-")]
    assert len(torch_requests) == 2  # cuda12.6 and cuda12.8, one range request each
    # The chosen build's dependencies (its CUDA components) are read the same way.
    assert all(r.status == 206 and r.range for r in wheel_requests)
    assert not any(r.path.endswith(".metadata") for r in index.requests)  # never unadvertised


def test_an_unreadable_metadata_leaves_the_toolkit_unknown_and_the_rest_judged(
    index: IndexServer,
) -> None:
    wheel = "/files/torch-2.9.0-py3-none-any-cuda12.8.whl"
    with index.configured(status={f"{wheel}.metadata": 500}):  # the wheel is read instead
        fallback = select_torch(index, driver="12.9", toolkit="12.6")
    assert fallback.selected is not None
    assert fallback.selected.label == "cuda12.6"
    assert fallback.toolkits["cuda12.8"].metadata.source.value == "HTTP range requests"  # type: ignore[union-attr]
    with index.configured(status={f"{wheel}.metadata": 500, wheel: 500}):
        choice = select_torch(index, driver="12.9", toolkit="12.6")
    toolkit = choice.toolkits["cuda12.8"]
    assert toolkit.metadata is None
    assert "HTTP 500" in toolkit.problems[0]
    # Only its lower bound is left: a floor the prefix's 12.6 meets, so the package's preference
    # (priority order 2 before 3) decides, and the verdict says what was (not) read. cuda12.6
    # is still judged by its own pins.
    assert choice.selected is not None
    assert choice.selected.label == "cuda12.8"
    reasons = {v.label: v.reason for v in choice.selection.verdicts}
    assert (
        "toolkit CUDA 12.0 or newer: declares cuda_version_lower_bound 12.0" in reasons["cuda12.8"]
    )
    assert "HTTP 500" in reasons["cuda12.8"]
    assert "toolkit CUDA 12.6" in reasons["cuda12.6"]


def test_the_cuda_components_published_as_variants_are_bridged_too(
    corpus: Path, tmp_path: Path
) -> None:
    # As on the real index: nvidia-cublas 12.6.4.1 is published only as a `cu12` variant
    # (nvidia :: cuda_version_lower_bound :: 12.0, its real variants.json).
    world = build_torch_index(corpus, tmp_path / "index")
    assert "nvidia_cublas-12.6.4.1" in publish_components_as_variants(corpus, world)
    with IndexServer(world, core_metadata=True) as index:
        choices = choose(
            ["torch"], env=environment(driver="12.9", toolkit="12.6"), python=PY,
            index_urls=[index.url],
        )  # fmt: skip
    tree = {c.files.project: c for c in choices}
    torch = tree["torch"]
    assert torch.selected is not None
    assert torch.selected.label == "cuda12.6"
    cublas = tree["nvidia-cublas"]
    assert cublas.files.version == "12.6.4.1"  # the chosen torch build's pin
    assert cublas.selected is not None
    assert cublas.selected.name == "nvidia_cublas-12.6.4.1-py3-none-any-cu12.whl"
    assert cublas.chosen is not None
    assert "cuda_version_lower_bound :: 12.0" in cublas.chosen.reason  # the bridged verdict
    line = "nvidia-cublas==12.6.4.1; platform_system == 'Linux' and variant_label == 'cuda12.6'"
    assert [str(r) for r in cublas.required_by] == [f"torch 2.9.0 requires {line}"]
    # Without a driver, the same variant is refused with the bridged reason.
    with IndexServer(world, core_metadata=True) as index:
        pinned = choose(
            ["nvidia-cublas==12.6.4.1"], env=environment(driver=None, toolkit=None), python=PY,
            index_urls=[index.url],
        )  # fmt: skip
    assert pinned[0].failed
    assert "no __cuda" in pinned[0].failure()
