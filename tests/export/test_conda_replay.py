"""The exported environment.yml replayed the way ``conda env create -f`` runs it, on real parts:
a rattler-solved prefix holding torch-shaped stand-in wheels with the real published variant
metadata (torch 2.9.0 ``cuda12.8``, every CUDA component pin of its declaration) installed by uv.

- the conda part solves with rattler for a machine that has only the virtual packages stock
  conda provides (no ``__cuda_arch``: the nvidia-virtual-packages plugin is not there), to the
  very records of the prefix;
- the pip part, written to a requirements file beside environment.yml as conda does, installs
  with pip from that directory, offline: its index is a closed port, so only ``--no-index`` and
  the find-links/copies the export wrote can satisfy it, and pip's hash-checking mode checks
  every file.

(By hand, the same against real conda 26.1: docs/share.md, "Checked with real conda".)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import Cli
from tests.export.conftest import OVERRIDES, installed_label, uv_install
from tests.worlds.channel import Channel
from tests.worlds.prefix import install_prefix, site_packages, solve
from tests.worlds.torch_index import declared_lines, real_document
from tests.worlds.wheels import make_wheel
from variant_bridge.indexes import file_sha256
from variant_bridge.markers import VariantValues, variant_lines
from variant_bridge.properties import VariantDescription, VariantProperty

pytestmark = pytest.mark.slow

SPECS = ("python 3.12.*", "libcublas", "cuda-version 12.8.*")
# What stock conda knows about this machine: its own virtual packages, and no __cuda_arch.
STOCK_CONDA = ("__unix=0", "__linux=6.1", "__glibc=2.36", "__archspec=1=x86_64_v3", "__cuda=12.9")
LABEL = "cuda12.8"
_LABEL_RE = re.compile(r"variant_label == '([^']+)'")


def _pins_of(lines: list[str], label: str) -> list[str]:
    """``name==version`` of the declaration's lines for *label* (and the nvidia ones)."""
    pins = []
    for line in lines:
        requirement, _, marker = line.partition(";")
        labels = set(_LABEL_RE.findall(marker))
        if label in labels or (not labels and "'nvidia' in variant_namespaces" in marker):
            pins.append(requirement.strip())
    return pins


@pytest.fixture(scope="module")
def torch_world(
    tmp_path_factory: pytest.TempPathFactory, cuda_channel: Channel, corpus: Path
) -> tuple[Path, Channel, set[tuple[str, str, str]]]:
    root = tmp_path_factory.mktemp("torch-world")
    wheels = root / "wheels"
    # torch 2.9.0 cuda12.8 with its published properties (uv reads the PEP 825 dialect, not the
    # index's v0.0.3 one) and the declaration's Requires-Dist; a plain wheel per pin
    document = real_document(corpus)["variants"][LABEL]["nvidia"]
    properties = [f"nvidia :: {feature} :: {v}" for feature, vs in document.items() for v in vs]
    lines = declared_lines(corpus)
    pins = _pins_of(lines, LABEL)
    # the variant markers decided for the label (uv 0.13.9 cannot parse `variant_namespaces`)
    parsed = tuple(VariantProperty.parse(p) for p in properties)
    values = VariantValues.of(VariantDescription.of(parsed, LABEL))
    make_wheel(wheels, "torch", "2.9.0", label=LABEL, properties=properties,
               requires=variant_lines(lines, values), namespace_priorities=["nvidia"])  # fmt: skip
    for pin in pins:
        make_wheel(wheels, *pin.split("=="))
    make_wheel(wheels, "filelock", "3.20.0")  # a plain dependency from the same folder
    records = solve([cuda_channel], SPECS, (*STOCK_CONDA, "__cuda_arch=9.0"))
    prefix = install_prefix(records, root / "env", root / "pkgs", SPECS)
    site = site_packages(prefix)
    torch = next(wheels.glob(f"torch-2.9.0-*-{LABEL}.whl"))
    uv_install(site, "--find-links", str(wheels), str(torch), "filelock==3.20.0", *pins)
    assert installed_label(site, "torch") == LABEL
    return root, cuda_channel, {(r.name.normalized, str(r.version), str(r.build)) for r in records}


def test_the_exported_environment_yml_replays_with_stock_conda_parts(
    torch_world: tuple[Path, Channel, set[tuple[str, str, str]]], tmp_path: Path
) -> None:
    from rattler import MatchSpec

    root, channel, record_set = torch_world
    share = tmp_path / "share"
    share.mkdir()
    target = share / "environment.yml"
    result = Cli()(
        "export", "--prefix", str(root / "env"), "-f", str(root / "wheels"), "-o", str(target),
        env=OVERRIDES,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    data = yaml.safe_load(target.read_text())
    specs = [d for d in data["dependencies"] if isinstance(d, str)]
    # the plugin's virtual package is in the header, named, and not a requirement
    assert not any(s.startswith("__cuda_arch") for s in specs)
    assert "needs the nvidia-virtual-packages conda plugin" in target.read_text()
    assert "__cuda >=12.0" in specs
    # conda's solve, on a machine with stock conda's virtual packages only
    solved = solve([channel], [MatchSpec(s) for s in specs], STOCK_CONDA)
    assert {(r.name.normalized, str(r.version), str(r.build)) for r in solved} == record_set

    # conda's pip step: the lines in a requirements file beside environment.yml, pip run there
    pip_lines = next(d for d in data["dependencies"] if isinstance(d, dict))["pip"]
    assert pip_lines[0] == "--no-index"
    plain = [line for line in pip_lines if "==" in line and not line.startswith("-")]
    assert plain
    assert all(" --hash=sha256:" in line for line in plain), plain
    assert any(line.startswith("file:./variant-wheels/torch-2.9.0-") for line in pip_lines)
    site = _pip_step(share, pip_lines, tmp_path / "venv")
    assert installed_label(site, "torch") == LABEL
    for pin in ("nvidia-cublas==12.8.4.1", "triton==3.6.0", "filelock==3.20.0"):
        name, version = pin.split("==")
        assert list(site.glob(f"{name.replace('-', '_')}-{version}.dist-info")), pin


def _pip_step(share: Path, pip_lines: list[str], venv: Path) -> Path:
    """conda's pip step: *pip_lines* in a requirements file in *share*, installed from there by
    pip into the environment *venv* (made a fresh venv when it does not exist), offline (its
    index a closed port); the environment's site-packages."""
    requirements = share / "condaenv.replay.requirements.txt"
    requirements.write_text("\n".join(pip_lines) + "\n")
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip"]
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    elif not (venv / "bin" / "pip").exists():  # a conda prefix without pip: this pip targets it
        pip = [sys.executable, "-m", "pip", "--python", str(python)]
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    environ |= {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "http://127.0.0.1:9/simple"}
    done = subprocess.run(
        [*pip, "install", "-U", "-r", str(requirements), "--exists-action=b"],
        cwd=share, env=environ, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return next((venv / "lib").glob("python3*/site-packages"))


def test_a_wheel_with_variant_markers_replays_from_its_decided_copy(tmp_path: Path) -> None:
    """gpulib's variants pin their cuBLAS wheel by ``variant_label == 'cu12X'`` markers, as torch
    pins its components; pip refuses such a wheel ("invalid metadata"), so the copy beside
    environment.yml carries the markers decided for the installed variant, and is pinned by its
    own sha256."""
    from tests.cli.conftest import run_script
    from tests.worlds.gpu_env import CUBLAS, gpu_channel, gpulib_wheels, make_env

    channel = gpu_channel(tmp_path / "channel")
    wheels = gpulib_wheels(tmp_path / "wheels")
    prefix = make_env(channel, tmp_path / "a", "12.6")
    installed = run_script("install", "gpulib", "-f", str(wheels), "--prefix", str(prefix),
                           env={"CONDA_OVERRIDE_CUDA": "12.9"})  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    share = tmp_path / "share"
    share.mkdir()
    target = share / "environment.yml"
    result = Cli()("export", "--prefix", str(prefix), "-f", str(wheels), "-o", str(target),
                   env=OVERRIDES)  # fmt: skip
    assert result.exit_code == 0, result.stderr

    original = next(wheels.glob("gpulib-1.0-*-cu126.whl"))
    copy = share / "variant-wheels" / "gpulib-1.0-py3-none-any.whl"
    with zipfile.ZipFile(copy) as archive:
        metadata = archive.read("gpulib-1.0.dist-info/METADATA").decode()
        assert archive.read("gpulib-1.0.dist-info/variant.json")  # still says its variant
    assert f"Requires-Dist: nvidia-cublas-cu12=={CUBLAS['12.6']}\n" in metadata
    assert "variant_label" not in metadata
    assert CUBLAS["12.4"] not in metadata  # the other variant's pin is gone
    text = target.read_text()
    copy_sha, original_sha = file_sha256(copy), file_sha256(original)
    assert copy_sha != original_sha
    assert f"file:./variant-wheels/gpulib-1.0-py3-none-any.whl#sha256={copy_sha}" in text
    assert f"{original.name}#sha256={original_sha} [cu126]" in text  # the header's faithful pin
    assert "copies (variant markers decided for their variant" in text

    # conda env create: the same toolkit from the channel, then the pip step
    pip_lines = next(d for d in yaml.safe_load(text)["dependencies"] if isinstance(d, dict))
    replayed = make_env(channel, tmp_path / "b", "12.6")
    site = _pip_step(share, pip_lines["pip"], replayed)
    assert installed_label(site, "gpulib") == "cu126"
    assert list(site.glob(f"nvidia_cublas_cu12-{CUBLAS['12.6']}.dist-info"))

    # exported again from the new environment (pip recorded the copy as file:///./variant-wheels/,
    # which exists nowhere): the installed copy is recognised as the original's, same file body
    again = tmp_path / "share2" / "environment.yml"
    again.parent.mkdir()
    result = Cli()("export", "--prefix", str(replayed), "-f", str(wheels), "-o", str(again),
                   "--name", "env", env=OVERRIDES)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    body = [line for line in again.read_text().splitlines() if not line.startswith("#")]
    assert body == [line for line in text.splitlines() if not line.startswith("#")]


def test_a_wheel_of_unknown_origin_is_named_and_turns_hashing_off(
    torch_world: tuple[Path, Channel, set[tuple[str, str, str]]], tmp_path: Path
) -> None:
    import shutil

    root, _, _ = torch_world
    prefix = tmp_path / "env"
    shutil.copytree(root / "env", prefix, symlinks=True)
    site = site_packages(prefix)
    info = site / "mystery-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mystery\nVersion: 1.0\n")
    (info / "RECORD").write_text("mystery-1.0.dist-info/METADATA,,\n")
    result = Cli()("export", "--prefix", str(prefix), "-f", str(root / "wheels"), env=OVERRIDES)
    assert result.exit_code == 0, result.stderr
    assert "note: the origin of 1 wheel(s) is unknown" in result.stderr
    assert "mystery 1.0 (no wheel that matches the installed files was found in" in result.stderr
    pip = next(d for d in yaml.safe_load(result.stdout)["dependencies"] if isinstance(d, dict))
    assert "mystery==1.0" in pip["pip"]
    assert "--no-index" not in pip["pip"]  # pip must look mystery up in an index
    assert not any("--hash=" in line for line in pip["pip"])  # all or nothing for pip
