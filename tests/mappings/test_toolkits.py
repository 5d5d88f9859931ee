"""toolkits.yaml: what each nvcc release compiles, the glibc floor per CUDA major, publishers'
label conventions and conda build families, as the checks read them; a broken copy is refused
with the key path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from variant_bridge import mappings
from variant_bridge.errors import MappingTableError
from variant_bridge.mappings import TABLE_FILES, ToolkitTable, load_tables, parse_tables

MAPPINGS_DIR = Path(mappings.__file__).resolve().parent


@pytest.fixture(scope="module")
def table() -> ToolkitTable:
    return load_tables().toolkits


@pytest.mark.parametrize(
    ("cuda", "target", "compiles"),
    [
        ((11, 8), (3, 5, ""), True),  # Kepler: dropped by 12.0
        ((12, 0), (3, 5, ""), False),
        ((12, 6), (9, 0, "a"), True),
        ((12, 6), (10, 0, ""), False),  # Blackwell needs 12.8: nvcc 12.6 cannot emit sm_100
        ((12, 6), (12, 0, ""), False),
        ((12, 8), (12, 0, ""), True),
        ((12, 8), (10, 3, ""), False),  # sm_103 arrived with 12.9
        ((12, 9), (10, 3, "f"), True),
        ((12, 9), (11, 0, ""), False),  # Thor is sm_101 before 13.0
        ((13, 0), (5, 0, ""), False),  # CUDA 13 compiles sm_75 and newer
        ((13, 0), (7, 0, ""), False),
        ((13, 0), (7, 5, ""), True),
        ((13, 0), (10, 1, ""), False),  # renamed sm_110
        ((13, 0), (11, 0, ""), True),
        ((13, 2), (12, 0, ""), True),  # a later minor takes its major's last row
    ],
)
def test_what_each_nvcc_compiles(
    table: ToolkitTable, cuda: tuple[int, int], target: tuple[int, int, str], compiles: bool
) -> None:
    row = table.nvcc_for(*cuda)
    assert row is not None
    assert row.compiles(*target) is compiles


def test_toolkits_the_table_does_not_know(table: ToolkitTable) -> None:
    assert table.nvcc_for(11, 2) is None  # before the major's first row
    assert table.nvcc_for(14, 0) is None
    row = table.nvcc_for(12, 7)
    assert row is not None
    assert row.cuda == (12, 0)


def test_glibc_floor_per_major(table: ToolkitTable) -> None:
    assert table.glibc_floor(12) == (2, 17)
    assert table.glibc_floor(13) == (2, 28)
    assert table.glibc_floor(14) is None


@pytest.mark.parametrize(
    ("label", "said"),
    [
        ("cu126", (12, 6)),
        ("cu118", (11, 8)),
        ("cu130", (13, 0)),
        ("cu126_v3", (12, 6)),  # the matrix's label of a CUDA 12.6 build at x86-64 level 3
        ("cuda12.8", (12, 8)),
        ("cuda13.0", (13, 0)),
        ("cu12", (12, None)),  # cupy, NVIDIA's component wheels: any 12.x
        ("cuda13", (13, None)),  # RAPIDS
        ("null", None),
        ("xpu", None),
        ("rocm7.1", None),
        ("cu92", None),  # no convention of the table reads it
        ("cuda", None),
    ],
)
def test_label_conventions(table: ToolkitTable, label: str, said: tuple[int, int] | None) -> None:
    found = table.label_cuda(label)
    assert (found[0] if found else None) == said
    if found is not None:
        assert found[1].source  # every convention names where it is documented


def test_family_keys(table: ToolkitTable) -> None:
    assert table.family({"arm_variant_type": "tegra"}) == (("arm_variant_type", "tegra"),)
    assert table.family({"arm_variant_type": "sbsa"}) == ()
    assert table.family({"cuda_compiler_version": "12.9"}) == ()


def _raw() -> dict[str, Any]:
    return {
        name: yaml.safe_load((MAPPINGS_DIR / name).read_text(encoding="utf-8"))
        for name in TABLE_FILES
    }


def _problems(raw: dict[str, Any]) -> list[str]:
    try:
        parse_tables(raw)
    except MappingTableError as e:
        return list(e.problems)
    return []


def test_a_broken_toolkit_table_is_reported_with_key_paths() -> None:
    raw = copy.deepcopy(_raw())
    doc = raw["toolkits.yaml"]
    doc["nvcc"][2]["cuda"] = "11.9"
    doc["labels"][0]["pattern"] = "cu(?P<major>1[0-9]"
    doc["labels"][1]["example"] = "cu12"
    doc["glibc"].append({"cuda_major": 13, "floor": "2.34"})
    doc["families"][0]["colour"] = "green"
    assert _problems(raw) == [
        "toolkits.yaml: nvcc[2].cuda: releases must be listed oldest first, each once",
        "toolkits.yaml: glibc: a CUDA major is listed twice",
        (
            "toolkits.yaml: labels[0].pattern: invalid regular expression 'cu(?P<major>1[0-9]': "
            "missing ), unterminated subpattern at position 2"
        ),
        "toolkits.yaml: labels[1].example: the example 'cu12' does not match the pattern",
        "toolkits.yaml: families[0].colour: unknown key (expected one of: key, source, wheels)",
    ]


def test_a_suffixed_target_must_be_one_nvcc_compiles() -> None:
    raw = copy.deepcopy(_raw())
    raw["toolkits.yaml"]["nvcc"][1]["arch_specific"] = ["9.1"]
    assert _problems(raw) == ["toolkits.yaml: nvcc[1].arch_specific[0]: 9.1 is not in compute"]
