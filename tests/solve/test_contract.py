"""The contract of issue 11: on a grid of machines, the wheel a conda solve picks from ``index``'s
records is the wheel ``select`` picks for the same environment and toolkit.

Real parts: wheels with real METADATA (the real torch 2.9 and 2.10 variant metadata with the
torch 2.10 ``Requires-Dist`` pins), a local channel of conda-forge-shaped ``cuda-version``
packages, py-rattler's solve over ``v3.whl`` records, and the ``select`` job itself.

Grid: ``__cuda`` in {12.0, 12.4, 12.6, 12.8, 12.9, 13.0, none} x ``__cuda_arch`` in {none, 5.0,
7.5, 8.0, 8.6, 9.0, 10.0, 12.0} x ``cuda-version`` pin in {none, and every CUDA minor of the
driver's major the channel has}: 264 environments. ``select`` is asked with the toolkit the
solve chose (or none, when the solve chose none), so the comparison is "same environment, same
toolkit".
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.worlds.channel import CUDA_VERSIONS, Channel, Pkg
from tests.worlds.torch_index import build_torch_index, declared_lines
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.environment import Environment, Source, Toolkit, VirtualPackage
from variant_bridge.indexes import Downloads, FindLinks
from variant_bridge.indexes.transport import Transport
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.index import IndexReport, IndexRequest, index_wheels
from variant_bridge.jobs.select import parse_requests, select
from variant_bridge.jobs.specs import FetchSpec
from variant_bridge.jobs.target import Target
from variant_bridge.platform_tags import TargetPython
from variant_bridge.priority import Encoding
from variant_bridge.solve.solver import solve_specs
from variant_bridge.translate import supported_properties

DRIVERS = ("12.0", "12.4", "12.6", "12.8", "12.9", "13.0", None)
GPUS = (None, "5.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0")
PY = TargetPython.parse("3.12.7")
BASE = (
    VirtualPackage("__unix", "0"),
    VirtualPackage("__linux", "6.1"),
    VirtualPackage("__glibc", "2.36"),
)
TORCH_210 = "maint/variant-repack/torch-2.10.0-variants.json"


def grid() -> Iterator[tuple[str | None, str | None, str | None]]:
    for driver in DRIVERS:
        major = driver.split(".")[0] if driver else None
        pins = [None] + [v for v in CUDA_VERSIONS if major and v.split(".")[0] == major]
        for gpu in GPUS:
            for pin in pins:
                yield driver, gpu, pin


def machine(driver: str | None, gpu: str | None, amd: str | None = None) -> list[VirtualPackage]:
    vps = list(BASE)
    if amd is not None:
        vps.append(VirtualPackage("__amdgpu", "0", source=Source.FROM_CONDA))
        vps.append(VirtualPackage("__amdgpu_arch", amd, source=Source.FROM_CONDA))
    if driver is not None:
        vps.append(VirtualPackage("__cuda", driver, source=Source.FROM_CONDA))
        if gpu is not None:
            vps.append(VirtualPackage("__cuda_arch", gpu, source=Source.FROM_CONDA))
    return vps


def build_torch_210(corpus: Path, root: Path) -> Path:
    """The torch 2.10 variants (real metadata) with the torch 2.10 declaration's pins."""
    document = json.loads((corpus / TORCH_210).read_text())
    lines = declared_lines(corpus)
    (root / "torch-2.10.0-variants.json").parent.mkdir(parents=True, exist_ok=True)
    (root / "torch-2.10.0-variants.json").write_text((corpus / TORCH_210).read_text())
    for label in document["variants"]:
        one = {**document, "variants": {label: document["variants"][label]}}
        make_wheel(root, "torch", "2.10.0", label=label, requires=lines,
                   variant_json=json.dumps(one))  # fmt: skip
    return root


def build_vbdemo(root: Path) -> Path:
    """The scouting's vbdemo: precise lower bounds, CUDA 12.6/12.8/12.9 arch lists, null."""
    sm = ["80_real", "86_real", "90_real"]
    make_release(
        root, "vbdemo", "1.0.0",
        {
            "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6", *(f"nvidia :: sm_arch :: {v}" for v in sm)],
            "cu128": ["nvidia :: cuda_version_lower_bound :: 12.8", *(f"nvidia :: sm_arch :: {v}" for v in [*sm, "100_real", "120_real"])],
            "cu129": ["nvidia :: cuda_version_lower_bound :: 12.9", *(f"nvidia :: sm_arch :: {v}" for v in ["90_real", "100_real", "120_real"])],
            "null": [],
        },
        namespace_priorities=["nvidia"], non_variant=False,
    )  # fmt: skip
    return root


def build_conflict(root: Path) -> Path:
    """Two SM lists whose order depends on the GPU: PEP 825 prefers b on 8.6, a on 9.0."""
    make_release(
        root, "archpair", "1.0",
        {
            "a": ["nvidia :: cuda_version_lower_bound :: 12.0", "nvidia :: sm_arch :: 80_real", "nvidia :: sm_arch :: 90_real"],
            "b": ["nvidia :: cuda_version_lower_bound :: 12.0", "nvidia :: sm_arch :: 86_real", "nvidia :: sm_arch :: 90_real"],
            "null": [],
        },
        namespace_priorities=["nvidia"], non_variant=False,
    )  # fmt: skip
    return root


class World:
    """Wheels, their index (one channel per encoding) and the conda channel."""

    def __init__(
        self, wheels: Path, project: str, conda: Channel, root: Path, *extra: Channel
    ) -> None:
        self.wheels = wheels
        self.project = project
        self.conda = conda
        self.extra = extra
        self.reports: dict[Encoding, IndexReport] = {}
        self.selected: dict[tuple[str | None, ...], str | None] = {}  # select is the slow side
        for encoding in Encoding:
            channel = root / f"channel-{encoding.value}"
            sources = Sources((FindLinks.parse(wheels),))
            target = Target.of_platform("linux-64")
            with Context.open(sources, target, FetchSpec(no_cache=True)) as ctx:
                self.reports[encoding] = index_wheels(IndexRequest(channel, encoding=encoding), ctx)

    def solve(
        self, encoding: Encoding, driver: str | None, gpu: str | None, pin: str | None
    ) -> tuple[str | None, str | None]:
        """(chosen label or None for the plain/none, solved cuda-version or None)."""
        label, solved = self.solve_on(encoding, machine(driver, gpu), pin)
        return label, solved.get("cuda-version")

    def solve_on(
        self,
        encoding: Encoding,
        vps: list[VirtualPackage],
        pin: str | None,
        pinned: str = "cuda-version",
    ) -> tuple[str | None, dict[str, str]]:
        """The chosen label, and the solved cuda-version and rocm-core (name -> version)."""
        specs = [self.project] + ([f"{pinned} {pin}.*"] if pin else [])
        channels = [self.reports[encoding].channel, self.conda.path, *(c.path for c in self.extra)]
        solved = solve_specs(specs, channels, platform="linux-64", virtual_packages=vps)
        chosen = next(p for p in solved if p.name == self.project)
        kits = {p.name: p.version for p in solved if p.name in ("cuda-version", "rocm-core")}
        assert chosen.wheel is not None
        return chosen.wheel.label, kits

    def select(
        self,
        driver: str | None,
        gpu: str | None,
        toolkit: str | None,
        amd: str | None = None,
        rocm: str | None = None,
    ) -> str | None:
        key = (driver, gpu, toolkit, amd, rocm)
        if key not in self.selected:
            self.selected[key] = self._select(driver, gpu, toolkit, amd, rocm)
        return self.selected[key]

    def _select(
        self,
        driver: str | None,
        gpu: str | None,
        toolkit: str | None,
        amd: str | None,
        rocm: str | None,
    ) -> str | None:
        kit = Toolkit("cuda-version", toolkit, Source.FROM_CONDA) if toolkit else None
        runtime = Toolkit("rocm-core", rocm, Source.FROM_CONDA) if rocm else None
        env = Environment(
            "linux-64", tuple(machine(driver, gpu, amd)), kit, python=str(PY.version), rocm=runtime
        )
        target = Target(env, PY, supported_properties(env))
        with Downloads.temporary(transport=Transport()) as downloads:
            (choice,) = select(  # the project's own variant choice: its tree is not solved here
                parse_requests([self.project]),
                Context(Sources((FindLinks.parse(self.wheels),)), downloads, target),
                deps=False,
            )
        assert choice.selected is not None
        return choice.selected.label

    def disagreements(self, encoding: Encoding) -> list[str]:
        found = []
        for driver, gpu, pin in grid():
            label, toolkit = self.solve(encoding, driver, gpu, pin)
            expected = self.select(driver, gpu, toolkit)
            if label != expected:
                found.append(f"__cuda={driver} __cuda_arch={gpu} pin={pin}: solve {label} "
                             f"(cuda-version {toolkit}), select {expected}")  # fmt: skip
        return found


@pytest.fixture(scope="module")
def conda(cuda_channel: Channel) -> Channel:
    return cuda_channel


@pytest.fixture(scope="module")
def rocm(tmp_path_factory: pytest.TempPathFactory) -> Channel:
    """conda-forge's ROCm runtime package, in two releases."""
    path = tmp_path_factory.mktemp("rocm")
    return Channel(path).add([Pkg("rocm-core", "6.3.4", "h0_0"), Pkg("rocm-core", "6.4.1", "h0_0")])


@pytest.fixture(scope="module")
def torch29(
    corpus: Path, conda: Channel, rocm: Channel, tmp_path_factory: pytest.TempPathFactory
) -> World:
    root = tmp_path_factory.mktemp("torch29")
    return World(build_torch_index(corpus, root / "wheels"), "torch", conda, root, rocm)


@pytest.fixture(scope="module")
def torch210(corpus: Path, conda: Channel, tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("torch210")
    return World(build_torch_210(corpus, root / "wheels"), "torch", conda, root)


@pytest.fixture(scope="module")
def vbdemo(conda: Channel, tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("vbdemo")
    return World(build_vbdemo(root / "wheels"), "vbdemo", conda, root)


@pytest.fixture(scope="module")
def archpair(conda: Channel, tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("archpair")
    return World(build_conflict(root / "wheels"), "archpair", conda, root)


def test_the_grid_has_every_same_major_pin() -> None:
    envs = list(grid())
    assert len(envs) == 264
    assert ("12.9", "9.0", "13.0") not in envs  # a 13.0 toolkit cannot sit beside a 12.9 driver


@pytest.mark.slow
@pytest.mark.parametrize("world", ["torch29", "torch210", "vbdemo", "archpair"])
def test_solve_picks_what_select_picks_with_cells(
    world: str, request: pytest.FixtureRequest
) -> None:
    built: World = request.getfixturevalue(world)
    assert built.disagreements(Encoding.CELLS) == []


@pytest.mark.slow
@pytest.mark.parametrize("world", ["torch29", "torch210", "vbdemo"])
def test_one_build_number_per_label_is_enough_without_gpu_dependent_orders(
    world: str, request: pytest.FixtureRequest
) -> None:
    built: World = request.getfixturevalue(world)
    assert built.reports[Encoding.RANK].releases[0].conflicts == ()
    assert built.disagreements(Encoding.RANK) == []


@pytest.mark.slow
def test_rank_reports_the_order_it_cannot_express_and_cells_fixes_it(archpair: World) -> None:
    (release,) = archpair.reports[Encoding.RANK].releases
    assert [(c.first, c.second) for c in release.conflicts] == [("a", "b")]
    wrong = archpair.disagreements(Encoding.RANK)
    assert wrong, "one build number per label cannot agree on both 8.6 and 9.0 GPUs"
    assert all("__cuda_arch=8.6" in w or "__cuda_arch=9.0" in w for w in wrong)
    assert archpair.reports[Encoding.CELLS].releases[0].conflicts == ()


@pytest.mark.parametrize(
    ("pin", "label", "toolkit"),
    [("12.6", "cuda12.6", "12.6"), ("12.8", "cuda12.8", "12.8"), ("12.9", "cuda12.8", "12.9")],
)
def test_a_pinned_toolkit_takes_the_build_its_pins_allow(
    torch29: World, pin: str, label: str, toolkit: str
) -> None:
    # Both CUDA 12 builds declare lower bound 12.0: only the pinned components (the evidence)
    # keep cuda12.8 out of a cuda-version 12.6 environment.
    assert torch29.solve(Encoding.CELLS, "12.9", "9.0", pin) == (label, toolkit)


def test_an_unpinned_driver_gets_the_newest_build_it_runs_and_its_toolkit(vbdemo: World) -> None:
    assert vbdemo.solve(Encoding.CELLS, "12.9", "9.0", None) == ("cu129", "12.9")
    assert vbdemo.solve(Encoding.CELLS, "12.8", "8.6", None) == ("cu128", "12.9")
    assert vbdemo.solve(Encoding.CELLS, "12.9", "7.5", None) == ("null", None)


def test_unmapped_variants_are_reported_and_never_chosen(torch29: World) -> None:
    (release,) = [r for r in torch29.reports[Encoding.CELLS].releases if r.project == "torch"]
    assert [label for label, _ in release.unmapped] == ["xpu"]  # intel: no conda counterpart
    for record in release.records:
        if record.label == "xpu":
            assert "__variant_intel" in record.record["depends"]
        if record.label in ("rocm6.3", "rocm6.4"):  # amd is mapped (semantics.md §3a)
            assert f"rocm-core {record.label[4:]}.*" in record.record["depends"]
    # No GPU: the ROCm records need __amdgpu_arch, the CUDA ones __cuda.
    assert torch29.solve(Encoding.CELLS, None, None, None) == ("null", None)


AMD_GPUS = (None, "9.4.2", "9.0.10", "11.5.1")
"""No AMD GPU, an MI300 (gfx942), an MI250 (gfx90a), a gfx1151 no ROCm build has code for."""
NVIDIA_BESIDE = ((None, None), ("12.8", "9.0"), ("12.8", "5.0"))
"""The NVIDIA side of the same machine: none, an H100, a GPU only cuda12.6 runs on."""


@pytest.mark.slow
def test_amd_machines_get_the_rocm_build_select_picks(torch29: World) -> None:
    """AMD machines (with and without an NVIDIA GPU beside) x rocm-core pins: the solve's ROCm
    build is select's with the rocm-core the solve chose, and a ROCm record needs no NVIDIA
    GPU interval (issue 11's contract on the ``amd`` namespace)."""
    wrong = []
    for amd, (driver, gpu), pin in itertools.product(AMD_GPUS, NVIDIA_BESIDE, (None, "6.3", "6.4")):
        vps = machine(driver, gpu, amd)
        label, kits = torch29.solve_on(Encoding.CELLS, vps, pin, pinned="rocm-core")
        rocm = kits.get("rocm-core")
        expected = torch29.select(driver, gpu, kits.get("cuda-version"), amd, rocm)
        if label != expected:
            wrong.append(f"amd={amd} cuda={driver} cuda_arch={gpu} pin={pin}: solve {label} "
                         f"(rocm-core {rocm}), select {expected}")  # fmt: skip
    assert wrong == []
    assert torch29.solve_on(Encoding.CELLS, machine(None, None, "9.4.2"), None, "rocm-core") == (
        "rocm6.4",
        {"rocm-core": "6.4.1"},
    )
    (release,) = [r for r in torch29.reports[Encoding.CELLS].releases if r.project == "torch"]
    rocm_builds = sorted(
        r.record["build"] for r in release.records if r.label in ("rocm6.3", "rocm6.4")
    )
    assert rocm_builds == ["rocm6.3_2", "rocm6.4_3"]
