"""Installing exactly the chosen wheel, hash-checked first, with real uv and pip into throwaway venvs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.jobs.conftest import choose
from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.detect.machine import host_platform as host_subdir
from variant_bridge.environment import Environment, Source, Toolkit, VirtualPackage
from variant_bridge.errors import IndexReadError, InstallError
from variant_bridge.indexes import Downloads, Transport
from variant_bridge.install import Installer, InstallPlan, InstallResult, find_uv
from variant_bridge.install import install as run_install
from variant_bridge.jobs.install import plan
from variant_bridge.jobs.select import PackageChoice
from variant_bridge.platform_tags import PythonSource, TargetPython

pytestmark = pytest.mark.slow

ENV = Environment(
    "linux-64",
    (VirtualPackage("__glibc", "2.36"), VirtualPackage("__cuda", "12.9")),
    Toolkit("cuda-version", "12.6", Source.PREFIX),
)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    make_release(
        root,
        "gpupkg",
        "1.0",
        {
            "cu129": ["nvidia :: cuda_version_lower_bound :: 12.9"],
            "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"],
            "null": [],
        },
        requires=["helperdep>=1"],
    )
    make_wheel(root, "helperdep", "1.1")
    return root


def install(plan: InstallPlan, *, dry_run: bool = False) -> InstallResult:
    """The install of *plan* with a command's own downloads (a scratch directory, no cache)."""
    with Downloads.temporary(transport=Transport()) as downloads:
        return run_install(plan, downloads=downloads, dry_run=dry_run)


def plan_install(
    choices: Sequence[PackageChoice],
    *,
    python: TargetPython,
    installer: Installer | None = None,
    find_links: Sequence[Path] = (),
    index_urls: Sequence[str] = (),
    platform: str | None = None,
) -> InstallPlan:
    """The install job's plan for the chosen files (the installer needs no source of its own:
    *find_links* and *index_urls* are where the choices came from, kept for the call sites)."""
    return plan(choices, python=python, installer=installer, platform=platform)


def _venv(path: Path, *, with_pip: bool) -> TargetPython:
    if with_pip:
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    else:
        uv = find_uv()
        assert uv is not None
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(path)], check=True)
    python = path / "bin" / "python"
    return TargetPython.parse(
        "{}.{}.{}".format(*sys.version_info[:3]),
        executable=str(python),
        source=PythonSource.OPTION,
    )


def _installed(target: TargetPython) -> dict[str, str | None]:
    """name -> installed variant label (None for a non-variant wheel)."""
    code = (
        "import importlib.metadata as m, json\n"
        "out = {}\n"
        "for d in m.distributions():\n"
        "    v = d.read_text('variant.json')\n"
        "    out[d.metadata['Name']] = next(iter(json.loads(v)['variants'])) if v else None\n"
        "print(json.dumps(out))\n"
    )
    assert target.executable is not None
    run = subprocess.run(
        [target.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def _direct_url(target: TargetPython, name: str) -> dict[str, object]:
    assert target.executable is not None
    code = f"import importlib.metadata as m; print(m.distribution({name!r}).read_text('direct_url.json'))"
    run = subprocess.run(
        [target.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_installs_exactly_the_chosen_variant(wheels: Path, tmp_path: Path, installer: str) -> None:
    target = _venv(tmp_path / "venv", with_pip=installer == "pip")
    choices = choose(["gpupkg"], env=ENV, python=target, find_links=[wheels])
    plan = plan_install(choices, python=target, installer=installer, find_links=[wheels])  # type: ignore[arg-type]
    result = install(plan)
    installed = _installed(target)
    assert installed["gpupkg"] == "cu126"  # the variant, with its variant.json kept
    assert installed["helperdep"] is None  # the rest resolved from the same find-links
    origin = _direct_url(target, "gpupkg")
    assert origin["url"] == (wheels / "gpupkg-1.0-py3-none-any-cu126.whl").as_uri()
    assert origin["archive_info"] == {  # PEP 610 points at the real file, not the staging copy
        "hashes": {"sha256": dict(result.hashes)["gpupkg-1.0-py3-none-any-cu126.whl"]},
        "hash": "sha256=" + dict(result.hashes)["gpupkg-1.0-py3-none-any-cu126.whl"],
    }
    assert plan.installer == installer


def test_record_stays_valid_after_origin_rewrite(wheels: Path, tmp_path: Path) -> None:
    target = _venv(tmp_path / "venv", with_pip=False)
    choices = choose(["gpupkg"], env=ENV, python=target, find_links=[wheels])
    install(plan_install(choices, python=target, installer="uv", find_links=[wheels]))
    assert target.executable is not None
    check = subprocess.run(
        [target.executable, "-c",
         ("import importlib.metadata as m, hashlib, base64\n"
         "d = m.distribution('gpupkg')\n"
         "for f in d.files:\n"
         "    if f.hash and f.name == 'direct_url.json':\n"
         "        data = f.read_binary()\n"
         "        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
         "        print(h == f.hash.value)\n")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert check.stdout.strip() == "True"


def test_hash_mismatch_installs_nothing(wheels: Path, tmp_path: Path) -> None:
    target = _venv(tmp_path / "venv", with_pip=False)
    with IndexServer(wheels, wrong_hash=frozenset({"gpupkg-1.0-py3-none-any-cu126.whl"})) as index:
        choices = choose(["gpupkg"], env=ENV, python=target, index_urls=[index.url])
        plan = plan_install(choices, python=target, installer="uv", index_urls=[index.url])
        with pytest.raises(
            InstallError, match=r"hash mismatch for gpupkg-1\.0-py3-none-any-cu126\.whl"
        ):
            install(plan)
    assert "gpupkg" not in _installed(target)


def test_unreachable_index_at_download_installs_nothing(wheels: Path, tmp_path: Path) -> None:
    target = _venv(tmp_path / "venv", with_pip=False)
    with IndexServer(wheels) as index:
        choices = choose(["gpupkg"], env=ENV, python=target, index_urls=[index.url])
        plan = plan_install(choices, python=target, installer="uv", index_urls=[index.url])
    with pytest.raises(IndexReadError, match="cannot"):
        install(plan)  # the server is gone
    assert "gpupkg" not in _installed(target)


def test_dry_run_checks_the_files_and_installs_nothing(wheels: Path, tmp_path: Path) -> None:
    target = _venv(tmp_path / "venv", with_pip=False)
    choices = choose(["gpupkg"], env=ENV, python=target, find_links=[wheels])
    planned = plan_install(choices, python=target, installer="uv", find_links=[wheels])
    dry = install(planned, dry_run=True)
    assert (dry.dry_run, dry.returncode, dry.output) == (True, 0, "")  # no installer ran
    assert "gpupkg" not in _installed(target)
    real = install(planned)
    assert dry.hashes == real.hashes  # the same files, checked the same way
    # What the dry run reports is the command the real run runs (less its staging directory).
    assert [Path(a).name for a in dry.command] == [Path(a).name for a in real.command]
    assert real.command[real.command.index("--reinstall-package") + 1] == "gpupkg"
    assert "--dry-run" not in dry.command


def test_a_dry_run_refuses_a_hash_mismatch_like_the_real_run(wheels: Path, tmp_path: Path) -> None:
    target = _venv(tmp_path / "venv", with_pip=False)
    with IndexServer(wheels, wrong_hash=frozenset({"gpupkg-1.0-py3-none-any-cu126.whl"})) as index:
        choices = choose(["gpupkg"], env=ENV, python=target, index_urls=[index.url])
        planned = plan_install(choices, python=target, installer="uv", index_urls=[index.url])
        with pytest.raises(InstallError, match=r"hash mismatch for gpupkg-1\.0-py3-none-any-cu126"):
            install(planned, dry_run=True)


def test_plan_refuses_without_interpreter_or_compatible_wheel(wheels: Path, tmp_path: Path) -> None:
    version_only = TargetPython.parse("3.12.7", source=PythonSource.OPTION)
    choices = choose(["gpupkg"], env=ENV, python=version_only, find_links=[wheels])
    with pytest.raises(InstallError, match="no interpreter to install into"):
        plan_install(choices, python=version_only)
    make_release(tmp_path, "onlygpu", "1.0", {"cu129": ["nvidia :: cuda_version_lower_bound :: 12.9"]},
                 non_variant=False)  # fmt: skip
    none = choose(["onlygpu"], env=ENV, python=version_only, find_links=[tmp_path])
    with pytest.raises(InstallError, match=r"no compatible wheel for onlygpu 1\.0: .*cu129"):
        plan_install(none, python=version_only)


def test_default_installer_is_uv_when_available(wheels: Path) -> None:
    target = TargetPython.parse("3.12.7", executable=sys.executable)
    choices = choose(["gpupkg"], env=ENV, python=target, find_links=[wheels])
    assert plan_install(choices, python=target).installer == "uv"


@pytest.fixture
def _no_uv(monkeypatch: pytest.MonkeyPatch) -> None:
    # A machine without uv: neither on PATH nor as the `uv` package's binary.
    monkeypatch.setattr("variant_bridge.install.find_uv", lambda: None)


@pytest.mark.usefixtures("_no_uv")
def test_pip_when_uv_is_missing_and_a_clear_error_when_uv_is_demanded(wheels: Path) -> None:
    target = TargetPython.parse("3.12.7", executable=sys.executable)
    choices = choose(["gpupkg"], env=ENV, python=target, find_links=[wheels])
    assert plan_install(choices, python=target).installer == "pip"
    with pytest.raises(InstallError, match="uv is not installed"):
        plan_install(choices, python=target, installer="uv")


def test_pip_replaces_another_variant_of_the_same_version(wheels: Path, tmp_path: Path) -> None:
    # pip keeps an installed distribution of the same version, whatever file it came from.
    target = _venv(tmp_path / "venv", with_pip=True)
    driver_only = Environment(
        "linux-64", (VirtualPackage("__glibc", "2.36"), VirtualPackage("__cuda", "12.9"))
    )
    first = choose(["gpupkg"], env=driver_only, python=target, find_links=[wheels])
    install(plan_install(first, python=target, installer="pip", find_links=[wheels]))
    assert _installed(target)["gpupkg"] == "cu129"
    second = choose(["gpupkg"], env=ENV, python=target, find_links=[wheels])  # toolkit 12.6
    install(plan_install(second, python=target, installer="pip", find_links=[wheels]))
    assert _installed(target)["gpupkg"] == "cu126"
    assert str(_direct_url(target, "gpupkg")["url"]).endswith("-cu126.whl")


def test_uv_replaces_another_variant_of_the_same_version(wheels: Path, tmp_path: Path) -> None:
    target = _venv(tmp_path / "venv", with_pip=False)
    driver_only = Environment(
        "linux-64", (VirtualPackage("__glibc", "2.36"), VirtualPackage("__cuda", "12.9"))
    )
    install(plan_install(choose(["gpupkg"], env=driver_only, python=target, find_links=[wheels]),
                         python=target, installer="uv", find_links=[wheels]))  # fmt: skip
    install(plan_install(choose(["gpupkg"], env=ENV, python=target, find_links=[wheels]),
                         python=target, installer="uv", find_links=[wheels]))  # fmt: skip
    assert _installed(target)["gpupkg"] == "cu126"


def test_a_corrupt_wheel_from_an_index_is_refused_by_name(tmp_path: Path) -> None:
    root = tmp_path / "wheels"
    root.mkdir()
    make_release(root, "gpupkg", "1.0", {"cu126": ["nvidia :: cuda_version_lower_bound :: 12.6"]})
    (root / "gpupkg-1.0-py3-none-any.whl").write_bytes(b"not a zip")  # the non-variant wheel
    target = _venv(tmp_path / "venv", with_pip=False)
    no_cuda = Environment("linux-64", (VirtualPackage("__glibc", "2.36"),))
    with IndexServer(root) as index:
        choices = choose(["gpupkg"], env=no_cuda, python=target, index_urls=[index.url])
        plan = plan_install(choices, python=target, installer="uv", index_urls=[index.url])
        with pytest.raises(
            InstallError, match=r"gpupkg-1\.0-py3-none-any\.whl from http.* is not a valid wheel"
        ):
            install(plan)
    assert "gpupkg" not in _installed(target)


def test_installer_failure_keeps_the_cause(tmp_path: Path) -> None:
    root = tmp_path / "wheels"
    make_wheel(root, "blocked", "1.0")
    target = _venv(tmp_path / "venv", with_pip=False)
    assert target.executable is not None
    site = next(Path(target.executable).parent.parent.glob("lib/python*/site-packages"))
    (site / "blocked").write_text("a file where the package's folder goes\n")
    choices = choose(["blocked"], env=ENV, python=target, find_links=[root])
    with pytest.raises(InstallError) as caught:
        install(plan_install(choices, python=target, installer="uv"))
    message = str(caught.value)
    assert message.startswith("uv failed (exit 2): ")
    assert "File exists" in message  # the cause, not only uv's last line
    assert "\n" not in message


def test_wheels_chosen_for_another_platform_are_not_installed_here(wheels: Path) -> None:
    target = TargetPython.parse("3.12.7", executable=sys.executable)
    choices = choose(["gpupkg"], env=ENV, python=target, find_links=[wheels])
    other = "osx-arm64" if host_subdir() != "osx-arm64" else "linux-64"
    with pytest.raises(InstallError, match=rf"chosen for {other}, but .* runs on {host_subdir()}"):
        plan_install(choices, python=target, platform=other)


def test_pip_dry_run_changes_nothing_and_the_real_run_replaces_the_installed_variant(
    wheels: Path, tmp_path: Path
) -> None:
    target = _venv(tmp_path / "venv", with_pip=True)
    driver_only = Environment(
        "linux-64", (VirtualPackage("__glibc", "2.36"), VirtualPackage("__cuda", "12.9"))
    )
    install(plan_install(choose(["gpupkg"], env=driver_only, python=target, find_links=[wheels]),
                         python=target, installer="pip", find_links=[wheels]))  # fmt: skip
    planned = plan_install(choose(["gpupkg"], env=ENV, python=target, find_links=[wheels]),
                           python=target, installer="pip", find_links=[wheels])  # fmt: skip
    dry = install(planned, dry_run=True)
    assert dry.command[:4] == (target.executable, "-m", "pip", "install")
    assert _installed(target)["gpupkg"] == "cu129"  # a dry run changes nothing
    install(planned)
    assert _installed(target)["gpupkg"] == "cu126"  # the same version, the chosen file


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_a_broken_interpreter_is_reported_with_its_cause(
    wheels: Path, tmp_path: Path, installer: str
) -> None:
    broken = tmp_path / "python"
    broken.write_text(
        "#!/bin/sh\necho 'libpython3.12.so: cannot open shared object file' >&2\nexit 127\n"
    )
    broken.chmod(0o755)
    target = TargetPython.parse("3.12.7", executable=str(broken), source=PythonSource.PREFIX)
    choices = choose(["gpupkg"], env=ENV, python=target, find_links=[wheels])
    plan = plan_install(choices, python=target, installer=installer, find_links=[wheels])  # type: ignore[arg-type]
    with pytest.raises(InstallError, match=r"libpython3\.12\.so: cannot open shared object file"):
        install(plan)
