"""Wheel facts as conda match specs: Python from the tags and ``Requires-Python``, PEP 440
specifiers, the platform tag's virtual package.

Each function returns the spec, or a :class:`Refusal` when conda has no way to say it, so the
caller reports the wheel instead of writing a record that would mean something else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.mappings import MappingTables
from variant_bridge.markers import unreadable_version
from variant_bridge.platform_tags import conda_platform

__all__ = ["Refusal", "platform_spec", "python_spec", "requires_python_spec", "to_conda_version"]

_NUMBER_RE = re.compile(r"[0-9]+")
_MAX_DIGITS = 18
"""The longest number a conda version holds (rattler's version numbers are 64-bit)."""

_CP_RE = re.compile(r"cp(?P<major>[0-9])(?P<minor>[0-9]+)")
_PY_RE = re.compile(r"py(?P<major>[0-9])(?P<minor>[0-9]*)")
# What conda reads as one version: alphanumeric components joined by . _ + ! (epoch) and -.
_CONDA_VERSION_RE = re.compile(r"(?:[0-9]+!)?[A-Za-z0-9]+(?:[._+-][A-Za-z0-9]+)*")


@value
class Refusal:
    """Why a wheel gets no conda record, in words."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def _one_python(tag: Tag) -> str | Refusal | None:
    """``cp312-cp312`` -> ``3.12.*``; ``cp39-abi3`` -> ``>=3.9``; ``py3-none`` -> ``None``
    (any Python 3 -> no constraint beyond ``>=3``)."""
    interpreter, abi = tag.interpreter, tag.abi
    cp = _CP_RE.fullmatch(interpreter)
    if cp is not None:
        version = f"{cp['major']}.{cp['minor']}"
        if abi.endswith("t") and abi.startswith("cp"):
            return Refusal(f"free-threaded ABI {abi}: conda's python_abi builds are not modelled")
        if abi == "abi3":
            return f">={version}"
        return f"{version}.*"
    py = _PY_RE.fullmatch(interpreter)
    if py is not None:
        if py["minor"]:
            return f">={py['major']}.{py['minor']}"
        return f">={py['major']}"
    return Refusal(
        f"interpreter tag {interpreter!r}: only CPython (cp*) and py* wheels are indexed"
    )


def python_spec(tags: Iterable[Tag]) -> str | Refusal:
    """The ``python`` spec of a wheel's (possibly compressed) tag set: the OR of its tags."""
    found: list[str] = []
    refusals: list[Refusal] = []
    for tag in sorted(tags, key=str):
        one = _one_python(tag)
        if isinstance(one, Refusal):
            refusals.append(one)
        elif one is not None:
            found.append(one)
    if not found:
        return refusals[0] if refusals else "python"
    return "python " + "|".join(dict.fromkeys(found))


def to_conda_version(specifier: SpecifierSet) -> str | None:
    """A PEP 440 specifier set as a conda version spec (``>=2,<3``; ``==1.2.*`` -> ``1.2.*``;
    ``~=1.4.2`` -> ``>=1.4.2,<1.5``; ``!=8.3.*`` stays, conda and rattler read it as "not
    8.3.anything"); ``""`` for no constraint, ``None`` when conda cannot say it (``===`` with a
    non-version, ``~=`` of one number, a number past rattler's 64 bits or Python's int())."""
    numbers = _NUMBER_RE.findall(str(specifier))
    if any(len(n) > _MAX_DIGITS for n in numbers) or unreadable_version(specifier) is not None:
        return None
    parts: list[str] = []
    for spec in sorted(specifier, key=str):
        operator, version = spec.operator, spec.version
        if operator == "~=":
            release = Version(version).release  # ~=2.2.post3 means >=2.2.post3,==2.*
            if len(release) < 2:
                return None
            upper = [*release[:-2], release[-2] + 1]
            parts += [f">={version}", f"<{'.'.join(map(str, upper))}"]
        elif operator == "===" and not _CONDA_VERSION_RE.fullmatch(version):
            return None
        elif operator in ("==", "===") and version.endswith(".*"):
            parts.append(version)
        elif operator in ("==", "==="):
            parts.append(f"=={version}")
        else:
            parts.append(f"{operator}{version}")
    return ",".join(parts)


def requires_python_spec(text: str | None) -> str | None:
    """``Requires-Python: >=3.10`` -> ``python >=3.10``; ``None`` when absent, empty or
    unreadable (installers ignore an invalid one too)."""
    if not text or not text.strip():
        return None
    try:
        converted = to_conda_version(SpecifierSet(text))
    except InvalidSpecifier:
        return None
    return f"python {converted}" if converted else None


def platform_spec(
    tags: Iterable[Tag], subdir: str, *, tables: MappingTables
) -> str | Refusal | None:
    """The virtual package a wheel's platform tags need on *subdir* (the loosest of the tags
    that fit it), ``None`` for a pure wheel, or why it does not belong in *subdir*."""
    fitting: list[tuple[tuple[int, int], str | None]] = []
    reasons: list[str] = []
    for platform in sorted({t.platform for t in tags}):
        read = conda_platform(platform, tables=tables)
        if read is None:
            reasons.append(f"platform tag {platform!r} is unknown to the tables")
        elif read.libc == "musl":
            reasons.append(f"{platform}: conda has no musl virtual package")
        elif read.subdirs and subdir not in read.subdirs:
            reasons.append(f"{platform} is for {', '.join(read.subdirs)}, not {subdir}")
        else:
            fitting.append((read.version or (0, 0), read.spec))
    if not fitting:
        return Refusal("; ".join(reasons))
    return min(fitting)[1]
