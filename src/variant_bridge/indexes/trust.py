"""What a wheel must pass before it is installed: a hash, and its own ``variant.json``.

:func:`verify` is the one gate every installed file goes through (the packages named on the
command line and the dependencies reached from them alike):

1. **a hash to compare with.** A remote file whose index lists no sha256 is refused unless the
   user opted out (``--no-require-hashes``): nothing could tell a tampered download from the
   real one. A find-links file is hashed where it lies and pinned: the copy that is installed
   must have that hash.
2. **the comparison.** The bytes fetched (or taken from the cache, hashed again) must have that
   hash (:class:`~variant_bridge.indexes.Downloads`); a short download is reported as truncated.
3. **the variant.** A variant wheel's own ``variant.json`` must describe its label as the index's
   ``*-variants.json`` did when it was chosen: a lying index could otherwise pass a wheel built
   for a CUDA 12.9 driver as a 12.6 one.
4. **its metadata.** The wheel's ``METADATA`` must be readable within :data:`MAX_MEMBER`: a 1 MB
   wheel whose ``METADATA`` inflates to 1 GiB would cost the installer, and every tool that
   reads the environment afterwards, gigabytes.

:attr:`VerifiedFile.checked` is true only when a comparison happened.
"""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

from variant_bridge._values import value
from variant_bridge.errors import InvalidMetadata, UnverifiedFile, VariantMismatch
from variant_bridge.indexes.candidates import Candidate
from variant_bridge.indexes.download import Downloads, file_sha256, url_to_path
from variant_bridge.indexes.members import METADATA, MemberTooLarge, local_members
from variant_bridge.indexes.variant_files import variant_metadata_of
from variant_bridge.properties import VariantDescription

__all__ = ["HASH_OPT_OUT", "VerifiedFile", "check_variant", "hash_to_compare", "pin", "verify"]

HASH_OPT_OUT = "--no-require-hashes"
"""The option that lets a file without a listed hash be installed (unverified)."""


@value
class VerifiedFile:
    """A wheel ready to install.

    :param candidate: what was chosen (with its pin, for a find-links file).
    :param path: the local copy that passed.
    :param sha256: the sha256 of that copy.
    :param checked: whether it was compared with a hash fixed before it was fetched (the index's,
        or a find-links file's pin); ``False`` only for a file installed with the opt-out.
    """

    candidate: Candidate
    path: Path
    sha256: str
    checked: bool


def pin(candidate: Candidate) -> Candidate:
    """A find-links (``file:``) candidate with the sha256 of the file as it is now; any other
    candidate unchanged. The copy installed later must have that hash."""
    if candidate.sha256 is not None or not candidate.url.startswith("file:"):
        return candidate
    return replace(candidate, sha256=file_sha256(url_to_path(candidate.url)))


def hash_to_compare(candidate: Candidate, *, require_hashes: bool = True) -> Candidate:
    """*candidate* :func:`pin`-ned; checked before anything is fetched or installed, so a use
    case can refuse the whole set first.

    :raises UnverifiedFile: no hash to compare with, and *require_hashes*.
    """
    candidate = pin(candidate)
    if candidate.sha256 is None and require_hashes:
        raise UnverifiedFile(
            f"{candidate.name} from {candidate.url}: {candidate.source} lists no sha256 for it, "
            f"so a tampered download could not be told from the real one; refusing to install "
            f"it (pass {HASH_OPT_OUT} to install files without a listed hash, unverified)"
        )
    return candidate


def _words(description: VariantDescription) -> str:
    return "; ".join(str(p) for p in description.properties) or "no properties"


def check_variant(candidate: Candidate, path: Path) -> None:
    """The wheel at *path* must describe its label as the candidate's variant metadata did, and
    hold a ``METADATA`` of at most :data:`MAX_MEMBER` bytes.

    :raises VariantMismatch: naming both sources and both descriptions.
    :raises InvalidMetadata: the wheel's own ``variant.json`` is missing or malformed; its
        ``METADATA`` is missing, duplicated or too large (:class:`MemberTooLarge`).
    """
    if not zipfile.is_zipfile(path):
        return  # not a wheel at all: refused as such by whoever opens it (install's own check)
    members = local_members(path, where=candidate.name)
    try:
        if members.one(METADATA) is None:
            raise InvalidMetadata(f"{candidate.name}: no *.dist-info/METADATA")
    except MemberTooLarge as e:
        raise MemberTooLarge(f"{e}; the wheel is not installed", e.size) from None
    except InvalidMetadata as e:
        raise InvalidMetadata(f"{e}; the wheel is not installed") from None
    label = candidate.label
    if label is None or candidate.variant is None:
        return
    own = variant_metadata_of(members, candidate.filename)
    assert own is not None  # a labelled wheel has variant metadata, or that raised
    mine = own.variant(label)
    if mine is not None and set(mine.properties) == set(candidate.variant.properties):
        return
    said = _words(mine) if mine is not None else "nothing"
    where = candidate.variant_source or candidate.source
    raise VariantMismatch(
        f"{candidate.name}: its own variant.json says {label!r} is [{said}], but {where} says "
        f"[{_words(candidate.variant)}]: the index's variant metadata does not describe this "
        "wheel; refusing to install it"
    )


def verify(
    candidate: Candidate, downloads: Downloads, *, require_hashes: bool = True
) -> VerifiedFile:
    """Fetch *candidate* through *downloads* and check it (see the module docstring).

    :param require_hashes: refuse a remote file without a listed sha256 (the default).
    :raises UnverifiedFile: no hash to compare with, and *require_hashes* (before fetching).
    :raises HashMismatch, TruncatedRead, IndexReadError: fetching or comparing failed.
    :raises VariantMismatch, InvalidMetadata: its ``variant.json`` disagrees or is broken.
    """
    candidate = hash_to_compare(candidate, require_hashes=require_hashes)
    path = downloads.get(candidate)
    check_variant(candidate, path)
    return VerifiedFile(candidate, path, downloads.sha256(candidate), candidate.sha256 is not None)
