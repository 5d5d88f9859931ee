"""One world of variant releases for the index tests, served both as a find-links directory and
as a loopback simple index (built once per session; the server once per module)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel

CU128 = ("nvidia :: cuda_version_lower_bound :: 12.8",)
CU126 = (
    "nvidia :: cuda_version_lower_bound :: 12.6",
    "nvidia :: sm_arch :: 80_real",
    "nvidia :: sm_arch :: 90_real",
)
FULL = {"cu128": CU128, "cu126": CU126, "null": ()}
DIALECTS = ("pep817", "pep825", "variantlib", "pep850")


@dataclass(frozen=True)
class World:
    """The directory and what each project in it is meant to exercise."""

    root: Path


def build_world(root: Path) -> World:
    """Write every project the index tests use into *root* (flat, like a find-links dir).

    - ``tinyvar`` 1.0.0: cu128, cu126, null and a plain wheel with a full variants.json, plus an
      sdist, an older sdist and a wheel with an invalid label; 1.1.0 needs Python >= 3.99.
    - ``partvar``: variants.json lists only cu128; cu126 and null come from their wheels.
    - ``nojson``: no variants.json at all.
    - ``brokenvar``: a wheel whose variant.json names another label, and a wheel that is no zip.
    - ``badjson``: a corrupt variants.json.
    - ``sizevar``: two cu128 wheels, a big one first by name and a small one, no index file.
    - ``yankvar`` 1.0.0 and 2.0.0 (the index tests yank 2.0.0).
    - ``dia-{dialect}`` / ``dia-{dialect}-wheels``: each schema dialect, with / without index file.
    """
    make_release(root, "tinyvar", "1.0.0", FULL)
    make_release(root, "tinyvar", "1.1.0", {"cu128": CU128}, requires_python=">=3.99")
    (root / "tinyvar-1.0.0.tar.gz").write_bytes(b"an sdist")
    (root / "tinyvar-0.9.tar.gz").write_bytes(b"an old sdist")
    (root / "tinyvar-1.0.0-py3-none-any-CU128.whl").write_bytes(b"bad label")

    make_release(root, "partvar", "1.0.0", FULL, variants_json=["cu128"])
    make_release(root, "nojson", "1.0.0", FULL, variants_json=False)

    make_release(root, "brokenvar", "1.0.0", {"cu128": CU128})
    make_wheel(
        root,
        "brokenvar",
        "1.0.0",
        label="cu130",
        variant_json=(
            '{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",'
            ' "default-priorities": {"namespace": ["nvidia"]},'
            ' "variants": {"other": {"nvidia": {"cuda_version_lower_bound": ["13.0"]}}}}'
        ),
    )
    (root / "brokenvar-1.0.0-py3-none-any-bad.whl").write_bytes(b"this is not a zip")

    bad = make_release(root, "badjson", "1.0.0", {"cu128": CU128}, variants_json=False)
    assert bad.variants_json is None
    (root / "badjson-1.0.0-variants.json").write_text('{"$schema": "oops", "variants": [')

    # Two wheels of one label, no index file: the small one should be read (by size, not name).
    noise = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(8192))
    make_wheel(root, "sizevar", "1.0", label="cu128", properties=CU128,
               tags="cp311-cp311-linux_x86_64", files={"sizevar/blob.bin": noise})  # fmt: skip
    make_wheel(root, "sizevar", "1.0", label="cu128", properties=CU128)

    for version in ("1.0.0", "2.0.0"):
        make_release(root, "yankvar", version, {"cu128": CU128})

    for dialect in DIALECTS:
        make_release(root, f"dia-{dialect}", "1.0.0", FULL, dialect=dialect)
        make_release(
            root, f"dia-{dialect}-wheels", "1.0.0", FULL, dialect=dialect, variants_json=False
        )
    return World(root)


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("index-world"))


@pytest.fixture(scope="module")
def index(world: World) -> Iterator[IndexServer]:
    """The world served as a simple index (JSON and HTML by content negotiation)."""
    with IndexServer(world.root) as server:
        yield server


__all__ = ["CU126", "CU128", "DIALECTS", "FULL", "World", "build_world"]
