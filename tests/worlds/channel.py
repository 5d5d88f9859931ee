"""A real local conda channel, built offline: hand-made ``.tar.bz2`` packages indexed by rattler.

Packages are shaped like conda-forge's: ``cuda-version`` is noarch and only *constrains*
``__cuda >=MAJOR`` and ``cudatoolkit``; CUDA components pin ``cuda-version`` to their minor;
``_x86_64-microarch-level`` has per-level builds that depend on ``__archspec`` with a CEP 29 regex.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Versions of cuda-version conda-forge publishes (there is no 12.7).
CUDA_VERSIONS = ("11.8", "12.0", "12.4", "12.6", "12.8", "12.9", "13.0")
# component version per CUDA minor, e.g. cuda-cudart 12.6.77
_COMPONENT_PATCH = {
    "11.8": "89",
    "12.0": "107",
    "12.4": "127",
    "12.6": "77",
    "12.8": "90",
    "12.9": "79",
    "13.0": "88",
}


@dataclass(frozen=True)
class Pkg:
    name: str
    version: str
    build: str
    subdir: str = "linux-64"
    build_number: int = 0
    depends: tuple[str, ...] = ()
    constrains: tuple[str, ...] = ()
    noarch: str | None = None
    track_features: str = ""
    files: dict[str, str] = field(default_factory=dict)

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}-{self.build}.tar.bz2"


def write_package(channel: Path, pkg: Pkg) -> Path:
    """Write one ``.tar.bz2`` conda package into ``channel/subdir``."""
    files = pkg.files or {f"share/vb/{pkg.name}-{pkg.version}-{pkg.build}.txt": f"{pkg.name}\n"}
    index: dict[str, Any] = {
        "name": pkg.name,
        "version": pkg.version,
        "build": pkg.build,
        "build_number": pkg.build_number,
        "depends": list(pkg.depends),
        "constrains": list(pkg.constrains),
        "license": "MIT",
        "subdir": pkg.subdir,
        "timestamp": 1_700_000_000_000,
    }
    if pkg.noarch:
        index["noarch"] = pkg.noarch
    else:
        index.update(platform=pkg.subdir.split("-")[0], arch="x86_64")
    if pkg.track_features:
        index["track_features"] = pkg.track_features
    paths = [
        {
            "_path": p,
            "path_type": "hardlink",
            "sha256": hashlib.sha256(c.encode()).hexdigest(),
            "size_in_bytes": len(c.encode()),
        }
        for p, c in files.items()
    ]
    members = {
        "info/index.json": json.dumps(index),
        "info/files": "\n".join(files) + "\n",
        "info/paths.json": json.dumps({"paths": paths, "paths_version": 1}),
        **files,
    }
    target = channel / pkg.subdir / pkg.filename
    target.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(target, "w:bz2") as tf:
        for path, content in members.items():
            data = content.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mtime = 1_700_000_000
            tf.addfile(info, io.BytesIO(data))
    return target


def index_channel(channel: Path) -> None:
    """Index with rattler (``noarch`` and every platform subdir get a repodata.json)."""
    from rattler.index import index_fs

    (channel / "noarch").mkdir(parents=True, exist_ok=True)
    asyncio.run(index_fs(channel, write_zst=False, write_shards=False, force=True))


def cuda_packages(versions: Iterable[str] = CUDA_VERSIONS) -> list[Pkg]:
    """cuda-version selectors plus two toolkit components per CUDA minor, conda-forge style."""
    pkgs: list[Pkg] = []
    for ver in versions:
        major, minor = ver.split(".")
        pkgs.append(
            Pkg(
                "cuda-version",
                ver,
                "h0_3",
                subdir="noarch",
                build_number=3,
                noarch="generic",
                constrains=(f"__cuda >={major}", f"cudatoolkit {ver}|{ver}.*"),
            )
        )
        comp = f"{ver}.{_COMPONENT_PATCH[ver]}"
        upper = f"{major}.{int(minor) + 1}.0a0"
        for name in ("cuda-cudart", "libcublas"):
            pkgs.append(
                Pkg(
                    name,
                    comp,
                    "h0_0",
                    depends=(f"cuda-version >={ver},<{upper}", "__glibc >=2.17,<3.0.a0"),
                )
            )
    return pkgs


def x86_64_names_at_level(level: int) -> list[str]:
    """Every archspec x86_64 microarchitecture whose generic level is >= *level* (from archspec)."""
    import archspec.cpu

    def lvl(t: Any) -> int:
        names = {a.name for a in [t, *t.ancestors]}
        return max([1] + [int(n[-1]) for n in names if n.startswith("x86_64_v")])

    return sorted(
        n for n, t in archspec.cpu.TARGETS.items() if t.family.name == "x86_64" and lvl(t) >= level
    )


def microarch_packages() -> list[Pkg]:
    """``_x86_64-microarch-level`` per-level builds whose ``__archspec`` regex comes from archspec."""
    pkgs = []
    for level in (1, 2, 3, 4):
        regex = "|".join(x86_64_names_at_level(level))
        pkgs.append(
            Pkg(
                "_x86_64-microarch-level",
                str(level),
                f"{level}_level{level}",
                subdir="noarch",
                noarch="generic",
                depends=(f"__archspec[version='1.*', build='^({regex})$']",),
            )
        )
    return pkgs


def base_packages() -> list[Pkg]:
    """A python-like interpreter package and a plain library, so prefixes look real."""
    return [
        Pkg("python", "3.12.7", "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",)),
        Pkg("zlib", "1.3.1", "h0_2"),
    ]


@dataclass
class Channel:
    """A channel directory plus helpers to solve and install against it."""

    path: Path

    @property
    def url(self) -> str:
        return self.path.as_uri()

    def add(self, pkgs: Iterable[Pkg]) -> Channel:
        for pkg in pkgs:
            write_package(self.path, pkg)
        index_channel(self.path)
        return self

    def solve(
        self, specs: Sequence[str], virtual_packages: Sequence[str], platform: str = "linux-64"
    ) -> list[Any]:
        """Solve *specs* with declared virtual packages like ``"__cuda=12.6"`` (rattler records)."""
        return solve([self], specs, virtual_packages, platform)

    def install(
        self, records: Sequence[Any], prefix: Path, cache: Path, requested: Sequence[str] = ()
    ) -> Path:
        return install(records, prefix, cache, requested)


def solve(
    channels: Sequence[Channel],
    specs: Sequence[str],
    virtual_packages: Sequence[str],
    platform: str = "linux-64",
) -> list[Any]:
    """Solve *specs* against local *channels* with declared virtual packages (``__cuda=12.6``)."""
    import rattler

    return asyncio.run(
        rattler.solve(
            sources=[rattler.Channel(c.url) for c in channels],
            specs=list(specs),
            platforms=[platform, "noarch"],
            virtual_packages=[_generic_vp(text) for text in virtual_packages],
        )
    )


def install(
    records: Sequence[Any], prefix: Path, cache: Path, requested: Sequence[str] = ()
) -> Path:
    """Install solved *records* into *prefix* with rattler, recording *requested* specs."""
    import rattler

    asyncio.run(
        rattler.install(
            list(records),
            target_prefix=prefix,
            cache_dir=cache,
            show_progress=False,
            # py-rattler 0.28 wants the inner object here (conda.md §4.7).
            requested_specs=[rattler.MatchSpec(s)._match_spec for s in requested] or None,
        )
    )
    return prefix


def _generic_vp(text: str) -> Any:
    from rattler import GenericVirtualPackage, PackageName, Version
    from rattler.package import BuildString

    name, version, *build = text.split("=")
    return GenericVirtualPackage(
        PackageName(name), Version(version), BuildString(build[0] if build else "0")
    )
