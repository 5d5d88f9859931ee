"""The rule of what uv reads (``metadata/uv_dialect.py``) against the real uv: for each
document (real files of the published index, the same variants in uv's dialect, and variations
of one field), uv installs from it exactly when the rule says it can read it.

Each document is the ``*-variants.json`` of a find-links directory whose wheels carry the
matching ``variant.json``; uv runs offline (``--no-index --dry-run``) with its NVIDIA provider
told a 12.9 driver and a 9.0 GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.worlds.dialects import uv_readable_document
from tests.worlds.wheels import make_wheel
from variant_bridge.install import find_uv
from variant_bridge.metadata.uv_dialect import UV_CHECKED, uv_refuses

pytestmark = pytest.mark.slow

INDEX = "real/variants-index-test"
REAL = (
    "v0.0.3/torch/torch-2.9.0-variants.json",
    "v0.0.3/torchvision/torchvision-0.24.0-variants.json",
    "v0.0.3/cupy/cupy-13.6.0-variants.json",
    "v0.0.3/cudf/cudf-25.12.0a135-variants.json",
    "v0.0.3/numpy/numpy-2.3.4-variants.json",
    "v0.0.2/xgboost/xgboost-3.1.0rc1-variants.json",
    "v0.0.2/torch/torch-2.8.0-variants.json",
)


def _variations(corpus: Path) -> list[tuple[str, dict[str, Any]]]:
    torch = json.loads((corpus / INDEX / REAL[0]).read_text())
    readable = uv_readable_document(torch)
    cases = [(path, json.loads((corpus / INDEX / path).read_text())) for path in REAL]
    cases.append(("torch in uv's dialect", readable))
    for name, change in (
        ("feature priorities", lambda d: d["default-priorities"].update(feature={})),
        ("enable-if", lambda d: d["providers"]["nvidia"].update({"enable-if": "True"})),
        ("install-time", lambda d: d["providers"]["nvidia"].update({"install-time": True})),
        ("optional", lambda d: d["providers"]["nvidia"].update(optional=True)),
        ("no providers", lambda d: d.pop("providers")),
        ("another $schema", lambda d: d.update({"$schema": "https://example.org/x.json"})),
        ("a top-level key", lambda d: d.update({"static-properties": {}})),
        ("a provider too many", lambda d: d["providers"].update(x86_64={"requires": ["x"]})),
    ):
        document = json.loads(json.dumps(readable))
        change(document)
        cases.append((name, document))
    return cases


def _uv_reads(root: Path, document: dict[str, Any], venv: Path, cache: Path) -> bool:
    name = "torch"
    root.mkdir()
    (root / f"{name}-1.0-variants.json").write_text(json.dumps(document))
    for label, properties in document["variants"].items():
        one = {**document, "variants": {label: properties}}
        make_wheel(root, name, "1.0", label=label, variant_json=json.dumps(one))
    uv = find_uv()
    assert uv is not None
    env = {**os.environ, "UV_CACHE_DIR": str(cache), "UV_NO_CONFIG": "1",
           "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.9",
           "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0"}  # fmt: skip
    run = subprocess.run(
        [uv, "pip", "install", "--dry-run", "--no-index", "--find-links", str(root),
         "--preview-features", "wheel-variants", "--python", str(venv), name],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if run.returncode != 0:
        assert "variant metadata" in run.stderr, run.stderr  # refused for its metadata only
    return run.returncode == 0


def test_the_rule_is_what_uv_reads(corpus: Path, tmp_path: Path) -> None:
    uv = find_uv()
    version = subprocess.run(
        [str(uv), "--version"], capture_output=True, text=True, check=False
    ).stdout
    if f"uv {UV_CHECKED}" not in version:
        pytest.skip(f"the rule was checked against uv {UV_CHECKED}; this is {version.strip()}")
    subprocess.run([str(uv), "venv", "-q", "--python", sys.executable, str(tmp_path / "venv")],
                   check=True)  # fmt: skip
    wrong = []
    for index, (name, document) in enumerate(_variations(corpus)):
        reads = _uv_reads(tmp_path / f"w{index}", document, tmp_path / "venv", tmp_path / "uv")
        said = uv_refuses(document)
        if reads != (said is None):
            wrong.append(f"{name}: uv {'reads' if reads else 'refuses'} it, the rule says {said}")
    assert wrong == []
