"""Install solved conda packages into a prefix with ``rattler.install`` (the wheels of a
solution go in afterwards with the hash-checked uv/pip install: rattler does not install
``v3.whl`` records).

Every package is checked before the first is linked: each ``paths.json`` entry, tar member and
link target must stay inside the prefix (:mod:`variant_bridge.indexes.archive`). rattler creates
a path's parent directories before it finds out that the file cannot be linked, so a package
naming ``../../x`` would otherwise leave directories outside the prefix.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from variant_bridge.errors import SolveError, UnsafeArchive
from variant_bridge.indexes import url_to_path
from variant_bridge.indexes.archive import link_target, member_path

__all__ = ["check_conda_packages", "install_conda"]


_INTERPRETERS = ("bin/python", "python.exe")


async def _check_package(path: Path) -> list[str]:
    from rattler.package_streaming import PackageArchive

    name = path.name
    archive = await PackageArchive.from_path(path)
    paths = [
        member_path(entry.relative_path.as_posix(), archive=name)
        for entry in (await archive.paths_json()).paths
    ]
    try:
        async for member in archive.stream("pkg"):
            checked = member_path(member.name, archive=name)
            if member.is_symlink and member.link_target is not None:
                link_target(checked, member.link_target, archive=name)
    except OSError as e:  # rattler refuses an archive path of its own accord
        raise UnsafeArchive(f"{name}: {' '.join(str(e).split())}: refused") from e
    return paths


def check_conda_packages(records: Sequence[Any]) -> frozenset[str]:
    """Check every local package of *records* (rattler ``RepoDataRecord`` objects): its paths
    and link targets stay inside the prefix it is linked into. Returns every path they link.

    :raises UnsafeArchive: naming the package and the path.
    :raises SolveError: a package that cannot be read.
    """
    linked: set[str] = set()
    for record in records:
        url = str(record.url)
        if not url.startswith("file:"):
            continue  # wheel records and remote channels: not linked by rattler here
        path = url_to_path(url)
        try:
            linked.update(asyncio.run(_check_package(path)))
        except UnsafeArchive:
            raise
        except Exception as e:  # rattler's own exception types
            text = " ".join(str(e).split())
            raise SolveError(f"cannot read conda package {path}: {text}") from e
    return frozenset(linked)


def install_conda(
    records: Sequence[Any], prefix: Path, specs: Sequence[str], *, needs_python: bool = False
) -> None:
    """``rattler.install`` of solved conda records into *prefix* (created when missing), after
    :func:`check_conda_packages`.

    :param specs: the requested conda specs, recorded in conda-meta.
    :param needs_python: wheels follow: refuse, before linking anything, when neither the
        prefix nor the packages provide ``bin/python`` (they would land in another interpreter).
    :raises UnsafeArchive: a package with a path outside the prefix (nothing is installed).
    :raises SolveError: no interpreter for the wheels; rattler could not link a package.
    """
    import rattler

    linked = check_conda_packages(records)
    if needs_python and not any(p in linked or (prefix / p).is_file() for p in _INTERPRETERS):
        raise SolveError(
            f"cannot install the wheels into {prefix}: it has no bin/python and no package of the "
            "solution provides one; nothing was installed"
        )
    with tempfile.TemporaryDirectory(prefix="variant-bridge-pkgs-") as cache:
        try:
            asyncio.run(
                rattler.install(
                    list(records),
                    target_prefix=prefix,
                    cache_dir=Path(cache),
                    show_progress=False,
                    # py-rattler 0.28 wants the inner objects here.
                    requested_specs=[rattler.MatchSpec(s)._match_spec for s in specs] or None,
                )
            )
        except Exception as e:  # rattler's own exception types
            text = " ".join(str(e).split())
            raise SolveError(f"rattler could not install into {prefix}: {text}") from e
