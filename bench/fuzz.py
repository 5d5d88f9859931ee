"""Fuzz every parser, command and entry point with generated inputs: the count of tracebacks,
internal errors and hangs must be 0.

Every target takes what a user, a prefix, a maintainer or an index controls and must answer with a
result or one clear error: a library target with a
:class:`~variant_bridge.errors.VariantBridgeError`, a command with exit 0, 1 or 2, one ``error:``
line at most :data:`MAX_LINE` long, never ``error: unexpected ... (this is a bug)``, never an
exception escaping. Every input runs under a
per-input deadline (``--timeout``, SIGALRM); a native call that does not return is caught by a
watchdog that ends the run.

Targets:

- parsers: ``variant.json``/``*-variants.json`` (every dialect, ``$schema`` URLs with 5,000-digit
  versions), wheel filenames, properties, ``Requires-Dist``, index pages (JSON and HTML),
  conda-meta records, dist-info files, pixi.lock bodies, conda specs and PEP 440 specifiers, the
  targets-file reader;
- the ``variant-bridge`` commands, in process: ``translate``, ``detect`` and ``env`` (``--target``,
  ``--cuda``, override variables, mutated prefixes, locks and targets files), ``select`` and
  ``install --dry-run`` (generated specs, find-links directories with generated file names and
  ``*-variants.json``), ``export`` (``-o`` and ``--update`` of a mutated pixi.toml), ``check`` and
  ``matrix`` (mutated ``.ci_support``/pinning YAML, declarations TOML, dependencies.yaml),
  ``index`` and ``convert`` (wheels with hostile members, bombs, traversal names, broken zips),
  ``solve`` (generated specs on a real channel), ``doctor`` (mutated prefixes), ``run -- uv pip
  install ...`` (generated specs, find-links folders and index options: the notes on what uv will
  do differently; uv itself is a stand-in that exits 0);
- ``pixi-variant`` (``detect``/``select``/``export``/``doctor``) on a workspace with a mutated
  ``pixi.toml``/``pixi.lock``, and ``pixi variant add`` really installing into an installed
  workspace (generated specs, options and manifests);
- the conda plugin's hooks through the stand-in conda of ``tests/conda_plugin/standin``:
  ``conda variant ARGS``, the ``variant-consistency`` health check and its fixer (declined), the
  exporters, the post-command warning, the ``__cuda_arch`` virtual package;
- every file-taking option given a FIFO, ``/dev/zero``, a directory or a missing path.

    .venv/bin/python bench/fuzz.py [--examples 100000] [--seed 0] [--only TARGET,...]

The examples are shared among the targets by weight (cheap parsers get more). Prints a line per
target and the totals; exits 1 when anything was found.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
import traceback
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fuzz_world import World, build  # noqa: E402
from variant_bridge.errors import LINE_LIMIT, VariantBridgeError  # noqa: E402

MAX_LINE = LINE_LIMIT + 200
"""The longest error line allowed (the CLI cuts at errors.LINE_LIMIT and says how long it was)."""
TIMEOUT = [30.0]
"""Seconds an input may take (``--timeout``)."""
SAVE: list[str] = []
"""The file every finding is appended to with its whole input (``--save``)."""
SHOW: set[str] = set()
"""Targets whose every input and answer is printed (``--show``, while writing strategies)."""
HARD_LIMIT_S = 120.0
"""An input still running this long is stuck where SIGALRM cannot reach (native code)."""

found: Counter[str] = Counter()
kinds: Counter[str] = Counter()
examples: list[str] = []
ran: Counter[str] = Counter()
slowest: dict[str, tuple[float, str]] = {}
longest: dict[str, int] = {}
exits: Counter[tuple[str, int]] = Counter()


class Hang(BaseException):
    """Raised by the per-input alarm: no ``except Exception`` swallows it."""


# -- strategies --------------------------------------------------------------------------------

HUGE = "9" * 5000
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
_TOKENS = [
    "nvidia",
    "x86_64",
    "cuda_version_lower_bound",
    "sm_arch",
    "::",
    "12.6",
    "90_real",
    "variants",
    "$schema",
    "default-priorities",
    "namespace",
    "providers",
    "null",
    "cu126",
    "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"',
    "\\",
    "\n",
    " ",
    HUGE,
    "1." + HUGE,
    "[" * 3000,
    "{" * 3000,
    "-",
    ".",
    ";",
    "==",
    "==1.0",
    "variant_label",
    "'",
    "and",
    "or",
    "(",
    ")",
    "extra",
    "python_version",
    "<",
    ">=",
    "*",
    "\x1b[31m",
    "\x00",
    "\u0663",
    "../",
    "/etc/passwd",
    "$(",
    "`",
    "\t",
    "\r\n",
    "~=",
    ">",
    "2.",
    "py3.",
    "-cu126",
    ".whl",
    "gfx942",
    "__cuda",
    "cuda-version",
    "12.x",
    "abc",
]
_WORDS = st.sampled_from(_TOKENS)
TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(_WORDS, max_size=12).map("".join),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)
VERSION = st.one_of(
    st.sampled_from(
        [
            "1.0",
            "12.6",
            "12.8",
            "3.12",
            HUGE,
            "1." + HUGE,
            HUGE + ".0",
            "",
            "abc",
            "1.0.*",
            "2.",
            "१२.६",
            "0",
            "-1",
            "12.6.77",
            "1e5",
            "v1",
            "1.0+local",
        ]
    ),
    TEXT,
)
_NAMES = ["tinyvar", "depa", "cuda-version", "cuda-cudart", "python", "__cuda", "x", "Tinyvar"]
_OPS = ["", "==", ">=", "<", "!=", "~=", "=", " ", "==", "===", " >", "@"]
_VALID_SPECS = [
    "tinyvar",
    "tinyvar==1.0",
    "depa>=1",
    "tinyvar[x]",
    "cuda-version 12.6.*",
    "cuda-cudart",
    "python >=3.12",
    "tinyvar ==1.0",
    "depa",
]
SPEC = st.one_of(
    st.sampled_from(_VALID_SPECS),
    st.tuples(st.sampled_from(_NAMES), st.sampled_from(_OPS), VERSION).map("".join),
    TEXT,
)
_KEYS = [
    "cuda",
    "cuda_arch",
    "archspec",
    "glibc",
    "cuda_version",
    "python",
    "platform",
    "linux",
    "amdgpu",
    "amdgpu_arch",
    "rocm_version",
    "device_ip",
    "osx",
    "win",
    "cudatoolkit",
    "x",
    "",
]
_VALID_TARGETS = [
    "cuda=12.8",
    "cuda=12.6",
    "cuda_arch=9.0",
    "cuda_arch=8.6,9.0",
    "archspec=haswell",
    "glibc=2.28",
    "cuda_version=12.6",
    "python=3.12",
    "amdgpu_arch=gfx942",
    "rocm_version=6.4",
    "cuda=",
    "platform=linux-64",
]
TARGET = st.one_of(
    st.sampled_from(_VALID_TARGETS),
    st.tuples(st.sampled_from(_KEYS), st.one_of(VERSION, TEXT)).map("=".join),
)
_VARIABLES = [
    "CONDA_OVERRIDE_CUDA",
    "CONDA_OVERRIDE_CUDA_ARCH",
    "CONDA_OVERRIDE_ARCHSPEC",
    "CONDA_OVERRIDE_GLIBC",
    "CONDA_OVERRIDE_AMDGPU_ARCH",
    "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
    "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH",
    "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION",
    "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP",
    "UV_PREVIEW_FEATURES",
    "VARIANT_BRIDGE_EXPORTED_PINS",
    "VARIANT_BRIDGE_HTTP_TIMEOUT",
]
ENVIRON = st.dictionaries(
    st.sampled_from(_VARIABLES),
    st.one_of(VERSION, TEXT).map(lambda v: v.replace("\x00", "")),  # NUL: no environment holds it
    max_size=3,
)
CHECK_OPTION = st.one_of(
    st.sampled_from(
        [
            ["--json"],
            ["--fail-on", "warn"],
            ["--platform", "linux-64"],
            ["--arch-list", "12.9=8.0;9.0"],
            ["--version", "2.10.0"],
        ]
    ),
    st.tuples(
        st.sampled_from(["--platform", "--arch-list", "--version", "--wheel-tag"]),
        st.one_of(VERSION, TEXT),
    ).map(list),
)
"""``check``'s own options, each with a value (valid, or generated)."""
UV_OPTION = st.one_of(
    st.sampled_from(
        [
            ["--dry-run"],
            ["--index-strategy", "unsafe-best-match"],
            ["--index-url", "http://127.0.0.1:9/simple/"],
            ["--no-deps"],
            ["--extra-index-url", "file:///nonexistent/simple/"],
            ["-p", "3.12"],
        ]
    ),
    st.tuples(
        st.sampled_from(["--index-url", "--find-links", "--index", "-f"]),
        TEXT.filter(lambda t: "://" not in t),
    ).map(list),
)
"""Options of the ``uv pip install`` that ``run`` is given (nothing that reaches a network)."""
ADD_OPTION = st.one_of(
    st.sampled_from(
        [
            ["--json"],
            ["--no-copy"],
            ["--no-deps"],
            ["--remove-leftovers"],
            ["-e", "legacy"],
            ["-e", "default"],
            ["--cuda", "12.6"],
            ["--cuda", "12.4"],
            ["--feature", "gpu"],
            ["--cuda-policy", "toolkit"],
        ]
    ),
    st.tuples(st.sampled_from(["--cuda", "--feature", "-e"]), st.one_of(VERSION, TEXT)).map(list),
)
"""``pixi variant add``'s options, each with a value."""
FILE_KIND = st.sampled_from(["regular"] * 16 + ["fifo", "zero", "dir", "missing"])
POSITION = st.integers(0, 10**6)


def _mutate(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """Apply edits: (operation, position, token) on the text of a real file."""
    for op, at, token in edits:
        n = len(text)
        pos = at % (n + 1)
        if op == 0:  # insert
            text = text[:pos] + token + text[pos:]
        elif op == 1:  # delete a span
            text = text[:pos] + text[pos + 1 + at % 40 :]
        elif op == 2:  # replace the number at or after pos with a huge one
            digits = next((i for i in range(pos, n) if text[i].isdigit()), None)
            if digits is not None:
                end = digits
                while end < n and text[end].isdigit():
                    end += 1
                text = text[:digits] + HUGE + text[end:]
        elif op == 3:  # truncate
            text = text[:pos]
        elif op == 4:  # replace the value after the next ':' or '=' with the token
            sep = min((i for i in (text.find(":", pos), text.find("=", pos)) if i >= 0), default=-1)
            if sep >= 0:
                end = text.find("\n", sep)
                end = n if end < 0 else end
                text = text[: sep + 1] + " " + token + text[end:]
        elif op == 5:  # nest the rest deeply
            text = text[:pos] + "[" * 3000 + text[pos:]
        else:  # duplicate a line
            line_end = text.find("\n", pos)
            start = text.rfind("\n", 0, pos) + 1
            if line_end > start:
                text = text[:line_end] + "\n" + text[start:line_end] + text[line_end:]
    return text


EDITS = st.lists(st.tuples(st.integers(0, 6), POSITION, TEXT), max_size=3)


def mutated(world: World, kind: str) -> st.SearchStrategy[tuple[str, str]]:
    """``(file name, text)``: a real file of *kind*, mutated (or left as it is)."""
    return st.tuples(st.sampled_from(world.seeds[kind]), EDITS).map(
        lambda t: (t[0][0], _mutate(t[0][1], t[1]))
    )


def _document() -> st.SearchStrategy[str]:
    """JSON text: valid documents, variant-shaped ones, and mutations of both."""
    valid = JSON.map(json.dumps)
    shaped = st.fixed_dictionaries(
        {
            "$schema": st.one_of(
                st.sampled_from(
                    [
                        "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
                        "https://variants-schema.wheelnext.dev/v0.2.0.json",
                        "https://variants-schema.wheelnext.dev/v0.0.3.json",
                        f"https://variants-schema.wheelnext.dev/v0.0.{HUGE}.json",
                        f"https://variants-schema.wheelnext.dev/peps/825/v{HUGE}.1.1.json",
                        f"https://variants-schema.wheelnext.dev/v0.{HUGE}.0.json",
                    ]
                ),
                TEXT,
            ),
            "default-priorities": st.fixed_dictionaries({"namespace": st.lists(TEXT, max_size=3)}),
            "variants": st.dictionaries(
                TEXT,
                st.dictionaries(TEXT, st.dictionaries(TEXT, JSON, max_size=2), max_size=2),
                max_size=3,
            ),
        }
    ).map(json.dumps)
    base = st.one_of(valid, shaped)
    edited = st.tuples(base, EDITS).map(lambda t: _mutate(t[0], t[1]))
    return st.one_of(base, edited, _WORDS.map(lambda w: w * 2), TEXT)


DOCUMENT = _document()

# -- the harness -------------------------------------------------------------------------------

_current: list[Any] = [None, 0.0]  # (label, started) of the input running, for the watchdog


def _watchdog() -> None:
    while True:
        time.sleep(5)
        label, started = _current
        if label is not None and time.monotonic() - started > HARD_LIMIT_S:
            print(
                f"\nHANG (native, > {HARD_LIMIT_S:.0f} s, not interruptible): {label}", flush=True
            )
            os._exit(3)


def _alarm(signum: int, frame: object) -> None:
    raise Hang


def _record(target: str, kind: str, what: str, data: object) -> None:
    found[target] += 1
    kinds[kind] += 1
    if SAVE:  # the whole input, to replay it
        with open(SAVE[0], "a", encoding="utf-8") as out:
            out.write(
                json.dumps({"target": target, "kind": kind, "what": what, "input": repr(data)})
                + "\n"
            )
    if found[target] <= 4 and len(examples) < 80:  # the first few of each target
        examples.append(f"{target} [{kind}]: {what}\n    input: {str(data)[:400]!r}")


@contextlib.contextmanager
def _deadline(target: str, data: object, timeout: float) -> Iterator[None]:
    _current[0], _current[1] = f"{target}: {str(data)[:300]!r}", time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    began = time.monotonic()
    try:
        yield
    except Hang:
        _record(target, "hang", f"no answer within {timeout:.0f} s", data)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _current[0] = None
        took = time.monotonic() - began
        if took > slowest.get(target, (0.0, ""))[0]:
            slowest[target] = (took, str(data)[:120])


def guarded(target: str, call: Callable[[], object], data: object, timeout: float = 10) -> None:
    """A library target: a result or a VariantBridgeError (one line, not flooding)."""
    ran[target] += 1
    with _deadline(target, data, timeout):
        try:
            call()
        except VariantBridgeError as e:
            text = str(e)
            longest[target] = max(longest.get(target, 0), len(text))
            if len(text) > MAX_LINE:
                _record(target, "long line", f"a {len(text)}-character error: {text[:120]}…", data)
        except RecursionError as e:
            _record(target, "traceback", f"RecursionError {e}", data)
        except Exception as e:
            _record(
                target,
                "traceback",
                "".join(traceback.format_exception_only(type(e), e)).strip()[:300],
                data,
            )


_FINDINGS_EXIT_1 = ("check", "doctor")  # exit 1 with a report and no error: line is correct


def invoke(
    target: str,
    group: Any,
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float | None = None,
    exits_ok: tuple[int, ...] = (0, 1, 2),
    context: object = None,
) -> None:
    """A command in process (click's runner): exit 0, 1 or 2 (*exits_ok*); at most one bounded
    error line; no internal error; no exception."""
    from click.testing import CliRunner

    ran[target] += 1
    environ = {name: None for name in os.environ if name.startswith(("CONDA_", "NV_", "AMD_"))}
    environ.update(env or {})
    old = os.getcwd()
    with _deadline(target, args, timeout or TIMEOUT[0]):
        try:
            if cwd is not None:
                os.chdir(cwd)
            result = CliRunner(env=environ).invoke(group, list(args), catch_exceptions=True)
        finally:
            os.chdir(old)
        exits[(target, result.exit_code)] += 1
        output = (result.stdout or "") + (result.stderr or "")
        errors = [line for line in output.splitlines() if line.startswith(("error:", "Error:"))]
        long = max((len(line) for line in output.splitlines()), default=0)
        longest[target] = max(longest.get(target, 0), max((len(e) for e in errors), default=0))
        data = (list(args), env) if context is None else (list(args), env, context)
        if target in SHOW:
            print(
                f"--- {target} exit {result.exit_code}: {list(args)!r:.300} {env or ''}\n"
                f"{output[-400:]}",
                file=sys.__stderr__,
                flush=True,
            )
        if "this is a bug" in output:
            bug = next((e for e in errors if "this is a bug" in e), output)
            _record(target, "internal error", bug[:300], data)
        elif result.exception is not None and not isinstance(result.exception, SystemExit):
            if isinstance(result.exception, Hang):
                raise result.exception
            exc = result.exception
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            _record(target, "traceback", text[-600:], data)
        elif result.exit_code not in exits_ok:
            _record(target, "wrong exit", f"exit {result.exit_code}: {output[-200:]}", data)
        elif errors and max(len(e) for e in errors) > MAX_LINE:
            _record(target, "long line", f"a {long}-character error line", data)
        elif len(errors) > 1:
            _record(target, "several error lines", " | ".join(e[:100] for e in errors), data)
        elif (
            result.exit_code == 1
            and not errors
            and not any(f in args[:1] for f in _FINDINGS_EXIT_1)
            and "CondaVariantError" not in output
        ):
            _record(target, "wrong exit", f"exit 1 without an error line: {output[-200:]}", data)


# -- the world's scratch: files rewritten per input ----------------------------------------------


class Scratch:
    """Per-target folders under the run's scratch directory, emptied for each input."""

    def __init__(self, root: Path, world: World) -> None:
        self.root = root
        self.world = world

    def folder(self, name: str) -> Path:
        import shutil

        path = self.root / name
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path

    def file(self, name: str, kind: str, text: str) -> Path:
        """A path holding *text*, or one of the special files for a *kind* not ``regular``."""
        if kind != "regular":
            return self.world.special[kind]
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return path


@contextlib.contextmanager
def restored(path: Path) -> Iterator[None]:
    """Put *path* back as it was after the input (a prefix's record, a workspace's manifest)."""
    before = path.read_bytes() if path.exists() else None
    try:
        yield
    finally:
        if before is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(before)


# -- parser targets ----------------------------------------------------------------------------


def t_variant_json(text: str) -> None:
    from variant_bridge.metadata import read_variant_json

    guarded("variant.json", lambda: read_variant_json(text, source="fuzz.json"), text)


def t_wheel_filename(text: str) -> None:
    from variant_bridge.filenames import WheelFilename

    def call() -> None:
        parsed = WheelFilename.parse(text)
        assert WheelFilename.parse(str(parsed)) == parsed, "does not round-trip"
        parsed.tags  # noqa: B018 - a name that parses has tags and a version
        parsed.parsed_version  # noqa: B018

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


def t_specs(text: str) -> None:
    """A spec as every reader meets it: select's requests, conda specs (solve, --from-conda),
    PEP 440 specifiers converted for conda."""
    from variant_bridge.jobs.select import parse_requests
    from variant_bridge.solve.specs import to_conda_version
    from variant_bridge.translate import read_conda_specs

    guarded("request", lambda: parse_requests([text]), text)
    guarded("conda spec", lambda: read_conda_specs([text], platform="linux-64"), text)

    def converted() -> None:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            spec = SpecifierSet(text)
        except InvalidSpecifier:
            return
        to_conda_version(spec)

    guarded("specifier", converted, text)


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


def t_targets_file(scratch: Path, text: str) -> None:
    from variant_bridge.detect.targets_file import read_targets_file

    path = scratch / "targets.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    guarded("targets file", lambda: read_targets_file(path), text)


# -- command targets ---------------------------------------------------------------------------


def _vb() -> Any:
    from variant_bridge.cli import main

    return main


def _targets(pairs: Sequence[str]) -> list[str]:
    return [a for t in pairs for a in ("-t", t)]


class Commands:
    """The commands, each given generated input on the world's real files."""

    def __init__(self, world: World, scratch: Scratch) -> None:
        self.world = world
        self.scratch = scratch
        self.env_copy = scratch.root / "env"
        self.ws_copy = scratch.root / "ws"
        from fuzz_world import fresh_copy

        fresh_copy(world.env, self.env_copy)
        fresh_copy(world.workspace, self.ws_copy)

    # translate, detect, env --------------------------------------------------------------

    def translate(self, data: tuple[bool, list[str]]) -> None:
        from_conda, items = data
        args = ["translate", *(["--from-conda"] if from_conda else []), *items]
        invoke("translate", _vb(), args)

    def detect(self, data: tuple[str, list[str], dict[str, str], str | None, Any]) -> None:
        how, targets, environ, cuda, source = data
        args = ["detect", "--json", *_targets(targets)]
        args += ["--cuda", cuda] if cuda is not None else []
        if how == "prefix":
            self._on_prefix("detect", args, environ, source)
        elif how == "lockfile":
            self._on_lock("detect", args, environ, source)
        elif how == "targets":
            kind, (_, text) = source
            path = self.scratch.file("targets.yaml", kind, text)
            invoke(
                "detect",
                _vb(),
                ["detect", "--json", "--targets", str(path)],
                env=environ,
                context=text,
            )
        else:
            invoke("detect", _vb(), args, env=environ)

    def env(self, data: tuple[str, list[str], dict[str, str]]) -> None:
        shell, targets, environ = data
        invoke("env", _vb(), ["env", "--format", shell, *_targets(targets)], env=environ)

    def _on_prefix(
        self,
        target: str,
        args: list[str],
        environ: dict[str, str],
        source: Any,
        cwd: Path | None = None,
    ) -> None:
        """*args* with ``--prefix`` a copy of the world's prefix, one of its files mutated."""
        which, (_, text) = source
        meta = sorted((self.env_copy / "conda-meta").glob("*.json"))
        site = self.env_copy / "lib" / "python3.12" / "site-packages"
        files = [
            *meta,
            site / "tinyvar-1.0.dist-info" / "variant.json",
            site / "tinyvar-1.0.dist-info" / "direct_url.json",
            site / "tinyvar-1.0.dist-info" / "METADATA",
        ]
        path = files[which % len(files)]
        with restored(path):
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            invoke(
                target,
                _vb(),
                [*args, "--prefix", str(self.env_copy)],
                env=environ,
                cwd=cwd,
                context=(path.name, text),
            )

    def _on_lock(
        self,
        target: str,
        args: list[str],
        environ: dict[str, str],
        source: Any,
        cwd: Path | None = None,
    ) -> None:
        kind, (_, text) = source
        lock = self.scratch.file("lock/pixi.lock", kind, text)
        invoke(
            target,
            _vb(),
            [*args, "--lockfile", str(lock)],
            env=environ,
            cwd=cwd,
            context=(kind, text),
        )

    # select, install --dry-run -------------------------------------------------------------

    def _find_links(
        self,
        names: list[str],
        variants: str | None,
        requires: Sequence[str] = (),
        requires_python: str | None = None,
    ) -> Path:
        """The world's wheels plus files under generated names, maybe a mutated
        ``*-variants.json``, and a ``depa 2.0`` whose METADATA has generated ``Requires-Dist``
        and ``Requires-Python``."""
        from tests.worlds.wheels import make_wheel

        folder = self.scratch.folder("findlinks")
        for wheel in self.world.wheel_files:
            os.link(wheel, folder / wheel.name)
        if requires or requires_python is not None:
            clean = [r.replace("\n", " ").replace("\r", " ") for r in requires]
            python = (requires_python or "").replace("\n", " ").replace("\r", " ") or None
            make_wheel(folder, "depa", "2.0", requires=clean, requires_python=python)
        for name in names:
            clean = name.replace("/", "_").replace("\x00", "")[:200] or "x"
            with contextlib.suppress(OSError):
                os.link(self.world.wheel_files[0], folder / clean)
        if variants is not None:
            (folder / "tinyvar-1.0-variants.json").write_text(
                variants, encoding="utf-8", errors="surrogatepass"
            )
        return folder

    def select(self, data: tuple[list[str], list[str], list[str], str | None, bool, Any]) -> None:
        specs, targets, names, variants, deps, (requires, python) = data
        folder = self._find_links(names, variants, requires, python)
        args = [
            "select",
            *(specs or ["tinyvar"]),
            "-f",
            str(folder),
            "--json",
            "--python",
            "3.12",
            *_targets(targets),
            *([] if deps else ["--no-deps"]),
        ]
        invoke("select", _vb(), args, context=data[2:])

    def install(self, data: tuple[list[str], list[str], list[str], str | None, Any]) -> None:
        specs, targets, names, variants, (requires, python) = data
        folder = self._find_links(names, variants, requires, python)
        args = [
            "install",
            "--dry-run",
            *(specs or ["tinyvar"]),
            "-f",
            str(folder),
            "--python",
            str(self.world.venv_python),
            *_targets(targets),
        ]
        invoke("install", _vb(), args, context=data[2:])

    # export ----------------------------------------------------------------------------------

    def export(self, data: tuple[str, str, Any, list[str]]) -> None:
        how, fmt, source, targets = data
        out = self.scratch.folder("export")
        if how == "update":
            kind, (_, text) = source
            manifest = self.scratch.file("export/pixi.toml", kind, text)
            args = ["export", "--update", str(manifest), *_targets(targets)]
            invoke("export", _vb(), [*args, "--prefix", str(self.world.env)], cwd=out, context=text)
            return
        name = {
            "environment-yml": "environment.yml",
            "pixi-toml": "pixi.toml",
            "pylock": "pylock.toml",
        }.get(fmt, "out.txt")
        args = ["export", "--format", fmt, "-o", str(out / name), "--force", *_targets(targets)]
        if how == "prefix":  # -f: the installed wheels' origins are looked up there
            args += ["-f", str(self.world.wheels)]
            self._on_prefix("export", args, {}, source, cwd=out)
        else:
            self._on_lock("export", args, {}, source, cwd=out)

    # check, matrix -------------------------------------------------------------------------

    def check(self, data: tuple[str, tuple[str, str], str, tuple[str, str], list[str]]) -> None:
        conda_kind, (conda_name, conda_text), wheels_kind, (wheels_name, wheels_text), extra = data
        conda = self.scratch.file(f"check/{conda_name}", conda_kind, conda_text)
        wheels = self.scratch.file(f"check/w/{wheels_name}", wheels_kind, wheels_text)
        args = [
            "check",
            "--conda",
            str(conda),
            "--wheels",
            str(wheels),
            "--project",
            "torch",
            "--wheel-tag",
            "cp312-cp312-manylinux_2_28_x86_64",
            *extra,
        ]
        invoke("check", _vb(), args, context=(conda_text, wheels_text))

    def matrix(self, data: tuple[str, str, tuple[str, str], list[str]]) -> None:
        option, kind, (name, text), extra = data
        path = self.scratch.file(f"matrix/{name}", kind, text)
        args = ["matrix", option, str(path), "--project", "x", "--version", "1.0", "--json", *extra]
        invoke("matrix", _vb(), args, context=text)

    # index, convert ------------------------------------------------------------------------

    def _hostile_wheels(self, edits: list[tuple[int, int, str]]) -> Path:
        folder = self.scratch.folder("hostile")
        for i, (op, at, token) in enumerate(edits):
            source = self.world.wheel_files[at % len(self.world.wheel_files)]
            _hostile_wheel(source, folder, op, token, i)
        return folder

    def index(self, data: list[tuple[int, int, str]]) -> None:
        folder = self._hostile_wheels(data)
        out = self.scratch.folder("channel")
        invoke(
            "index",
            _vb(),
            context=data,
            args=["index", str(folder), "-o", str(out), "--subdir", "linux-64", "--no-cache", "-q"],
        )

    def convert(self, data: list[tuple[int, int, str]]) -> None:
        folder = self._hostile_wheels(data)
        out = self.scratch.folder("converted")
        wheels = [str(p) for p in sorted(folder.iterdir())] or [str(folder)]
        invoke(
            "convert",
            _vb(),
            context=data,
            args=["convert", "-o", str(out), "--subdir", "linux-64", "-q", *wheels],
        )

    # solve, doctor ---------------------------------------------------------------------------

    def solve(self, data: tuple[list[str], list[str], str]) -> None:
        specs, targets, channel_kind = data
        channel = (
            str(self.world.channel)
            if channel_kind == "regular"
            else str(self.world.special[channel_kind])
        )
        args = [
            "solve",
            *(specs or ["tinyvar"]),
            "-c",
            channel,
            "-f",
            str(self.world.wheels),
            "--platform",
            "linux-64",
            "--json",
            *_targets(targets),
        ]
        invoke("solve", _vb(), args)

    def doctor(self, data: tuple[bool, Any, dict[str, str]]) -> None:
        lock, source, environ = data
        if lock:
            self._on_lock("doctor", ["doctor", "--json"], environ, source)
        else:
            self._on_prefix("doctor", ["doctor", "--json"], environ, source)

    # run ---------------------------------------------------------------------------------------

    def run(self, data: tuple[list[str], dict[str, str], bool, list[str], list[str], Any]) -> None:
        """``run -- uv pip install SPECS -f FOLDER ...``: the notes on what uv will do differently
        are read from generated specs, find-links folders and index options (uv is a stand-in
        that exits 0); or a command that does not exist (127, as a shell)."""
        targets, environ, prefix, specs, uv_options, (names, variants, missing) = data
        folder = self._find_links(names, variants)
        uv = str(self.world.fake_uv) if not missing else str(self.world.root / "bin" / "nouv")
        args = [
            "run",
            *_targets(targets),
            *(["--prefix", str(self.world.env)] if prefix else []),
            "--",
            uv,
            "pip",
            "install",
            *(specs or ["tinyvar"]),
            "--find-links",
            str(folder),
            *uv_options,
        ]
        invoke("run", _vb(), args, env=environ, exits_ok=(0, 1, 2, 127), context=data[-1])

    # pixi-variant ------------------------------------------------------------------------------

    def pixi_add(self, data: tuple[list[str], list[str], str | None, list[str]]) -> None:
        """``pixi variant add`` into the installed workspace: it really installs (uv) and records;
        the manifest is put back after each input, the environment keeps what was installed."""
        from variant_bridge.pixi_extension import main

        specs, targets, manifest_text, options = data
        manifest = self.world.pixi / "pixi.toml"
        with restored(manifest):
            if manifest_text is not None:
                manifest.write_text(manifest_text, encoding="utf-8", errors="surrogatepass")
            args = [
                "add",
                *(specs or ["gpulib"]),
                "-f",
                str(self.world.pixi_wheels),
                "--manifest-path",
                str(manifest),
                *_targets(targets),
                *options,
            ]
            invoke("pixi add", main, args, context=manifest_text)

    def pixi(self, data: tuple[str, str, str, list[str], str]) -> None:
        command, manifest_text, lock_text, extra, environment = data
        from variant_bridge.pixi_extension import main

        manifest, lock = self.ws_copy / "pixi.toml", self.ws_copy / "pixi.lock"
        with restored(manifest), restored(lock):
            manifest.write_text(manifest_text, encoding="utf-8", errors="surrogatepass")
            lock.write_text(lock_text, encoding="utf-8", errors="surrogatepass")
            args = [command, "--manifest-path", str(manifest), "-e", environment, *extra]
            if command == "select":
                args += ["tinyvar", "-f", str(self.world.wheels)]
            if command == "export":
                args += ["-o", str(self.scratch.folder("pixi-export") / "environment.yml")]
            invoke("pixi-variant", main, args, context=(manifest_text, lock_text))


def _hostile_wheel(source: Path, folder: Path, op: int, token: str, i: int) -> None:
    """A copy of a real wheel made hostile one way: a traversal or absolute member name, a
    mutated METADATA or variant.json, a compression bomb, thousands of entry points, a byte
    flipped in the archive, a generated file name."""
    name = source.name
    members: list[tuple[str, bytes]] = []
    with zipfile.ZipFile(source) as zf:
        for info in zf.infolist():
            members.append((info.filename, zf.read(info)))
    members, name = _made_hostile(members, name, op, token)
    out = folder / f"{i}-{name}" if op == 8 else folder / name
    if out.exists():
        out = folder / f"{out.stem}-{i}.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in members:
            with contextlib.suppress(ValueError):  # zipfile refuses some names itself
                zf.writestr(member, data)
    if op == 9:  # a byte flipped somewhere
        raw = bytearray(out.read_bytes())
        at = (len(token) * 7919) % len(raw)
        raw[at] ^= 0xFF
        out.write_bytes(bytes(raw))


def _made_hostile(
    members: list[tuple[str, bytes]], name: str, op: int, token: str
) -> tuple[list[tuple[str, bytes]], str]:
    """*members* and the file *name* changed the way *op* says (see :func:`_hostile_wheel`)."""
    dist_info = next((m for m, _ in members if m.endswith(".dist-info/METADATA")), "x/METADATA")
    base = dist_info.rsplit("/", 1)[0]
    clean = token.replace("\x00", "") or "x"
    if op == 0:
        members.append((f"../../{clean}", b"x"))
    elif op == 1:
        members.append((f"/tmp/{clean}", b"x"))
    elif op == 2:
        members = [
            (
                m,
                _mutate(d.decode(), [(4, 20, token)]).encode("utf-8", "surrogatepass")
                if m == dist_info
                else d,
            )
            for m, d in members
        ]
    elif op == 3:
        members = [
            (m, token.encode("utf-8", "surrogatepass") if m.endswith("variant.json") else d)
            for m, d in members
        ]
    elif op == 4:
        members.append((f"{base}/../../evil", b"x"))
    elif op == 5:
        members.append(("tinyvar/zeros.bin", b"\0" * (4 << 20)))  # ratio ~1000: refused
    elif op == 6:
        lines = "\n".join(f"s{n} = m:f" for n in range(20000))
        members.append((f"{base}/entry_points.txt", f"[console_scripts]\n{lines}\n".encode()))
    elif op == 7:
        members.append((f"{base.split('-')[0]}-1.0.data/scripts/../../{clean}", b"#!x"))
    elif op == 8:
        name = clean.replace("/", "_")[:120] + ".whl"
    return members, name


# -- the conda plugin ----------------------------------------------------------------------------


class CondaHooks:
    """The plugin's hooks through the stand-in conda, as conda calls them."""

    def __init__(self, world: World, scratch: Scratch) -> None:
        standin = ROOT / "tests" / "conda_plugin" / "standin"
        sys.path.insert(0, str(standin))
        import importlib

        self.context = importlib.import_module("conda.base.context").context
        self.hooks = importlib.import_module("variant_bridge.conda_plugin.hooks")
        self.builtin = importlib.import_module("conda.plugins.builtin")
        self.world = world
        self.scratch = scratch
        self.envs = scratch.root / "conda-envs"
        self.envs.mkdir()
        (self.envs / "ml").symlink_to(world.env, target_is_directory=True)
        self.prefix = scratch.root / "conda-env"
        from fuzz_world import fresh_copy

        fresh_copy(world.env, self.prefix)

    def reset(self, overrides: dict[str, str]) -> Any:
        self.context.reset(
            root_prefix=self.scratch.root / "conda-root",
            envs_dirs=(self.envs,),
            override_virtual_packages=overrides,
        )
        manager = self.context.plugin_manager
        manager.register(self.builtin)
        manager.register(self.hooks)
        return manager

    def run(self, data: tuple[str, list[str], dict[str, str], Any]) -> None:
        hook, argv, overrides, source = data
        clean = {k: v.replace("\x00", "") for k, v in overrides.items()}
        ran["conda plugin"] += 1
        which, (_, text) = source
        meta = sorted((self.prefix / "conda-meta").glob("*.json"))
        site = self.prefix / "lib" / "python3.12" / "site-packages" / "tinyvar-1.0.dist-info"
        files = [*meta, site / "variant.json", site / "METADATA"]
        path = files[which % len(files)]
        data_shown = (hook, argv, overrides, path.name, text[:200])
        out, err = io.StringIO(), io.StringIO()
        with restored(path), _deadline("conda plugin", data_shown, TIMEOUT[0]):
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    self._call(hook, argv, clean)
            except Hang:
                raise
            except BaseException as e:  # conda's CondaSystemExit is a SystemExit
                if type(e).__name__ in (
                    "CondaVariantError",
                    "CondaSystemExit",
                    "EnvironmentLocationNotFound",
                    "DryRunExit",
                ):
                    message = str(e)
                    if "this is a bug" in message:
                        _record("conda plugin", "internal error", message[:300], data_shown)
                    elif len(message) > MAX_LINE:
                        _record(
                            "conda plugin", "long line", f"{len(message)} characters", data_shown
                        )
                else:
                    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
                    _record("conda plugin", "traceback", text[-600:], data_shown)
        said = out.getvalue() + err.getvalue()
        if "this is a bug" in said or "Traceback" in said:
            _record("conda plugin", "internal error", said[-300:], data_shown)

    def _call(self, hook: str, argv: list[str], overrides: dict[str, str]) -> None:
        from variant_bridge.cli import _native

        _native._requested.clear()  # an earlier command's rattler work: conda would os._exit
        manager = self.reset(overrides)
        prefix = str(self.prefix)
        if hook == "variant":
            action = manager.get_subcommands()["variant"].action
            with contextlib.suppress(SystemExit):
                action(tuple(argv))
        elif hook == "doctor":
            manager.get_health_checks()["variant-consistency"].action(prefix, True)
        elif hook == "fix":
            from conda.exceptions import CondaSystemExit

            def decline(message: str) -> None:
                raise CondaSystemExit("Exiting.")

            from argparse import Namespace

            manager.get_health_checks()["variant-consistency"].fixer(prefix, Namespace(), decline)
        elif hook == "export":
            from conda.models.environment import Environment

            formats = ("variant-environment-yaml", "variant-pixi-toml", "variant-pylock")
            chosen = argv[0] if argv and argv[0] in formats else formats[len(argv) % 3]
            exporter = manager.get_environment_exporter_by_format(chosen)
            exporter.export(
                Environment(platform="linux-64", name="env", prefix=prefix, virtual_packages=[])
            )
        elif hook == "after":
            from argparse import Namespace

            self.context._argparse_args = Namespace(prefix=prefix)
            manager.invoke_post_commands("install")
        else:  # the __cuda_arch virtual package, asked for as conda does
            os.environ["CONDA_OVERRIDE_CUDA_ARCH"] = overrides.get("cuda_arch", "")
            try:
                list(manager.get_virtual_package_records())
            finally:
                del os.environ["CONDA_OVERRIDE_CUDA_ARCH"]


# -- file kinds: every file-taking option ---------------------------------------------------------


def file_options(world: World) -> list[tuple[str, str, Callable[[Path], list[str]]]]:
    """``(name, file name, args for a path)`` of every option that takes a file (or a folder
    whose files are read) to read."""
    w, env, channel = str(world.wheels), str(world.env), str(world.channel)
    check = ["--project", "tinyvar", "--wheel-tag", "py3-none-any"]
    return [
        ("detect --lockfile", "pixi.lock", lambda p: ["detect", "--lockfile", str(p)]),
        ("detect --targets", "targets.yaml", lambda p: ["detect", "--targets", str(p)]),
        ("detect --prefix", "env", lambda p: ["detect", "--prefix", str(p)]),
        (
            "select -f",
            "wheels",
            lambda p: ["select", "tinyvar", "-f", str(p), "--python", "3.12"],
        ),
        (
            "select --targets",
            "targets.yaml",
            lambda p: ["select", "tinyvar", "-f", w, "--targets", str(p)],
        ),
        (
            "export --update",
            "pixi.toml",
            lambda p: ["export", "--update", str(p), "--prefix", env],
        ),
        (
            "export --lockfile",
            "pixi.lock",
            lambda p: ["export", "--lockfile", str(p), "-o", str(p.parent / "out.yml")],
        ),
        (
            "check --conda",
            "linux_64_.yaml",
            lambda p: ["check", "--conda", str(p), "--wheels", w, *check],
        ),
        (
            "check --wheels",
            "x-1.0-variants.json",
            lambda p: [
                "check",
                "--conda",
                str(world.root / "maint-ci.yaml"),
                "--wheels",
                str(p),
                *check,
            ],
        ),
        (
            "matrix --from-conda",
            "conda_build_config.yaml",
            lambda p: ["matrix", "--from-conda", str(p)],
        ),
        ("matrix --from-wheels", "x.toml", lambda p: ["matrix", "--from-wheels", str(p)]),
        (
            "matrix --from-pinning",
            "conda_build_config.yaml",
            lambda p: ["matrix", "--from-pinning", str(p)],
        ),
        ("matrix --from-dfg", "dependencies.yaml", lambda p: ["matrix", "--from-dfg", str(p)]),
        (
            "index WHEEL",
            "tinyvar-1.0-py3-none-any.whl",
            lambda p: ["index", str(p), "-o", str(p.parent / "out-channel"), "-q"],
        ),
        (
            "convert WHEEL",
            "tinyvar-1.0-py3-none-any.whl",
            lambda p: ["convert", str(p), "-o", str(p.parent / "out-conv"), "-q"],
        ),
        (
            "solve -c",
            "channel",
            lambda p: ["solve", "tinyvar", "-c", str(p), "-f", w, "--platform", "linux-64"],
        ),
        (
            "solve -f",
            "wheels",
            lambda p: ["solve", "python", "-c", channel, "-f", str(p), "--platform", "linux-64"],
        ),
        ("doctor --lockfile", "pixi.lock", lambda p: ["doctor", "--lockfile", str(p)]),
        (
            "install --dry-run -f",
            "wheels",
            lambda p: [
                "install",
                "--dry-run",
                "tinyvar",
                "-f",
                str(p),
                "--python",
                str(world.venv_python),
            ],
        ),
    ]


# Files inside a folder an option reads: each replaced by a special file in a copy of the folder.
INNER = [
    (
        "detect --prefix",
        "env",
        "conda-meta/history",
        lambda p: ["export", "--prefix", str(p), "-o", str(p / "o.yml")],
    ),
    (
        "detect --prefix",
        "env",
        "lib/python3.12/site-packages/tinyvar-1.0.dist-info/RECORD",
        lambda p: ["export", "--prefix", str(p), "-o", str(p / "o.yml")],
    ),
    (
        "detect --prefix",
        "env",
        "lib/python3.12/site-packages/tinyvar-1.0.dist-info/METADATA",
        lambda p: ["detect", "--prefix", str(p)],
    ),
    (
        "detect --prefix",
        "env",
        "lib/python3.12/site-packages/tinyvar-1.0.dist-info/variant.json",
        lambda p: ["detect", "--prefix", str(p)],
    ),
    (
        "select -f",
        "wheels",
        "tinyvar-1.0-variants.json",
        lambda p: ["select", "tinyvar", "-f", str(p), "--python", "3.12"],
    ),
    (
        "index -f",
        "wheels",
        "tinyvar-1.0-variants.json",
        lambda p: [
            "index",
            str(p / "tinyvar-1.0-py3-none-any-cu126.whl"),
            "-o",
            str(p / "c"),
            "-q",
        ],
    ),
    (
        "solve -c",
        "channel",
        "linux-64/repodata.json",
        lambda p: ["solve", "cuda-version", "-c", str(p), "--platform", "linux-64"],
    ),
    ("pixi workspace", "ws", "pixi.toml", lambda p: ["pixi", "detect", "--manifest-path", str(p)]),
    (
        "pixi workspace",
        "ws",
        "pixi.lock",
        lambda p: ["pixi", "detect", "--manifest-path", str(p / "pixi.toml")],
    ),
]


def run_file_kinds(world: World) -> None:
    """Every file-taking option given a FIFO, /dev/zero, a directory or a missing path under the
    name it expects, and every file read inside a folder replaced by one: refused with one line
    (or skipped with a note), never a hang."""
    import shutil

    from fuzz_world import SPECIAL_KINDS, special_file
    from variant_bridge.pixi_extension import main as pixi

    for _, filename, make in file_options(world):
        for kind in SPECIAL_KINDS:
            invoke("file kinds", _vb(), make(special_file(world.root, kind, filename)))
    for _, folder, inner, make in INNER:
        source = {
            "env": world.env,
            "wheels": world.wheels,
            "channel": world.channel,
            "ws": world.workspace,
        }[folder]
        for kind in SPECIAL_KINDS:
            copy = world.root / "inner" / f"{folder}-{kind}"
            if copy.exists():
                shutil.rmtree(copy)
            shutil.copytree(source, copy, symlinks=True)
            target = copy / inner
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
            if kind == "fifo":
                os.mkfifo(target)
            elif kind == "zero":
                target.symlink_to("/dev/zero")
            elif kind == "dir":
                target.mkdir()
            args = make(copy)
            group = pixi if args[0] == "pixi" else _vb()
            invoke("file kinds", group, args[1:] if args[0] == "pixi" else args)


# -- the run -------------------------------------------------------------------------------------


def _runner(
    strategy: st.SearchStrategy[Any], target: Callable[[Any], None], count: int, at: int
) -> Callable[[], None]:
    @seed(at)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        derandomize=False,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(data=strategy)
    def run(data: Any) -> None:
        target(data)

    return run  # type: ignore[no-any-return]


def _plan(world: World, scratch: Scratch) -> dict[str, tuple[float, Any, Callable[[Any], None]]]:
    commands = Commands(world, scratch)
    conda = CondaHooks(world, scratch)
    tmp = scratch.root / "parsers"
    tmp.mkdir()
    source = lambda kind: st.tuples(st.integers(0, 50), mutated(world, kind))  # noqa: E731
    either = st.one_of(source("conda-meta"), source("variant.json"))
    lock_source = st.tuples(FILE_KIND, mutated(world, "pixi.lock"))
    maint_kinds = [k for k in ("ci-yaml", "declaration", "maint-json", "dfg") if k in world.seeds]
    names = st.lists(
        st.one_of(
            st.tuples(
                st.sampled_from(["tinyvar", "depa", "Tinyvar", "x"]),
                VERSION,
                st.sampled_from(["py3", "py3.", "cp312", ".py3", "none."]),
                st.sampled_from(["none", "abi3", "none."]),
                st.sampled_from(["any", "linux_x86_64", "manylinux_2_28_x86_64"]),
                st.sampled_from(["", "-cu126", "-null", "-CU126", "-" + HUGE[:300]]),
            ).map(lambda t: f"{t[0]}-{t[1]}-{t[2]}-{t[3]}-{t[4]}{t[5]}.whl"),
            TEXT.map(lambda t: t + ".whl"),
        ),
        max_size=3,
    )
    variants = st.one_of(st.none(), mutated(world, "variant.json").map(lambda t: t[1]), DOCUMENT)
    requirement = st.one_of(
        SPEC, st.tuples(SPEC, st.sampled_from(["; ", "; extra == 'x'", ";"]), TEXT).map("".join)
    )
    depa = st.one_of(
        st.just(((), None)),
        st.tuples(
            st.lists(requirement, max_size=2),
            st.one_of(st.none(), st.tuples(st.sampled_from(_OPS), VERSION).map("".join)),
        ),
    )
    shares: dict[str, tuple[float, Any, Callable[[Any], None]]] = {
        # parsers
        "variant.json": (0.10, DOCUMENT, t_variant_json),
        "wheel filename": (
            0.07,
            st.one_of(TEXT, names.map(lambda n: n[0] if n else "")),
            t_wheel_filename,
        ),
        "properties": (0.06, TEXT, t_properties),
        "Requires-Dist": (0.06, TEXT, t_requires_dist),
        "index page": (0.05, DOCUMENT, t_index_page),
        "specs": (0.06, SPEC, t_specs),
        "conda-meta": (
            0.05,
            st.one_of(DOCUMENT, mutated(world, "conda-meta").map(lambda t: t[1])),
            lambda t: t_conda_meta(tmp, t),
        ),
        "dist-info": (0.04, DOCUMENT, lambda t: t_dist_info(tmp, t)),
        "pixi.lock": (
            0.03,
            st.one_of(TEXT, mutated(world, "pixi.lock").map(lambda t: t[1])),
            lambda t: t_lockfile(tmp, t),
        ),
        "targets file": (
            0.03,
            mutated(world, "targets").map(lambda t: t[1]),
            lambda t: t_targets_file(tmp, t),
        ),
        # commands
        "translate": (
            0.03,
            st.tuples(st.booleans(), st.lists(st.one_of(SPEC, TEXT), min_size=1, max_size=3)),
            commands.translate,
        ),
        "detect": (
            0.04,
            st.one_of(
                *(
                    st.tuples(
                        st.just(how),
                        st.lists(TARGET, max_size=3),
                        ENVIRON,
                        st.one_of(st.none(), VERSION),
                        what,
                    )
                    for how, what in (
                        ("plain", st.none()),
                        ("prefix", either),
                        ("lockfile", lock_source),
                        ("targets", st.tuples(FILE_KIND, mutated(world, "targets"))),
                    )
                )
            ),
            commands.detect,
        ),
        "env": (
            0.02,
            st.tuples(
                st.sampled_from(["sh", "fish", "powershell", "dotenv", "json"]),
                st.lists(TARGET, max_size=2),
                ENVIRON,
            ),
            commands.env,
        ),
        "select": (
            0.04,
            st.tuples(
                st.lists(SPEC, max_size=2),
                st.lists(TARGET, max_size=2),
                names,
                variants,
                st.booleans(),
                depa,
            ),
            commands.select,
        ),
        "install": (
            0.015,
            st.tuples(
                st.lists(SPEC, max_size=2), st.lists(TARGET, max_size=2), names, variants, depa
            ),
            commands.install,
        ),
        "export": (
            0.03,
            st.one_of(
                st.tuples(
                    st.just("update"),
                    st.just(""),
                    st.tuples(FILE_KIND, mutated(world, "pixi.toml")),
                    st.lists(TARGET, max_size=1),
                ),
                st.tuples(
                    st.just("prefix"),
                    st.sampled_from(["environment-yml", "pixi-toml", "pylock"]),
                    either,
                    st.lists(TARGET, max_size=1),
                ),
                st.tuples(
                    st.just("lockfile"),
                    st.sampled_from(["environment-yml", "pixi-toml", "pylock"]),
                    lock_source,
                    st.lists(TARGET, max_size=1),
                ),
            ),
            commands.export,
        ),
        "check": (
            0.025,
            st.tuples(
                FILE_KIND,
                mutated(world, "ci-yaml"),
                FILE_KIND,
                st.one_of(*(mutated(world, k) for k in maint_kinds[1:3])),
                st.lists(CHECK_OPTION, max_size=3).map(
                    lambda groups: [a for g in groups for a in g]
                ),
            ),
            commands.check,
        ),
        "matrix": (
            0.025,
            st.one_of(
                st.tuples(
                    st.just("--from-conda"), FILE_KIND, mutated(world, "ci-yaml"), st.just([])
                ),
                st.tuples(
                    st.just("--from-wheels"), FILE_KIND, mutated(world, "declaration"), st.just([])
                ),
                st.tuples(
                    st.just("--from-pinning"), FILE_KIND, mutated(world, "ci-yaml"), st.just([])
                ),
                st.tuples(st.just("--from-dfg"), FILE_KIND, mutated(world, "dfg"), st.just([])),
            ),
            commands.matrix,
        ),
        "index": (
            0.012,
            st.lists(
                st.tuples(st.integers(0, 9), st.integers(0, 100), TEXT), min_size=1, max_size=3
            ),
            commands.index,
        ),
        "convert": (
            0.012,
            st.lists(
                st.tuples(st.integers(0, 9), st.integers(0, 100), TEXT), min_size=1, max_size=3
            ),
            commands.convert,
        ),
        "solve": (
            0.02,
            st.tuples(
                st.lists(SPEC, max_size=3),
                st.lists(TARGET, max_size=2),
                st.sampled_from(["regular"] * 12 + ["fifo", "zero", "dir", "missing"]),
            ),
            commands.solve,
        ),
        "doctor": (
            0.015,
            st.one_of(
                st.tuples(st.just(False), either, ENVIRON),
                st.tuples(st.just(True), lock_source, ENVIRON),
            ),
            commands.doctor,
        ),
        "pixi-variant": (
            0.02,
            st.tuples(
                st.sampled_from(["detect", "select", "export", "doctor"]),
                mutated(world, "pixi.toml").map(lambda t: t[1]),
                mutated(world, "pixi.lock").map(lambda t: t[1]),
                st.lists(
                    st.sampled_from(["--json", "-t", "cuda=12.8", "--platform", "linux-64"]),
                    max_size=2,
                ),
                st.sampled_from(["default", "legacy", "x", "../..", ""]),
            ),
            commands.pixi,
        ),
        "run": (
            0.015,
            st.tuples(
                st.lists(TARGET, max_size=2),
                ENVIRON,
                st.booleans(),
                st.lists(st.one_of(SPEC, requirement), max_size=2),
                st.lists(UV_OPTION, max_size=2).map(lambda groups: [a for g in groups for a in g]),
                st.tuples(names, variants, st.integers(0, 15).map(lambda n: n == 0)),
            ),
            commands.run,
        ),
        "pixi add": (
            0.005,
            st.tuples(
                st.lists(
                    st.one_of(
                        st.sampled_from(
                            ["gpulib", "gpulib==1.0", "nvidia-cublas-cu12", "gpulib[x]", "tinyvar"]
                        ),
                        SPEC,
                    ),
                    max_size=2,
                ),
                st.lists(TARGET, max_size=2),
                st.one_of(st.none(), st.none(), mutated(world, "pixi.toml").map(lambda t: t[1])),
                st.lists(ADD_OPTION, max_size=2).map(lambda groups: [a for g in groups for a in g]),
            ),
            commands.pixi_add,
        ),
        "conda plugin": (
            0.02,
            st.tuples(
                st.sampled_from(["variant", "doctor", "fix", "export", "after", "cuda_arch"]),
                st.one_of(
                    st.tuples(
                        st.sampled_from(["detect", "select", "env", "translate", "doctor"]),
                        st.lists(
                            st.one_of(
                                SPEC,
                                TARGET,
                                st.sampled_from(
                                    ["-n", "ml", "-p", "--json", "-t", "--python", "3.12"]
                                ),
                            ),
                            max_size=4,
                        ),
                    ).map(lambda t: [t[0], *t[1]]),
                    st.lists(
                        st.sampled_from(
                            ["variant-environment-yaml", "variant-pixi-toml", "variant-pylock", "x"]
                        ),
                        max_size=1,
                    ),
                ),
                st.dictionaries(
                    st.sampled_from(["cuda", "cuda_arch", "archspec", "glibc"]),
                    st.one_of(VERSION, TEXT),
                    max_size=2,
                ),
                either,
            ),
            conda.run,
        ),
    }
    return shares


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="comma-separated targets")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per input")
    parser.add_argument(
        "--show", default="", help="comma-separated targets whose inputs and answers are printed"
    )
    parser.add_argument(
        "--save",
        default="",
        help="append each finding, with its whole input, to this file (JSON lines)",
    )
    options = parser.parse_args()
    TIMEOUT[0] = options.timeout
    SAVE.extend([options.save] if options.save else [])
    SHOW.update(t for t in options.show.split(",") if t)
    cache = tempfile.mkdtemp(prefix="vb-fuzz-cache-")
    os.environ["VARIANT_BRIDGE_CACHE_DIR"] = cache
    for name in [n for n in os.environ if n.startswith(("CONDA_", "NV_VARIANT_", "AMD_"))]:
        del os.environ[name]
    os.environ["VARIANT_BRIDGE_HTTP_TIMEOUT"] = "5"  # nothing here is remote; a typo fails fast

    import logging

    logging.disable(logging.CRITICAL)  # Beautiful Soup logs what it could not decode
    signal.signal(signal.SIGALRM, _alarm)
    threading.Thread(target=_watchdog, daemon=True).start()
    random.seed(options.seed)
    root = Path(tempfile.mkdtemp(prefix="vb-fuzz-"))
    started = time.monotonic()
    world = build(root / "world")
    scratch = Scratch(root / "scratch", world)
    scratch.root.mkdir()
    print(f"world built in {time.monotonic() - started:.0f} s ({root})", flush=True)
    plan = _plan(world, scratch)
    only = {t for t in options.only.split(",") if t}
    total_share = sum(share for name, (share, _, _) in plan.items() if not only or name in only)
    began = time.monotonic()
    if not only or "file kinds" in only:
        run_file_kinds(world)
        print(
            f"{'file kinds':>15}: {ran['file kinds']:>7} inputs   "
            f"{time.monotonic() - began:6.1f} s",
            flush=True,
        )
    for name, (share, strategy, target) in plan.items():
        if only and name not in only:
            continue
        count = max(1, round(options.examples * share / total_share))
        began, before = time.monotonic(), sum(ran.values())
        _runner(strategy, target, count, options.seed)()
        print(
            f"{name:>15}: {count:>7} examples {sum(ran.values()) - before:>7} inputs "
            f"{time.monotonic() - began:6.1f} s",
            file=sys.__stdout__,
            flush=True,
        )
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # whatever a target left there
    _report(options, time.monotonic() - started)
    sys.stdout.flush()
    import shutil

    for scratch_dir in (root, Path(cache)):
        shutil.rmtree(scratch_dir, ignore_errors=True)
    os._exit(1 if found else 0)  # py-rattler may crash at finalization (cli/_native.py)


def _report(options: argparse.Namespace, took: float) -> None:
    """The totals, the longest error line and slowest input per target, the exit statuses, and
    the first inputs of each finding."""
    total = sum(ran.values())
    print(
        f"\n{total} inputs ({options.examples} generated examples, seed {options.seed}) in "
        f"{took:.0f} s: "
        f"{kinds['traceback']} tracebacks, {kinds['internal error']} internal errors, "
        f"{kinds['hang']} hangs (> {options.timeout:.0f} s), {kinds['wrong exit']} wrong exits, "
        f"{kinds['long line'] + kinds['several error lines']} over-long or repeated error lines"
    )
    print(
        "longest error line per target: "
        + ", ".join(f"{t} {n}" for t, n in sorted(longest.items(), key=lambda x: -x[1])[:8])
    )
    print(
        "slowest input per target: "
        + ", ".join(
            f"{t} {s:.1f} s" for t, (s, _) in sorted(slowest.items(), key=lambda x: -x[1][0])[:8]
        )
    )
    by_target: dict[str, list[str]] = {}
    for (name, code), count in sorted(exits.items()):
        by_target.setdefault(name, []).append(f"{code}: {count}")
    print("exit statuses: " + "; ".join(f"{t} ({', '.join(c)})" for t, c in by_target.items()))
    for name, count in found.items():
        print(f"  {name}: {count}")
    for example in examples:
        print(example)


if __name__ == "__main__":
    sys.exit(main())
