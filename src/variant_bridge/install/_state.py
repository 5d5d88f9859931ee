"""What the target interpreter has installed, asked of the interpreter itself.

One run of the target interpreter lists every distribution it sees (``importlib.metadata``):
name, version, the installed variant label (from the ``variant.json`` kept in the dist-info),
the PEP 610 ``direct_url.json`` URL and sha256, the installer and the ``Requires-Dist`` lines.
``install`` reads it before choosing (a dependency already satisfied is kept), to decide what
is already installed exactly as chosen, and afterwards to verify.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.environment import PythonDistribution
from variant_bridge.errors import InstallError
from variant_bridge.install._child import dies_with_parent

__all__ = ["State", "read_state"]

_SCRIPT = """
import importlib.metadata as m, json, sysconfig
out = []
for d in m.distributions():
    def text(name):
        try:
            return d.read_text(name)
        except Exception:
            return None
    variant = text("variant.json")
    try:
        label = next(iter(json.loads(variant)["variants"])) if variant else None
    except Exception:
        label = "?"
    url = sha = None
    direct = text("direct_url.json")
    try:
        info = json.loads(direct) if direct else {}
        url = info.get("url")
        sha = ((info.get("archive_info") or {}).get("hashes") or {}).get("sha256")
    except Exception:
        pass
    out.append({
        "name": d.metadata["Name"] or "", "version": d.version, "label": label,
        "url": url, "sha256": sha, "installer": (text("INSTALLER") or "").strip() or None,
        "requires": d.requires or [], "location": str(getattr(d, "_path", "") or ""),
    })
paths = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
print(json.dumps({"installed": out, "site": list(dict.fromkeys(paths))}))
"""


@value
class State:
    """The target's installed distributions by canonical name, and its site-packages."""

    distributions: dict[str, PythonDistribution]
    site_packages: tuple[Path, ...]

    def get(self, name: str) -> PythonDistribution | None:
        return self.distributions.get(canonicalize_name(name))


def _distribution(entry: dict[str, object]) -> PythonDistribution:
    return PythonDistribution(
        name=str(entry["name"]),
        version=str(entry["version"]),
        requires=tuple(str(r) for r in entry.get("requires") or ()),  # type: ignore[attr-defined]
        location=str(entry.get("location") or "") or None,
        installer=entry.get("installer") or None,  # type: ignore[arg-type]
        direct_url=entry.get("url") or None,  # type: ignore[arg-type]
        sha256=entry.get("sha256") or None,  # type: ignore[arg-type]
        unknown_variant_label=entry.get("label") or None,  # type: ignore[arg-type]
    )


def read_state(python: str) -> State:
    """What *python* has installed (the first distribution of a name wins, as imports do).

    :raises InstallError: the interpreter cannot be run or answers nonsense.
    """
    try:
        proc = subprocess.run(
            [python, "-c", _SCRIPT],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            preexec_fn=dies_with_parent(),  # only C calls run in the child
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise InstallError(f"cannot inspect the packages of {python}: {e}") from e
    try:
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            raise ValueError(last)
        data = json.loads(proc.stdout)
        distributions: dict[str, PythonDistribution] = {}
        for entry in data["installed"]:
            dist = _distribution(entry)
            distributions.setdefault(canonicalize_name(dist.name), dist)
        site = tuple(Path(p) for p in data["site"])
    except (ValueError, KeyError, TypeError) as e:
        raise InstallError(f"cannot inspect the packages of {python}: {e}") from e
    return State(distributions, site)
