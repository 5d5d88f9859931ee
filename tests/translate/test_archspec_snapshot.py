"""The snapshot of archspec's CPU profiles is current, equal to archspec's answers, and unused
whenever archspec would read another database."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import archspec.cpu
import pytest

from variant_bridge import _archspec
from variant_bridge.mappings import CpuTable, load_tables
from variant_bridge.translate import microarchitectures
from variant_bridge.translate._archspec_compiler import REFRESH, SNAPSHOT, render
from variant_bridge.translate.microarchitectures import profile, profiles, snapshot_profiles

TABLES = load_tables().cpus

# The snapshot is made from one archspec release. Another one (CI installs the newest) makes it
# unused at run time, which these tests check below; the comparisons that need the release the
# snapshot was made from run only with it, so a new archspec on PyPI never turns CI red.
same_archspec = pytest.mark.skipif(
    _archspec.snapshot(environ={}) is None,
    reason=f"the installed archspec is not the one the snapshot was made from ({REFRESH})",
)


@same_archspec
def test_the_committed_snapshot_is_what_archspec_and_the_tables_generate() -> None:
    assert SNAPSHOT.read_text(encoding="utf-8") == render(TABLES), (
        f"{SNAPSHOT.name} is stale (archspec {microarchitectures.archspec_version()} or a CPU "
        f"table changed): refresh it with `{REFRESH}`"
    )


@same_archspec
@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.namespace)
def test_the_snapshot_holds_archspecs_answer_for_every_microarchitecture(table: CpuTable) -> None:
    snapshot = snapshot_profiles(table, environ={})
    assert snapshot is not None
    computed = profiles(table)
    assert set(snapshot) == set(computed)
    for name, p in computed.items():
        assert snapshot[name] == (p.generic, p.generations, p.flags), name
        assert profile(table, name) == p


@same_archspec
def test_the_snapshot_knows_every_microarchitecture_and_its_family() -> None:
    snapshot = _archspec.snapshot(environ={})
    assert snapshot is not None
    assert {n: t.family.name for n, t in archspec.cpu.TARGETS.items()} == snapshot.FAMILIES
    assert _archspec.families() == snapshot.FAMILIES


@pytest.mark.parametrize("variable", _archspec.DATABASE_VARIABLES)
def test_not_used_when_archspec_is_pointed_at_another_database(variable: str) -> None:
    assert _archspec.snapshot(environ={variable: "/elsewhere"}) is None
    assert snapshot_profiles(TABLES[0], environ={variable: "/elsewhere"}) is None


def test_not_used_for_another_database_file(tmp_path: Path) -> None:
    edited = tmp_path / "microarchitectures.json"
    edited.write_bytes(_archspec.database_path().read_bytes().replace(b'"avx2"', b'"avx2x"', 1))
    assert _archspec.snapshot(environ={}, database=edited) is None
    assert snapshot_profiles(TABLES[0], environ={}, database=edited) is None
    assert snapshot_profiles(TABLES[0], environ={}, database=tmp_path / "missing.json") is None


def test_not_used_for_another_table() -> None:
    capped = dataclasses.replace(TABLES[0], max_value="v3")
    assert snapshot_profiles(capped, environ={}) is None
    # ... and archspec answers for it instead: nothing above the cap.
    icelake = profile(capped, "icelake")
    assert not isinstance(icelake, str)
    assert icelake.generations[0] == "v3"
    assert "icelake" in archspec.cpu.TARGETS
