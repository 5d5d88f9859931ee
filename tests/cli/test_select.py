"""``variant-bridge select`` and ``install`` as a user runs them: exit codes, messages, JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, run_script
from tests.worlds.channel import Channel
from tests.worlds.index_server import IndexServer, closed_port_url
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, solve
from tests.worlds.wheels import make_release, make_wheel

# A declared linux-64 machine: the host's own GPU/CPU never leak into the answers.
MACHINE = (
    "--platform",
    "linux-64",
    "-t",
    "glibc=2.36",
    "-t",
    "archspec=haswell",
    "--python",
    "3.12",
)
LOWER = "nvidia :: cuda_version_lower_bound :: {}"


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    make_release(
        root, "gpupkg", "1.0",
        {"cu129": [LOWER.format("12.9")], "cu126": [LOWER.format("12.6")], "null": []},
        requires=["nvidia-cublas-cu12==12.6.4.1"],
    )  # fmt: skip
    make_release(root, "onlygpu", "1.0", {"cu129": [LOWER.format("12.9")]}, non_variant=False)
    make_release(root, "brokenjson", "1.0", {"cu129": [LOWER.format("12.9")]})
    (root / "brokenjson-1.0-variants.json").write_text("{not json")
    make_wheel(root, "nvidia-cublas-cu12", "12.6.4.1")
    return root


@pytest.fixture(scope="module")
def index(wheels: Path) -> Iterator[IndexServer]:
    with IndexServer(wheels) as server:
        yield server


@pytest.fixture(scope="module")
def cublas_prefix(cuda_channel: Channel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A rattler-installed prefix with cuda-version 12.6 and conda's libcublas."""
    root = tmp_path_factory.mktemp("prefix")
    specs = ["libcublas", "cuda-version 12.6.*"]
    records = solve([cuda_channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
    return install_prefix(records, root / "env", root / "cache", specs)


def test_select_json_shape(cli: Cli, wheels: Path) -> None:
    result = cli("select", "gpupkg", "-f", str(wheels), *MACHINE, "-t", "cuda=12.9", "--json")
    assert result.exit_code == 0, result.stderr
    choice, dependency = json.loads(result.stdout)  # the tree: the request, then its dependency
    assert set(choice) >= {"package", "version", "selected", "candidates", "duplicates"}
    assert (choice["requested"], choice["verdict"]) == (True, "selected")
    assert choice["required_by"] == [{"package": None, "requirement": "gpupkg"}]
    assert choice["reason"] == choice["selected"]["reason"]
    assert (dependency["package"], dependency["version"]) == ("nvidia-cublas-cu12", "12.6.4.1")
    assert dependency["requested"] is False
    assert dependency["required_by"] == [
        {"package": "gpupkg 1.0", "requirement": "nvidia-cublas-cu12==12.6.4.1"}
    ]
    assert dependency["selected"]["filename"] == "nvidia_cublas_cu12-12.6.4.1-py3-none-any.whl"
    assert (choice["package"], choice["version"]) == ("gpupkg", "1.0")
    assert choice["selected"]["filename"] == "gpupkg-1.0-py3-none-any-cu129.whl"
    assert choice["selected"]["url"] == (wheels / "gpupkg-1.0-py3-none-any-cu129.whl").as_uri()
    assert choice["selected"]["properties"] == [LOWER.format("12.9")]
    order = [(c["label"], c["rank"]) for c in choice["candidates"]]
    assert order == [("cu129", 1), ("cu126", 2), ("null", 3), (None, 4)]
    assert all(c["reason"] for c in choice["candidates"])


def test_select_text_explains_every_file(cli: Cli, wheels: Path) -> None:
    result = cli("select", "gpupkg", "-f", str(wheels), *MACHINE, "-t", "cuda=12.6")
    assert result.exit_code == 0, result.stderr
    assert "gpupkg 1.0: gpupkg-1.0-py3-none-any-cu126.whl" in result.stdout
    assert "__cuda=12.6" in result.stdout  # the summary says which view was used
    assert "needs CUDA driver >= 12.9 but __cuda is 12.6" in result.stdout


def test_prefix_toolkit_decides_and_duplicates_are_warned(
    cli: Cli, wheels: Path, cublas_prefix: Path
) -> None:
    result = cli("select", "gpupkg", "-f", str(wheels), "--prefix", str(cublas_prefix),
                 "--python", "3.12", "--json", env={"CONDA_OVERRIDE_CUDA": "12.9"})  # fmt: skip
    assert result.exit_code == 0, result.stderr
    choice, _ = json.loads(result.stdout)
    assert choice["selected"]["label"] == "cu126"  # cu129 needs a newer toolkit than the prefix's
    (dup,) = choice["duplicates"]
    assert (dup["pypi"], dup["conda"]) == ("nvidia-cublas-cu12", "libcublas")
    assert (
        "warning: gpupkg-1.0-py3-none-any-cu126.whl requires nvidia-cublas-cu12==12.6.4.1"
        in result.stderr
    )
    assert "libcublas 12.6" in result.stderr


@pytest.mark.parametrize("form", ["json", "html"])
def test_both_index_forms_select_the_same(cli: Cli, index: IndexServer, form: str) -> None:
    with index.configured(forms=(form,)):
        result = cli(
            "select", "gpupkg", "--index-url", index.url, *MACHINE, "-t", "cuda=12.9", "--json"
        )
    assert result.exit_code == 0, result.stderr
    choice, _ = json.loads(result.stdout)
    assert choice["selected"]["label"] == "cu129"
    assert choice["selected"]["sha256"]


def test_nothing_compatible_prints_the_report_then_fails(cli: Cli, wheels: Path) -> None:
    result = cli("select", "onlygpu", "-f", str(wheels), *MACHINE, "-t", "cuda=", "--json")
    assert result.exit_code == 1
    (choice,) = json.loads(result.stdout)
    assert choice["selected"] is None
    (candidate,) = choice["candidates"]
    assert "no __cuda" in candidate["reason"]  # the why is in the report...
    # ...and the error line points there instead of repeating it.
    assert result.stderr == (
        "error: no compatible wheel for onlygpu 1.0 (each file's reason is listed under "
        "candidates in the JSON)\n"
    )


def test_install_without_compatible_wheel_lists_every_reason(cli: Cli, wheels: Path) -> None:
    result = cli("install", "onlygpu", "-f", str(wheels), *MACHINE[:6], "-t", "cuda=",
                 "--python", sys.executable)  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "error: no compatible wheel for onlygpu 1.0: onlygpu-1.0-py3-none-any-cu129.whl: "
    )
    assert "no __cuda" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchpkg"], "error: no files for 'nosuchpkg'"),  # unknown package
        (["brokenjson"], "brokenjson-1.0-variants.json"),  # corrupt variants.json is named
        (["gpupkg", "-t", "cuda=abc"], "error: --target cuda='abc'"),  # malformed target
        (["gpupkg==", "-t", "cuda=12.9"], "error: invalid package request 'gpupkg=='"),  # bad request
        (["gpupkg", "--python", "/no/python"], "error: --python '/no/python'"),  # bad interpreter
    ],
)  # fmt: skip
def test_errors_are_one_line_exit_1(cli: Cli, wheels: Path, args: list[str], message: str) -> None:
    result = cli("select", *args, "-f", str(wheels), "--platform", "linux-64")
    assert result.exit_code == 1, result.stdout
    assert result.stderr.count("\n") == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_index_is_one_line(cli: Cli) -> None:
    url = closed_port_url()
    result = cli("select", "gpupkg", "--index-url", url, *MACHINE)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot fetch ")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["gpupkg"],  # no --find-links / --index-url
        ["gpupkg", "-f", "x", "--prefix", "p", "--lockfile", "l"],  # both prefix and lock file
        [],  # no package
    ],
)
def test_usage_errors_exit_2(cli: Cli, args: list[str]) -> None:
    assert cli("select", *args).exit_code == 2


def _venv(path: Path) -> Path:
    uv = Path(sys.executable).with_name("uv")
    subprocess.run([str(uv), "venv", "-q", "--python", sys.executable, str(path)], check=True)
    return path / "bin" / "python"


def _labels(python: Path) -> dict[str, str | None]:
    code = (
        "import importlib.metadata as m, json\n"
        "print(json.dumps({d.metadata['Name']: (next(iter(json.loads(d.read_text('variant.json'))"
        "['variants'])) if d.read_text('variant.json') else None) for d in m.distributions()}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_install_script_end_to_end(wheels: Path, cublas_prefix: Path, tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv")
    result = run_script(
        "install", "gpupkg", "-f", str(wheels), "--prefix", str(cublas_prefix),
        "--python", str(python), env={"CONDA_OVERRIDE_CUDA": "12.9"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Installed with uv" in result.stdout
    assert "gpupkg-1.0-py3-none-any-cu126.whl" in result.stdout
    assert "warning:" in result.stderr  # the cuBLAS duplicate, named on both sides
    assert _labels(python)["gpupkg"] == "cu126"


@pytest.mark.slow
def test_install_hash_mismatch_exit_1_nothing_installed(
    cli: Cli, index: IndexServer, tmp_path: Path
) -> None:
    python = _venv(tmp_path / "venv")
    with index.configured(wrong_hash=frozenset({"gpupkg-1.0-py3-none-any-cu129.whl"})):
        result = cli("install", "gpupkg", "--index-url", index.url, *MACHINE[:6],
                     "-t", "cuda=12.9", "--python", str(python))  # fmt: skip
    assert result.exit_code == 1
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith("error: hash mismatch for gpupkg-1.0-py3-none-any-cu129.whl")
    )
    assert "gpupkg" not in _labels(python)


@pytest.mark.slow
def test_install_dry_run_json(cli: Cli, wheels: Path, tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv")
    result = cli("install", "gpupkg", "-f", str(wheels), *MACHINE[:6], "-t", "cuda=12.9",
                 "--python", str(python), "--dry-run", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["dry_run"] is True
    assert data["installer"] == "uv"
    package, dependency = data["packages"]
    assert package["selected"]["label"] == "cu129"
    for file in (package, dependency):  # the whole tree is fetched and checked
        assert len(file["sha256"]) == 64
        assert file["sha256_checked"] is True  # a find-links file: hashed here and pinned
    assert data["installed"] == [
        package["selected"]["filename"],
        dependency["selected"]["filename"],
    ]
    assert "gpupkg" not in _labels(python)


@pytest.mark.slow
def test_install_dry_run_text_says_what_from_where_and_the_checked_hash(
    cli: Cli, index: IndexServer, tmp_path: Path
) -> None:
    python = _venv(tmp_path / "venv")
    result = cli("install", "gpupkg", "--index-url", index.url, *MACHINE[:6], "-t", "cuda=12.9",
                 "--python", str(python), "--dry-run")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    name = "gpupkg-1.0-py3-none-any-cu129.whl"
    dependency = "nvidia_cublas_cu12-12.6.4.1-py3-none-any.whl"
    at = lines.index(f"Would install with uv into {python}: {name}, {dependency}")
    assert lines[at + 1].startswith(f"  {name} from http://")
    assert lines[at + 1].endswith(f"/{name}")
    assert lines[at + 2].startswith("      sha256 ")
    assert lines[at + 2].endswith(" matches the index")  # the index advertised it
    assert lines[at + 3].startswith(f"  {dependency} from http://")  # the tree, not uv, decides
    assert lines[-1] == "Nothing was installed (--dry-run)."
    assert "gpupkg" not in _labels(python)


def test_install_needs_an_interpreter_not_a_version(cli: Cli, wheels: Path) -> None:
    result = cli("install", "gpupkg", "-f", str(wheels), *MACHINE, "-t", "cuda=12.9")
    assert result.exit_code == 1
    assert "no interpreter to install into" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--extra-index-url", "nope"],
            "error: --extra-index-url 'nope': expected an http://",
        ),  # named by its option
        (
            ["--index-url", "http://[::1"],
            "error: --index-url 'http://[::1': expected",
        ),  # was an unexpected ValueError
        (
            ["-f", "http://[::1"],
            "error: --find-links 'http://[::1': expected",
        ),  # find-links URLs too
    ],
)
def test_malformed_urls_are_named_by_their_option(cli: Cli, args: list[str], message: str) -> None:
    result = cli("select", "gpupkg", *args, *MACHINE)
    assert result.exit_code == 1
    assert result.stderr.startswith(message)


def test_python_given_twice_is_a_usage_error(cli: Cli, wheels: Path) -> None:
    result = cli("select", "gpupkg", "-f", str(wheels), "--python", "3.12", "-t", "python=3.13")
    assert result.exit_code == 2
