"""``conda doctor variant-consistency``: the environment's health findings inside conda, and the
fixer behind ``conda doctor --fix``.

The check examines the prefix conda names with conda's own virtual packages (:mod:`.facts`):
CUDA libraries installed as a conda package and as a PyPI wheel (same CUDA minor: info;
another minor: the wheel may shadow conda's copy), variant wheels whose build no longer agrees
with the prefix's ``cuda-version``, the driver or the GPU, and ``nvidia-*`` wheels nothing
requires (:mod:`variant_bridge.health`). It prints conda's marks (``OK_MARK`` / ``X_MARK``) and
each finding with the command that fixes it, spelled for conda (``conda variant install ...
-p PREFIX``). The fixer re-selects the disagreeing wheels at their installed versions and
reinstalls them after conda's confirmation, every file hash-checked, through the doctor job's
:func:`~variant_bridge.jobs.doctor.fix`; the other findings' fixes are printed to run by hand.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from variant_bridge.conda_plugin.errors import conda_errors, one_line

if TYPE_CHECKING:
    from variant_bridge.health import Finding, Fix, HealthReport
    from variant_bridge.jobs.context import Sources
    from variant_bridge.jobs.doctor import Examined

__all__ = ["check", "conda_command", "examine", "finding_lines", "fix"]

_NAME = "variant-consistency"


def conda_command(fix: Fix) -> str:
    """*fix* as a conda user runs it: the bridge's commands through ``conda variant``, a prefix
    as conda's ``-p``; other commands (``conda install``, ``uv pip uninstall``) as they are."""
    argv = list(fix.argv)
    if argv and argv[0] == "variant-bridge":
        argv = ["conda", "variant", *("-p" if a == "--prefix" else a for a in argv[1:])]
    line = shlex.join(argv)
    return line if fix.note is None else f"{line}  ({fix.note})"


def examine(prefix: str | Path) -> Examined:
    """The prefix's health with conda's virtual packages.

    :raises VariantBridgeError: the prefix cannot be read.
    """
    from variant_bridge.conda_plugin.facts import conda_virtual_packages
    from variant_bridge.jobs.doctor import examine_environment
    from variant_bridge.jobs.specs import EnvironmentSpec
    from variant_bridge.jobs.target import detect

    spec = EnvironmentSpec(prefix=Path(prefix), virtual_packages=conda_virtual_packages())
    return examine_environment(detect(spec))


def finding_lines(
    findings: Iterable[Finding], *, indent: str = "    ", severity: bool = True
) -> list[str]:
    """Each finding (``severity: message``) and its fixes (``fix:``, alternatives ``or:``),
    in conda's spelling; a fix the previous finding printed is not repeated."""
    lines: list[str] = []
    previous: tuple[Fix, ...] = ()
    for finding in findings:
        said = f"{finding.severity.value}: " if severity else ""
        lines.append(f"{indent}{said}{finding.message}")
        if finding.fixes == previous:
            continue
        previous = finding.fixes
        for i, found in enumerate(finding.fixes):
            lines.append(f"{indent * 2}{'fix:' if i == 0 else 'or: '} {conda_command(found)}")
    return lines


def _summary(report: HealthReport) -> str:
    checked = f"{report.checked} PyPI distribution{'s' if report.checked != 1 else ''} checked"
    if not report.findings:
        return (
            f"Variant wheels agree with this environment, no CUDA library is installed twice, "
            f"no orphaned nvidia-* wheel ({checked})."
        )
    total = len(report.findings)
    counts = ", ".join(f"{n} {s.value}" for s, n in report.counts().items() if n)
    return f"{total} variant-wheel finding{'s' if total > 1 else ''} ({counts}; {checked}):"


def check(prefix: str, verbose: bool) -> None:
    """The health check's action: conda's mark and one line, then each finding with its fix.
    Never raises: what cannot be examined is the check's own ``X_MARK`` line."""
    from conda.base.constants import OK_MARK, X_MARK

    try:
        examined = examine(prefix)
    except Exception as e:  # conda doctor shows one line per check
        print(f"{X_MARK} {_NAME}: cannot examine {prefix}: {one_line(str(e))}")
        return
    report = examined.report
    print(f"{OK_MARK if report.healthy else X_MARK} {_summary(report)}")
    for line in finding_lines(report.findings):
        print(line)
    if verbose:
        env = examined.env
        toolkit = f"{env.toolkit} ({env.toolkit.source})" if env.toolkit else "no cuda-version"
        cuda = f"__cuda={env.cuda.version} ({env.cuda.source})" if env.cuda else "no __cuda"
        print(f"    examined with: {env.platform}, {toolkit}, {cuda}")
        for problem in report.problems:
            print(f"    note: {problem}")


def _sources(examined: Examined) -> tuple[Sources, tuple[str, ...]]:
    """Where the wheels to re-select come from: the directories they were installed from,
    then the plugin's configured sources; and those installed from elsewhere (unknown)."""
    from variant_bridge.conda_plugin.settings import sources
    from variant_bridge.jobs.context import Sources
    from variant_bridge.jobs.doctor import origin_sources

    origins = origin_sources(examined)
    configured = Sources.of(sources())
    located = Sources((*origins.sources, *configured.locations), configured.strategy,
                      configured.default)  # fmt: skip
    return located, origins.unknown if not configured else ()


def _by_hand(report: HealthReport) -> list[str]:
    """The fixes that are no re-selection (removing wheels, setting the toolkit instead)."""
    from variant_bridge.health import FixKind

    lines = []
    for finding in report.findings:
        first = finding.fix
        if first is not None and first.kind is not FixKind.REINSTALL:
            lines.append(f"    {finding.id}: {conda_command(first)}")
    return list(dict.fromkeys(lines))


def fix(prefix: str, args: Any, confirm: Callable[[str], None]) -> int:
    """The fixer: show what is re-selected, ask (conda's ``confirm``: declining, or
    ``--dry-run``, stops here), re-select and reinstall, hash-checked; 1 when a wheel's source
    is unknown (installed from an index the prefix does not record and none is configured).

    :raises CondaVariantError: the prefix cannot be read, a wheel cannot be chosen, fetched or
        verified, or the installer fails.
    """
    from conda.base.context import context

    from variant_bridge.jobs.context import open_downloads
    from variant_bridge.jobs.doctor import fix as reselect
    from variant_bridge.jobs.specs import FetchSpec

    with conda_errors(f"{_NAME} fix of {prefix}"):
        examined = examine(prefix)
        report = examined.report
        requests = report.reinstall()
        by_hand = _by_hand(report)
        if not requests:
            print("No variant wheel disagrees with this environment: nothing to re-select.")
            if by_hand:
                print("Other findings, to fix by hand:", *by_hand, sep="\n")
            return 0
        sources, unknown = _sources(examined)
        if unknown:
            print(
                "Cannot re-select without knowing where these came from: "
                f"{'; '.join(unknown)}. Name their index with `conda config --set "
                "plugins.variant_bridge_index_url URL` (or run the fix that `conda doctor "
                f"{_NAME}` shows, adding --index-url)."
            )
            return 1
        installed = {d.name.lower(): d for d in examined.env.python_packages}
        print("Re-select the build that agrees with this environment (same versions):")
        for request in requests:
            dist = installed.get(request.partition("==")[0].lower())
            label = f" [{dist.variant_label}]" if dist and dist.variant_label else ""
            print(f"    {request}{label}")
        confirm("Re-select and reinstall these variant wheels?")
        with open_downloads(FetchSpec(quiet=bool(getattr(context, "quiet", False)))) as downloads:
            done = reselect(examined, sources, downloads)
        for change in done.changes:
            before, after = change.before or "non-variant", change.after or "non-variant"
            print(f"    {change.name} {change.version}: {before} -> {after}")
        if done.result is not None and done.result.installed:
            checked = sum(1 for v in done.result.verified if v.checked)
            print(f"Installed ({checked} of {len(done.result.verified)} files hash-checked): "
                  f"{', '.join(done.result.installed)}")  # fmt: skip
        if done.leftovers:
            names = ", ".join(f"{d.name} {d.version}" for d in done.leftovers)
            print(f"Left behind (nothing requires them now): {names}; `conda doctor {_NAME}` "
                  "shows the command that removes them.")  # fmt: skip
        if by_hand:
            print("Other findings, to fix by hand:", *by_hand, sep="\n")
        return 0
