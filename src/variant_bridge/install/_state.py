"""What the target interpreter has installed, asked of the interpreter itself.

One run of the target interpreter lists every distribution it sees (``importlib.metadata``'s
finders, so ``.pth`` paths and the interpreter's own ``sys.path`` count): name, version, the
installed variant label (from the ``variant.json`` kept in the dist-info), the PEP 610
``direct_url.json`` URL and sha256, the installer and the ``Requires-Dist`` lines. ``install``
reads it before choosing (a dependency already satisfied is kept), to decide what is already
installed exactly as chosen, and afterwards to verify.

The script reads only what it needs, each file up to a cap: the header block of ``METADATA``
(up to the first blank line, at most :data:`MAX_HEADER` bytes, never the long description),
and the small files whole up to :data:`MAX_SMALL`. ``importlib.metadata``'s own accessors
(``.metadata``, ``.version``, ``.requires``) parse the whole ``METADATA``: a wheel whose
``METADATA`` inflates to 10 GB would cost the target interpreter that much memory and time.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.environment import PythonDistribution
from variant_bridge.errors import InstallError, clip
from variant_bridge.install._child import dies_with_parent

__all__ = ["INSPECT_TIMEOUT", "MAX_HEADER", "MAX_SMALL", "State", "read_state"]

MAX_HEADER = 1024 * 1024
"""The largest ``METADATA`` header block read (torch's is ~3 KB); longer: the lines up to it."""
MAX_SMALL = 16 * 1024 * 1024
"""The largest ``variant.json``, ``direct_url.json``, ``INSTALLER`` or ``requires.txt`` read."""
INSPECT_TIMEOUT = 120
"""Seconds the inspection may take (a site-packages of thousands of distributions: ~1 s)."""

# Runs in the target interpreter (any Python 3 with importlib.metadata): no variant_bridge here.
_SCRIPT = """
import email.parser, importlib.metadata as m, json, sys, sysconfig
HEADER, SMALL = @HEADER@, @SMALL@

def base(d):
    return getattr(d, "_path", None)

def small(d, name):
    path = base(d)
    try:
        if path is None:
            return None
        with path.joinpath(name).open("rb") as f:
            data = f.read(SMALL + 1)
    except Exception:
        return None
    return None if len(data) > SMALL else data.decode("utf-8", "replace")

def header(d):
    path = base(d)
    for name in ("METADATA", "PKG-INFO", ""):  # "": an .egg-info file is its own PKG-INFO
        try:
            f = (path.joinpath(name) if name else path).open("rb")
        except Exception:
            continue
        with f:
            lines, size = [], 0
            while size < HEADER:
                line = f.readline(HEADER - size)
                if not line.strip():
                    break  # the blank line ending the headers, or the end
                size += len(line)
                if size >= HEADER and not line.endswith(b"\\n"):
                    break  # a line cut by the cap: left out
                lines.append(line)
        return email.parser.BytesHeaderParser().parsebytes(b"".join(lines))
    return None

def egg_requires(d):
    text = small(d, "requires.txt")
    if not text:
        return []
    convert = getattr(m.Distribution, "_convert_egg_info_reqs_to_simple_reqs", None)
    sections = getattr(m, "Sectioned", None)
    if convert is None or sections is None:
        return []
    try:
        return list(convert(sections.read(text)))
    except Exception:
        return []

out = []
for d in m.distributions():
    if base(d) is None:
        continue
    meta = header(d)
    if meta is None or not meta["Name"]:
        continue
    variant = small(d, "variant.json")
    try:
        label = next(iter(json.loads(variant)["variants"])) if variant else None
    except Exception:
        label = "?"
    url = sha = None
    try:
        info = json.loads(small(d, "direct_url.json") or "{}")
        url = info.get("url")
        sha = ((info.get("archive_info") or {}).get("hashes") or {}).get("sha256")
    except Exception:
        pass
    out.append({
        "name": str(meta["Name"]), "version": str(meta["Version"] or ""), "label": label,
        "url": url, "sha256": sha, "installer": (small(d, "INSTALLER") or "").strip() or None,
        "requires": [str(r) for r in meta.get_all("Requires-Dist") or []] or egg_requires(d),
        "location": str(base(d)),
    })
paths = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
print(json.dumps({"installed": out, "site": list(dict.fromkeys(paths))}))
""".replace("@HEADER@", str(MAX_HEADER)).replace("@SMALL@", str(MAX_SMALL))


@value
class State:
    """The target's installed distributions by canonical name, and its site-packages."""

    distributions: dict[str, PythonDistribution]
    site_packages: tuple[Path, ...]

    def get(self, name: str) -> PythonDistribution | None:
        return self.distributions.get(canonicalize_name(name))

    def changes_from(self, before: State) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What differs from *before*: ``(installed, removed)`` as ``name==version [label]``,
        a build replaced by another counting as both."""
        return _changes(before.distributions.values(), self.distributions.values())


def _changes(
    before: Iterable[PythonDistribution], after: Iterable[PythonDistribution]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    was = {str(d) for d in before}
    now = {str(d) for d in after}
    return tuple(sorted(now - was)), tuple(sorted(was - now))


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

    :raises InstallError: the interpreter cannot be run, does not answer within
        :data:`INSPECT_TIMEOUT`, or answers nonsense (one line; never the script).
    """
    failed = f"cannot inspect the packages of {python}"
    try:
        proc = subprocess.run(
            [python, "-c", _SCRIPT],
            capture_output=True,
            text=True,
            check=False,
            timeout=INSPECT_TIMEOUT,
            preexec_fn=dies_with_parent(),  # only C calls run in the child
        )
    except subprocess.TimeoutExpired as e:
        raise InstallError(f"{failed}: no answer within {INSPECT_TIMEOUT} s") from e
    except (OSError, subprocess.SubprocessError) as e:
        raise InstallError(f"{failed}: {getattr(e, 'strerror', None) or e}") from e
    try:
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            raise ValueError(clip(last, limit=300))
        data = json.loads(proc.stdout)
        distributions: dict[str, PythonDistribution] = {}
        for entry in data["installed"]:
            dist = _distribution(entry)
            distributions.setdefault(canonicalize_name(dist.name), dist)
        site = tuple(Path(p) for p in data["site"])
    except (ValueError, KeyError, TypeError) as e:
        raise InstallError(f"{failed}: {clip(str(e), limit=300)}") from e
    return State(distributions, site)
