"""The package facade: a small, pinned list of library entry points, each resolving lazily."""

from __future__ import annotations

import pytest

import variant_bridge

PUBLIC = [
    "__version__",
    "VariantBridgeError",
    "VariantProperty",
    "VariantDescription",
    "Environment",
    "Source",
    "VirtualPackage",
    "detect_environment",
    "SupportedProperties",
    "supported_properties",
    "explain_unsupported",
    "to_conda_specs",
    "read_conda_specs",
    "TargetPython",
    "SourceSpec",
    "EnvironmentSpec",
    "FetchSpec",
    "Reporter",
    "Target",
    "Context",
    "Sources",
    "Downloads",
    "Transport",
    "parse_requests",
    "select",
    "prepare_install",
    "run_install",
    "ExportRequest",
    "ExportOutput",
    "prepare_export",
    "run_export",
]


def test_dir_is_the_pinned_public_api() -> None:
    assert dir(variant_bridge) == sorted(PUBLIC)  # dir() sorts what __dir__ gives
    assert sorted(variant_bridge.__all__) == sorted(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC[1:])
def test_every_name_resolves_to_its_definition(name: str) -> None:
    value = getattr(variant_bridge, name)
    assert value.__name__ == name
    assert value.__module__.startswith("variant_bridge.")


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'choose'"):
        variant_bridge.choose  # noqa: B018


def test_the_documented_translation_works_through_the_facade() -> None:
    prop = variant_bridge.VariantProperty.parse("nvidia :: cuda_version_lower_bound :: 12.8")
    assert variant_bridge.to_conda_specs([prop]).specs == (
        "__cuda >=12.8",
        "cuda-version >=12.8,<13",
    )
