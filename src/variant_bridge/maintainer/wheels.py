"""The wheel side from whatever the maintainer has: which reader a location needs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from variant_bridge.errors import ReleaseInputError
from variant_bridge.maintainer._files import check_regular
from variant_bridge.maintainer.declarations import is_declaration, read_declaration
from variant_bridge.maintainer.wheel_side import WheelTarget, read_variants_file, read_wheels
from variant_bridge.release import WheelSide, WheelVariant

if TYPE_CHECKING:
    from variant_bridge.indexes import Downloads

__all__ = ["read_wheel_side"]


def read_wheel_side(
    location: str,
    *,
    project: str | None = None,
    version: str | None = None,
    target: WheelTarget | None = None,
    downloads: Downloads,
    download: bool = False,
) -> WheelSide:
    """A wheels folder or index URL, a ``*-variants.json``, or a declaration (TOML).

    :param downloads: the command's (a wheels folder or index URL is read through it).
    :param download: read a remote wheel whole where the index offers neither PEP 658 files nor
        range requests (else the wheel is named in :attr:`WheelSide.unread`).
    :raises ReleaseInputError: a location that is none of these, or cannot be read.
    """
    target = target if target is not None else WheelTarget()
    if "://" in location and not location.startswith("file:"):
        return read_wheels(
            location, project=project, version=version, default=target, downloads=downloads,
            download=download,
        )  # fmt: skip
    path = Path(location.removeprefix("file://"))
    if path.is_dir():
        return read_wheels(
            str(path), project=project, version=version, default=target, downloads=downloads
        )
    if path.exists():
        check_regular(path)  # a FIFO or a device is refused before anything reads it
    if path.name.endswith("-variants.json") and path.is_file():
        meta, name, file_version = read_variants_file(path)
        variants = tuple(WheelVariant(d) for d in meta.variants)
        return WheelSide(variants, (str(path),), name, file_version)
    if is_declaration(path):
        return read_declaration(path, project=project)
    if not path.exists():
        raise ReleaseInputError(f"{location}: no such file or folder")
    raise ReleaseInputError(
        f"{location}: expected a wheels folder, an index URL, a *-variants.json or a "
        "declaration (variant-repack TOML, pyproject.toml with scikit-build overrides)"
    )
