"""Which dialect a document is written in: from its ``$schema`` URL, or from its shape.

A newer minor (or patch) version of a known schema reads as the newest version known at or below
it, leniently (keys this reader does not know are ignored); an unknown major version or URL is an
error. Without ``$schema``, the keys only one dialect has decide.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from variant_bridge._values import value
from variant_bridge.metadata._fields import describe, fail, q
from variant_bridge.metadata.model import Dialect

__all__ = ["SCHEMA_URLS", "Schema", "schema_of"]

_SCHEMA_HOST = "https://variants-schema.wheelnext.dev/"

SCHEMA_URLS: Final[Mapping[Dialect, str]] = MappingProxyType(
    {
        "pep817": f"{_SCHEMA_HOST}v0.0.3.json",
        "pep825": f"{_SCHEMA_HOST}peps/825/v0.1.1.json",
        "variantlib": f"{_SCHEMA_HOST}v0.2.0.json",
        "pep850": f"{_SCHEMA_HOST}peps/850/v0.2.0.json",
    }
)
"""The ``$schema`` URL of the version of each dialect this reader knows."""

# Numbers of at most 9 digits: a longer one (5,000 digits) is no schema version, and int() never
# sees it (past 4,300 digits it raises ValueError).
_SCHEMA_URL_RE = re.compile(
    re.escape(_SCHEMA_HOST)
    + r"(?:peps/(?P<pep>[0-9]{1,9})/)?v(?P<major>[0-9]{1,9})\.(?P<minor>[0-9]{1,9})"
    r"\.(?P<patch>[0-9]{1,9})\.json"
)
# URL family (the PEP directory, None for the root) -> known versions, oldest first. A version
# reads as the newest known one at or below it, so v0.1.0 at the root is still PEP 817's shape.
_FAMILIES: Final[Mapping[str | None, tuple[tuple[tuple[int, int, int], Dialect], ...]]] = {
    None: (((0, 0, 3), "pep817"), ((0, 2, 0), "variantlib")),
    "825": (((0, 1, 1), "pep825"),),
    "850": (((0, 2, 0), "pep850"),),
}


@value
class Schema:
    """How to read one document."""

    dialect: Dialect
    url: str | None
    """``$schema`` as written; ``None`` when the dialect was guessed from the shape."""
    lenient: bool = False
    """A newer minor version than this reader knows: ignore keys it does not know."""
    version: tuple[int, int, int] | None = None
    """The version in :attr:`url` (``None`` without ``$schema``)."""

    @property
    def legacy_plugin_use(self) -> bool:
        """``v0.0.2`` and older at the root: providers say ``plugin-use`` (``all``, ``build`` or
        ``none``) instead of ``install-time``, and carry no ``static-properties``."""
        return self.dialect == "pep817" and self.version is not None and self.version < (0, 0, 3)


def _from_url(url: object) -> Schema:
    if not isinstance(url, str):
        fail(f"expected a URL string, got {describe(url)}", "$schema")
    match = _SCHEMA_URL_RE.fullmatch(url)
    family = match["pep"] if match else None
    if match is None or family not in _FAMILIES:
        urls = ", ".join(SCHEMA_URLS.values())
        fail(f"unknown variant metadata schema {q(url)} (known: {urls})", "$schema")
    version = (int(match["major"]), int(match["minor"]), int(match["patch"]))
    known_versions = _FAMILIES[family]
    if version[0] not in {known[0] for known, _ in known_versions}:
        latest = ".".join(map(str, known_versions[-1][0]))
        fail(
            f"unsupported major version {version[0]} of variant metadata schema {q(url)} "
            f"(this reader knows v{latest} of that schema)",
            "$schema",
        )
    dialect = known_versions[0][1]
    newer = False
    for known, candidate in known_versions:
        if known[0] == version[0] and known <= version:
            dialect, newer = candidate, version > known
    return Schema(dialect, url, newer, version)


def _from_shape(data: Mapping[str, object]) -> Dialect:
    """Guess the dialect of a document without ``$schema`` from the keys only one dialect has."""
    priorities = data.get("default-priorities")
    providers = data.get("providers")
    if "static-properties" in data or (
        isinstance(priorities, Mapping) and {"feature", "property"} & set(priorities)
    ):
        return "pep817"
    if isinstance(providers, Mapping):
        for body in providers.values():
            if isinstance(body, Mapping) and {"enable-if", "install-time"} & set(body):
                return "pep817"
        return "pep850"
    return "pep850" if "providers" in data else "pep825"


def schema_of(data: Mapping[str, object]) -> Schema:
    """The schema a decoded document announces (or, without ``$schema``, has the shape of).

    :raises Invalid: an unknown schema URL or major version.
    """
    if "$schema" in data:
        return _from_url(data["$schema"])
    return Schema(_from_shape(data), None)
