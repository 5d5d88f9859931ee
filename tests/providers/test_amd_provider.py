"""The bridge's ``amd`` answers compared with the AMD provider's for the same GPUs.

The provider (wheelnext amd-variant-provider 0.0.2) is on no package registry, so its answers were
recorded by running it live (``tests/data/providers/amd-variant-provider-0.0.2.json`` says how);
where it is importable, the last test runs it live again and checks the recording.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from variant_bridge.detect import detect_environment
from variant_bridge.gfx_archs import isa_of, isa_text
from variant_bridge.providers.plugins import AmdPlugin, BridgedView
from variant_bridge.translate import supported_properties

RECORDED = Path(__file__).parents[1] / "data" / "providers" / "amd-variant-provider-0.0.2.json"
ANSWERS: list[dict[str, Any]] = json.loads(RECORDED.read_text())["answers"]
ROCM_FILE = "6.4.2-120"  # what the recorded ROCM_PATH's .info/version said


def _environ(case: dict[str, Any], tmp_path: Path) -> dict[str, str]:
    """The case's variables; a ROCM_PATH is re-made here with the recorded version file."""
    environ = dict(case["environ"])
    if "ROCM_PATH" in environ:
        (tmp_path / "rocm" / ".info").mkdir(parents=True)
        (tmp_path / "rocm" / ".info" / "version").write_text(ROCM_FILE + "\n")
        environ["ROCM_PATH"] = str(tmp_path / "rocm")
    return environ


def _bridge(environ: dict[str, str]) -> dict[str, list[str]]:
    configs = BridgedView().supported_configs("amd", environ=environ)
    return {c.name: c.values for c in configs}


@pytest.mark.parametrize("case", ANSWERS, ids=lambda c: ",".join(c["environ"].values()))
def test_the_providers_own_variables_give_the_providers_answer(
    case: dict[str, Any], tmp_path: Path
) -> None:
    bridge = _bridge(_environ(case, tmp_path))
    provider = case["supported"]
    if "rocm_version" in provider:
        assert bridge == provider
    else:
        # The one designed difference: with no ROCm runtime known, the provider lists no
        # rocm_version (so it chooses no ROCm build); the bridge offers every version it knows,
        # newest first, because ROCm wheels carry their ROCm (semantics.md §3a).
        assert bridge["gfx_arch"] == provider["gfx_arch"]
        assert bridge["rocm_version"] == json.loads(RECORDED.read_text())["all"]["rocm_version"]


@pytest.mark.parametrize("case", ANSWERS, ids=lambda c: ",".join(c["environ"].values()))
def test_the_same_gpu_in_conda_terms_gives_the_providers_answer(
    case: dict[str, Any], tmp_path: Path
) -> None:
    """``__amdgpu_arch`` (rattler's ISA) for the provider's gfx name, the ROCm runtime declared:
    the bridge answers what the provider answers for the GPU conda sees."""
    environ = _environ(case, tmp_path)
    gfx = environ["AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH"].split(",")
    isa = isa_of(gfx[0])
    assert isa is not None
    targets = [f"amdgpu_arch={isa_text(isa)}"]
    forced = environ.get("AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION")
    if forced:
        targets.append(f"rocm_version={forced}")
    rocm_path = {"ROCM_PATH": environ["ROCM_PATH"]} if "ROCM_PATH" in environ else {}
    env = detect_environment(targets=targets, env=rocm_path)
    supported = supported_properties(env).as_dict()["amd"]
    provider = case["supported"]
    # conda's __amdgpu_arch is ONE GPU (the most compute units); the provider lists each.
    assert supported["gfx_arch"] == provider["gfx_arch"][:1]
    if "rocm_version" in provider:
        assert supported["rocm_version"] == provider["rocm_version"]


def test_every_torch_gfx_value_is_in_the_providers_vocabulary(corpus: Path) -> None:
    all_configs = {c.name: c.values for c in AmdPlugin.get_all_configs()}
    assert all_configs == json.loads(RECORDED.read_text())["all"]
    torch = json.loads(
        (corpus / "real/variants-index-test/v0.0.3/torch/torch-2.9.0-variants.json").read_text()
    )
    for label in ("rocm6.3", "rocm6.4"):
        assert set(torch["variants"][label]["amd"]["gfx_arch"]) <= set(all_configs["gfx_arch"])


@pytest.mark.skipif(
    importlib.util.find_spec("amd_variant_provider") is None,
    reason="amd-variant-provider is not installed (it is on no registry): recorded answers only",
)
def test_the_recording_is_what_the_installed_provider_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # pragma: no cover - runs where the provider is installed
    from amd_variant_provider import detect_rocm  # type: ignore[import-not-found]
    from amd_variant_provider.plugin import AMDVariantPlugin  # type: ignore[import-not-found]

    for i, case in enumerate(ANSWERS):
        for name in (
            "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH",
            "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION",
            "ROCM_PATH",
        ):
            monkeypatch.delenv(name, raising=False)
        for name, value in _environ(case, tmp_path / str(i)).items():
            monkeypatch.setenv(name, value)
        AMDVariantPlugin.get_supported_configs.cache_clear()
        AMDVariantPlugin._system_info.cache_clear()
        detect_rocm.get_system_info.cache_clear()
        answered = {c.name: list(c.values) for c in AMDVariantPlugin.get_supported_configs()}
        assert answered == case["supported"], os.environ.get("AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH")
