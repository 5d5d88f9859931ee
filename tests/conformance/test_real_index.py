"""The whole real variant index: ``select`` agrees with uv 0.13.9 and with variantlib 0.2.2 (+ the
bridge's NVIDIA provider) under the driver policy, for every ``*-variants.json`` (§9).

Per file: a find-links directory with the real file, verbatim, and one tiny wheel per label
(its ``variant.json`` that label's entry); ``select`` reads it there. uv and variantlib read only
one of the 192 files as published (v0.0.2 xgboost), so they get it as published, and every file
in the dialect they read (:mod:`tests.worlds.dialects`): same labels, properties, namespace order
and static values. Three machines: driver 12.9 with a 9.0 GPU, driver 13.0 with a 12.0 GPU, no
CUDA; the CPU is this machine's for all three tools. The NVIDIA facts reach uv through its own
``NV_VARIANT_PROVIDER_FORCE_*`` variables, variantlib's plugin through ``CONDA_OVERRIDE_*``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from variantlib.api import get_variants_by_priority
from variantlib.errors import ValidationError
from variantlib.plugins import loader as variantlib_loader

from tests.jobs.conftest import choose
from tests.worlds.dialects import uv_readable_document, variantlib_document
from tests.worlds.wheels import make_wheel
from variant_bridge.detect import detect_environment
from variant_bridge.environment import Environment
from variant_bridge.platform_tags import TargetPython
from variant_bridge.providers import PLUGIN_APIS

pytestmark = pytest.mark.slow

UV = Path(sys.executable).with_name("uv")
INDEX = "real/variants-index-test"
PY = TargetPython.parse("{}.{}.{}".format(*sys.version_info[:3]))
# name -> (driver, GPU): what uv's variables and the bridge's --target say.
MACHINES = {"driver 12.9, GPU 9.0": ("12.9", "9.0"), "driver 13.0, GPU 12.0": ("13.0", "12.0"),
            "no CUDA": (None, None)}  # fmt: skip
READ_AS_PUBLISHED = {"v0.0.2/xgboost/xgboost-3.1.0rc1-variants.json"}


def _name_version(path: Path) -> tuple[str, str]:
    name, version = path.name.removesuffix("-variants.json").rsplit("-", 1)
    return name, version


def _world(path: Path, document: dict[str, Any], root: Path) -> Path:
    """A find-links directory: *document* as the index file, one wheel per label."""
    name, version = _name_version(path)
    root.mkdir(parents=True)
    (root / path.name).write_text(json.dumps(document, indent=4))
    for label, properties in document["variants"].items():
        one = {**document, "variants": {label: properties}}
        make_wheel(root, name, version, label=label, variant_json=json.dumps(one))
    return root


@pytest.fixture(scope="module")
def files(corpus: Path) -> list[Path]:
    found = sorted((corpus / INDEX).glob("v0.0.*/*/*-variants.json"))
    assert len(found) == 192
    return found


@pytest.fixture(scope="module")
def environments() -> dict[str, Environment]:
    return {
        machine: detect_environment(targets={"cuda": driver or "", "cuda_arch": gpu or ""}, env={})
        for machine, (driver, gpu) in MACHINES.items()
    }


def bridge_choice(path: Path, env: Environment, root: Path) -> str | None:
    document = json.loads(path.read_text())
    name, version = _name_version(path)
    world = _world(path, document, root)  # the real file, verbatim, beside the wheels
    (world / path.name).write_text(path.read_text())
    (choice,) = choose([f"{name}=={version}"], env=env, python=PY, find_links=[world])
    return choice.selected.label if choice.selected is not None else None


def uv_choice(path: Path, document: dict[str, Any], machine: str, root: Path) -> str | None:
    name, version = _name_version(path)
    world = _world(path, document, root / "world")
    driver, gpu = MACHINES[machine]
    environ = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    environ |= {
        "UV_CACHE_DIR": str(root / "cache"),
        "UV_NO_CONFIG": "1",
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": driver or "none",
        "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": gpu or "0.0",
    }
    target = root / "target"
    run = subprocess.run(
        [str(UV), "pip", "install", "--preview-features", "wheel-variants", "--no-index",
         "--find-links", str(world), "--python", sys.executable, "--target", str(target),
         f"{name}=={version}"],
        env=environ, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if run.returncode != 0:
        assert "No solution found" in run.stderr, run.stderr
        return None
    (variant_json,) = target.glob("*.dist-info/variant.json")
    (label,) = json.loads(variant_json.read_text())["variants"]
    return str(label)


@pytest.fixture
def _variantlib(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    # The file read as published names nvidia_variant_provider.plugin:NvidiaVariantPlugin; PyPI
    # has only a placeholder of that package, so the bridge's plugin answers under that name.
    package = tmp_path / "plugins" / "nvidia_variant_provider"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text(
        "from variant_bridge.providers.plugins import NvidiaPlugin as NvidiaVariantPlugin\n"
    )
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(package.parent), path])))
    logger = logging.getLogger("variantlib")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    variantlib_loader.VARIANT_PROVIDER_CACHE_TABLE.clear()
    yield
    variantlib_loader.VARIANT_PROVIDER_CACHE_TABLE.clear()
    logger.setLevel(level)


def variantlib_choice(
    document: dict[str, Any], machine: str, monkeypatch: pytest.MonkeyPatch
) -> str | None:
    driver, gpu = MACHINES[machine]
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", driver or "")
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA_ARCH", gpu or "")
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    variantlib_loader.VARIANT_PROVIDER_CACHE_TABLE.clear()
    labels = [d.label for d in get_variants_by_priority(variants_json=document)]
    # variantlib always appends the null variant; a file without one has no such wheel.
    return next((label for label in labels if label in document["variants"]), None)


def test_select_agrees_with_uv_on_every_real_file(
    files: list[Path], environments: dict[str, Environment], tmp_path: Path
) -> None:
    asked: dict[tuple[str, str], str | None] = {}  # (rendered document, machine) -> uv's label
    disagreements = []
    chosen: dict[str, set[str | None]] = {machine: set() for machine in MACHINES}
    for i, path in enumerate(files):
        relative = str(path.relative_to(path.parents[2]))
        document = json.loads(path.read_text())
        rendered = [("as read by uv", uv_readable_document(document))]
        if relative in READ_AS_PUBLISHED:
            rendered.append(("as published", document))
        for machine, env in environments.items():
            ours = bridge_choice(path, env, tmp_path / f"b{i}-{machine}")
            chosen[machine].add(ours)
            for how, doc in rendered:
                key = (json.dumps(doc, sort_keys=True) + path.name, machine)
                if key not in asked:
                    asked[key] = uv_choice(path, doc, machine, tmp_path / f"u{len(asked)}")
                if asked[key] != ours:
                    disagreements.append(
                        f"{relative} ({machine}, {how}): uv {asked[key]}, ours {ours}"
                    )
    assert disagreements == []
    # The walk compared real choices, not only "nothing fits".
    assert {"cuda12.8", "cu12"} <= chosen["driver 12.9, GPU 9.0"]
    assert {"cuda13.0", "cu13"} <= chosen["driver 13.0, GPU 12.0"]
    assert "cu12" not in chosen["no CUDA"]


@pytest.mark.usefixtures("_variantlib")
def test_select_agrees_with_variantlib_on_every_real_file(
    files: list[Path],
    environments: dict[str, Environment],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: dict[tuple[str, str], str | None] = {}
    disagreements = []
    unreadable = set()
    for i, path in enumerate(files):
        relative = str(path.relative_to(path.parents[2]))
        document = json.loads(path.read_text())
        if any(label == "00000000" for label in document["variants"]):
            # variantlib 0.2.2 refuses the legacy null label in any dialect: nothing to compare.
            with pytest.raises(ValidationError, match="Null variant must"):
                variantlib_choice(variantlib_document(document, dict(PLUGIN_APIS)), "no CUDA",
                                  monkeypatch)  # fmt: skip
            unreadable.add(relative)
            continue
        rendered = [("rendered", variantlib_document(document, dict(PLUGIN_APIS)))]
        if relative in READ_AS_PUBLISHED:
            rendered.append(("as published", document))
        for machine, env in environments.items():
            ours = bridge_choice(path, env, tmp_path / f"b{i}-{machine}")
            for how, doc in rendered:
                key = (json.dumps(doc, sort_keys=True), machine)
                if key not in asked:
                    asked[key] = variantlib_choice(doc, machine, monkeypatch)
                if asked[key] != ours:
                    disagreements.append(
                        f"{relative} ({machine}, {how}): variantlib {asked[key]}, ours {ours}"
                    )
    assert disagreements == []
    assert len(unreadable) == 4  # torch 2.8.0 and torchvision 0.23.0, both dialects
