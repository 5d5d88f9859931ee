"""Running an install plan: stage the hash-checked files, run uv or pip once, verify the result.

pip and uv (without its preview feature) refuse variant filenames (``-cu126.whl``), so each file
is staged under its non-variant name; afterwards PEP 610 ``direct_url.json`` is pointed at the
file's real origin, and the installed distribution is checked to be the chosen version and label.
A dry run fetches and checks the same files and stops before staging: the exact files are
decided, so no installer (nor the target interpreter) needs to run to say what would be installed.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.errors import HashMismatch, InstallError
from variant_bridge.indexes import Candidate, Downloads
from variant_bridge.indexes.trust import VerifiedFile, verify
from variant_bridge.install._markers import stage_wheel
from variant_bridge.markers import VariantValues

if TYPE_CHECKING:
    from variant_bridge.install import InstallPlan

__all__ = ["InstallResult", "install"]


def _checked(candidate: Candidate, downloads: Downloads, *, require_hashes: bool) -> VerifiedFile:
    """The local copy of *candidate*, through the trust gate (:func:`~variant_bridge.indexes.
    trust.verify`: hash, variant.json) and opened as a zip archive."""
    try:
        verified = verify(candidate, downloads, require_hashes=require_hashes)
    except HashMismatch as e:  # nothing is installed: the installer has not run
        raise InstallError(str(e)) from e
    try:
        with zipfile.ZipFile(verified.path):
            pass
    except (zipfile.BadZipFile, OSError) as e:
        raise InstallError(
            f"{candidate.name} from {candidate.url} is not a valid wheel: {e}"
        ) from e
    return verified


def _stage(candidate: Candidate, path: Path, staged: Path) -> None:
    """A copy of the checked file *path* the installer accepts: renamed (no variant label) and
    its variant markers decided for the chosen variant (:mod:`._markers`)."""
    values = VariantValues.of(candidate.variant)
    if candidate.label is not None and candidate.variant is None:
        values = VariantValues(label=candidate.label)
    try:
        stage_wheel(path, staged, values)
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError) as e:
        raise InstallError(
            f"{candidate.name} from {candidate.url} is not a valid wheel: {e}"
        ) from e


_STATE = """
import importlib.metadata as m, json, sysconfig
out = {}
for d in m.distributions():
    name = (d.metadata["Name"] or "").lower().replace("_", "-").replace(".", "-")
    text = d.read_text("variant.json")
    try:
        label = next(iter(json.loads(text)["variants"])) if text else None
    except Exception:
        label = "?"
    out[name] = [d.version, label]
paths = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
print(json.dumps({"installed": out, "site": list(dict.fromkeys(paths))}))
"""


@value
class _State:
    installed: dict[str, tuple[str, str | None]]
    site_packages: tuple[Path, ...]


def _state(python: str) -> _State:
    """What the target interpreter has installed: name -> (version, variant label)."""
    try:
        proc = subprocess.run(
            [python, "-c", _STATE], capture_output=True, text=True, check=False, timeout=120
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise InstallError(f"cannot inspect the packages of {python}: {e}") from e
    try:
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            raise ValueError(last)
        data = json.loads(proc.stdout)
    except ValueError as e:
        raise InstallError(f"cannot inspect the packages of {python}: {e}") from e
    installed = {name: (version, label) for name, (version, label) in data["installed"].items()}
    return _State(installed, tuple(Path(p) for p in data["site"]))


def _failure(installer: str, returncode: int, output: str) -> str:
    # Installers explain a failure over several lines (uv: "× No solution found", "╰─▶ because
    # ..."); keep the lines that say why, joined into the one line the CLI prints.
    lines = [line.strip(" ×╰─▶│") for line in output.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("Using Python", "Resolved"))]
    return f"{installer} failed (exit {returncode}): {' '.join(lines[-8:]) or 'no output'}"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _record_origin(site_packages: Sequence[Path], candidate: Candidate, sha256: str) -> None:
    """Point the installed ``direct_url.json`` at the wheel's real URL (PEP 610), fix RECORD."""
    import csv  # lazy: only a real run rewrites RECORD

    name = canonicalize_name(candidate.filename.name).replace("-", "_")
    stem = f"{name}-{candidate.filename.version}"
    for root in site_packages:
        dist_info = next(
            (p for p in root.glob("*.dist-info") if p.name.lower() == f"{stem}.dist-info".lower()),
            None,
        )
        if dist_info is None:
            continue
        data = (
            json.dumps(
                {
                    "url": candidate.url,
                    "archive_info": {"hashes": {"sha256": sha256}, "hash": f"sha256={sha256}"},
                },
                indent=2,
            ).encode()
            + b"\n"
        )
        (dist_info / "direct_url.json").write_bytes(data)
        record = dist_info / "RECORD"
        if record.is_file():
            rows = list(csv.reader(io.StringIO(record.read_text(encoding="utf-8"))))
            relative = f"{dist_info.name}/direct_url.json"
            rows = [r for r in rows if r and r[0] != relative]
            rows.append([relative, _record_hash(data), str(len(data))])
            out = io.StringIO()
            csv.writer(out, lineterminator="\n").writerows(rows)
            record.write_text(out.getvalue(), encoding="utf-8")
        return


@value
class InstallResult:
    plan: InstallPlan
    command: tuple[str, ...]
    """The installer command; for a dry run, the one the real run would run."""
    returncode: int
    output: str
    """What the installer printed (nothing for a dry run: nothing ran)."""
    hashes: tuple[tuple[str, str], ...]
    """``(filename, sha256)`` of every chosen wheel, as checked."""
    dry_run: bool = False
    verified: tuple[VerifiedFile, ...] = ()
    """Every chosen wheel as it passed the trust gate (``checked``: a hash was compared)."""


def install(
    plan: InstallPlan, *, downloads: Downloads | None = None, dry_run: bool = False
) -> InstallResult:
    """Download and hash-check every wheel of *plan*, then run the installer once.

    :param downloads: where the chosen wheels are (or are downloaded to); a wheel the command
        already fetched there is not fetched again. ``None``: a temporary directory.
    :param dry_run: fetch and check every wheel the same way, then stop: the result holds the
        command a real run would run; no installer runs and nothing is installed.
    :raises InstallError: a hash mismatch (nothing installed) or the installer failed.
    :raises IndexReadError: a wheel cannot be fetched (nothing installed).
    """
    assert plan.python.executable is not None  # plan_install() guarantees it
    with tempfile.TemporaryDirectory(prefix="variant-bridge-") as work:
        if downloads is None:
            downloads = Downloads(Path(work) / "downloads")
        verified = tuple(
            _checked(c, downloads, require_hashes=plan.require_hashes) for c in plan.candidates
        )
        checked = [v.path for v in verified]
        hashes = tuple((v.candidate.name, v.sha256) for v in verified)
        staging = Path(work) / "staging"
        wheels = [staging / c.filename.base for c in plan.candidates]
        command = plan.command(wheels)
        if dry_run:
            return InstallResult(plan, tuple(command), 0, "", hashes, True, verified)
        staging.mkdir()
        for candidate, path, wheel in zip(plan.candidates, checked, wheels, strict=True):
            _stage(candidate, path, wheel)
        # Only pip needs to know beforehand (it keeps a same-version install of another variant).
        before = _state(plan.python.executable) if plan.installer == "pip" else None
        proc = _run(command, plan.installer)
        output = (proc.stdout + proc.stderr).strip()
        # pip keeps an installed distribution of the same version whatever file it came from
        # (another variant label): those are replaced afterwards, without touching their deps.
        same = [
            w
            for c, w in zip(plan.candidates, wheels, strict=True)
            if before is not None
            and before.installed.get(canonicalize_name(c.filename.name), ("", ""))[0]
            == c.filename.version
        ]
        if same:
            pip = [plan.python.executable, "-m", "pip", "install", "--no-deps"]
            _run([*pip, "--force-reinstall", *(str(w) for w in same)], plan.installer)
        after = _state(plan.python.executable)
        for candidate, (_, sha) in zip(plan.candidates, hashes, strict=True):
            _verify(after, candidate)
            _record_origin(after.site_packages, candidate, sha)
    return InstallResult(plan, tuple(command), proc.returncode, output, hashes, False, verified)


def _run(command: list[str], installer: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if installer == "pip":
        env.setdefault("PIP_NO_INPUT", "1")
    try:
        proc = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    except OSError as e:
        raise InstallError(f"cannot run {command[0]}: {e.strerror or e}") from e
    if proc.returncode != 0:
        raise InstallError(_failure(installer, proc.returncode, proc.stdout + proc.stderr))
    return proc


def _verify(state: _State, candidate: Candidate) -> None:
    """The installed distribution must be the chosen file's version and variant label."""
    name = canonicalize_name(candidate.filename.name)
    found = state.installed.get(name)
    wanted = (candidate.filename.version, candidate.label)
    if found is None or (found[0], found[1]) != wanted:
        have = "nothing" if found is None else f"{found[0]} [{found[1] or 'non-variant'}]"
        raise InstallError(
            f"after installing {candidate.name}, the interpreter has {name} {have}, not "
            f"{wanted[0]} [{wanted[1] or 'non-variant'}]"
        )
