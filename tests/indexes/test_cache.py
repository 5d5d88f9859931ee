"""The content-addressed download cache: entries by sha256, partial files of killed commands."""

from __future__ import annotations

import os
import time
from pathlib import Path

from variant_bridge.indexes.cache import Cache

SHA = "ab" * 32


def test_an_entry_is_written_through_a_partial_file_then_renamed(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    with cache.adding_wheel(SHA, "x-1.0-py3-none-any.whl") as (temporary, final):
        assert temporary.name.endswith(".part")
        temporary.write_bytes(b"wheel")
    assert cache.wheel(SHA, "x-1.0-py3-none-any.whl") == final
    assert [p.name for p in final.parent.iterdir()] == ["x-1.0-py3-none-any.whl"]


def test_a_killed_commands_partial_file_goes_when_the_entry_is_written_again(
    tmp_path: Path,
) -> None:
    cache = Cache(tmp_path)
    with cache.adding_wheel(SHA, "x-1.0-py3-none-any.whl") as (temporary, _):
        temporary.write_bytes(b"wheel")
    stale = temporary.with_name(".x-1.0-py3-none-any.whl.killed.part")
    stale.write_bytes(b"half")  # what a kill -9 mid-download leaves behind
    recent = temporary.with_name(".x-1.0-py3-none-any.whl.live.part")
    recent.write_bytes(b"half")  # another command writing right now
    hour_ago = time.time() - 2 * 3600
    os.utime(stale, (hour_ago, hour_ago))
    with cache.adding_wheel(SHA, "x-1.0-py3-none-any.whl") as (temporary, _):
        temporary.write_bytes(b"wheel")
    left = sorted(p.name for p in stale.parent.iterdir())
    assert left == [".x-1.0-py3-none-any.whl.live.part", "x-1.0-py3-none-any.whl"]
