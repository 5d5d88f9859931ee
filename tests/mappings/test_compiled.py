"""``_compiled.py`` is the YAML tables as Python: current, equal, and never used when stale."""

from __future__ import annotations

import shutil
from pathlib import Path

from variant_bridge import mappings
from variant_bridge.mappings import TABLE_FILES, compiled_tables, load_tables, read_tables
from variant_bridge.mappings._compiler import COMPILED, REFRESH, fingerprint, render

MAPPINGS_DIR = Path(mappings.__file__).resolve().parent


def test_the_committed_file_is_what_the_yaml_generates() -> None:
    expected = render(
        read_tables(MAPPINGS_DIR),
        {name: fingerprint((MAPPINGS_DIR / name).read_bytes()) for name in TABLE_FILES},
    )
    assert COMPILED.read_text(encoding="utf-8") == expected, (
        f"{COMPILED.name} is stale: the YAML tables changed; refresh it with `{REFRESH}`"
    )


def test_the_compiled_tables_equal_the_yaml_and_are_what_load_tables_returns() -> None:
    compiled = compiled_tables(MAPPINGS_DIR)
    assert compiled is not None
    assert compiled == read_tables(MAPPINGS_DIR)
    assert load_tables() == compiled
    # The derived lookups are rebuilt too (they are not compared by ==).
    assert compiled.platform.host_subdir("Linux", "x86_64") == "linux-64"
    assert compiled.names.conda_for_pypi("Nvidia_Cublas-CU12") is not None


def test_an_edited_table_is_never_shadowed(tmp_path: Path) -> None:
    for name in TABLE_FILES:
        shutil.copy(MAPPINGS_DIR / name, tmp_path / name)
    assert compiled_tables(tmp_path) is not None  # same bytes: the compiled copy applies
    edited = tmp_path / "nvidia.yaml"
    edited.write_text(
        edited.read_text(encoding="utf-8").replace("majors: [11, 15]", "majors: [11, 16]")
    )
    assert compiled_tables(tmp_path) is None  # read_tables() reads the edit instead
    assert read_tables(tmp_path).nvidia.driver_majors.high == 16


def test_a_missing_table_file_falls_back_to_reading(tmp_path: Path) -> None:
    assert compiled_tables(tmp_path) is None
