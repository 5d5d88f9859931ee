"""amd, intel and several GPUs in the translator (semantics.md §3a-3c), on the real torch file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rattler import Version, VersionSpec

from variant_bridge.environment import (
    CondaRecord,
    DeclaredFeature,
    Environment,
    Source,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.gfx_archs import gfx_name, isa_of, isa_text, parse_isa
from variant_bridge.metadata import parse_variant_metadata
from variant_bridge.properties import VariantProperty
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate import explain_unsupported, supported_properties, to_conda_specs

TORCH = "real/variants-index-test/v0.0.3/torch/torch-2.9.0-variants.json"
TARGET = Source.TARGET
PROVIDER_ROCM = ["7.10", "7.9", "7.8", "7.7", "7.6", "7.5", "7.4", "7.3", "7.2", "7.1", "7.0"]
PROVIDER_ROCM += ["6.4", "6.3"]


def P(text: str) -> VariantProperty:  # noqa: N802 - reads like a literal
    return VariantProperty.parse(text)


def amd_env(
    *isas: str,
    rocm: Toolkit | None = None,
    source: Source = TARGET,
    conda: tuple[CondaRecord, ...] = (),
    extra: tuple[VirtualPackage, ...] = (),
) -> Environment:
    vps = [VirtualPackage("__amdgpu", "0", "0", source), *extra]
    if isas:
        vps.append(VirtualPackage("__amdgpu_arch", isas[0], "0", source))
    gpus = (
        tuple(VirtualPackage("__amdgpu_arch", i, "0", source) for i in isas)
        if len(isas) > 1
        else ()
    )
    return Environment("linux-64", tuple(vps), rocm=rocm, gpus=gpus, conda_packages=conda)


# -- gfx names <-> ISAs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "isa"),
    [
        ("gfx90a", (9, 0, 10)),  # the hex stepping (landscape §0.5)
        ("gfx942", (9, 4, 2)),
        ("gfx1100", (11, 0, 0)),
        ("gfx1151", (11, 5, 1)),
        ("gfx90c", (9, 0, 12)),
        ("gfx950", (9, 5, 0)),
    ],
)
def test_gfx_names_and_isas_both_ways(name: str, isa: tuple[int, int, int]) -> None:
    assert isa_of(name) == isa
    assert gfx_name(isa) == name
    assert parse_isa(isa_text(isa)) == isa


def test_every_gfx_value_of_the_real_torch_metadata_round_trips(corpus: Path) -> None:
    torch = json.loads((corpus / TORCH).read_text())
    names = {n for v in torch["variants"].values() for n in v.get("amd", {}).get("gfx_arch", [])}
    assert len(names) == 11
    for name in names:
        isa = isa_of(name)
        assert isa is not None, name
        assert gfx_name(isa) == name
        (spec,) = to_conda_specs([P(f"amd :: gfx_arch :: {name}")]).specs
        assert spec == f"__amdgpu_arch =={isa_text(isa)}"


@pytest.mark.parametrize(
    "text", ["gfx", "gfx9", "gfx09aa", "gfxzzz", "gfx90A", "sm90", "gfx1000aa", "9.4.2"]
)
def test_not_gfx_names(text: str) -> None:
    assert isa_of(text) is None


@pytest.mark.parametrize("isa", [(9, 0, 16), (9, 16, 0), (0, 1, 1)])
def test_isas_no_gfx_name_can_say(isa: tuple[int, int, int]) -> None:
    assert gfx_name(isa) is None


# -- forward -------------------------------------------------------------------------------------


def test_one_gpu_and_a_prefix_runtime_give_the_providers_shape() -> None:
    rocm = Toolkit("rocm-core", "6.4.3", Source.PREFIX)
    supported = supported_properties(amd_env("9.4.2", rocm=rocm))
    assert supported.as_dict()["amd"] == {"gfx_arch": ["gfx942"], "rocm_version": ["6.4"]}
    assert supported.feature("amd", "rocm_version").source == "rocm-core=6.4.3 (conda-meta)"  # type: ignore[union-attr]


def test_no_runtime_offers_every_version_the_provider_knows_with_a_note() -> None:
    supported = supported_properties(amd_env("9.0.10"))
    assert supported.values("amd", "rocm_version") == tuple(PROVIDER_ROCM)
    assert any("The AMD provider would list none" in n for n in supported.notes)


def test_no_amdgpu_makes_the_namespace_unsupported() -> None:
    supported = supported_properties(Environment("linux-64"))
    assert supported.unsupported_reason("amd") == (
        "no __amdgpu: no AMD GPU (or CONDA_OVERRIDE_AMDGPU is empty)"
    )


def test_an_isa_without_a_gfx_name_supports_no_gfx_arch() -> None:
    supported = supported_properties(amd_env("9.0.16"))
    assert supported.values("amd", "gfx_arch") == ()
    assert any("has no gfx name" in n for n in supported.notes)


def test_a_detected_gpu_says_which_gpu_decides() -> None:
    supported = supported_properties(amd_env("9.4.2", source=Source.DETECTED))
    assert any(
        "MOST COMPUTE UNITS" in n and "AMD provider lists every GPU" in n for n in supported.notes
    )


def test_several_detected_amd_gpus_name_what_the_provider_would_accept_too() -> None:
    env = amd_env("9.4.2", "9.0.10", source=Source.DETECTED)
    supported = supported_properties(env)
    assert supported.values("amd", "gfx_arch") == ("gfx942", "gfx90a")
    (note,) = [n for n in supported.notes if n.startswith("gfx_arch follows")]
    assert "wheels built only for gfx90a" in note
    assert "--target amdgpu_arch=gfx942,gfx90a" in note
    assert supported.every_gpu == ()  # detected: conda's rule, no every-GPU requirement


@pytest.mark.parametrize(
    ("prop", "reason"),
    [
        (
            "amd :: gfx_arch :: gfx90a",
            "built for gfx90a (9.0.10) but __amdgpu_arch is 9.4.2 (gfx942)",
        ),
        (
            "amd :: rocm_version :: 6.3",
            "built for ROCm 6.3 but the prefix's ROCm runtime is rocm-core 6.4.3 (conda-meta)",
        ),
        ("amd :: gfx_arch :: gfxzz1", "'gfxzz1' is not an AMD GPU name like 'gfx942'"),
        ("amd :: rocm_version :: 6", "'6' is not a ROCm version like '6.4' (major.minor)"),
        (
            "amd :: kmd_version :: 6",
            "amd has no feature 'kmd_version' (known: gfx_arch, rocm_version)",
        ),
    ],
)
def test_explain_amd(prop: str, reason: str) -> None:
    supported = supported_properties(
        amd_env("9.4.2", rocm=Toolkit("rocm-core", "6.4.3", Source.PREFIX))
    )
    assert (explain_unsupported(P(prop), supported) or "").startswith(reason)


# -- reverse -------------------------------------------------------------------------------------


def test_gfx_values_are_or_ed_and_the_runtime_pins_rocm_core() -> None:
    translation = to_conda_specs(
        [
            P("amd :: gfx_arch :: gfx90a"),
            P("amd :: gfx_arch :: gfx942"),
            P("amd :: rocm_version :: 6.4"),
        ]
    )
    assert translation.specs == ("__amdgpu_arch ==9.0.10|==9.4.2", "rocm-core 6.4.*")


@pytest.mark.parametrize("isa", ["9.0.10", "9.4.2", "11.0.0", "10.3.0", "9.0.1", "9.4.20"])
def test_gfx_arch_forward_equals_reverse(corpus: Path, isa: str) -> None:
    """For every gfx value torch publishes: supported on a GPU iff its spec matches that GPU."""
    torch = json.loads((corpus / TORCH).read_text())
    supported = supported_properties(amd_env(isa))
    for name in torch["variants"]["rocm6.4"]["amd"]["gfx_arch"]:
        (spec,) = to_conda_specs([P(f"amd :: gfx_arch :: {name}")]).specs
        matches = VersionSpec(spec.split(" ", 1)[1]).matches(Version(isa))
        assert matches == supported.supports(P(f"amd :: gfx_arch :: {name}")), (name, isa)


# -- intel: no conda counterpart -----------------------------------------------------------------


def test_intel_is_taken_as_declared_and_says_so() -> None:
    env = Environment(
        "linux-64",
        declared_features=(DeclaredFeature("intel", "device_ip", ("20.1.0", "12.55.8"), TARGET),),
    )
    supported = supported_properties(env)
    assert supported.values("intel", "device_ip") == ("20.1.0", "12.55.8")
    assert supported.feature("intel", "device_ip").source == (  # type: ignore[union-attr]
        "--target; taken as given: no conda counterpart"
    )
    reason = explain_unsupported(P("intel :: device_ip :: 30.0.4"), supported)
    assert reason == (
        "needs Intel device IP 30.0.4, but the declared IPs are 20.1.0, 12.55.8 (taken as given: "
        "no conda counterpart)"
    )


def test_intel_undeclared_is_unsupported_with_the_ways_to_declare_it() -> None:
    supported = supported_properties(Environment("linux-64"))
    reason = supported.unsupported_reason("intel") or ""
    assert reason.startswith("intel :: device_ip has no conda counterpart")
    assert "--target device_ip=" in reason
    assert "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP" in reason


# -- several GPUs, on the real torch file ----------------------------------------------------------


def _ranked(corpus: Path, env: Environment) -> dict[str, tuple[int | None, str]]:
    metadata = parse_variant_metadata(json.loads((corpus / TORCH).read_text()), source=TORCH)
    supported = supported_properties(env)
    ranker = VariantRanker(
        supported, Priorities.of(metadata), explain=lambda p: explain_unsupported(p, supported)
    )
    return {r.label: (r.rank, r.reason) for r in ranker.rank(metadata.variants)}


def nvidia_env(*archs: str) -> Environment:
    vps = (
        VirtualPackage("__cuda", "12.8", "0", TARGET),
        VirtualPackage("__cuda_arch", min(archs), "0", TARGET),
    )
    gpus = (
        tuple(VirtualPackage("__cuda_arch", a, "0", TARGET) for a in archs)
        if len(archs) > 1
        else ()
    )
    return Environment("linux-64", vps, gpus=gpus)


def test_one_sm_60_gpu_takes_cuda126(corpus: Path) -> None:
    ranked = _ranked(corpus, nvidia_env("6.0"))
    assert ranked["cuda12.6"][0] == 1


def test_every_gpu_must_have_code(corpus: Path) -> None:
    """A 6.0 and a 12.0 GPU: cuda12.6 lists 60_real but nothing for 12.0, cuda12.8 the reverse:
    neither runs on both, so the null variant wins (conda's minimum alone would take cuda12.6)."""
    ranked = _ranked(corpus, nvidia_env("6.0", "12.0"))
    assert ranked["null"][0] == 1
    assert ranked["cuda12.6"][0] is None
    assert "has no code for __cuda_arch=12.0" in ranked["cuda12.6"][1]
    assert "--target cuda_arch=12.0,6.0 asks that every GPU runs it" in ranked["cuda12.6"][1]


def test_every_gpu_with_code_for_both(corpus: Path) -> None:
    ranked = _ranked(corpus, nvidia_env("8.0", "9.0"))
    assert {label for label, (rank, _) in ranked.items() if rank is not None} == {
        "cuda12.6",
        "cuda12.8",
        "null",
    }


def test_amd_gfx942_picks_a_rocm_build_with_the_reason(corpus: Path) -> None:
    ranked = _ranked(corpus, amd_env("9.4.2"))
    assert ranked["rocm6.4"][0] == 1
    assert "amd :: gfx_arch :: gfx942 (most preferred value)" in ranked["rocm6.4"][1]
    assert ranked["rocm6.3"][0] == 2


def test_amd_unlisted_gpu_falls_back_to_null(corpus: Path) -> None:
    ranked = _ranked(corpus, amd_env("11.5.1"))
    assert ranked["null"][0] == 1
    assert (
        "built for gfx1030 (10.3.0) but __amdgpu_arch is 11.5.1 (gfx1151)" in ranked["rocm6.4"][1]
    )


def test_amd_every_gpu(corpus: Path) -> None:
    assert _ranked(corpus, amd_env("9.4.2", "9.0.10"))["rocm6.4"][0] == 1
    ranked = _ranked(corpus, amd_env("9.4.2", "11.5.1"))
    assert ranked["rocm6.4"][0] is None
    assert "has no code for gfx1151 (11.5.1)" in ranked["rocm6.4"][1]


def test_a_runtime_in_the_environment_picks_its_build(corpus: Path) -> None:
    ranked = _ranked(corpus, amd_env("9.4.2", rocm=Toolkit("rocm-core", "6.3.4", Source.PREFIX)))
    assert ranked["rocm6.3"][0] == 1
    assert ranked["rocm6.4"][0] is None


def test_from_conda_reads_the_rocm_runtime() -> None:
    from variant_bridge.translate import read_conda_specs

    facts = read_conda_specs(
        ["__amdgpu=0", "__amdgpu_arch=9.0.10", "rocm-core=6.3.4"], platform="linux-64"
    )
    assert facts.ignored == ()
    supported = supported_properties(facts.environment).as_dict()["amd"]
    assert supported == {"gfx_arch": ["gfx90a"], "rocm_version": ["6.3"]}


def test_conda_build_numbers_rank_the_rocm_builds_as_select(corpus: Path) -> None:
    """The index's priority plan (build numbers) now sees AMD machines: on an AMD GPU without a
    declared runtime, rocm6.4 outranks rocm6.3, as select ranks them."""
    from variant_bridge.priority import plan_priority

    metadata = parse_variant_metadata(json.loads((corpus / TORCH).read_text()), source=TORCH)
    rocm = [v for v in metadata.variants if v.label.startswith("rocm")]
    plan = plan_priority(rocm, Priorities.of(metadata), platform="linux-64")
    base = {p.label: p.position for p in plan.placements if p.cell is None}
    assert base["rocm6.4"] > base["rocm6.3"]
    assert plan.conflicts == ()


def test_rocm_builds_get_no_cuda_arch_cells(corpus: Path) -> None:
    """Planned with the CUDA builds (the whole real torch file), the ROCm builds rank below
    every CUDA build in each ``__cuda_arch`` cell (torch's namespaces put nvidia first): they get
    one base record each, never a record per NVIDIA GPU interval (``rocm6.4_sm50_70``)."""
    from variant_bridge.priority import plan_priority

    metadata = parse_variant_metadata(json.loads((corpus / TORCH).read_text()), source=TORCH)
    mapped = [v for v in metadata.variants if v.label != "xpu"]  # intel maps to nothing
    plan = plan_priority(mapped, Priorities.of(metadata), platform="linux-64")
    rocm = [p for p in plan.placements if p.label.startswith("rocm")]
    assert sorted((p.label, p.cell) for p in rocm) == [("rocm6.3", None), ("rocm6.4", None)]
    assert plan.cells  # the CUDA builds still have theirs
    assert {p.label for p in plan.placements if p.cell is not None} == {
        "cuda12.6",
        "cuda12.8",
        "cuda13.0",
    }
    assert plan.conflicts == ()
