"""A METADATA header block reads as email's compat32 header parser reads it."""

from __future__ import annotations

from email.parser import HeaderParser

from hypothesis import given
from hypothesis import strategies as st

from variant_bridge.indexes._headers import Headers

NAMES = ("Name", "Version", "Requires-Dist", "requires-python", "Summary", "Description")
FIELDS = ("Name", "Version", "Requires-Dist", "Requires-Python", "Summary", "Description", "X")


def _same(text: str) -> None:
    expected = HeaderParser().parsestr(text)
    found = Headers(text)
    for field in FIELDS:
        assert found.get(field) == expected.get(field), field
        assert found.get_all(field) == (expected.get_all(field) or []), field


def test_a_real_metadata_block() -> None:
    _same(
        "Metadata-Version: 2.4\nName: torch\nVersion: 2.9.0\n"
        "Requires-Dist: nvidia-cublas==12.8.4.1; variant_label == 'cuda12.8'\n"
        "Requires-Dist:   filelock\nRequires-Python: >=3.10\n"
        "Description: first\n  second\n\tthird\n\nRequires-Dist: in the body\n"
    )


def test_the_block_ends_at_a_line_that_is_no_header() -> None:
    _same("Name: x\r\nVersion: 2\r\nnot a header\r\nRequires-Dist: after\r\n")


_lines = st.one_of(
    st.tuples(st.sampled_from(NAMES), st.text(st.characters(blacklist_categories=("Cs",)),
                                              max_size=20).filter(lambda v: "\n" not in v
                                                                  and "\r" not in v)).map(
        lambda nv: f"{nv[0]}:{nv[1]}\n"
    ),
    st.sampled_from([" continued\n", "\tmore\n", "\n", "no colon here\n", "Name:\n", ": nameless\n"]),
)  # fmt: skip


@given(st.lists(_lines, max_size=12))
def test_any_header_block_reads_as_email_reads_it(lines: list[str]) -> None:
    _same("".join(lines))
