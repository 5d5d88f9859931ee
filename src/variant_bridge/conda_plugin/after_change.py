"""The warning after a conda change (``conda install/update/remove``, ``conda env create/update``)
to a prefix holding variant wheels: when a wheel no longer agrees with the prefix (e.g.
``cuda-version`` is now older than the wheel's build), a few lines on stderr naming the wheel and
the ``conda variant`` command that fixes it; nothing when all agree.

It is cheap (a glob for ``variant.json`` decides whether there is anything to examine; then the
doctor's :func:`~variant_bridge.jobs.doctor.health_of` reads files only: no process, no network)
and it never fails conda's command: conda's command has already succeeded, so whatever goes
wrong here is at most one line saying the check could not run. Turned off with the
``variant_bridge_check_after_change`` setting.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from variant_bridge.health import Finding

__all__ = ["disagreements", "holds_variant_wheels", "warn", "warning_lines"]

_SITE_PACKAGES = ("lib/python*/site-packages", "Lib/site-packages")


def holds_variant_wheels(prefix: Path) -> bool:
    """Whether *prefix* has an installed variant wheel (a ``*.dist-info/variant.json``)."""
    return any(
        next(prefix.glob(f"{site}/*.dist-info/variant.json"), None) is not None
        for site in _SITE_PACKAGES
    )


def warning_lines(findings: Iterable[Finding], prefix: str) -> list[str]:
    """The warning: one line per wheel that no longer agrees, with its fixes in conda's
    spelling."""
    from variant_bridge.conda_plugin.doctor import finding_lines

    found = tuple(findings)
    if not found:
        return []
    count = len(found)
    wheels = f"{count} PyPI wheel{'s' if count > 1 else ''}"
    agree = "agrees" if count == 1 else "agree"
    heading = (
        f"warning: variant-bridge: after this change {wheels} no longer {agree} with {prefix}:"
    )
    return [heading, *finding_lines(found, indent="  ", severity=False)]


def disagreements(prefix: Path) -> list[Finding]:
    """What a conda change can break between the two sides, at warning level: variant wheels
    that no longer agree, CUDA libraries now of another minor than conda's (files only)."""
    from variant_bridge.conda_plugin.facts import conda_virtual_packages
    from variant_bridge.health import FindingKind, Severity
    from variant_bridge.jobs.doctor import health_of
    from variant_bridge.jobs.specs import EnvironmentSpec
    from variant_bridge.jobs.target import detect
    from variant_bridge.translate import supported_properties

    env = detect(EnvironmentSpec(prefix=prefix, virtual_packages=conda_virtual_packages()))
    report = health_of(env, supported_properties(env))
    kinds = (FindingKind.DISAGREEING_VARIANT, FindingKind.MISMATCHED_LIBRARY)
    return [f for f in report.findings if f.kind in kinds and f.severity.at_least(Severity.WARNING)]


def warn(command: str) -> None:
    """The post-command action: examine conda's target prefix after *command*; print the
    warning when a variant wheel disagrees. Never raises."""
    try:
        from conda.base.context import context

        from variant_bridge.conda_plugin.settings import CHECK_AFTER_CHANGE, flag

        if not flag(CHECK_AFTER_CHANGE):
            return
        prefix = Path(context.target_prefix)
        if not holds_variant_wheels(prefix):
            return
        lines = warning_lines(disagreements(prefix), str(prefix))
    except Exception as e:  # conda's command succeeded; say so in one line
        from variant_bridge.conda_plugin.errors import one_line

        said = one_line(str(e))
        lines = [f"warning: variant-bridge: could not check the variant wheels: {said}"]
    if lines:
        print("\n".join(lines), file=sys.stderr)
