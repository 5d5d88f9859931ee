"""Our PEP 825 ranking orders compatible variants exactly as variantlib 0.2.2 does.

variantlib runs for real: ``variantlib.api.get_variants_by_priority`` on a variants.json whose
providers are either static (``static-properties`` + ``feature-order``, answered in process) or
install-time plugins (a plugin module written to a directory on ``PYTHONPATH``, loaded by
variantlib's own plugin loader in its subprocess). variantlib always appends the null variant; it is
dropped from its answer when our input has none.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from variantlib.api import get_variants_by_priority

from variant_bridge.metadata.model import Provider, StaticFeature
from variant_bridge.properties import NULL_LABEL, VariantDescription
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate.supported import SupportedProperties

NAMESPACES = ("nvidia", "x86_64", "aarch64", "blas")
FEATURES = ("f0", "f1", "f2", "f3")
VALUES = ("0", "1", "2", "10", "1.5", "a_b", "v3")
LABELS = st.from_regex(r"[0-9a-z._]{1,5}", fullmatch=True).filter(lambda label: label != NULL_LABEL)

Supported = dict[str, dict[str, list[str]]]
"""namespace -> feature -> values, each level in priority order."""


@dataclass(frozen=True)
class World:
    namespaces: list[str]
    """``default-priorities.namespace``: every provider, most preferred first."""
    supported: Supported
    variants: dict[str, dict[str, dict[str, list[str]]]]
    static_order: dict[str, list[str]]
    """The order features are written in ``static-properties`` (``feature-order`` overrides it)."""

    def descriptions(self) -> list[VariantDescription]:
        return [
            VariantDescription.from_dict(props, label) for label, props in self.variants.items()
        ]

    def ours(self, supported: SupportedProperties, static: Sequence[Provider] = ()) -> list[str]:
        priorities = Priorities(self.namespaces, static)
        ranked = VariantRanker(supported, priorities).rank(self.descriptions())
        return [r.label for r in ranked if r.compatible]

    def theirs(self, providers: Mapping[str, Mapping[str, Any]]) -> list[str]:
        document = {
            "default-priorities": {"namespace": self.namespaces},
            "providers": providers,
            "variants": self.variants,
        }
        labels = [d.label for d in get_variants_by_priority(variants_json=document)]
        return labels if NULL_LABEL in self.variants else [x for x in labels if x != NULL_LABEL]


@st.composite
def worlds(draw: st.DrawFn, *, empty_features: bool) -> World:
    namespaces = draw(st.lists(st.sampled_from(NAMESPACES), min_size=1, max_size=3, unique=True))
    supported: Supported = {}
    static_order: dict[str, list[str]] = {}
    for ns in namespaces:
        features = draw(
            st.lists(
                st.sampled_from(FEATURES),
                min_size=0 if empty_features else 1,
                max_size=3,
                unique=True,
            )
        )
        supported[ns] = {
            f: draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=5, unique=True))
            for f in features
        }
        static_order[ns] = draw(st.permutations(features))
    # Bias properties towards supported ones so that many variants are compatible.
    known = [(ns, f, v) for ns, fs in supported.items() for f, vs in fs.items() for v in vs]
    anything = st.tuples(
        st.sampled_from(namespaces), st.sampled_from(FEATURES), st.sampled_from(VALUES)
    )
    prop = st.one_of(*[st.sampled_from(known)] * 3, anything) if known else anything
    variants: dict[str, dict[str, dict[str, list[str]]]] = {}
    for label in draw(st.lists(LABELS, min_size=2, max_size=12, unique=True)):
        if variants and draw(st.integers(0, 4)) == 0:
            # Same properties under another label: only the label can break the tie.
            variants[label] = draw(st.sampled_from(list(variants.values())))
            continue
        as_dict: dict[str, dict[str, list[str]]] = {}
        for ns, f, v in sorted(draw(st.lists(prop, min_size=1, max_size=3, unique=True))):
            as_dict.setdefault(ns, {}).setdefault(f, []).append(v)
        variants[label] = as_dict
    if draw(st.booleans()):
        variants[NULL_LABEL] = {}
    return World(namespaces, supported, variants, static_order)


def static_providers(world: World) -> dict[str, dict[str, Any]]:
    return {
        ns: {
            "static-properties": {f: world.supported[ns][f] for f in world.static_order[ns]},
            "feature-order": list(world.supported[ns]),
        }
        for ns in world.namespaces
    }


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(world=worlds(empty_features=False))
def test_static_providers_rank_like_variantlib(world: World) -> None:
    theirs = world.theirs(static_providers(world))
    # The same facts fed to us two ways: as the package's static providers ...
    static = [
        Provider(
            ns, static_properties=tuple(StaticFeature(f, tuple(v)) for f, v in features.items())
        )
        for ns, features in world.supported.items()
    ]
    assert world.ours(supported=SupportedProperties(), static=static) == theirs
    # ... and as bridged supported properties.
    assert world.ours(supported=SupportedProperties.from_dict(world.supported)) == theirs


# --- install-time plugins, through variantlib's subprocess plugin loader ---------------------

_PLUGIN_MODULE = '''\
"""A variant provider plugin written by test_select_conformance: fixed supported configs."""

from dataclasses import dataclass


@dataclass(frozen=True)
class _Feature:
    name: str
    values: list
    multi_value: bool = True


def _plugin(configs):
    class Plugin:
        @classmethod
        def get_supported_configs(cls):
            return [_Feature(name, list(values)) for name, values in configs.items()]

        get_all_configs = get_supported_configs

    return Plugin


'''
_modules = itertools.count()


@pytest.fixture(scope="module", autouse=True)
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A directory on the PYTHONPATH that variantlib's plugin subprocess inherits; no developer's
    variants.toml (current directory, user or site config) can reorder anything."""
    path = tmp_path_factory.mktemp("plugins")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(path))
        mp.setenv("XDG_CONFIG_HOME", str(path))
        mp.setenv("XDG_CONFIG_DIRS", str(path))
        mp.chdir(path)
        yield path


def plugin_providers(
    plugin_dir: Path, supported: Supported, namespaces: Sequence[str]
) -> dict[str, Any]:
    """Write one plugin module answering *supported*; its name is new each time because variantlib
    caches plugin answers by plugin-api."""
    module = f"vb_conformance_plugin_{next(_modules)}"
    body = "".join(f"P_{ns} = _plugin({supported.get(ns, {})!r})\n" for ns in namespaces)
    (plugin_dir / f"{module}.py").write_text(_PLUGIN_MODULE + body)
    return {
        ns: {"requires": ["vb-conformance-plugin"], "plugin-api": f"{module}:P_{ns}"}
        for ns in namespaces
    }


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(world=worlds(empty_features=True))
def test_plugins_rank_like_variantlib(plugin_dir: Path, world: World) -> None:
    theirs = world.theirs(plugin_providers(plugin_dir, world.supported, world.namespaces))
    assert world.ours(supported=SupportedProperties.from_dict(world.supported)) == theirs


def _minors(major: int, top: int, bottom: int = 0) -> list[str]:
    return [f"{major}.{minor}" for minor in range(top, bottom - 1, -1)]


# What the NVIDIA provider answers for a 12.9 driver and a compute capability 8.6 GPU.
NVIDIA_12_9_SM_86 = {
    "nvidia": {
        "cuda_version_lower_bound": [*_minors(12, 9), "12", *_minors(11, 20), "11"],
        "cuda_version_upper_bound": [
            *itertools.chain.from_iterable([*_minors(m, 20), str(m)] for m in (15, 14, 13)),
            *_minors(12, 20, 10),
        ],
        "sm_arch": [*(f"8{minor}_real" for minor in range(6, -1, -1)), "80_virtual"],
    }
}
# variants.md §6.2: the tinyvar index built with variantlib's own CLI.
TINYVAR = {
    "39bc0ddc": {
        "nvidia": {"cuda_version_lower_bound": ["12.6"], "sm_arch": ["80_real", "90_real"]}
    },
    "cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"]}},
    "null": {},
}


def test_worked_example_ranks_like_variantlib(plugin_dir: Path) -> None:
    world = World(["nvidia"], NVIDIA_12_9_SM_86, TINYVAR, {})
    theirs = world.theirs(plugin_providers(plugin_dir, world.supported, world.namespaces))
    assert theirs == ["cu128", "39bc0ddc", "null"]
    assert world.ours(supported=SupportedProperties.from_dict(world.supported)) == theirs


@pytest.mark.parametrize(
    ("variants", "expected"),
    [
        (
            {"a": {"nvidia": {"sm_arch": ["80_real"]}}},
            ["a"],
        ),  # variantlib's appended null must not be read as ours
        (
            {"a": {"nvidia": {"sm_arch": ["90_real"]}}},
            [],
        ),  # nothing compatible and no null wheel: empty
    ],
)
def test_null_appended_by_variantlib_is_mapped(
    plugin_dir: Path, variants: dict[str, Any], expected: list[str]
) -> None:
    world = World(["nvidia"], NVIDIA_12_9_SM_86, variants, {})
    theirs = world.theirs(plugin_providers(plugin_dir, world.supported, world.namespaces))
    assert theirs == expected
    assert world.ours(supported=SupportedProperties.from_dict(world.supported)) == expected
