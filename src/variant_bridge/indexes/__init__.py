"""Finding candidate wheels and their variant metadata in find-links directories and indexes.

::

    files = find_candidates("tinyvar", find_links=["wheels/"], python_version="3.12")
    [c.label for c in files.candidates]  # ['cu126', 'cu128', 'null', None]; None: plain wheel
    download(files.candidates[0], Path("dl"))  # hash-checked, never a partial file

Sources: ``--find-links`` directories (or ``file://`` URLs, or ``http(s)://`` pages of links) and
PEP 503 (HTML) / PEP 691 (JSON) simple indexes. pypi-simple, the only heavy import, is loaded only
when an index page is parsed.
"""

from __future__ import annotations

from variant_bridge.indexes.candidates import Candidate, IndexFile, PackageFiles
from variant_bridge.indexes.download import download, file_sha256, url_to_path
from variant_bridge.indexes.finder import find_candidates, variants_json_name

__all__ = [
    "Candidate",
    "IndexFile",
    "PackageFiles",
    "download",
    "file_sha256",
    "find_candidates",
    "url_to_path",
    "variants_json_name",
]
