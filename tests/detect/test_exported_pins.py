"""The export's pins for uv are set aside by detection: they are not facts about the machine."""

from __future__ import annotations

import pytest

from variant_bridge.detect import detect_environment
from variant_bridge.detect.exported_pins import split_exported_pins
from variant_bridge.environment import Source

DRIVER = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
SM_ARCH = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"
LISTED = {"VARIANT_BRIDGE_EXPORTED_PINS": f"{DRIVER}=12.6 {SM_ARCH}=9.0"}


@pytest.mark.parametrize(
    ("environ", "set_aside"),
    [
        ({**LISTED, DRIVER: "12.6", SM_ARCH: "9.0"}, {DRIVER, SM_ARCH}),  # as activated
        ({**LISTED, DRIVER: "12.8", SM_ARCH: "9.0"}, {SM_ARCH}),  # the user set the driver after
        ({DRIVER: "12.6", SM_ARCH: "9.0"}, set()),  # no list: the user's own declaration
        ({**LISTED}, set()),  # listed but not set: nothing to set aside
        ({"VARIANT_BRIDGE_EXPORTED_PINS": "garbage = =", DRIVER: "12.6"}, set()),  # never fails
    ],
)
def test_only_variables_that_still_hold_the_listed_value_are_pins(
    environ: dict[str, str], set_aside: set[str]
) -> None:
    split = split_exported_pins(environ)
    assert {name for name, _ in split.pins} == set_aside
    assert set(environ) - set(split.environ) == set_aside
    assert all(note.startswith("exported pin: ") for note in split.notes)


def test_detection_reports_pins_and_takes_facts_elsewhere() -> None:
    environ = {**LISTED, DRIVER: "12.6", SM_ARCH: "9.0", "CONDA_OVERRIDE_CUDA": "12.9"}
    env = detect_environment(targets={"platform": "linux-64"}, env=environ)
    assert env.cuda is not None
    assert (env.cuda.version, env.cuda.source) == ("12.9", Source.override("CONDA_OVERRIDE_CUDA"))
    assert env.cuda_arch is None or env.cuda_arch.source == Source.DETECTED  # not the pin's 9.0
    assert [n.split(" ", 3)[2] for n in env.notes if n.startswith("exported pin")] == [
        f"{DRIVER}=12.6",
        f"{SM_ARCH}=9.0",
    ]
    # the same values without the export's list are the user's declaration
    declared = detect_environment(targets={"platform": "linux-64"}, env={DRIVER: "12.6"})
    assert declared.cuda is not None
    assert declared.cuda.source == Source.override(DRIVER)
