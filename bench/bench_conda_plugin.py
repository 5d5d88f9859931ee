"""What the conda plugin costs conda at start-up: cold ``conda --help`` with the plugin installed
against the same conda without it, interleaved, same machine, same run.

conda imports every plugin's module on every start (``conda --help`` included) and calls some
hooks on every command, so the plugin's hooks module must load nothing heavy (aim: at most
1.1x). The plugin is installed as pip would install it into conda's environment: the project
built as a wheel plus those of its dependencies conda's environment lacks (click, py-rattler,
PyYAML, ...; the versions of this venv), bytecode compiled, in a folder on conda's
``PYTHONPATH``. Two baselines, interleaved with it: stock conda (an empty folder there, so both
search a ``sys.path`` of the same length), and the same install with the package's ``conda``
entry point taken out, which is the plugin's own share. conda runs offline from a scratch condarc
and HOME.

conda is on no package registry, so it is found through ``--conda-python`` or
``$VARIANT_BRIDGE_CONDA_PYTHON`` (a Python with conda installed, e.g. conda from its source in a
venv; docs/conda.md); without one the bench says so in one line and exits 0 (CI has none).

    .venv/bin/python bench/bench_conda_plugin.py [-n 21] [--conda-python PY] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VARIABLE = "VARIANT_BRIDGE_CONDA_PYTHON"
AIM = 1.1


def conda_python(given: str | None) -> Path | None:
    """The Python with conda, if any (one that cannot import conda is none)."""
    found = given or os.environ.get(VARIABLE)
    if not found or not Path(found).is_file():
        return None
    probe = subprocess.run([found, "-c", "import conda"], capture_output=True, check=False)
    return Path(found) if probe.returncode == 0 else None


def runtime_closure() -> dict[str, str]:
    """Every distribution variant-bridge needs at run time (no extras), with this venv's
    versions."""
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    todo = ["variant-bridge"]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        try:
            dist = distribution(name)
        except PackageNotFoundError:  # a marker-less optional dependency of another platform
            continue
        found[name] = dist.version
        for line in dist.requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    del found["variant-bridge"]
    return found


def install_plugin(python: Path, target: Path) -> list[str]:
    """The project, and the dependencies *python*'s environment lacks, installed into *target*
    as pip installs wheels; what was added besides the project."""
    probe = (
        "import importlib.metadata as m, sys\n"
        "for n in sys.argv[1:]:\n"
        "    try: m.distribution(n); print(n)\n"
        "    except m.PackageNotFoundError: pass"
    )
    needed = runtime_closure()
    present = subprocess.run([str(python), "-c", probe, *needed], capture_output=True,
                             text=True, check=True).stdout.split()  # fmt: skip
    missing = [f"{n}=={v}" for n, v in sorted(needed.items()) if n not in present]
    if not (target / "variant_bridge").is_dir():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
             "--target", str(target), str(ROOT), *missing],
            check=True,
        )  # fmt: skip
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(target)], check=True)
    return missing


def without_entry_point(installed: Path, target: Path) -> None:
    """*installed* again in *target* (links), the package's ``[conda]`` entry point removed."""
    target.mkdir()
    for entry in installed.iterdir():
        if entry.name.startswith("variant_bridge-") and entry.name.endswith(".dist-info"):
            copy = target / entry.name
            copy.mkdir()
            for item in entry.iterdir():
                if item.is_dir():  # licenses/ (PEP 639 license files)
                    (copy / item.name).symlink_to(item)
                    continue
                text = item.read_bytes()
                if item.name == "entry_points.txt":
                    sections = text.decode().split("\n\n")
                    text = "\n\n".join(x for x in sections if not x.startswith("[conda]")).encode()
                (copy / item.name).write_bytes(text)
        else:
            (target / entry.name).symlink_to(entry)


def scratch_env(scratch: Path, path: Path) -> dict[str, str]:
    """Offline conda in *scratch* with *path* on ``PYTHONPATH``."""
    condarc = scratch / "condarc"
    condarc.write_text(
        f"channels: []\ndefault_channels: []\noffline: true\nregister_envs: false\n"
        f"pkgs_dirs: [{scratch / 'pkgs'}]\nenvs_dirs: [{scratch / 'envs'}]\n"
        "notify_outdated_conda: false\nreport_errors: false\n"
    )
    keep = ("PATH", "LANG", "SYSTEMROOT")
    return {
        **{k: v for k, v in os.environ.items() if k in keep},
        "CONDARC": str(condarc),
        "CONDA_ROOT_PREFIX": str(scratch / "root"),
        "HOME": str(scratch / "home"),
        "XDG_CONFIG_HOME": str(scratch / "home" / ".config"),
        "XDG_CACHE_HOME": str(scratch / "home" / ".cache"),
        "PYTHONPATH": str(path),
    }


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def plugin_import_us(python: Path, env: dict[str, str]) -> int:
    """Microseconds conda spends importing the plugin's modules during ``conda --help``
    (``-X importtime``: the cumulative times of our outermost imports)."""
    proc = subprocess.run([str(python), "-X", "importtime", "-m", "conda", "--help"],
                          capture_output=True, text=True, check=True, env=env)  # fmt: skip
    ours = []  # (nesting depth, cumulative us) of every variant_bridge module
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip().startswith("variant_bridge"):
            depth = len(parts[2]) - len(parts[2].lstrip())
            ours.append((depth, int(parts[1].strip())))
    outermost = min((depth for depth, _ in ours), default=0)
    return sum(us for depth, us in ours if depth == outermost)


def plugin_loaded(python: Path, env: dict[str, str]) -> bool:
    listed = subprocess.run([str(python), "-m", "conda", "--help"], capture_output=True,
                            text=True, check=True, env=env).stdout  # fmt: skip
    return any(line.split()[:1] == ["variant"] for line in listed.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=21)
    parser.add_argument("--conda-python", help=f"a Python with conda (default: ${VARIABLE})")
    parser.add_argument("--keep", type=Path, help="install the plugin here and keep it")
    args = parser.parse_args()
    python = conda_python(args.conda_python)
    if python is None:
        print(f"skipped: no conda (set {VARIABLE} or --conda-python to a Python with conda "
              "installed; conda is on no package registry)")  # fmt: skip
        return
    with tempfile.TemporaryDirectory(prefix="bench-conda-plugin-") as tmp:
        scratch = Path(tmp)
        for sub in ("home", "pkgs", "envs", "root", "empty"):
            (scratch / sub).mkdir()
        installed = args.keep or scratch / "plugin"
        added = install_plugin(python, installed)
        without_entry_point(installed, scratch / "without")
        envs = {
            "with": scratch_env(scratch, installed),
            "without": scratch_env(scratch, scratch / "without"),
            "stock": scratch_env(scratch, scratch / "empty"),
        }
        loaded = {name: plugin_loaded(python, env) for name, env in envs.items()}
        if loaded != {"with": True, "without": False, "stock": False}:
            sys.exit(f"the plugin is not loaded where it should be: {loaded}")
        command = [str(python), "-m", "conda", "--help"]
        times: dict[str, list[float]] = {name: [] for name in envs}
        for env in envs.values():
            timed(command, env)  # warm-up: page cache, bytecode
        for _ in range(args.runs):
            for name, env in envs.items():
                times[name].append(timed(command, env))
        imported = plugin_import_us(python, envs["with"])
    version = subprocess.run([str(python), "-m", "conda", "--version"], capture_output=True,
                             text=True, check=True).stdout.strip()  # fmt: skip
    median = {name: statistics.median(found) for name, found in times.items()}
    ratio = median["with"] / median["without"]
    print(f"{version} ({python}), cold `conda --help`, median of {args.runs}, interleaved:")
    print(f"  stock conda:                            {median['stock'] * 1000:7.1f} ms")
    print(f"  plugin's package installed, no entry:   {median['without'] * 1000:7.1f} ms")
    print(f"  plugin installed (conda loads it):      {median['with'] * 1000:7.1f} ms")
    print(f"  (installed besides the package: {', '.join(added) or 'nothing'})")
    print(f"  the plugin's own imports at start-up (-X importtime): {imported / 1000:.1f} ms")
    print(f"  ratio with / without the plugin: {ratio:.3f}x (aim <= {AIM}x) "
          f"{'ok' if ratio <= AIM else 'OVER'}; with / stock: "
          f"{median['with'] / median['stock']:.3f}x")  # fmt: skip


if __name__ == "__main__":
    main()
