"""In-process cost of translation, once the mapping tables are loaded.

    .venv/bin/python bench/bench_translate.py [-n 2000]

Times ``supported_properties(env)`` for one typical CUDA environment (both policies) and
``to_conda_specs`` for a typical variant wheel's properties, per call, against two baselines
measured in the same run: a warm ``rattler.VirtualPackage.detect()`` (what a conda/pixi client pays
to learn the same facts) and ``json.dumps`` of the result (the cost of just printing it).
Aim: the supported properties of one environment in under 1 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from variant_bridge.environment import Environment, Source, Toolkit, VirtualPackage
from variant_bridge.properties import VariantProperty
from variant_bridge.translate import supported_properties, to_conda_specs

AIM_SECONDS = 0.001

ENVIRONMENT = Environment(
    platform="linux-64",
    virtual_packages=(
        VirtualPackage("__archspec", "1", "haswell", Source.TARGET),
        VirtualPackage("__cuda", "12.9", "0", Source.TARGET),
        VirtualPackage("__cuda_arch", "8.6", "0", Source.TARGET),
        VirtualPackage("__glibc", "2.28", "0", Source.TARGET),
        VirtualPackage("__linux", "6.8", "0", Source.TARGET),
        VirtualPackage("__unix", "0", "0", Source.TARGET),
    ),
    toolkit=Toolkit("cuda-version", "12.6", Source.PREFIX),
    origin="benchmark",
)
OTHER_ENVIRONMENT = Environment(
    platform="linux-64",
    virtual_packages=(
        VirtualPackage("__archspec", "1", "icelake", Source.TARGET),
        VirtualPackage("__cuda", "13.0", "0", Source.TARGET),
        VirtualPackage("__cuda_arch", "12.0", "0", Source.TARGET),
    ),
    origin="benchmark",
)
WHEEL_PROPERTIES = tuple(
    VariantProperty.parse(text)
    for text in (
        "nvidia :: cuda_version_lower_bound :: 12.6",
        "nvidia :: cuda_version_upper_bound :: 13",
        "nvidia :: sm_arch :: 80_real",
        "nvidia :: sm_arch :: 86_real",
        "nvidia :: sm_arch :: 90_real",
        "x86_64 :: level :: v3",
    )
)


def per_call(function: Callable[[], object], runs: int, repeats: int = 7) -> float:
    """Median over *repeats* of the mean time of *runs* calls, in seconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(runs):
            function()
        samples.append((time.perf_counter() - start) / runs)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=2000)
    args = parser.parse_args()

    import rattler

    start = time.perf_counter()
    supported = supported_properties(ENVIRONMENT)  # loads the tables (once per process)
    first = time.perf_counter() - start
    # Another machine: tables loaded, but its archspec profile and value lists not cached yet.
    start = time.perf_counter()
    supported_properties(OTHER_ENVIRONMENT)
    first_other = time.perf_counter() - start
    to_conda_specs(WHEEL_PROPERTIES)

    timings = {
        "supported_properties (toolkit policy)": per_call(
            lambda: supported_properties(ENVIRONMENT, policy="toolkit"), args.runs
        ),
        "supported_properties (driver policy)": per_call(
            lambda: supported_properties(ENVIRONMENT, policy="driver"), args.runs
        ),
        "to_conda_specs (6 properties)": per_call(
            lambda: to_conda_specs(WHEEL_PROPERTIES), args.runs
        ),
    }
    baselines = {
        "warm rattler.VirtualPackage.detect()": per_call(
            rattler.VirtualPackage.detect, max(args.runs // 20, 10)
        ),
        "json.dumps(supported.as_dict())": per_call(
            lambda: json.dumps(supported.as_dict()), args.runs
        ),
    }
    print(f"first call, tables loading included: {first * 1000:.2f} ms")
    print(f"first call for another environment (tables loaded): {first_other * 1000:.2f} ms")
    print("per call, tables loaded and the environment's derived values cached:")
    for name, seconds in {**timings, **baselines}.items():
        print(f"  {name:40} {seconds * 1e6:9.1f} us")
    ours = timings["supported_properties (toolkit policy)"]
    for name, seconds in baselines.items():
        print(f"  supported_properties / {name}: {ours / seconds:.2f}x")
    verdict = "within" if ours < AIM_SECONDS else "OVER"
    print(f"  {verdict} the aim of {AIM_SECONDS * 1000:.0f} ms per environment")


if __name__ == "__main__":
    main()
