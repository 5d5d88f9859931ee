"""``variant-bridge detect``: what a user sees for this machine, a prefix, a pixi.lock or targets.

No GPU is needed: CUDA facts are declared with --target, CONDA_OVERRIDE_* and
NV_VARIANT_PROVIDER_FORCE_*. Expectations never depend on the host's CPU or kernel: only
declared facts are asserted exactly.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Cli, run_script
from tests.worlds.channel import Channel
from tests.worlds.lockfile import LockedPlatform, write_lockfile
from tests.worlds.prefix import (
    HOST_VIRTUAL_PACKAGES,
    add_dist_info,
    install_prefix,
    site_packages,
    solve,
    variant_json,
)
from tests.worlds.torch_index import declared_lines, real_document
from tests.worlds.wheels import make_wheel

HERE = str(Path(__file__).parent)
# A declared linux-64 GPU machine: nothing about the host matters for these facts.
TARGETS = (
    "--platform", "linux-64",
    "-t", "cuda=12.8", "-t", "cuda_arch=9.0", "-t", "archspec=haswell", "-t", "glibc=2.28",
)  # fmt: skip
JSON_KEYS = {
    "origin", "platform", "platform_source", "python", "python_source", "policy",
    "virtual_packages", "toolkit", "supported", "sources", "unsupported", "variant_wheels", "conda_variants",
    "notes", "health", "rocm", "gpus", "declared_features",
}  # fmt: skip


def detect_json(cli: Cli, *args: str, env: dict[str, str | None] | None = None) -> dict[str, Any]:
    result = cli("detect", "--json", *args, env=env)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def vp(data: dict[str, Any], name: str) -> dict[str, str] | None:
    return next((v for v in data["virtual_packages"] if v["name"] == name), None)


# -- declared targets ---------------------------------------------------------------------------


def test_json_shape_for_declared_targets(cli: Cli) -> None:
    data = detect_json(cli, *TARGETS)
    assert set(data) == JSON_KEYS
    # Nothing installed to examine (no prefix): a clean bill that says so.
    assert data["health"] == {
        "healthy": True, "worst": None, "checked": 0, "findings": [], "problems": [],
    }  # fmt: skip
    assert data["platform"] == "linux-64"
    assert data["policy"] == "driver"  # no toolkit solved
    assert data["toolkit"] is None
    assert vp(data, "__cuda") == {
        "name": "__cuda",
        "version": "12.8",
        "build": "0",
        "source": "--target",
    }
    assert vp(data, "__cuda_arch") == {
        "name": "__cuda_arch", "version": "9.0", "build": "0", "source": "--target",
    }  # fmt: skip
    assert vp(data, "__archspec") == {
        "name": "__archspec", "version": "1", "build": "haswell", "source": "--target",
    }  # fmt: skip
    assert vp(data, "__glibc") == {
        "name": "__glibc",
        "version": "2.28",
        "build": "0",
        "source": "--target",
    }


def test_supported_properties_follow_the_nvidia_provider_without_a_toolkit(cli: Cli) -> None:
    supported = detect_json(cli, *TARGETS)["supported"]
    lower = supported["nvidia"]["cuda_version_lower_bound"]
    # variants.md §5.1: at 12.8, `12.8 … 12.0, 12, 11.20 … 11.0, 11` (32 values), best first.
    assert lower[:3] == ["12.8", "12.7", "12.6"]
    assert lower[lower.index("12.0") + 1] == "12"
    assert len(lower) == 32
    upper = supported["nvidia"]["cuda_version_upper_bound"]
    assert upper[0] == "15.20"
    assert upper[-1] == "12.9"
    assert "12" not in upper
    assert supported["nvidia"]["sm_arch"] == ["90_real", "90_virtual"]
    assert supported["x86_64"]["level"] == ["v3", "v2", "v1"]
    assert list(supported)[:2] == ["nvidia", "x86_64"]  # namespace priority is kept


def test_sources_say_where_each_feature_came_from(cli: Cli) -> None:
    sources = detect_json(cli, *TARGETS)["sources"]
    assert "__cuda=12.8" in sources["nvidia"]["cuda_version_lower_bound"]
    assert "__cuda_arch=9.0" in sources["nvidia"]["sm_arch"]
    assert "haswell" in sources["x86_64"]["level"]


# Which value of __cuda wins, and the source it reports (semantics.md §2). One case per line.
PRECEDENCE = [
    ({"CONDA_OVERRIDE_CUDA": "12.9"}, ["-t", "cuda=12.8"], "12.8", "--target"),  # flag first
    (
        {"CONDA_OVERRIDE_CUDA": "12.6", "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.4"},
        [],
        "12.6",
        "CONDA_OVERRIDE_CUDA",
    ),  # conda's override beats the wheel world's
    (
        {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.4"},
        [],
        "12.4",
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
    ),  # the provider's variable still counts
]


@pytest.mark.parametrize(("env", "args", "version", "source"), PRECEDENCE)
def test_precedence_of_cuda_facts(
    cli: Cli, env: dict[str, str | None], args: list[str], version: str, source: str
) -> None:
    data = detect_json(cli, *args, env=env)
    assert vp(data, "__cuda") == {
        "name": "__cuda",
        "version": version,
        "build": "0",
        "source": source,
    }
    assert data["supported"]["nvidia"]["cuda_version_lower_bound"][0] == version


def test_empty_override_means_no_driver(cli: Cli) -> None:
    data = detect_json(cli, env={"CONDA_OVERRIDE_CUDA": ""})
    assert vp(data, "__cuda") is None
    assert "nvidia" not in data["supported"]
    reasons = {u["namespace"]: u["reason"] for u in data["unsupported"]}
    assert "__cuda" in reasons["nvidia"]


def test_human_output_shows_facts_with_sources(cli: Cli) -> None:
    result = cli("detect", *TARGETS, env={"CONDA_OVERRIDE_GLIBC": "2.17"})
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("Environment: ")
    for section in (
        "Virtual packages",
        "CUDA toolkit (the solved cuda-version)",
        "Supported variant properties (most preferred first; CUDA policy: driver)",
    ):
        assert f"\n{section}\n" in out
    assert re.search(r"^  __cuda=12\.8=0 +--target$", out, re.MULTILINE)
    # --target beats the override, and the output says which one won.
    assert re.search(r"^  __glibc=2\.28=0 +--target$", out, re.MULTILINE)
    assert "  (none solved in this environment)\n" in out
    assert "  nvidia :: sm_arch :: 90_real, 90_virtual\n" in out
    assert "  x86_64 :: level :: v3, v2, v1\n" in out
    # Long lists are shortened in text (the JSON has them all).
    assert re.search(r"nvidia :: cuda_version_upper_bound :: 15\.20, .*…", out)
    assert "(77 values)" in out or "(78 values)" in out


@pytest.mark.parametrize(
    ("args", "heading", "row"),
    [
        (("--cuda", "12.6"), "requested with --cuda: nothing here solved one", "--cuda"),
        (("-t", "cuda_version=12.6"), "declared with --target", "--target"),
    ],
)
def test_the_toolkit_heading_says_where_a_toolkit_not_solved_came_from(
    cli: Cli, args: tuple[str, ...], heading: str, row: str
) -> None:
    result = cli("detect", "--platform", "linux-64", "-t", "cuda=12.9", *args)
    assert result.exit_code == 0, result.stderr
    assert f"\nCUDA toolkit ({heading})\n" in result.stdout
    assert re.search(rf"^  cuda-version=12\.6 +{row}$", result.stdout, re.MULTILINE)
    assert "the solved cuda-version" not in result.stdout


def test_no_driver_is_explained_in_text(cli: Cli) -> None:
    result = cli("detect", "--platform", "linux-64", "-t", "cuda=", "-t", "archspec=haswell")
    assert result.exit_code == 0, result.stderr
    assert "Unsupported namespaces (only null or non-variant wheels match)\n" in result.stdout
    assert re.search(r"^  nvidia: .*__cuda", result.stdout, re.MULTILINE)


# -- errors -------------------------------------------------------------------------------------

# (arguments, environment, the start of the one stderr line). One case per line.
ERRORS = [
    (
        [],
        {"CONDA_OVERRIDE_CUDA": "abc"},
        "CONDA_OVERRIDE_CUDA='abc': expected a CUDA version",
    ),  # env
    (["-t", "cuda=abc"], {}, "--target cuda='abc': expected a CUDA version like 12.8"),  # value
    (["-t", "cuda_arch=9"], {}, "--target cuda_arch='9': expected a compute capability"),  # x.y
    (["-t", "cdua=12.8"], {}, "--target 'cdua': unknown key"),  # typo in the key
    (["-t", "cuda"], {}, "--target 'cuda': expected KEY=VALUE"),  # no '='
    (["-t", "archspec=haswel"], {}, "--target archspec='haswel': expected an archspec"),  # CPU
    (["--platform", "linux-65"], {}, "--platform='linux-65': expected a conda platform"),  # subdir
    (["--prefix", "/nonexistent/env"], {}, "--prefix /nonexistent/env: no such directory"),  # gone
    (["--prefix", __file__], {}, f"--prefix {__file__}: not a directory"),  # a file: was exit 2
    (["--lockfile", "/nonexistent/pixi.lock"], {}, "/nonexistent/pixi.lock: "),  # missing lock
    (["--lockfile", HERE], {}, f"{HERE}: a directory, not a regular file"),  # was exit 2, usage
    (
        ["-t", "platform=linux-64", "-t", "cuda=12.8"],
        {"CONDA_PREFIX": "/nonexistent"},
        "$CONDA_PREFIX=/nonexistent: no such directory (unset it or pass --prefix)",
    ),  # stale $CONDA_PREFIX: the variable was not named
    (
        ["--platform", "osx-arm64", "-t", "cuda=12.9"],
        {},
        "--target cuda='12.9': __cuda does not exist on osx-arm64 (only linux-* and win-*)\n",
    ),  # said "(declare --target platform=... too)" although --platform was given
    (
        ["--platform", "win-64", "-t", "glibc=2.28"],
        {},
        "--target glibc='2.28': __glibc does not exist on win-64 (only linux-*)\n",
    ),  # the same for glibc on Windows
    (
        ["-t", "platform=linux-64", "-t", "cuda=١٢.٨"],
        {},
        "--target cuda='١٢.٨': expected a CUDA version like 12.8\n",
    ),  # blamed detection: "could not detect this machine's virtual packages: malformed …"
    (
        ["-t", "platform=linux-64", "-t", "cuda=1.99999999999999999999"],
        {},
        "--target cuda='1.99999999999999999999': expected a CUDA version like 12.8\n",
    ),  # the same past 64 bits
    (
        [],
        {"CONDA_OVERRIDE_CUDA": "١٢.٨"},
        "CONDA_OVERRIDE_CUDA='١٢.٨': expected a CUDA version like 12.8",
    ),  # the same through conda's variable
    (
        [],
        {"CONDA_OVERRIDE_CUDA": "99999999999999999999.1"},
        "CONDA_OVERRIDE_CUDA='99999999999999999999.1': expected a CUDA version like 12.8",
    ),  # and past 64 bits
    (
        ["-t", "platform=linux-64", "-t", "cuda=1." + "9" * 5000],
        {},
        "--target cuda='1." + "9" * 78 + "…' (5002 characters): expected a CUDA version like 12.8",
    ),  # echoed a 5000-character line
]


@pytest.mark.parametrize(("args", "env", "message"), ERRORS)
def test_bad_input_is_one_line(
    cli: Cli, args: list[str], env: dict[str, str | None], message: str
) -> None:
    result = cli("detect", *args, env={"CONDA_PREFIX": None, **env})
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {message}")
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


# (arguments, the end of click's usage error). One case per line.
USAGE_ERRORS = [
    (
        ["--prefix", "a", "--lockfile", "b"],
        "--prefix and --lockfile cannot be used together",
    ),  # 1 of 2
    (["--environment", "cuda"], "--environment needs --lockfile"),  # environment of what?
    (["--cuda-policy", "newest"], "'newest' is not one of 'toolkit', 'driver'."),  # a choice
    (["--target"], "Option '--target' requires an argument."),  # missing value
    (["extra"], "Got unexpected extra argument (extra)"),  # stray argument
]


@pytest.mark.parametrize(("args", "tail"), USAGE_ERRORS)
def test_usage_errors_exit_2(cli: Cli, args: list[str], tail: str) -> None:
    result = cli("detect", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Error: " in result.stderr
    assert tail in result.stderr.splitlines()[-1]


# -- a real prefix and a real pixi.lock ---------------------------------------------------------


@dataclass(frozen=True)
class PrefixWorld:
    prefix: Path
    lock: Path


@pytest.fixture(scope="module")
def world(cuda_channel: Channel, tmp_path_factory: pytest.TempPathFactory) -> PrefixWorld:
    """A prefix with cuda-version 12.6 solved (driver 12.9) and one variant wheel installed, and
    a pixi.lock with the same solve in environment `gpu`."""
    root = tmp_path_factory.mktemp("cli-detect")
    specs = ["cuda-version 12.6.*", "libcublas", "python"]
    records = solve([cuda_channel], specs, [*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"])
    prefix = install_prefix(records, root / "env", root / "pkgs", specs)
    add_dist_info(
        site_packages(prefix),
        "tinyvar",
        "0.1.0",
        variant=variant_json("cu126", {"nvidia": {"cuda_version_lower_bound": ["12.6"]}}),
    )
    lock = write_lockfile(
        root / "pixi.lock",
        {"gpu": [LockedPlatform("linux-64", records)]},
        channels=[cuda_channel.url],
    )
    return PrefixWorld(prefix, lock)


@pytest.mark.slow
def test_prefix_toolkit_policy(cli: Cli, world: PrefixWorld) -> None:
    data = detect_json(cli, "--prefix", str(world.prefix), "-t", "cuda=12.9", "-t", "cuda_arch=8.6")
    assert data["toolkit"] == {"package": "cuda-version", "version": "12.6", "source": "conda-meta"}
    assert data["policy"] == "toolkit"
    assert data["python"] == "3.12.7"
    # The toolkit caps the minimum CUDA a wheel may need: 12.6, not the driver's 12.9.
    assert data["supported"]["nvidia"]["cuda_version_lower_bound"][0] == "12.6"
    assert data["variant_wheels"] == [
        {
            "name": "tinyvar",
            "version": "0.1.0",
            "label": "cu126",
            "properties": ["nvidia :: cuda_version_lower_bound :: 12.6"],
            "location": data["variant_wheels"][0]["location"],
            "toolkit": data["variant_wheels"][0]["toolkit"],
        }
    ]
    assert data["variant_wheels"][0]["location"].endswith("tinyvar-0.1.0.dist-info")
    toolkit = data["variant_wheels"][0]["toolkit"]
    assert (toolkit["cuda"], toolkit["refused"]) == ("12.6", None)  # it fits the prefix
    assert toolkit["summary"].startswith("toolkit CUDA 12.6 or newer")


@pytest.mark.slow
def test_prefix_driver_policy_on_request(cli: Cli, world: PrefixWorld) -> None:
    data = detect_json(
        cli, "--prefix", str(world.prefix), "-t", "cuda=12.9", "--cuda-policy", "driver"
    )
    assert data["policy"] == "driver"
    assert data["supported"]["nvidia"]["cuda_version_lower_bound"][0] == "12.9"


@pytest.mark.slow
def test_conda_prefix_is_the_default(cli: Cli, world: PrefixWorld) -> None:
    data = detect_json(cli, "-t", "cuda=12.9", env={"CONDA_PREFIX": str(world.prefix)})
    assert data["toolkit"] == {"package": "cuda-version", "version": "12.6", "source": "conda-meta"}
    assert str(world.prefix) in data["origin"]


@pytest.mark.slow
def test_prefix_human_output(cli: Cli, world: PrefixWorld) -> None:
    result = cli("detect", "--prefix", str(world.prefix), "-t", "cuda=12.9")
    assert result.exit_code == 0, result.stderr
    assert re.search(r"^  cuda-version=12\.6 +conda-meta$", result.stdout, re.MULTILINE)
    assert "CUDA policy: toolkit" in result.stdout
    assert "\nInstalled variant wheels\n" in result.stdout
    assert "tinyvar==0.1.0 [cu126] nvidia :: cuda_version_lower_bound :: 12.6" in result.stdout


@pytest.mark.slow
def test_lockfile_environment(cli: Cli, world: PrefixWorld) -> None:
    data = detect_json(
        cli, "--lockfile", str(world.lock), "-e", "gpu", "--platform", "linux-64", "-t", "cuda=12.9"
    )
    assert data["platform"] == "linux-64"
    assert data["toolkit"] == {"package": "cuda-version", "version": "12.6", "source": "pixi.lock"}
    assert data["supported"]["nvidia"]["cuda_version_lower_bound"][0] == "12.6"


@pytest.mark.slow
def test_lockfile_unknown_environment_is_one_line(cli: Cli, world: PrefixWorld) -> None:
    result = cli("detect", "--lockfile", str(world.lock), "-e", "nope")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ")
    assert "'nope'" in result.stderr
    assert result.stderr.count("\n") == 1


def test_target_help_lists_every_key(cli: Cli) -> None:
    result = cli("detect", "--help")
    assert result.exit_code == 0
    help_text = " ".join(result.stdout.split())
    keys = help_text.partition("KEY: ")[2].partition(" (e.g.")[0]
    # `platform` was documented in docs/cli.md but missing from --help.
    assert keys == (
        "cuda, cuda_arch, amdgpu, amdgpu_arch, archspec, glibc, linux, osx, win, cuda_version, "
        "cudatoolkit, rocm_version, device_ip, python, platform"
    )


@pytest.mark.slow
def test_lockfile_lists_locked_variant_wheels(cli: Cli, tmp_path: Path) -> None:
    # A lock holding tinyvar…-cu126.whl gave `variant_wheels: []`.
    wheel = make_wheel(
        tmp_path / "wheels",
        "tinyvar",
        "0.1.0",
        label="cu126",
        properties=["nvidia :: cuda_version_lower_bound :: 12.6"],
    )
    remote = "https://pypi.example.org/whl/remotevar-1.0-py3-none-any-cu129.whl"
    lock = write_lockfile(
        tmp_path / "pixi.lock",
        {
            "default": [
                LockedPlatform(
                    "linux-64",
                    (),
                    [("tinyvar", "0.1.0", wheel.as_uri()), ("remotevar", "1.0", remote)],
                )
            ]
        },
    )
    data = detect_json(cli, "--lockfile", str(lock), "--platform", "linux-64")
    assert data["variant_wheels"] == [
        {
            "name": "remotevar",
            "version": "1.0",
            "label": "cu129",
            "properties": None,
            "location": remote,
            "toolkit": None,  # its properties are unknown: nothing to judge
        },
        {
            "name": "tinyvar",
            "version": "0.1.0",
            "label": "cu126",
            "properties": ["nvidia :: cuda_version_lower_bound :: 12.6"],
            "location": str(wheel),
            "toolkit": data["variant_wheels"][1]["toolkit"],
        },
    ]
    assert data["variant_wheels"][1]["toolkit"]["cuda"] == "12.6"
    assert any(
        "on an index, properties unknown: remotevar==1.0 [cu129]" in n for n in data["notes"]
    )
    text = cli("detect", "--lockfile", str(lock), "--platform", "linux-64")
    assert text.exit_code == 0, text.stderr
    assert "\nLocked variant wheels\n" in text.stdout
    assert "  remotevar==1.0 [cu129] (properties unknown: not downloaded)\n" in text.stdout
    assert "  tinyvar==0.1.0 [cu126] nvidia :: cuda_version_lower_bound :: 12.6\n" in text.stdout


# -- the real console script ------------------------------------------------------------------


def test_console_script_detect_json() -> None:
    args = ["--platform", "linux-64", "-t", "cuda_arch=8.6", "-t", "archspec=haswell"]
    proc = run_script("detect", "--json", *args, env={"CONDA_OVERRIDE_CUDA": "12.9"})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert vp(data, "__cuda") == {
        "name": "__cuda", "version": "12.9", "build": "0", "source": "CONDA_OVERRIDE_CUDA",
    }  # fmt: skip
    assert data["supported"]["nvidia"]["sm_arch"][0] == "86_real"
    assert data["supported"]["nvidia"]["sm_arch"][-1] == "80_virtual"


def test_console_script_bad_override_exits_1() -> None:
    proc = run_script("detect", env={"CONDA_OVERRIDE_CUDA_ARCH": "sm90"})
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: CONDA_OVERRIDE_CUDA_ARCH='sm90'")
    assert proc.stderr.count("\n") == 1


@pytest.mark.slow
def test_an_installed_build_of_a_newer_toolkit_is_a_warning(
    cli: Cli, corpus: Path, prefix_126: Path, tmp_path: Path
) -> None:
    """torch cuda12.8 (its real variant entry, its declared pins) installed beside conda's CUDA
    12.6: detect says what its own pins say, and that it does not fit."""
    prefix = tmp_path / "env"
    shutil.copytree(prefix_126, prefix, symlinks=True)
    document = real_document(corpus)
    variant = {**document, "variants": {"cuda12.8": document["variants"]["cuda12.8"]}}
    site = site_packages(prefix)
    add_dist_info(site, "torch", "2.9.0", requires=declared_lines(corpus), variant=variant)
    data = detect_json(cli, "--prefix", str(prefix), "-t", "cuda=12.9", "-t", "cuda_arch=9.0")
    (torch,) = [w for w in data["variant_wheels"] if w["name"] == "torch"]
    assert torch["toolkit"]["cuda"] == "12.8"
    refused = (
        "cuda12.8 pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8) but the prefix's "
        "toolkit is cuda-version 12.6"
    )
    assert torch["toolkit"]["refused"] == refused
    # What doctor finds, in detect too: the build no longer agrees (once, not also as a note).
    health = data["health"]
    assert not health["healthy"]
    (finding,) = [f for f in health["findings"] if f["id"] == "disagreeing-variant:torch"]
    assert finding["severity"] == "warning"
    assert finding["message"] == (
        f"torch 2.9.0 [cuda12.8] no longer agrees with the environment: {refused}"
    )
    assert finding["details"]["reasons"] == [{"kind": "toolkit", "text": refused}]
    assert not any("cuda12.8" in note for note in data["notes"])
    text = cli("detect", "--prefix", str(prefix), "-t", "cuda=12.9", "-t", "cuda_arch=9.0")
    assert "toolkit CUDA 12.8: pins nvidia-cublas 12.8.4.1" in text.stdout
    health_section = text.stdout.partition("\nHealth (variant-bridge doctor)\n")[2]
    assert health_section.startswith(f"  warning: {finding['message']}\n")
    assert f"      fix: variant-bridge install torch==2.9.0 --prefix {prefix}" in health_section


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pypi", "kind", "severity"),
    [("12.6.77", "duplicate-library", "info"), ("12.8.90", "mismatched-library", "warning")],
)
def test_a_cuda_library_present_twice_is_reported_same_minor_or_mismatch(
    cli: Cli, prefix_126: Path, tmp_path: Path, *, pypi: str, kind: str, severity: str
) -> None:
    """Issue 16: conda's cuda-cudart 12.6.77 beside PyPI's nvidia-cuda-runtime-cu12 (12.6.77,
    then 12.8.90): detect says the library is there twice, and whether the minors agree."""
    prefix = tmp_path / "env"
    shutil.copytree(prefix_126, prefix, symlinks=True)
    add_dist_info(site_packages(prefix), "nvidia-cuda-runtime-cu12", pypi)
    data = detect_json(cli, "--prefix", str(prefix), "-t", "cuda=12.9", "-t", "cuda_arch=9.0")
    (finding,) = [f for f in data["health"]["findings"] if f["kind"] == kind]
    assert finding["severity"] == severity
    assert "cuda-cudart" in finding["message"]
    assert f"nvidia-cuda-runtime-cu12 {pypi}" in (finding["message"])
