"""Finding candidate wheels and their variant metadata in find-links directories and indexes.

::

    transport = Transport()  # the command's requests: deadlines, caps, keep-alive, --verbose
    files = find_candidates("tinyvar", find_links=["wheels/"], python_version="3.12",
                            transport=transport)
    [c.label for c in files.candidates]  # ['cu126', 'cu128', 'null', None]; None: plain wheel
    download(files.candidates[0], Path("dl"), transport=transport)  # hash-checked, whole

Sources (:mod:`.sources`): ``--find-links`` directories (or ``file://`` URLs, or ``http(s)://``
pages of links) and PEP 503 (HTML) / PEP 691 (JSON) simple indexes, read by our own reader
(:mod:`.simple`, the standard library's HTML parser and ``json``).
"""

from __future__ import annotations

from variant_bridge.indexes.candidates import (
    Candidate,
    IndexFile,
    PackageFiles,
    Problem,
    ProblemKind,
    Skipped,
)
from variant_bridge.indexes.core_metadata import (
    CoreMetadata,
    CoreMetadataReader,
    MetadataSource,
    read_wheel_metadata,
)
from variant_bridge.indexes.download import Downloads, download, file_sha256, url_to_path
from variant_bridge.indexes.finder import ProjectListing, find_candidates, find_files
from variant_bridge.indexes.prefetch import Prefetch
from variant_bridge.indexes.sources import (
    FindLinks,
    IndexSource,
    IndexStrategy,
    SimpleIndex,
    index_order,
    open_sources,
)
from variant_bridge.indexes.transport import Transport

__all__ = [
    "Candidate",
    "CoreMetadata",
    "CoreMetadataReader",
    "Downloads",
    "FindLinks",
    "IndexFile",
    "IndexSource",
    "IndexStrategy",
    "MetadataSource",
    "PackageFiles",
    "Prefetch",
    "Problem",
    "ProblemKind",
    "ProjectListing",
    "SimpleIndex",
    "Skipped",
    "Transport",
    "download",
    "file_sha256",
    "find_candidates",
    "find_files",
    "index_order",
    "open_sources",
    "read_wheel_metadata",
    "url_to_path",
]
