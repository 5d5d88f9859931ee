"""Channel names and their priority order."""

from __future__ import annotations

import pytest

from tests.export.snapshots import CF
from variant_bridge.environment import CondaRecord
from variant_bridge.export.channels import normalize_channel, order_channels


@pytest.mark.parametrize(
    ("channel", "expected"),
    [
        ("https://conda.anaconda.org/conda-forge/", "conda-forge"),
        ("https://conda.anaconda.org/conda-forge", "conda-forge"),
        ("https://prefix.dev/conda-forge/", "https://prefix.dev/conda-forge"),  # not anaconda.org
        ("file:///srv/channel/", "file:///srv/channel"),
        ("nvidia", "nvidia"),
    ],
)
def test_normalize_channel(channel: str, expected: str) -> None:
    assert normalize_channel(channel) == expected


def test_channels_keep_the_preferred_order_then_count() -> None:
    records = (
        CondaRecord("a", "1", "0", channel="https://conda.anaconda.org/nvidia/"),
        CondaRecord("b", "1", "0", channel=CF),
        CondaRecord("c", "1", "0", channel=CF),
        CondaRecord("d", "1", "0", channel="file:///local/"),
    )
    assert order_channels(records) == ("conda-forge", "file:///local", "nvidia")
    assert order_channels(records, ["nvidia", CF]) == ("nvidia", "conda-forge", "file:///local")
