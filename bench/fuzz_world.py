"""The world the fuzz run's commands work on, built once from the test worlds' real parts.

- ``wheels/``: ``tinyvar 1.0`` (cu126, cu128, the null variant, a plain wheel, its
  ``*-variants.json``) requiring ``depa``; ``depa 1.0``;
- ``channel/``: a rattler-indexed channel (``cuda-version`` 12.6/12.8 with their components, a
  ``python`` record);
- ``env/``: a rattler-installed prefix (``cuda-version 12.6``, ``cuda-cudart``, ``python``) with two
  PyPI dist-infos (tinyvar cu126 with its ``variant.json`` and ``direct_url.json``, depa);
- ``ws/``: a pixi workspace (``pixi.toml`` and a rattler-written ``pixi.lock``, not installed);
- ``pixi/proj``: the tests' pixi workspace with its ``default`` environment installed (a venv
  rattler installed the conda packages into), for ``pixi variant add``; its ``gpulib`` wheels in
  ``pixi/wheels``;
- ``bin/uv``: a stand-in ``uv`` that exits 0, for ``run -- uv pip install ...`` (the notes are
  what is fuzzed, not uv);
- ``targets.yaml``: the cluster's node classes;
- ``maint/``: maintainer inputs: the real feedstock files of ``../shared/corpus/maint`` when
  present, else the project's demo (docs/examples/vbdemo);
- ``venv/``: a throw-away venv, the only interpreter ``install --dry-run`` is pointed at;
- special files: a FIFO, ``/dev/zero`` behind a link, a directory, a missing path.

Seeds (the text of each input kind) are read back from these, so mutations start from real files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("VARIANT_BRIDGE_CORPUS", ROOT.parent / "shared" / "corpus"))

LOWER = "nvidia :: cuda_version_lower_bound :: {}"


@dataclass
class World:
    root: Path
    wheels: Path
    channel: Path
    env: Path
    workspace: Path
    targets: Path
    venv_python: Path
    special: dict[str, Path]
    pixi: Path
    """The installed workspace's folder (``pixi.toml``, ``.pixi/envs/default``)."""
    pixi_wheels: Path
    fake_uv: Path
    seeds: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Input kind -> ``(file name, text)`` of real files to mutate."""
    wheel_files: list[Path] = field(default_factory=list)


def _seed_files(kind: str, paths: list[Path]) -> list[tuple[str, str]]:
    found = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) < 300_000:
            found.append((path.name, text))
    if not found:
        raise SystemExit(f"fuzz world: no seed for {kind}")
    return found


def _maintainer_seeds(root: Path) -> dict[str, list[tuple[str, str]]]:
    maint = CORPUS / "maint"
    if maint.is_dir():
        yaml = sorted(maint.glob("*/.ci_support/*.yaml"))[:12]
        yaml += sorted(maint.glob("conda-forge-pinning/**/*.yaml"))
        toml = sorted(maint.glob("variant-repack/*.toml"))
        json_files = sorted(maint.glob("variant-repack/*.json"))
        dfg = sorted(maint.glob("cudf-*/dependencies.yaml"))
    else:  # a clone without ../shared: the demo project's own files
        demo = ROOT / "docs" / "examples" / "vbdemo"
        yaml = sorted(demo.rglob("*.yaml"))
        toml = sorted(demo.rglob("*.toml"))
        json_files = sorted(demo.rglob("*.json"))
        dfg = yaml[:1]
    seeds = {
        "ci-yaml": _seed_files("ci-yaml", yaml),
        "declaration": _seed_files("declaration", toml),
        "dfg": _seed_files("dfg", dfg or yaml[:1]),
    }
    if json_files:
        seeds["maint-json"] = _seed_files("maint-json", json_files)
    return seeds


def build(root: Path) -> World:
    """Build the world under *root* (a minute, once per run)."""
    sys.path.insert(0, str(ROOT))
    from tests.worlds.channel import Channel, base_packages, cuda_packages
    from tests.worlds.cluster import CLASSES
    from tests.worlds.lockfile import LockedPlatform, write_lockfile
    from tests.worlds.pixi_workspace import make_workspace, manifest_text
    from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, add_dist_info, install_prefix, solve
    from tests.worlds.wheels import make_release, make_wheel

    from variant_bridge.install import find_uv

    wheels = root / "wheels"
    release = make_release(
        wheels,
        "tinyvar",
        "1.0",
        {"cu126": [LOWER.format("12.6")], "cu128": [LOWER.format("12.8")], "null": []},
        requires=["depa"],
    )
    make_wheel(wheels, "depa", "1.0")
    channel = Channel(root / "channel").add([*cuda_packages(("12.6", "12.8")), *base_packages()])
    specs = ["cuda-version 12.6.*", "cuda-cudart", "python"]
    records = solve([channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
    env = install_prefix(records, root / "env", root / "pkgs", specs)
    site = env / "lib" / "python3.12" / "site-packages"
    variants = json.loads((wheels / "tinyvar-1.0-variants.json").read_text())
    cu126 = {**variants, "variants": {"cu126": variants["variants"]["cu126"]}}
    add_dist_info(
        site,
        "tinyvar",
        "1.0",
        requires=["depa"],
        variant=cu126,
        direct_url={
            "url": (wheels / "tinyvar-1.0-py3-none-any-cu126.whl").as_uri(),
            "archive_info": {},
        },
    )
    add_dist_info(site, "depa", "1.0")
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "pixi.toml").write_text(manifest_text(channel.url), encoding="utf-8")
    write_lockfile(
        workspace / "pixi.lock",
        {"default": [LockedPlatform("linux-64", records)]},
        channels=[channel.url],
    )
    targets = root / "targets.yaml"
    targets.write_text(CLASSES, encoding="utf-8")
    uv = find_uv()
    assert uv is not None
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(root / "venv")], check=True)

    special = {kind: special_file(root, kind, "x.yaml") for kind in SPECIAL_KINDS}
    (root / "pixi").mkdir()
    installed = make_workspace(root / "pixi", installed=("default",))
    fake_uv = root / "bin" / "uv"
    fake_uv.parent.mkdir()
    fake_uv.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    fake_uv.chmod(0o755)

    world = World(
        root,
        wheels,
        channel.path,
        env,
        workspace,
        targets,
        root / "venv" / "bin" / "python",
        special,
        installed.root,
        installed.wheels,
        fake_uv,
    )
    world.wheel_files = sorted(wheels.glob("*.whl"))
    meta = env / "conda-meta"
    world.seeds = {
        "conda-meta": _seed_files("conda-meta", sorted(meta.glob("*.json"))),
        "variant.json": _seed_files(
            "variant.json", [*site.glob("*/variant.json"), *wheels.glob("*-variants.json")]
        ),
        "pixi.lock": _seed_files("pixi.lock", [workspace / "pixi.lock"]),
        "pixi.toml": _seed_files("pixi.toml", [workspace / "pixi.toml"]),
        "targets": _seed_files("targets", [targets]),
        **_maintainer_seeds(root),
    }
    ci_name, ci_text = world.seeds["ci-yaml"][0]
    (root / "maint-ci.yaml").write_text(ci_text, encoding="utf-8")  # check --wheels' conda side
    del release, ci_name
    return world


SPECIAL_KINDS = ("fifo", "zero", "dir", "missing")


def special_file(root: Path, kind: str, name: str) -> Path:
    """``root/special/<kind>/<name>``: a FIFO, ``/dev/zero`` behind a link, a directory, or
    nothing, under the name an option expects (``pixi.toml``, ``x.whl``, ``repodata.json``)."""
    path = root / "special" / kind / name
    if path.exists() or path.is_symlink():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "dir":
        path.mkdir()
    return path


def fresh_copy(source: Path, target: Path) -> Path:
    """A copy of a directory (a prefix, a workspace) to mutate for one input."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, symlinks=True)
    return target
