"""Running an install plan: stage the verified files, run uv or pip once, verify the result.

Every file of the plan (the dependencies as much as the packages named) first passes the one
trust gate (:func:`variant_bridge.indexes.trust.verify`: a hash compared, or refused unless the
user opted out; its own ``variant.json`` agreeing with the index's).
pip and uv (without its preview feature) refuse variant filenames (``-cu126.whl``), so each file
is staged under its non-variant name in a find-links directory the installer reads offline, with
every file pinned by hash and no dependency resolution: what it installs cannot drift from the
tree ``select`` resolved. Files already installed exactly as chosen are left alone (a second run
installs nothing). Afterwards each installed distribution is checked to be the chosen version and
label, and each variant records its real origin (:mod:`._origin`). The staging directory is a
scratch directory (:mod:`variant_bridge.indexes.scratch`): a killed run's is removed by the next,
and the installer dies with this process (Linux). A dry run fetches and checks the same files and
stops before staging: the exact files are decided, so no installer (nor the target interpreter)
needs to run to say what would be installed.
"""

from __future__ import annotations

import os
import subprocess
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.errors import HashMismatch, InstallError, InvalidMetadata, VariantBridgeError
from variant_bridge.indexes import Candidate, Downloads
from variant_bridge.indexes.archive import UNREADABLE, check_wheel_archive
from variant_bridge.indexes.download import file_sha256
from variant_bridge.indexes.installable import installable_copy
from variant_bridge.indexes.scratch import scratch_dir
from variant_bridge.indexes.trust import VerifiedFile, verify
from variant_bridge.install._child import dies_with_parent
from variant_bridge.install._origin import record_origin
from variant_bridge.install._state import State, read_state
from variant_bridge.markers import VariantValues
from variant_bridge.platform_tags import PythonSource, TargetPython

if TYPE_CHECKING:
    from variant_bridge.install import InstallPlan

__all__ = ["REQUIREMENTS", "InstallResult", "install"]

REQUIREMENTS = "requirements.txt"
"""The file in the staging directory that pins every staged file by its sha256."""


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
    its variant markers decided for the chosen variant (:mod:`~variant_bridge.indexes.installable`).
    """
    values = VariantValues.of(candidate.variant)
    if candidate.label is not None and candidate.variant is None:
        values = VariantValues(label=candidate.label)
    try:
        installable_copy(path, staged, values)
    except (*UNREADABLE, UnicodeDecodeError, InvalidMetadata) as e:
        raise InstallError(
            f"{candidate.name} from {candidate.url} is not a valid wheel: {e}"
        ) from e


def _failure(installer: str, returncode: int, output: str) -> str:
    # Installers explain a failure over several lines (uv: "× No solution found", "╰─▶ because
    # ..."); keep the lines that say why, joined into the one line the CLI prints.
    lines = [line.strip(" ×╰─▶│") for line in output.splitlines()]
    lines = [line for line in lines if line and not line.startswith(("Using Python", "Resolved"))]
    return f"{installer} failed (exit {returncode}): {' '.join(lines[-8:]) or 'no output'}"


def _in_place(state: State, candidate: Candidate, sha256: str) -> bool:
    """Whether the target already has exactly this file installed: same version and label, and
    for a variant the origin recorded by a finished install (a run killed before recording it
    installs the file again)."""
    dist = state.get(candidate.filename.name)
    if dist is None or not _same_version(dist.version, candidate.filename.version):
        return False
    if dist.variant_label != candidate.label:
        return False
    if candidate.is_variant:
        return dist.sha256 == sha256
    return dist.sha256 in (None, sha256)  # a plain wheel from an index records no origin


def _same_version(installed: str, wanted: str) -> bool:
    try:
        return Version(installed) == Version(wanted)
    except ValueError:  # InvalidVersion, or a number past int()'s 4300 digits
        return installed == wanted


@value
class InstallResult:
    plan: InstallPlan
    command: tuple[str, ...]
    """The installer command; for a dry run, the one the real run would run; empty when nothing
    needed installing."""
    returncode: int
    output: str
    """What the installer printed (nothing for a dry run: nothing ran)."""
    hashes: tuple[tuple[str, str], ...]
    """``(filename, sha256)`` of every chosen wheel, as checked."""
    dry_run: bool = False
    installed: tuple[str, ...] = ()
    """The files installed by this run (for a dry run: every file)."""
    unchanged: tuple[str, ...] = ()
    """The files that were already installed exactly as chosen: left alone."""
    verified: tuple[VerifiedFile, ...] = ()
    """Every chosen wheel as it passed the trust gate (``checked``: a hash was compared)."""
    after: State | None = None
    """What the interpreter has installed after the run (``None`` for a dry run)."""


def _stage_all(
    todo: Sequence[tuple[Candidate, Path]], staging: Path
) -> list[tuple[Candidate, str]]:
    """Stage each file and write the installer's requirements: every file pinned by the sha256
    of its staged copy, so the installer can take nothing else."""
    staging.mkdir()
    lines: list[str] = []
    pinned: list[tuple[Candidate, str]] = []
    for candidate, path in todo:
        staged = staging / candidate.filename.base
        _stage(candidate, path, staged)
        sha = file_sha256(staged)
        lines.append(f"{candidate.filename.name}=={candidate.filename.version} --hash=sha256:{sha}")
        pinned.append((candidate, sha))
    (staging / REQUIREMENTS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return pinned


def install(
    plan: InstallPlan,
    *,
    downloads: Downloads,
    dry_run: bool = False,
    state: State | None = None,
) -> InstallResult:
    """Download and verify every wheel of *plan* (:func:`~variant_bridge.indexes.trust.verify`),
    then install those not already in place.

    The installer (uv or pip) runs at most once, offline, without resolving anything: its only
    source is a directory of the staged files and every file is pinned by its sha256
    (``--no-deps --no-index --require-hashes``). Afterwards every chosen file is verified to be
    installed (version and variant label), and each variant installed records its origin.

    :param downloads: where the chosen wheels are (or are downloaded to); a wheel the command
        already fetched there is not fetched again.
    :param dry_run: fetch and check every wheel the same way, then stop: the result holds the
        command a real run would run; no installer runs and nothing is installed.
    :param state: what the target has installed, when the caller has just read it.
    :raises InstallError: a hash mismatch (nothing installed) or the installer failed.
    :raises UnverifiedFile: a remote file without a listed hash and ``plan.require_hashes``.
    :raises VariantMismatch: a wheel's own ``variant.json`` disagrees with the index's.
    :raises IndexReadError: a wheel cannot be fetched (nothing installed).
    """
    executable = plan.python.executable
    assert executable is not None  # plan_install() guarantees it
    with scratch_dir("install") as work:
        # Every file, dependencies included, passes the one trust gate before anything runs.
        verified = tuple(
            _checked(c, downloads, require_hashes=plan.require_hashes) for c in plan.candidates
        )
        for one in verified:  # paths and zip caps, before the installer writes anything
            check_wheel_archive(one.path)
        hashes = tuple((v.candidate.name, v.sha256) for v in verified)
        staging = work / "staging"
        every = tuple(c.name for c in plan.candidates)
        if dry_run:
            command = plan.command(staging, plan.candidates)
            return InstallResult(
                plan, tuple(command), 0, "", hashes, True, every, verified=verified
            )
        before = state if state is not None else read_state(executable)
        _check_layout(plan.python, before)
        shas = dict(hashes)
        todo = [
            (c, v.path)
            for c, v in zip(plan.candidates, verified, strict=True)
            if not _in_place(before, c, shas[c.name])
        ]
        unchanged = tuple(
            c.name for c in plan.candidates if c.name not in {t.name for t, _ in todo}
        )
        if not todo:
            for candidate in plan.candidates:
                _verify(before, candidate)
            return InstallResult(
                plan, (), 0, "", hashes, unchanged=unchanged, verified=verified, after=before
            )
        _stage_all(todo, staging)
        command = plan.command(staging, [c for c, _ in todo])
        try:
            proc = _run(command, plan.installer)
            after = read_state(executable)
            for candidate in plan.candidates:
                _verify(after, candidate)
            for candidate, _ in todo:
                if candidate.is_variant:
                    record_origin(after.site_packages, candidate, shas[candidate.name])
        except VariantBridgeError as e:  # the installer may have changed the target: say what
            given = [c.name for c, _ in todo]
            raise InstallError(f"{e}; {_what_changed(executable, before, given)}") from e
    output = (proc.stdout + proc.stderr).strip()
    installed = tuple(c.name for c, _ in todo)
    return InstallResult(
        plan,
        tuple(command),
        proc.returncode,
        output,
        hashes,
        False,
        installed,
        unchanged,
        verified,
        after,
    )


def _check_layout(python: TargetPython, state: State) -> None:
    """A prefix's own interpreter must install into that prefix: one whose ``site-packages``
    lie elsewhere (``bin/python`` a link to a system Python) would write outside it.

    :raises InstallError: naming both, before anything is installed.
    """
    if python.source is not PythonSource.PREFIX or python.executable is None:
        return
    executable = Path(python.executable)
    root = executable.parent.parent if executable.parent.name == "bin" else executable.parent
    root = root.resolve()
    outside = [p for p in state.site_packages if not p.resolve().is_relative_to(root)]
    if outside:
        raise InstallError(
            f"{executable} installs into {outside[0]}, outside its prefix {root}: nothing was "
            "installed (pass --python PATH to install into that interpreter anyway)"
        )


def _what_changed(executable: str, before: State, given: Sequence[str]) -> str:
    """What the installer changed in the target, for a failure after it ran: read again and
    compared with *before*; when the target cannot be read, what the installer was given."""
    try:
        installed, removed = read_state(executable).changes_from(before)
    except VariantBridgeError:
        return (
            f"the installer ran and may have changed {executable} (it was given {', '.join(given)})"
        )
    if not installed and not removed:
        return f"{executable} was not changed"
    parts = [f"installed {', '.join(installed)}"] if installed else []
    parts += [f"removed {', '.join(removed)}"] if removed else []
    return f"{executable} was changed: {'; '.join(parts)}"


def uninstall(
    plan: InstallPlan, names: Sequence[str], *, before: State | None = None
) -> tuple[str, ...]:
    """Remove the distributions *names* from the plan's interpreter with its installer.

    :param before: what the interpreter had installed (the install's ``after``): a failure
        then says what the installer changed anyway.
    :returns: the command that ran. :raises InstallError: the installer failed (its output).
    """
    command = plan.uninstall_command(names)
    try:
        _run(command, plan.installer)
    except InstallError as e:
        if before is None or plan.python.executable is None:
            raise
        changed = _what_changed(plan.python.executable, before, names)
        raise InstallError(f"{e}; {changed}") from e
    return tuple(command)


def _run(command: list[str], installer: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if installer == "pip":
        env.setdefault("PIP_NO_INPUT", "1")
    try:
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=env,
            check=False,
            preexec_fn=dies_with_parent(),
        )
    except OSError as e:
        raise InstallError(f"cannot run {command[0]}: {e.strerror or e}") from e
    if proc.returncode != 0:
        raise InstallError(_failure(installer, proc.returncode, proc.stdout + proc.stderr))
    return proc


def _verify(state: State, candidate: Candidate) -> None:
    """The installed distribution must be the chosen file's version and variant label."""
    name = canonicalize_name(candidate.filename.name)
    found = state.get(name)
    wanted = (candidate.filename.version, candidate.label)
    if (
        found is None
        or not _same_version(found.version, wanted[0])
        or found.variant_label != wanted[1]
    ):
        have = (
            "nothing"
            if found is None
            else f"{found.version} [{found.variant_label or 'non-variant'}]"
        )
        raise InstallError(
            f"after installing {candidate.name}, the interpreter has {name} {have}, not "
            f"{wanted[0]} [{wanted[1] or 'non-variant'}]"
        )
