"""CUDA libraries present twice: a conda package and a PyPI wheel of the same library.

``names.yaml`` says which wheel is which conda package (``nvidia-cublas-cu12`` is ``libcublas``)
and, per component, which CUDA release a version ships with (``libcublas 12.6.77`` and
``nvidia-cublas-cu12 12.6.4.1`` are both CUDA 12.6). The pairing is :func:`~variant_bridge.
health.pairs.conda_copy`, which ``select``'s warning before an install uses too.

Two copies at the same CUDA minor are a duplicate: wasted space, and whichever loads first serves
everyone. At different minors they mismatch: the wheel's copy can shadow conda's for code built
against the other. Components whose versions do not follow CUDA (cuDNN, NCCL) are compared by
their own ``major.minor``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from packaging.utils import canonicalize_name

from variant_bridge.environment import Environment, PythonDistribution
from variant_bridge.health.model import (
    Basis,
    Finding,
    FindingKind,
    Fix,
    LibraryCopies,
    Severity,
)
from variant_bridge.health.pairs import conda_copy
from variant_bridge.mappings import MappingTables, NameMapping

__all__ = ["library_findings"]

_RELEASE_RE = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of a conda or PyPI version (``12.6.77``, ``9.10.2.21``)."""
    match = _RELEASE_RE.match(version)
    return tuple(int(p) for p in match.group(0).split(".")) if match else ()


def _said(mapping: NameMapping, pypi: str, conda: str) -> tuple[Basis, str, str]:
    """What each side's version says: its CUDA minor when the table places both, else its own
    ``major.minor``."""
    wheel, package = _release(pypi), _release(conda)
    if mapping.cuda is not None:
        cuda = (mapping.cuda.cuda_of(wheel), mapping.cuda.cuda_of(package))
        if cuda[0] is not None and cuda[1] is not None:
            return Basis.CUDA, "{}.{}".format(*cuda[0]), "{}.{}".format(*cuda[1])
    return Basis.VERSION, ".".join(map(str, wheel[:2])), ".".join(map(str, package[:2]))


def _message(copies: LibraryCopies) -> str:
    what = "CUDA " if copies.basis is Basis.CUDA else ""
    sides = (
        f"{copies.pypi} {copies.pypi_version} (PyPI, {what}{copies.pypi_said}) and "
        f"{copies.conda} {copies.conda_version} (conda, {what}{copies.conda_said})"
    )
    users = (
        f"; required by {', '.join(copies.required_by)}"
        if copies.required_by
        else "; nothing installed requires the wheel"
    )
    if copies.same:
        harm = "wasted space, whichever loads first serves"
        return f"{sides} are the same library twice: {harm}{users}"
    at = "CUDA minors" if copies.basis is Basis.CUDA else "versions"
    harm = "the wheel's copy may shadow conda's"
    return f"{sides} are the same library at different {at}: {harm}{users}"


FixesFor = Callable[[PythonDistribution, LibraryCopies], tuple[Fix, ...]]


def library_findings(
    dists: Iterable[PythonDistribution],
    env: Environment,
    dependents: Mapping[str, tuple[PythonDistribution, ...]],
    fixes: FixesFor,
    *,
    tables: MappingTables,
) -> tuple[Finding, ...]:
    """One finding per PyPI wheel whose library the conda side has too.

    :param dependents: canonical wheel name -> the installed distributions that require it.
    :param fixes: the fixes of one finding (they depend on where the fix commands act).
    """
    found: list[Finding] = []
    for dist in dists:
        pair = conda_copy(dist.name, env, tables)
        if pair is None:
            continue
        mapping, record = pair
        name = canonicalize_name(dist.name)
        basis, pypi_said, conda_said = _said(mapping, dist.version, record.version)
        users = tuple(f"{d.name} {d.version}" for d in dependents.get(name, ()))
        copies = LibraryCopies(
            name, dist.version, record.name, record.version, basis, pypi_said, conda_said, users
        )
        kind = FindingKind.DUPLICATE_LIBRARY if copies.same else FindingKind.MISMATCHED_LIBRARY
        severity = Severity.INFO if copies.same else Severity.WARNING
        found.append(Finding(kind, severity, name, _message(copies), copies, fixes(dist, copies)))
    return tuple(found)
