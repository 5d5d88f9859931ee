"""Real conda prefixes: solved and installed by rattler from local channels, plus PyPI dist-infos.

A prefix is built the way pixi/mamba build one (``rattler.solve`` + ``rattler.install``), so its
``conda-meta/*.json`` are the real thing. ``add_dist_info`` then writes what pip/uv leave in
``site-packages``: ``METADATA``, ``INSTALLER``, ``RECORD``, PEP 610 ``direct_url.json`` and, for a
variant wheel, ``variant.json``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.worlds import channel
from tests.worlds.channel import Channel, Pkg

__all__ = [
    "HOST_VIRTUAL_PACKAGES",
    "PEP825_SCHEMA",
    "add_dist_info",
    "conda_python_package",
    "install_prefix",
    "running_has",
    "site_packages",
    "solve",
    "variant_json",
]

# What the solve pretends the machine is (the channel's packages need __glibc; cuda-version
# constrains __cuda).
HOST_VIRTUAL_PACKAGES = ("__unix=0", "__linux=6.1", "__glibc=2.36", "__archspec=1=x86_64_v3")
PEP825_SCHEMA = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"


def conda_python_package(name: str, version: str, python: str = "3.12") -> Pkg:
    """A conda package that installs a Python distribution (its dist-info is conda's)."""
    site = f"lib/python{python}/site-packages"
    dist_info = f"{site}/{name.replace('-', '_')}-{version}.dist-info"
    return Pkg(
        name,
        version,
        "py_0",
        depends=(f"python {python}.*",),
        files={
            f"{site}/{name.replace('-', '_')}/__init__.py": "",
            f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
            f"{dist_info}/INSTALLER": "conda\n",
        },
    )


def solve(
    channels: Sequence[Channel],
    specs: Sequence[str],
    virtual_packages: Sequence[str] = HOST_VIRTUAL_PACKAGES,
    platform: str = "linux-64",
) -> list[Any]:
    """Solve *specs* against several local channels (rattler ``RepoDataRecord`` list)."""
    return channel.solve(channels, specs, virtual_packages, platform)


def install_prefix(records: Sequence[Any], prefix: Path, cache: Path, specs: Sequence[str]) -> Path:
    """Install solved *records* into *prefix* with rattler, recording *specs* as requested."""
    return channel.install(records, prefix, cache, specs)


def site_packages(prefix: Path, python: str = "3.12") -> Path:
    path = prefix / "lib" / f"python{python}" / "site-packages"
    path.mkdir(parents=True, exist_ok=True)
    return path


def variant_json(
    label: str, properties: Mapping[str, Mapping[str, Sequence[str]]]
) -> dict[str, Any]:
    """A PEP 825 ``variant.json`` for one installed variant wheel."""
    return {
        "$schema": PEP825_SCHEMA,
        "default-priorities": {"namespace": sorted(properties)},
        "variants": {
            label: {ns: {f: list(v) for f, v in fs.items()} for ns, fs in properties.items()}
        },
    }


def add_dist_info(
    site: Path,
    name: str,
    version: str,
    *,
    requires: Sequence[str] = (),
    installer: str | None = "uv",
    variant: Mapping[str, Any] | None = None,
    direct_url: Mapping[str, Any] | None = None,
    metadata: str | None = None,
) -> Path:
    """Write ``{name}-{version}.dist-info`` as an installer leaves it; return its path.

    :param metadata: the whole METADATA text instead of the generated one.
    """
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.4", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    text = metadata if metadata is not None else "\n".join(lines) + "\n\nLong description.\n"
    files = {"METADATA": text}
    if installer is not None:
        files["INSTALLER"] = f"{installer}\n"
    if variant is not None:
        files["variant.json"] = json.dumps(variant, indent=4, sort_keys=True)
    if direct_url is not None:
        files["direct_url.json"] = json.dumps(direct_url)
    for file, content in files.items():
        (dist_info / file).write_text(content, encoding="utf-8")
    record = [f"{dist_info.name}/{f},," for f in [*files, "RECORD"]]
    (dist_info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")
    return dist_info


def running_has(name: str) -> bool:
    """Whether the interpreter running the tests (variant-bridge's own) has *name* installed: a
    write that went astray into it instead of the target (asked in a fresh process, so no
    import cache answers)."""
    import subprocess
    import sys

    probe = f"import importlib.metadata as m; m.distribution({name!r})"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False)
    return found.returncode == 0
