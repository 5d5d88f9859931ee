"""The candidate model: labels, yanked marks, lookups."""

from __future__ import annotations

import pytest

from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import Candidate, PackageFiles


def make(name: str, **kwargs: object) -> Candidate:
    return Candidate(WheelFilename.parse(name), f"file:///w/{name}", source="/w", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("yanked", "is_yanked"),
    [
        (None, False),  # not yanked
        (False, False),  # PEP 691 writes "yanked": false
        (True, True),  # yanked without a reason
        ("broken", True),  # yanked with a reason
        ("", True),  # an empty reason is still yanked (PEP 592)
    ],
)
def test_is_yanked(yanked: str | bool | None, is_yanked: bool) -> None:
    assert make("a-1-py3-none-any.whl", yanked=yanked).is_yanked is is_yanked


def test_labels_and_lookup() -> None:
    files = PackageFiles(
        "a",
        "1",
        (
            make("a-1-py3-none-any-cu128.whl"),
            make("a-1-cp312-cp312-linux_x86_64-cu128.whl"),
            make("a-1-py3-none-any-null.whl"),
            make("a-1-py3-none-any.whl"),
        ),
    )
    assert files.labels == ("cu128", "null")
    assert [c.name for c in files.variant_candidates] == [
        "a-1-py3-none-any-cu128.whl",
        "a-1-cp312-cp312-linux_x86_64-cu128.whl",
        "a-1-py3-none-any-null.whl",
    ]
    plain = files.candidate("a-1-py3-none-any.whl")
    assert plain is not None
    assert (plain.label, plain.is_variant, str(plain)) == (None, False, "a-1-py3-none-any.whl")
    assert files.candidate("b-1-py3-none-any.whl") is None
