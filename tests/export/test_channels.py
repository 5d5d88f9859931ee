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
        # conda records a package's channel with its subdir: folded into the channel
        ("file:///srv/channel/linux-64", "file:///srv/channel"),
        ("file:///srv/channel/noarch/", "file:///srv/channel"),
        ("https://conda.anaconda.org/conda-forge/linux-64", "conda-forge"),
        ("https://prefix.dev/conda-forge/osx-arm64", "https://prefix.dev/conda-forge"),
        ("file:///srv/linux-64-builds", "file:///srv/linux-64-builds"),
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


def test_subdir_urls_fold_into_their_channel_once_in_order() -> None:
    """What real conda 26.1 writes in conda-meta for a local channel."""
    records = (
        CondaRecord("python", "3.11.7", "h0", channel="file:///tmp/rc/channel/linux-64"),
        CondaRecord("pip", "25.2", "h0", channel="file:///tmp/rc/channel/linux-64"),
        CondaRecord("cuda-version", "12.6", "h0_3", channel="file:///tmp/rc/channel/noarch"),
        CondaRecord("x", "1", "0", channel="https://conda.anaconda.org/conda-forge/noarch"),
    )
    assert order_channels(records, ["file:///tmp/rc/channel"]) == (
        "file:///tmp/rc/channel",
        "conda-forge",
    )
