"""``variant-bridge doctor`` as a user runs it: a rattler-installed prefix with a real interpreter
and wheels the bridge installed, its toolkit changed by a second rattler install; text, --json,
exit codes, and bad input (one line, never a traceback)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Cli, run_script
from tests.worlds.gpu_env import CUBLAS, gpu_channel, gpulib_wheels, make_env, set_toolkit
from tests.worlds.lockfile import LockedPlatform, write_lockfile
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, solve

pytestmark = pytest.mark.slow

DRIVER = {"CONDA_OVERRIDE_CUDA": "12.9"}
JSON_KEYS = {
    "origin", "platform", "python", "policy", "toolkit", "place", "healthy", "worst", "checked",
    "findings", "problems", "notes",
}  # fmt: skip


@dataclass(frozen=True)
class World:
    healthy: Path
    """cuda-version 12.6, gpulib cu126 + nvidia-cublas-cu12 12.6 installed by the bridge."""
    changed: Path
    """The same prefix after `conda install cuda-version=12.4` (a second rattler install)."""
    wheels: Path
    lock: Path
    """A pixi.lock of cuda-version 12.4 that locks the local gpulib cu126 wheel."""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("cli-doctor")
    channel = gpu_channel(root / "channel")
    wheels = gpulib_wheels(root / "wheels")
    healthy = make_env(channel, root / "a", "12.6")
    result = run_script("install", "gpulib", "-f", str(wheels), "--prefix", str(healthy),
                        env=DRIVER)  # fmt: skip
    assert result.returncode == 0, result.stderr
    changed = root / "b" / "env"
    shutil.copytree(healthy, changed, symlinks=True)
    set_toolkit(channel, changed, root / "pkgs", "12.4")
    records = solve([channel], ["cuda-version 12.4.*", "libcublas"],
                    (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))  # fmt: skip
    wheel = wheels / "gpulib-1.0-py3-none-any-cu126.whl"
    (root / "ws").mkdir()
    lock = write_lockfile(
        root / "ws" / "pixi.lock",
        {"default": [LockedPlatform("linux-64", records, [("gpulib", "1.0", wheel.as_uri())])]},
        channels=[channel.url],
    )
    return World(healthy, changed, wheels, lock)


def doctor_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    result = run_script("doctor", "--json", *args, env={**DRIVER, **(env or {})})
    assert result.stderr == "", result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    assert set(data) == JSON_KEYS
    return result.returncode, data


def test_a_healthy_prefix_exits_0_and_says_what_it_checked(world: World) -> None:
    result = run_script("doctor", "--prefix", str(world.healthy), env=DRIVER)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        (
            f"Examined: prefix {world.healthy} (linux-64, Python {_python()}, cuda-version=12.6 "
            "(conda-meta), __cuda=12.9 (CONDA_OVERRIDE_CUDA))"
        ),
        (
            f"info: nvidia-cublas-cu12 {CUBLAS['12.6']} (PyPI, CUDA 12.6) and libcublas 12.6.77 "
            "(conda, CUDA 12.6) are the same library twice: wasted space, whichever loads first "
            "serves; required by gpulib 1.0"
        ),
        "Healthy: no warning or error (1 info); 2 PyPI distributions checked.",
    ]


def _python() -> str:
    import sys

    return "{}.{}.{}".format(*sys.version_info[:3])


def test_a_changed_toolkit_exits_1_with_each_finding_and_its_fix(world: World) -> None:
    prefix = world.changed
    result = run_script("doctor", "--prefix", str(prefix), env=DRIVER)
    assert result.returncode == 1
    assert result.stderr == ""
    reinstall = f"variant-bridge install gpulib==1.0 --prefix {prefix} -f {world.wheels}"
    assert result.stdout.splitlines()[1:] == [
        (
            "warning: gpulib 1.0 [cu126] no longer agrees with the environment: needs "
            "cuda_version_lower_bound 12.6 but the prefix's toolkit is cuda-version 12.4; cu126 pins "
            "nvidia-cublas-cu12 12.6.4.1 (conda: libcublas, CUDA 12.6) but the prefix's toolkit is "
            "cuda-version 12.4"
        ),
        f"    fix: {reinstall}",
        f"    or:  conda install -p {prefix} cuda-version=12.6",
        (
            f"warning: nvidia-cublas-cu12 {CUBLAS['12.6']} (PyPI, CUDA 12.6) and libcublas 12.4.127 "
            "(conda, CUDA 12.4) are the same library at different CUDA minors: the wheel's copy may "
            "shadow conda's; required by gpulib 1.0"
        ),
        f"    fix: {reinstall}",
        "2 findings (2 warnings); 2 PyPI distributions checked.",
    ]


def test_json_has_ids_kinds_and_fixes(world: World) -> None:
    code, data = doctor_json("--prefix", str(world.changed))
    assert code == 1
    assert (data["healthy"], data["worst"], data["checked"]) == (False, "warning", 2)
    assert data["place"] == {
        "kind": "prefix", "path": str(world.changed),
        "python": str(world.changed / "bin" / "python"), "environment": None,
    }  # fmt: skip
    assert data["toolkit"] == {"package": "cuda-version", "version": "12.4", "source": "conda-meta"}
    gpulib, cublas = data["findings"]
    assert (gpulib["id"], gpulib["kind"], gpulib["subject"]) == (
        "disagreeing-variant:gpulib", "disagreeing-variant", "gpulib",
    )  # fmt: skip
    assert gpulib["details"] == {
        "name": "gpulib",
        "version": "1.0",
        "label": "cu126",
        "reasons": [
            {"kind": "properties", "text": "needs cuda_version_lower_bound 12.6 but the prefix's "
             "toolkit is cuda-version 12.4"},
            {"kind": "toolkit", "text": "cu126 pins nvidia-cublas-cu12 12.6.4.1 (conda: "
             "libcublas, CUDA 12.6) but the prefix's toolkit is cuda-version 12.4"},
        ],
        "runs_here": True,
        "toolkit_only": True,
        "toolkit": "12.6",
        "origin": (world.wheels / "gpulib-1.0-py3-none-any-cu126.whl").as_uri(),
        "sha256": gpulib["details"]["sha256"],
    }  # fmt: skip
    assert len(gpulib["details"]["sha256"]) == 64
    assert [f["kind"] for f in gpulib["fixes"]] == ["reinstall", "set-toolkit"]
    assert gpulib["fixes"][0] == {
        "kind": "reinstall",
        "packages": ["gpulib==1.0"],
        "command": f"variant-bridge install gpulib==1.0 --prefix {world.changed} -f {world.wheels}",
        "argv": ["variant-bridge", "install", "gpulib==1.0", "--prefix", str(world.changed),
                 "-f", str(world.wheels)],
        "complete": True,
        "note": None,
    }  # fmt: skip
    assert cublas["id"] == "mismatched-library:nvidia-cublas-cu12"
    assert cublas["details"] == {
        "pypi": "nvidia-cublas-cu12", "pypi_version": CUBLAS["12.6"], "conda": "libcublas",
        "conda_version": "12.4.127", "basis": "cuda", "pypi_said": "12.6", "conda_said": "12.4",
        "required_by": ["gpulib 1.0"],
    }  # fmt: skip


def test_conda_prefix_is_the_default_and_python_examines_an_interpreter(world: World) -> None:
    code, data = doctor_json(env={"CONDA_PREFIX": str(world.healthy)})
    assert (code, data["place"]["kind"], data["origin"]) == (
        0, "prefix", f"prefix {world.healthy} ($CONDA_PREFIX)",
    )  # fmt: skip
    python = str(world.changed / "bin" / "python")
    code, data = doctor_json("--python", python)  # its conda side: the prefix it lives in
    assert code == 1
    assert data["place"] == {"kind": "interpreter", "path": python, "python": python,
                             "environment": None}  # fmt: skip
    assert data["toolkit"]["version"] == "12.4"
    assert [f["id"] for f in data["findings"]] == [
        "disagreeing-variant:gpulib", "mismatched-library:nvidia-cublas-cu12",
    ]  # fmt: skip
    assert data["findings"][0]["fixes"][0]["command"].endswith(
        f"install gpulib==1.0 --python {python} -f {world.wheels}"
    )


def test_a_lock_is_examined_and_its_fixes_address_the_workspace(world: World) -> None:
    code, data = doctor_json("--lockfile", str(world.lock))
    assert code == 1
    (finding,) = data["findings"]
    assert finding["id"] == "disagreeing-variant:gpulib"
    assert [f["command"] for f in finding["fixes"]] == [
        f"variant-bridge select gpulib==1.0 --lockfile {world.lock} -f {world.wheels}",
        "pixi add cuda-version=12.6",
    ]


def test_detect_shows_the_same_findings(cli: Cli, world: World) -> None:
    text = cli("detect", "--prefix", str(world.changed), env=DRIVER)
    assert text.exit_code == 0  # detect reports; doctor is the check that fails
    section = text.stdout.partition("\nHealth (variant-bridge doctor)\n")[2].partition("\n\n")[0]
    assert section.splitlines()[0].startswith("  warning: gpulib 1.0 [cu126] no longer agrees")
    assert "      or:  conda install -p " in section
    data = json.loads(cli("detect", "--json", "--prefix", str(world.healthy), env=DRIVER).stdout)
    assert [f["id"] for f in data["health"]["findings"]] == ["duplicate-library:nvidia-cublas-cu12"]
    assert data["health"]["healthy"]
    quiet = cli("detect", "--prefix", str(world.healthy), "--cuda-policy", "driver", env=DRIVER)
    assert "\nHealth (variant-bridge doctor)\n  info: nvidia-cublas-cu12" in quiet.stdout


# -- bad input ----------------------------------------------------------------------------


def _one_error_line(result: Any, code: int = 1) -> str:
    assert result.returncode == code, result.stdout
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    if code == 1:
        assert result.stderr.count("\n") == 1, result.stderr
    return str(result.stderr)


def test_a_missing_prefix_is_one_line(tmp_path: Path) -> None:
    line = _one_error_line(run_script("doctor", "--prefix", str(tmp_path / "gone")))
    assert line == f"error: --prefix {tmp_path / 'gone'}: no such directory\n"


def test_a_corrupt_conda_record_is_one_line_naming_it(world: World, tmp_path: Path) -> None:
    prefix = tmp_path / "env"
    shutil.copytree(world.healthy, prefix, symlinks=True)
    (record,) = (prefix / "conda-meta").glob("libcublas-*.json")
    record.write_text('{"name": "libcublas", "version": ')
    line = _one_error_line(run_script("doctor", "--prefix", str(prefix), env=DRIVER))
    assert line.startswith(f"error: {record}")


def test_a_corrupt_installed_variant_json_is_one_line_naming_it(
    world: World, tmp_path: Path
) -> None:
    prefix = tmp_path / "env"
    shutil.copytree(world.healthy, prefix, symlinks=True)
    (variant,) = prefix.glob("lib/python*/site-packages/gpulib-1.0.dist-info/variant.json")
    variant.write_text("{")
    line = _one_error_line(run_script("doctor", "--prefix", str(prefix), env=DRIVER))
    assert line.startswith("error: ")
    assert str(variant) in line


def test_usage_errors_exit_2(world: World) -> None:
    nothing = run_script("doctor")
    _one_error_line(nothing, code=2)
    assert "Nothing to examine: pass --prefix, --lockfile or --python" in nothing.stderr
    both = run_script("doctor", "--python", "python3", "--lockfile", str(world.lock))
    _one_error_line(both, code=2)
    assert "--python and --lockfile cannot be used together" in both.stderr


def test_an_interpreter_that_is_not_one_is_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("not a program\n")
    line = _one_error_line(run_script("doctor", "--python", str(fake)))
    assert line.startswith(f"error: --python '{fake}': ")
    missing = _one_error_line(run_script("doctor", "--python", str(tmp_path / "nope")))
    assert "expected a version like 3.12 or a Python interpreter" in missing
