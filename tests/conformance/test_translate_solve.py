"""The emitted specs mean what the translator claims: rattler parses, matches and solves them."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.worlds.channel import Channel, x86_64_names_at_level
from variant_bridge.environment import Environment, Source, Toolkit, VirtualPackage
from variant_bridge.properties import VariantProperty
from variant_bridge.translate import supported_properties, to_conda_specs

rattler = pytest.importorskip("rattler")
from rattler.exceptions import SolverError  # noqa: E402
from rattler.package import BuildString  # noqa: E402


def P(text: str) -> VariantProperty:  # noqa: N802 - reads like a literal
    return VariantProperty.parse(text)


def record(name: str, version: str, build: str = "0") -> Any:
    """A virtual package as a record: MatchSpec.matches() takes records only (conda.md §4.2)."""
    return rattler.PackageRecord(name, version, BuildString(build), 0, "linux-64")


@functools.cache
def spec(text: str) -> Any:
    return rattler.MatchSpec(text)


def matches(specs: tuple[str, ...], rec: Any) -> bool:
    return all(spec(s).matches(rec) for s in specs)


def _archspec_names(family: str) -> list[str]:
    import archspec.cpu

    return sorted(n for n, t in archspec.cpu.TARGETS.items() if t.family.name == family)


# Every kind of property the translator maps, and several values OR-ed or AND-ed.
CORPUS = [
    ["nvidia :: cuda_version_lower_bound :: 12.8"],
    ["nvidia :: cuda_version_lower_bound :: 12"],
    ["nvidia :: cuda_version_upper_bound :: 13"],
    [
        "nvidia :: sm_arch :: 90_real",
        "nvidia :: sm_arch :: 80_real",
        "nvidia :: sm_arch :: 90_virtual",
    ],
    ["nvidia :: sm_arch :: 120_real", "nvidia :: sm_arch :: 100_virtual"],
    ["x86_64 :: level :: v1"],
    ["x86_64 :: level :: v4", "x86_64 :: avx512_bf16 :: on"],
    ["x86_64 :: sha_ni :: on", "x86_64 :: vaes :: on"],
    ["aarch64 :: version :: 8.2a", "aarch64 :: sve :: on"],
    ["aarch64 :: version :: 9.0a"],
    ["abi_dependency :: torch :: 2.9", "abi_dependency :: torch :: 2.8.1"],
    ["abi_dependency :: cupy_cuda13x :: 13", "abi_dependency :: jax_cuda12_pjrt :: 0.7"],
]


@pytest.mark.parametrize("properties", CORPUS, ids=lambda ps: ps[0])
def test_every_emitted_spec_parses_with_rattler(properties: list[str]) -> None:
    translation = to_conda_specs(P(p) for p in properties)
    assert translation.specs
    assert translation.unmapped == ()
    for text in translation.specs:
        assert rattler.MatchSpec(text, strict=True).name is not None, text


# Values of the property grammar ([a-z0-9_.]+) biased towards numbers: huge, dotted, Unicode-free
# by construction, so the translator's own checks (not the parser's) are what is tested.
_DIGITS = st.one_of(
    st.integers(0, 30).map(str),  # the tables' ranges and just past them
    st.integers(0, 10**30).map(str),  # past 64 bits, where rattler stops parsing
    st.sampled_from(["00", "012", "1" + "0" * 5000]),  # non-canonical; past Python's int() limit
)
_VALUES = st.one_of(
    st.from_regex(r"[a-z0-9_.]{1,40}", fullmatch=True),
    st.lists(_DIGITS, min_size=1, max_size=4).map(".".join),
    st.tuples(_DIGITS, st.sampled_from(["_real", "_virtual", "_a"])).map("".join),
    st.sampled_from(["v1", "v3", "v4", "v5", "8a", "8.2a", "9.0a", "9.2a", "on", "off"]),
)
_FEATURES = {
    "nvidia": ["cuda_version_lower_bound", "cuda_version_upper_bound", "sm_arch", "driver"],
    "x86_64": ["level", "avx2", "avx512f", "xop", "warp_drive"],
    "aarch64": ["version", "sve", "sha3", "warp_drive"],
    "abi_dependency": ["torch", "cupy_cuda12x", "jax_cuda13_plugin", "numpy"],
}
_PROPERTIES = st.sampled_from(sorted(_FEATURES)).flatmap(
    lambda ns: st.builds(VariantProperty, st.just(ns), st.sampled_from(_FEATURES[ns]), _VALUES)
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PROPERTIES, min_size=1, max_size=4))
def test_any_valid_property_translates_to_parseable_specs_or_a_reason(
    properties: list[VariantProperty],
) -> None:
    # `nvidia :: cuda_version_lower_bound :: 1<100000 digits>` raised ValueError (int limit), and
    # `… :: 99999999999999999999.1` emitted a spec rattler rejects (issue 2: every one parses).
    translation = to_conda_specs(properties)
    for text in translation.specs:
        assert rattler.MatchSpec(text, strict=True).name is not None, text
    mapped = {p for p, _ in translation.by_property}
    unmapped = {p for p, _ in translation.unmapped}
    assert mapped | unmapped == set(properties)  # nothing dropped silently
    assert all(reason for _, reason in translation.unmapped)


def test_lower_bound_12_8_needs_a_new_enough_driver(cuda_channel: Channel) -> None:
    specs = to_conda_specs([P("nvidia :: cuda_version_lower_bound :: 12.8")]).specs
    with pytest.raises(SolverError):
        cuda_channel.solve([*specs, "libcublas"], ["__cuda=12.6", "__glibc=2.28"])
    solved = {
        r.name.normalized: str(r.version)
        for r in cuda_channel.solve([*specs, "libcublas"], ["__cuda=12.9", "__glibc=2.28"])
    }
    assert solved["cuda-version"] in ("12.8", "12.9")
    assert solved["libcublas"].startswith(solved["cuda-version"] + ".")


def test_lower_bound_rejects_an_older_pinned_toolkit(cuda_channel: Channel) -> None:
    """The toolkit policy in solver terms: a 12.8 wheel cannot join a cuda-version 12.6 prefix."""
    specs = to_conda_specs([P("nvidia :: cuda_version_lower_bound :: 12.8")]).specs
    with pytest.raises(SolverError):
        cuda_channel.solve([*specs, "cuda-version=12.6"], ["__cuda=12.9"])
    with pytest.raises(SolverError):  # another major
        cuda_channel.solve([*specs, "cuda-version=13.0"], ["__cuda=13.0"])


def test_upper_bound_picks_an_older_toolkit(cuda_channel: Channel) -> None:
    specs = to_conda_specs([P("nvidia :: cuda_version_upper_bound :: 12.9")]).specs
    solved = {r.name.normalized: str(r.version) for r in cuda_channel.solve(specs, ["__cuda=12.8"])}
    assert solved["cuda-version"] == "12.8"
    with pytest.raises(SolverError):
        cuda_channel.solve(specs, ["__cuda=12.9"])


@pytest.mark.parametrize(
    ("cuda_arch", "ok"),
    [
        ("8.0", True),  # lowest of 80_real
        ("8.6", True),  # same generation runs 80 SASS
        ("9.0", True),  # 90_real
        ("7.5", False),  # too old for both
        ("10.0", False),  # SASS does not cross generations
    ],
)
def test_sm_arch_specs_against_cuda_arch(cuda_channel: Channel, cuda_arch: str, ok: bool) -> None:
    specs = to_conda_specs(
        [P("nvidia :: sm_arch :: 80_real"), P("nvidia :: sm_arch :: 90_real")]
    ).specs
    assert specs == ("__cuda_arch >=8.0,<9|>=9.0,<10",)
    assert spec(specs[0]).matches(record("__cuda_arch", cuda_arch)) is ok
    vps = ["__cuda=12.8", f"__cuda_arch={cuda_arch}"]
    if ok:
        assert cuda_channel.solve(list(specs), vps) == []
    else:
        with pytest.raises(SolverError):
            cuda_channel.solve(list(specs), vps)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("haswell", True),  # v3
        ("x86_64_v3", True),  # generic v3 (unknown CPUs)
        ("icelake", True),  # v4 includes v3
        ("nehalem", False),  # v2
        ("x86_64", False),  # baseline
    ],
)
def test_x86_level_v3_regex_and_enumerated_forms(
    cuda_channel: Channel, name: str, ok: bool
) -> None:
    translation = to_conda_specs([P("x86_64 :: level :: v3")])
    ((regex,),) = translation.for_tool("rattler")
    (alternatives,) = translation.for_tool("conda")
    host = record("__archspec", "1", name)
    assert spec(regex).matches(host) is ok
    assert any(spec(a).matches(host) for a in alternatives) is ok  # conda: any alternative
    assert sum(spec(a).matches(host) for a in alternatives) == int(ok)
    vps = [f"__archspec=1={name}"]
    if ok:
        assert cuda_channel.solve([regex], vps) == []
        solved = cuda_channel.solve([regex, "_x86_64-microarch-level >=3"], vps)
        assert [r.name.normalized for r in solved] == ["_x86_64-microarch-level"]
    else:
        with pytest.raises(SolverError):
            cuda_channel.solve([regex], vps)


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_x86_level_regex_agrees_with_the_microarch_level_packages(level: int) -> None:
    (regex,) = (
        c.spec
        for c in to_conda_specs([P(f"x86_64 :: level :: v{level}")]).conda_specs
        if c.form == "rattler"
    )
    feedstock = "|".join(x86_64_names_at_level(level))  # what the channel's packages depend on
    theirs = spec(f"__archspec[version='1.*', build='^({feedstock})$']")
    for name in _archspec_names("x86_64"):
        host = record("__archspec", "1", name)
        assert spec(regex).matches(host) == theirs.matches(host), name


# ------------------------------------------------------------------------------------------
# Forward and reverse agree: a property is supported exactly when its specs match the env
# ------------------------------------------------------------------------------------------

ALL_CUDA_VALUES = [f"{ma}.{mi}" for ma in range(15, 10, -1) for mi in range(20, -1, -1)] + [
    str(ma) for ma in range(15, 10, -1)
]


@pytest.mark.parametrize("toolkit", [None, "12.6", "12.9", "13.0"])
@pytest.mark.parametrize("driver", ["11.8", "12.0", "12.6", "12.8", "12.9", "13.0", "13.1"])
def test_cuda_bounds_forward_equals_reverse(driver: str, toolkit: str | None) -> None:
    env = Environment(
        "linux-64",
        (VirtualPackage("__cuda", driver),),
        toolkit=Toolkit("cuda-version", toolkit, Source.PREFIX) if toolkit else None,
    )
    supported = supported_properties(env)  # toolkit policy whenever there is a toolkit
    d = record("__cuda", driver)
    t = record("cuda-version", toolkit) if toolkit else None
    for feature in ("cuda_version_lower_bound", "cuda_version_upper_bound"):
        for value in ALL_CUDA_VALUES:
            prop = VariantProperty("nvidia", feature, value)
            ((_, specs),) = to_conda_specs([prop]).by_property
            driver_spec, toolkit_spec = (c.spec for c in specs)
            expected = spec(driver_spec).matches(d) and (t is None or spec(toolkit_spec).matches(t))
            assert supported.supports(prop) == expected, (prop, driver, toolkit)


@pytest.mark.parametrize(
    "cuda_arch", ["5.0", "6.1", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]
)
def test_sm_arch_forward_equals_reverse(cuda_arch: str) -> None:
    env = Environment(
        "linux-64", (VirtualPackage("__cuda", "12.8"), VirtualPackage("__cuda_arch", cuda_arch))
    )
    supported = supported_properties(env)
    a = record("__cuda_arch", cuda_arch)
    for major in range(5, 13):
        for minor in range(10):
            real = VariantProperty("nvidia", "sm_arch", f"{major}{minor}_real")
            assert supported.supports(real) == matches(to_conda_specs([real]).specs, a), real
            virtual = VariantProperty("nvidia", "sm_arch", f"{major}{minor}_virtual")
            if supported.supports(virtual):  # the provider offers less PTX than conda accepts
                assert matches(to_conda_specs([virtual]).specs, a), virtual


@pytest.mark.parametrize(
    ("platform", "family"), [("linux-64", "x86_64"), ("linux-aarch64", "aarch64")]
)
def test_cpu_forward_equals_reverse(platform: str, family: str) -> None:
    names = _archspec_names(family)
    envs = {n: Environment(platform, (VirtualPackage("__archspec", "1", n),)) for n in names}
    supported = {n: supported_properties(e) for n, e in envs.items()}
    props = {
        VariantProperty(family, f.feature, v)
        for s in supported.values()
        for f in s.features
        if f.namespace == family
        for v in f.values
    }
    assert len(props) > 20
    for prop in sorted(props):
        ((regex,),) = to_conda_specs([prop]).for_tool("rattler")
        for name in names:
            host = record("__archspec", "1", name)
            assert supported[name].supports(prop) == spec(regex).matches(host), (prop, name)
