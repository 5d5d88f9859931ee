"""Rank 1,000 variants: variant-bridge vs variantlib 0.2.2, in the same process, same inputs.

The variants (seeded, so every run ranks the same 1,000) use realistic ``nvidia`` and ``x86_64``
properties; the supported configs are what the NVIDIA provider answers for a 12.9 driver with a
compute capability 8.6 GPU, plus an x86-64-v3 CPU. variantlib gets them as static providers so no
plugin subprocess is timed. Two comparisons:

- end to end: from the variants.json dict to the ordered labels (ours: parse + rank;
  variantlib: ``get_variants_by_priority``);
- ranking only: pre-built descriptions and supported properties (ours: ``VariantRanker.rank``;
  variantlib: ``resolver.lib.sort_and_filter_supported_variants``).

Usage: ``python bench/bench_rank.py [--variants 1000] [--repeat 15] [--seed 0]``
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from variantlib.api import get_variants_by_priority
from variantlib.models.variant import VariantDescription as VlDescription
from variantlib.models.variant import VariantProperty as VlProperty
from variantlib.resolver.lib import sort_and_filter_supported_variants

from variant_bridge.properties import NULL_LABEL, VariantDescription
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate.supported import SupportedProperties


def _minors(major: int, top: int, bottom: int = 0) -> list[str]:
    return [f"{major}.{minor}" for minor in range(top, bottom - 1, -1)]


FLAGS = ["avx512_bf16", "avx512f", "avx512bw", "avx2", "fma", "bmi2", "sse4_2", "popcnt"]
SUPPORTED: dict[str, dict[str, list[str]]] = {
    "nvidia": {
        "cuda_version_lower_bound": [*_minors(12, 9), "12", *_minors(11, 20), "11"],
        "cuda_version_upper_bound": [
            *itertools.chain.from_iterable([*_minors(m, 20), str(m)] for m in (15, 14, 13)),
            *_minors(12, 20, 10),
        ],
        "sm_arch": [*(f"8{minor}_real" for minor in range(6, -1, -1)), "80_virtual"],
    },
    "x86_64": {
        "level": ["v3", "v2", "v1"],
        **{flag: ["on"] for flag in FLAGS[3:]},  # an x86-64-v3 CPU: no AVX-512
    },
}
NAMESPACES = ["nvidia", "x86_64"]
PRIORITIES = Priorities(NAMESPACES)


def make_variants(count: int, seed: int) -> dict[str, dict[str, dict[str, list[str]]]]:
    """*count* distinct variants (plus null) of the kind a GPU/CPU-optimised project publishes."""
    rng = random.Random(seed)
    cuda = [*_minors(11, 8), *_minors(12, 9), *_minors(13, 1)]
    arches = [f"{m}{n}_real" for m in (7, 8, 9, 10, 12) for n in (0, 5, 6, 7, 9)] + [
        f"{m}0_virtual" for m in (7, 8, 9, 10, 12)
    ]
    variants: dict[str, dict[str, dict[str, list[str]]]] = {NULL_LABEL: {}}
    seen: set[str] = set()
    while len(variants) <= count:
        nvidia: dict[str, list[str]] = {}
        x86: dict[str, list[str]] = {}
        if rng.random() < 0.9:
            nvidia["cuda_version_lower_bound"] = [rng.choice(cuda)]
        if rng.random() < 0.3:
            nvidia["cuda_version_upper_bound"] = [rng.choice(["12", "13", "14"])]
        if rng.random() < 0.6:
            nvidia["sm_arch"] = sorted(rng.sample(arches, rng.randint(1, 6)))
        if rng.random() < 0.5:
            x86["level"] = [rng.choice(["v1", "v2", "v3", "v4"])]
        for flag in rng.sample(FLAGS, rng.randint(0, 2)):
            x86[flag] = ["on"]
        props = {ns: f for ns, f in (("nvidia", nvidia), ("x86_64", x86)) if f}
        key = repr(sorted((ns, sorted(f.items())) for ns, f in props.items()))
        if not props or key in seen:
            continue
        seen.add(key)
        variants[f"v{len(variants):04d}"] = props
    return variants


def variants_json(variants: dict[str, Any]) -> dict[str, Any]:
    return {
        "default-priorities": {"namespace": NAMESPACES},
        "providers": {
            ns: {"static-properties": features, "feature-order": list(features)}
            for ns, features in SUPPORTED.items()
        },
        "variants": variants,
    }


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm caches (imports, variantlib's configuration lookup)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    variants = make_variants(args.variants, args.seed)
    document = variants_json(variants)
    supported = SupportedProperties.from_dict(SUPPORTED)

    def ours_end_to_end() -> list[str]:
        descriptions = [VariantDescription.from_dict(p, label) for label, p in variants.items()]
        ranked = VariantRanker(supported, PRIORITIES).rank(descriptions)
        return [r.label for r in ranked if r.compatible]

    def theirs_end_to_end() -> list[str]:
        return [d.label for d in get_variants_by_priority(variants_json=document)]

    ours_descriptions = [VariantDescription.from_dict(p, label) for label, p in variants.items()]
    vl_descriptions = [
        VlDescription(
            [VlProperty(ns, f, v) for ns, fs in p.items() for f, vs in fs.items() for v in vs],
            label,
        )
        for label, p in variants.items()
    ]
    vl_supported = [
        VlProperty(ns, f, v) for ns, fs in SUPPORTED.items() for f, vs in fs.items() for v in vs
    ]

    def ours_rank() -> list[str]:
        ranked = VariantRanker(supported, PRIORITIES).rank(ours_descriptions)
        return [r.label for r in ranked if r.compatible]

    def theirs_rank() -> list[str]:
        result = sort_and_filter_supported_variants(
            list(vl_descriptions),
            vl_supported,
            namespace_priorities=list(NAMESPACES),
            filter_values=True,
        )
        return [d.label for d in result]

    expected = theirs_end_to_end()
    assert ours_end_to_end() == expected, "orders differ end to end"
    assert ours_rank() == theirs_rank() == expected, "orders differ when ranking only"
    compatible = len(expected)
    print(
        f"{len(variants)} variants ({len(variants) - 1} + null), {compatible} compatible; "
        f"median of {args.repeat} runs"
    )
    for what, ours, theirs in (
        ("end to end (variants.json -> order)", ours_end_to_end, theirs_end_to_end),
        ("ranking only", ours_rank, theirs_rank),
    ):
        t_ours = median_seconds(ours, args.repeat)
        t_theirs = median_seconds(theirs, args.repeat)
        print(
            f"{what}: variant-bridge {t_ours * 1e3:.2f} ms, variantlib {t_theirs * 1e3:.2f} ms, "
            f"variantlib/variant-bridge = {t_theirs / t_ours:.1f}x"
        )


if __name__ == "__main__":
    main()
