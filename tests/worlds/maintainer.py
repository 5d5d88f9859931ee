"""A maintainer's world, built for real and offline: one matrix, conda packages and variant wheels.

- :func:`build_channel`: conda packages built by py-rattler-build from recipes, into a local
  channel indexed by ``rattler.index``. The stubs are shaped like conda-forge's: ``cuda-version``
  (noarch, ``run_constraints`` on ``__cuda`` and ``cudatoolkit``), ``cuda-nvcc_linux-64``
  (strong run export ``cuda-version >=X.Y,<X+1``) and ``sysroot_linux-64`` (strong run export
  ``__glibc >=X.Y,<3.0.a0``). Builds run in a child process (py-rattler-build can crash at
  interpreter exit, shared/reference/maintainers.md §2.8).
- :func:`build_wheels`: one plain wheel per build (tagged for its glibc floor), then the
  ``make-variants.sh`` that ``variant-bridge matrix`` wrote: ``variantlib make-variant
  --no-isolation`` (validated by variant-bridge's plugins) and ``generate-index-json``.

The demo project is docs/examples/vbdemo (the maintainer guide's).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.worlds.wheels import make_wheel

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "docs" / "examples" / "vbdemo"
CUDA_VERSIONS = ("12.6", "12.8", "12.9", "13.0")

_CUDA_VERSION = """\
package:
  name: cuda-version
  version: ${{ cuda_version }}
build:
  number: 3
  noarch: generic
requirements:
  run_constraints:
    - __cuda >=${{ cuda_version | split(".") | first }}
    - cudatoolkit ==${{ cuda_version }}|${{ cuda_version }}.*
"""
_NVCC = """\
package:
  name: cuda-nvcc_linux-64
  version: ${{ cuda_version }}
build:
  noarch: generic
requirements:
  run_exports:
    strong:
      - cuda-version >=${{ cuda_version }},<${{ (cuda_version | split(".") | first | int) + 1 }}
"""
_SYSROOT = """\
package:
  name: sysroot_linux-64
  version: ${{ glibc }}
build:
  noarch: generic
requirements:
  run_exports:
    strong:
      - __glibc >=${{ glibc }},<3.0.a0
"""


def write_stub_recipes(root: Path) -> list[tuple[Path, Path]]:
    """The stub recipes and their variant files."""
    cuda = "cuda_version: [" + ", ".join(f'"{v}"' for v in CUDA_VERSIONS) + "]\n"
    stubs = {
        "cuda-version": (_CUDA_VERSION, cuda),
        "cuda-nvcc": (_NVCC, cuda),
        "sysroot": (_SYSROOT, 'glibc: ["2.17", "2.28"]\n'),
    }
    out = []
    for name, (recipe, variants) in stubs.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "recipe.yaml").write_text(recipe)
        (folder / "variants.yaml").write_text(variants)
        out.append((folder / "recipe.yaml", folder / "variants.yaml"))
    return out


def _index(channel: Path) -> None:
    import asyncio

    import rattler.index

    (channel / "noarch").mkdir(parents=True, exist_ok=True)
    result = rattler.index.index_fs(channel, write_zst=False, write_shards=False, force=True)
    if asyncio.iscoroutine(result):
        asyncio.run(result)


def build_in_process(
    recipes: Sequence[tuple[Path, Path]], channel: Path, scratch: Path
) -> list[str]:
    """Build each recipe for linux-64 against *channel*, copy the packages into it, re-index.
    (Run in a child: :func:`build_channel`.)"""
    import rattler_build as rb

    _index(channel)
    built: list[str] = []
    render = rb.RenderConfig(platform=rb.PlatformConfig(target_platform="linux-64"))
    for recipe, variants in recipes:
        results = rb.Stage0Recipe.from_file(str(recipe)).run_build(
            variant_config=rb.VariantConfig.from_file(str(variants)),
            tool_config=rb.ToolConfiguration(test_strategy="skip"),
            output_dir=str(scratch),  # not the channel: builds leave work folders behind
            channels=[channel.resolve().as_uri()],
            render_config=render,
        )
        for result in results:
            for package in map(Path, result.packages):
                target = channel / package.parent.name / package.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(package, target)
                built.append(str(target))
        _index(channel)
    return built


def build_channel(recipes: Sequence[tuple[Path, Path]], channel: Path, scratch: Path) -> list[Path]:
    """:func:`build_in_process` in a child process (the product's isolation)."""
    from variant_bridge.maintainer._isolated import run_isolated

    return [Path(p) for p in run_isolated(build_in_process, list(recipes), channel, scratch)]


def variant_bridge(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command, in a process of its own (exit codes as a user sees them)."""
    exe = Path(sys.executable).with_name("variant-bridge")
    return subprocess.run(
        [str(exe), *map(str, args)], cwd=cwd, capture_output=True, text=True, check=False
    )


def make_plain_wheels(project: Path, builds: dict[str, str]) -> None:
    """``build/<label>/vbdemo-1.0.0-py3-none-<platform>.whl`` per build: label -> platform tag."""
    for label, platform in builds.items():
        make_wheel(project / "build" / label, "vbdemo", "1.0.0", tags=f"py3-none-{platform}")


def run_script(script: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A generated shell script, with this venv's ``variantlib`` first on PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["sh", str(script)], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
