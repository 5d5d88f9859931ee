"""Fuzz the parsers and commands with generated inputs: the count of tracebacks and internal
errors must be 0.

Every target takes what a user, a prefix or an index controls (JSON documents with huge numbers
and deep nesting, conda-meta records, ``variant.json``, index pages, wheel filenames, properties,
``Requires-Dist`` lines, ``--target`` values, ``env --format``...) and must answer with a result or
a :class:`~variant_bridge.errors.VariantBridgeError` (the CLI: exit 0, 1 or 2, and never
``error: unexpected ... (this is a bug)``). Anything else is counted, with the first few inputs
that caused it.

    .venv/bin/python bench/fuzz.py [--examples 100000] [--seed 0]

The examples are shared among the targets by weight (cheap parsers get more). Prints a line per
target and the totals; exits 1 when anything was found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from variant_bridge.errors import VariantBridgeError  # noqa: E402

MAX_MESSAGE = 2000
"""An error line longer than this quotes input unshortened."""
found: Counter[str] = Counter()
examples: list[str] = []
ran: Counter[str] = Counter()

# -- strategies --------------------------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    st.text(max_size=20),
)
JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
_WORDS = st.sampled_from(
    [
        "nvidia", "x86_64", "cuda_version_lower_bound", "sm_arch", "::", "12.6", "90_real",
        "variants", "$schema", "default-priorities", "namespace", "providers", "null", "cu126",
        "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json", "{", "}", "[", "]", ",",
        ":", '"', "\\", "\n", " ", "9" * 5000, "[" * 3000, "-", ".", ";", "==", "==1.0",
        "variant_label", "'", "and", "or", "(", ")", "extra", "python_version", "<", ">=", "*",
    ]
)  # fmt: skip
TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(_WORDS, max_size=12).map("".join),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)


def _document() -> st.SearchStrategy[str]:
    """JSON text: valid documents, variant-shaped ones, and mutations of both."""
    valid = JSON.map(json.dumps)
    shaped = st.fixed_dictionaries(
        {
            "$schema": st.sampled_from(
                [
                    "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
                    "https://variants-schema.wheelnext.dev/v0.2.0.json",
                    "https://variants-schema.wheelnext.dev/v0.0.3.json",
                ]
            ),
            "default-priorities": st.fixed_dictionaries({"namespace": st.lists(TEXT, max_size=3)}),
            "variants": st.dictionaries(
                TEXT, st.dictionaries(TEXT, st.dictionaries(TEXT, JSON, max_size=2), max_size=2),
                max_size=3,
            ),
        }
    ).map(json.dumps)  # fmt: skip
    base = st.one_of(valid, shaped)
    mutated = st.tuples(base, st.integers(0, 200), TEXT).map(
        lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :]
    )
    return st.one_of(base, mutated, _WORDS.map(lambda w: w * 2), TEXT)


DOCUMENT = _document()

# -- the harness -------------------------------------------------------------------------------


def _record(target: str, what: str, data: object) -> None:
    found[target] += 1
    if len(examples) < 20:
        examples.append(f"{target}: {what}\n    input: {str(data)[:300]!r}")


def guarded(target: str, call: Callable[[], object], data: object) -> None:
    ran[target] += 1
    try:
        call()
    except VariantBridgeError as e:
        if len(str(e)) > MAX_MESSAGE:  # quoted input is shortened (errors.quote / clip)
            _record(target, f"a {len(str(e))}-character error line: {str(e)[:120]}…", data)
    except RecursionError as e:
        _record(target, f"RecursionError {e}", data)
    except Exception as e:
        _record(target, "".join(traceback.format_exception_only(type(e), e)).strip(), data)


# -- targets -----------------------------------------------------------------------------------


def t_variant_json(text: str) -> None:
    from variant_bridge.metadata import read_variant_json

    guarded("variant.json", lambda: read_variant_json(text, source="fuzz.json"), text)


def t_wheel_filename(text: str) -> None:
    from variant_bridge.filenames import WheelFilename

    def call() -> None:
        parsed = WheelFilename.parse(text)
        assert WheelFilename.parse(str(parsed)) == parsed, "does not round-trip"

    guarded("wheel filename", call, text)


def t_properties(text: str) -> None:
    from variant_bridge.properties import VariantDescription, VariantProperty

    guarded("property", lambda: VariantProperty.parse(text), text)
    guarded("description", lambda: VariantDescription.parse(text), text)


def t_requires_dist(text: str) -> None:
    from variant_bridge.markers import VariantValues, evaluate_dependencies

    environment = {"python_version": "3.12", "sys_platform": "linux", "platform_machine": "x86_64"}
    guarded(
        "Requires-Dist",
        lambda: evaluate_dependencies([text], environment, VariantValues(label="cu126")),
        text,
    )


def t_index_page(text: str) -> None:
    from variant_bridge.indexes.download import Response
    from variant_bridge.indexes.simple import parse_links_page, parse_project_page

    body = text.encode("utf-8", "surrogatepass")
    for kind in ("application/vnd.pypi.simple.v1+json", "text/html"):
        response = Response("http://fuzz/simple/p/", body, kind)
        guarded("index page", lambda r=response: parse_project_page(r, "p", source="f"), text)
    guarded("links page", lambda: parse_links_page(response, source="f"), text)


def t_conda_meta(scratch: Path, text: str) -> None:
    from variant_bridge.detect.prefix import read_prefix

    meta = scratch / "prefix" / "conda-meta"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "fuzz-1.0-0.json").write_text(text, encoding="utf-8", errors="surrogatepass")
    guarded("conda-meta", lambda: read_prefix(scratch / "prefix"), text)


def t_dist_info(scratch: Path, text: str) -> None:
    from variant_bridge.detect.prefix import read_dist_info

    dist_info = scratch / "site" / "fuzz-1.0.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text("Name: fuzz\nVersion: 1.0\n")
    (dist_info / "variant.json").write_text(text, encoding="utf-8", errors="surrogatepass")
    (dist_info / "direct_url.json").write_text(text, encoding="utf-8", errors="surrogatepass")
    guarded("dist-info", lambda: read_dist_info(dist_info, notes=[]), text)


def t_lockfile(scratch: Path, text: str) -> None:
    from variant_bridge.detect.lockfile import read_lockfile

    lock = scratch / "pixi.lock"
    lock.write_text("version: 6\nenvironments:\n  default:\n" + text, errors="surrogatepass")
    guarded("pixi.lock", lambda: read_lockfile(lock, host="linux-64"), text)


def t_cli(args: list[str]) -> None:
    from click.testing import CliRunner

    from variant_bridge.cli import main

    result = CliRunner().invoke(main, args, catch_exceptions=True)
    ran["cli"] += 1
    output = (result.output or "") + (getattr(result, "stderr", "") or "")
    longest = max(
        (len(line) for line in output.splitlines() if line.startswith("error:")), default=0
    )
    if longest > MAX_MESSAGE:
        _record("cli", f"a {longest}-character error line", args)
    elif result.exit_code not in (0, 1, 2) or "this is a bug" in output:
        _record("cli", f"exit {result.exit_code}: {output.strip()[:200]}", args)
    elif result.exception is not None and not isinstance(result.exception, SystemExit):
        _record("cli", repr(result.exception), args)


_KEYS = st.sampled_from(
    ["cuda", "cuda_arch", "archspec", "glibc", "cuda_version", "python", "platform", "linux", "x"]
)
CLI_ARGS = st.one_of(
    st.lists(TEXT, min_size=1, max_size=3).map(lambda p: ["translate", *p]),
    st.lists(TEXT, min_size=1, max_size=3).map(lambda p: ["translate", "--from-conda", *p]),
    st.lists(st.tuples(_KEYS, TEXT).map(lambda kv: f"{kv[0]}={kv[1]}"), max_size=3).map(
        lambda ts: ["detect", "--json", *(a for t in ts for a in ("-t", t))]
    ),
    st.tuples(
        st.sampled_from(["sh", "fish", "powershell", "dotenv", "json"]),
        st.lists(st.tuples(_KEYS, TEXT).map(lambda kv: f"{kv[0]}={kv[1]}"), max_size=2),
    ).map(lambda a: ["env", "--format", a[0], *(x for t in a[1] for x in ("-t", t))]),
)


def _runner(
    strategy: st.SearchStrategy[object], target: Callable[[object], None], count: int, at: int
) -> Callable[[], None]:
    @seed(at)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=strategy)
    def run(data: object) -> None:
        target(data)

    return run  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    os.environ.setdefault("VARIANT_BRIDGE_CACHE_DIR", tempfile.mkdtemp(prefix="vb-fuzz-cache-"))
    for name in [n for n in os.environ if n.startswith(("CONDA_OVERRIDE_", "NV_VARIANT_"))]:
        del os.environ[name]
    os.environ.pop("CONDA_PREFIX", None)

    import logging

    logging.disable(logging.CRITICAL)  # Beautiful Soup logs what it could not decode
    scratch = Path(tempfile.mkdtemp(prefix="vb-fuzz-"))
    weights = {  # share of the examples; a CLI run costs ~100 times a parser call
        "variant.json": (0.22, DOCUMENT, t_variant_json),
        "wheel filename": (0.14, TEXT, t_wheel_filename),
        "properties": (0.14, TEXT, t_properties),
        "Requires-Dist": (0.14, TEXT, t_requires_dist),
        "index page": (0.10, DOCUMENT, t_index_page),
        "conda-meta": (0.10, DOCUMENT, lambda t: t_conda_meta(scratch, t)),
        "dist-info": (0.08, DOCUMENT, lambda t: t_dist_info(scratch, t)),
        "pixi.lock": (0.04, TEXT, lambda t: t_lockfile(scratch, t)),
        "cli": (0.04, CLI_ARGS, t_cli),
    }
    started = time.monotonic()
    for name, (share, strategy, target) in weights.items():
        count = max(1, round(options.examples * share))
        began = time.monotonic()
        _runner(strategy, target, count, options.seed)()
        print(f"{name:>15}: {count:>7} examples  {time.monotonic() - began:6.1f} s", flush=True)
    total = sum(ran.values())
    print(
        f"\n{total} inputs ({sum(round(options.examples * w[0]) for w in weights.values())} "
        f"generated examples) in {time.monotonic() - started:.0f} s: "
        f"{sum(found.values())} tracebacks or internal errors"
    )
    for name, count in found.items():
        print(f"  {name}: {count}")
    for example in examples:
        print(example)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
