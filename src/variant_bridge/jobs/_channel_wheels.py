"""A wheel a solve took from a user's conda channel (one ``index`` wrote: its ``v3.whl`` records).

The record says where the wheel is (``url``, a channel-relative ``../wheels/<file>`` resolved by
the solver) and its ``sha256``; that is all a channel promises, so the wheel is installed from
that URL and checked against that hash by the trust gate every install goes through
(:mod:`variant_bridge.indexes.trust`), as ``-c CONDA -f WHEELS`` would. Its ``Requires-Dist``
(for a lock) and its variant are read from the wheel itself (the local file, or its core
metadata through the command's downloads).
"""

from __future__ import annotations

import dataclasses

from variant_bridge._values import value
from variant_bridge.errors import IndexReadError, InvalidMetadata, InvalidWheelFilename, SolveError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import Candidate, CoreMetadataReader, Downloads
from variant_bridge.indexes.variant_files import variant_metadata_of
from variant_bridge.markers import VariantValues, variant_lines
from variant_bridge.solve.solver import SolvedPackage

__all__ = ["ChannelWheel", "channel_wheel"]


@value
class ChannelWheel:
    """What a record of a user channel gives: the file to install and what it requires."""

    candidate: Candidate
    requires_dist: tuple[str, ...]
    sha256: str
    reason: str


def channel_wheel(package: SolvedPackage, downloads: Downloads) -> ChannelWheel:
    """The wheel *package* (a solved ``v3.whl`` record of a user channel) stands for.

    :raises SolveError: the record names no wheel file or no sha256, or the wheel's metadata
        cannot be read (naming the record and the URL).
    """
    url = package.url
    where = f"{package.name} {package.version} {package.build} from {package.channel or url}"
    try:
        filename = WheelFilename.parse(url.rpartition("/")[2])
    except InvalidWheelFilename as e:
        raise SolveError(f"{where}: its url {url!r} names no wheel file: {e}") from e
    if not package.sha256:
        raise SolveError(f"{where}: the record has no sha256, so the wheel cannot be verified")
    candidate = Candidate(filename=filename, url=url, source=package.channel or url,
                          sha256=package.sha256)  # fmt: skip
    try:
        metadata = CoreMetadataReader(downloads, download_wheels=True).read(candidate)
        members = downloads.members(candidate) if filename.label is not None else None
        own = variant_metadata_of(members, filename) if members is not None else None
    except (IndexReadError, InvalidMetadata) as e:
        raise SolveError(f"{where}: cannot read the wheel's metadata: {e}") from e
    variant = own.variant(filename.label) if own is not None and filename.label else None
    if variant is not None:
        candidate = dataclasses.replace(candidate, variant=variant)
    # Its variant markers decided for its own variant, as every installed copy of it says them.
    requires = variant_lines(metadata.requires_dist if metadata is not None else (),
                             VariantValues.of(variant))  # fmt: skip
    label = filename.label
    said = f"variant {label}" if label is not None else "not a variant wheel"
    reason = (
        f"{said}; record {package.build} (build number {package.build_number}) of channel "
        f"{package.channel or url}"
    )
    return ChannelWheel(candidate, tuple(requires), package.sha256, reason)
