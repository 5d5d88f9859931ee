"""What a built sdist and wheel must be (issue 19), checked by the test suite on a wheel it builds
offline and by CI's packaging step (``.ci/package``) on the dists ``python -m build`` made::

    .venv/bin/python -m tests.integration.dists DIST_DIR DIRECT_WHEEL_DIR

- the wheel carries every entry point ``pyproject.toml`` declares (the scripts: the CLI and the
  pixi extension; every entry-point group: variantlib's plugins, conda's plugin when there is one),
  the mapping tables, and nothing from ``tests/``;
- its metadata is complete and valid (packaging's validation): license expression and file,
  project URLs, classifiers (each one trove knows), the README as a markdown description;
- the sdist holds the tree a wheel is built from, and the wheel built from it is the wheel built
  from the tree (same files, same metadata, same entry points).
"""

from __future__ import annotations

import configparser
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import tomlkit

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["check_sdist", "check_wheel", "entry_points", "same_wheel", "wheel_files"]


def pyproject() -> dict[str, Any]:
    data: dict[str, Any] = tomlkit.loads((ROOT / "pyproject.toml").read_text()).unwrap()
    return data


def _dist_info(names: list[str]) -> str:
    return next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))


def wheel_files(wheel: Path) -> dict[str, bytes]:
    """Every member of *wheel* but ``RECORD`` (which hashes the others), by name."""
    with zipfile.ZipFile(wheel) as zf:
        return {n: zf.read(n) for n in zf.namelist() if not n.endswith(".dist-info/RECORD")}


def entry_points(wheel: Path) -> dict[str, dict[str, str]]:
    """The wheel's ``entry_points.txt``: group -> name -> object reference."""
    files = wheel_files(wheel)
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # names keep their case
    parser.read_string(files[f"{_dist_info(list(files))}/entry_points.txt"].decode())
    return {group: dict(parser[group]) for group in parser.sections()}


def declared_entry_points() -> dict[str, dict[str, str]]:
    """pyproject.toml's scripts and entry-point groups, as a wheel writes them."""
    project = pyproject()["project"]
    declared = {"console_scripts": dict(project.get("scripts", {}))}
    declared.update({group: dict(e) for group, e in project.get("entry-points", {}).items()})
    return declared


def check_wheel(wheel: Path) -> list[str]:
    """What is wrong with *wheel* (nothing: ``[]``)."""
    from packaging.metadata import Metadata

    problems: list[str] = []
    files = wheel_files(wheel)
    dist_info = _dist_info(list(files))
    outside = [n for n in files if not n.startswith(("variant_bridge/", f"{dist_info}/"))]
    if outside:
        problems.append(f"files outside the package: {outside[:5]}")
    if any(n.startswith("tests/") or "/tests/" in n for n in files):
        problems.append("the wheel carries tests")
    for name in ("variant_bridge/py.typed", "variant_bridge/mappings/names.yaml"):
        if name not in files:
            problems.append(f"{name} is missing")
    found = entry_points(wheel)
    for group, entries in declared_entry_points().items():
        missing = {k: v for k, v in entries.items() if found.get(group, {}).get(k) != v}
        if missing:
            problems.append(f"entry points of {group!r} missing: {missing}")
    try:
        meta = Metadata.from_email(files[f"{dist_info}/METADATA"], validate=True)
    except Exception as e:  # packaging's ExceptionGroup of every invalid field
        return [*problems, f"METADATA does not validate: {e!r}"]
    problems += _metadata_problems(meta, files, dist_info)
    return problems


def _metadata_problems(meta: Any, files: dict[str, bytes], dist_info: str) -> list[str]:
    from trove_classifiers import classifiers as known

    project = pyproject()["project"]
    problems = []
    if meta.license_expression != project["license"]:
        problems.append(f"license expression {meta.license_expression!r}")
    for name in project["license-files"]:
        if name not in (meta.license_files or []) or f"{dist_info}/licenses/{name}" not in files:
            problems.append(f"license file {name} is not in the wheel")
    urls = meta.project_urls or {}
    for label in ("Homepage", "Documentation", "Repository", "Issues"):
        if not urls.get(label, "").startswith("https://"):
            problems.append(f"no {label} URL")
    unknown = [c for c in meta.classifiers or [] if c not in known]
    if unknown or not meta.classifiers:
        problems.append(f"classifiers unknown or missing: {unknown}")
    readme = (ROOT / project["readme"]).read_text(encoding="utf-8")
    if (
        meta.description_content_type != "text/markdown"
        or meta.description.strip() != readme.strip()
    ):
        problems.append("the README is not the description (text/markdown)")
    if str(meta.requires_python) != project["requires-python"]:
        problems.append(f"requires-python {meta.requires_python}")
    return problems


def same_wheel(built_from_sdist: Path, built_from_tree: Path) -> list[str]:
    """How two wheels differ (nothing: ``[]``)."""
    a, b = wheel_files(built_from_sdist), wheel_files(built_from_tree)
    problems = []
    if set(a) != set(b):
        problems.append(f"files differ: only from the sdist {sorted(set(a) - set(b))[:5]}, only "
                        f"from the tree {sorted(set(b) - set(a))[:5]}")  # fmt: skip
    changed = sorted(n for n in set(a) & set(b) if a[n] != b[n])
    if changed:
        problems.append(f"contents differ: {changed[:5]}")
    return problems


def check_sdist(sdist: Path) -> list[str]:
    """The sdist has what the wheel and the recipe are built from, and the license."""
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    wanted = {"pyproject.toml", "README.md", "LICENSE", "PKG-INFO", "recipes/variant-bridge/recipe.yaml",
              "src/variant_bridge/__init__.py", "src/variant_bridge/pixi_extension/__init__.py"}  # fmt: skip
    missing = sorted(wanted - names)
    return [f"the sdist lacks {missing}"] if missing else []


def main(dist: Path, direct: Path) -> int:
    """``.ci/package``: DIST holds the sdist and the wheel built from it, DIRECT the wheel built
    from the tree."""
    (sdist,) = dist.glob("variant_bridge-*.tar.gz")
    (wheel,) = dist.glob("variant_bridge-*.whl")
    (tree_wheel,) = direct.glob("variant_bridge-*.whl")
    problems = [*check_sdist(sdist), *check_wheel(wheel), *same_wheel(wheel, tree_wheel)]
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    groups = ", ".join(f"{g} ({len(e)})" for g, e in entry_points(wheel).items())
    print(f"{wheel.name}: {len(wheel_files(wheel))} files, entry points: {groups}")
    print(f"{sdist.name}: builds the same wheel as the tree" if not problems else "dists: FAILED")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
