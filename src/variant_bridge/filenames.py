"""Wheel filenames with an optional variant label (PEP 825), which ``packaging`` cannot parse yet.

``{name}-{version}(-{build})?-{python}-{abi}-{platform}(-{label})?.whl``. A build tag starts with a
digit and (PEP 825) a Python tag must not, so six-part names are unambiguous.

>>> w = WheelFilename.parse("torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl")
>>> (w.name, w.label, str(w) == "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl")
('torch', 'cu128', True)
"""

from __future__ import annotations

import re

from packaging.tags import Tag, parse_tag
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.errors import InvalidWheelFilename, quote
from variant_bridge.properties import LABEL_RE

__all__ = ["WheelFilename"]


# Wheel names use "_" for runs of "-", "_" and "." (the binary distribution format spec).
_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?")
_BUILD_RE = Lazy(r"\d[A-Za-z0-9_.]*")
_TAG_RE = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")  # no empty part: 'py3.' is not one


@value
class WheelFilename:
    """The parts of a wheel filename; ``label`` is ``None`` for a non-variant wheel."""

    name: str
    version: str
    build: str | None
    python_tag: str
    abi_tag: str
    platform_tag: str
    label: str | None = None

    @classmethod
    def parse(cls, filename: str) -> WheelFilename:
        """Parse a wheel filename (a bare name, not a path or URL).

        :raises InvalidWheelFilename: naming the filename and what was wrong.
        """
        name, version, build, py, abi, plat, label = _split(filename)
        problem = _problem(name, version, build, (py, abi, plat), label)
        if problem is not None:
            raise InvalidWheelFilename(f"invalid wheel filename {quote(filename)}: {problem}")
        return cls(name, version, build, py, abi, plat, label)

    @property
    def project(self) -> NormalizedName:
        """The canonical project name (``Foo_Bar`` -> ``foo-bar``)."""
        return canonicalize_name(self.name)

    @property
    def parsed_version(self) -> Version:
        return Version(self.version)

    @property
    def tags(self) -> frozenset[Tag]:
        """The expanded tag set (``py2.py3-none-any`` gives two tags)."""
        return frozenset(parse_tag(f"{self.python_tag}-{self.abi_tag}-{self.platform_tag}"))

    @property
    def is_variant(self) -> bool:
        return self.label is not None

    @property
    def base(self) -> str:
        """The filename without the variant label, as non-variant tools would write it."""
        build = f"-{self.build}" if self.build else ""
        return (
            f"{self.name}-{self.version}{build}-{self.python_tag}-{self.abi_tag}-"
            f"{self.platform_tag}.whl"
        )

    def __str__(self) -> str:
        if self.label is None:
            return self.base
        return f"{self.base[: -len('.whl')]}-{self.label}.whl"


_Parts = tuple[str, str, "str | None", str, str, str, "str | None"]


def _split(filename: str) -> _Parts:
    """The seven parts (build and label may be ``None``); a build tag starts with a digit and a
    Python tag must not, so six parts are unambiguous."""
    if not filename.endswith(".whl"):
        raise InvalidWheelFilename(f"invalid wheel filename {quote(filename)}: must end in '.whl'")
    parts = filename[: -len(".whl")].split("-")
    if len(parts) == 5:
        name, version, py, abi, plat = parts
        return name, version, None, py, abi, plat, None
    if len(parts) == 6 and parts[2][:1].isdigit():
        name, version, build, py, abi, plat = parts
        return name, version, build, py, abi, plat, None
    if len(parts) == 6:
        name, version, py, abi, plat, label = parts
        return name, version, None, py, abi, plat, label
    if len(parts) == 7:
        name, version, build, py, abi, plat, label = parts
        return name, version, build, py, abi, plat, label
    raise InvalidWheelFilename(
        f"invalid wheel filename {quote(filename)}: expected 5 to 7 '-'-separated parts "
        f"(name-version[-build]-python-abi-platform[-label]), got {len(parts)}"
    )


def _problem(
    name: str, version: str, build: str | None, tags: tuple[str, str, str], label: str | None
) -> str | None:
    """What is wrong with the parts of a filename, or ``None``."""
    if not _NAME_RE.fullmatch(name):
        return f"bad name {quote(name)}"
    try:
        Version(version)
    except ValueError:  # InvalidVersion, or a number too long to convert (5,000 digits)
        return f"{quote(version)} is not a PEP 440 version"
    if build is not None and not _BUILD_RE.fullmatch(build):
        return f"build tag {quote(build)} must start with a digit"
    for what, tag in zip(("python", "abi", "platform"), tags, strict=True):
        if not _TAG_RE.fullmatch(tag):
            return f"bad {what} tag {quote(tag)}"
    if tags[0][:1].isdigit():
        return f"python tag {quote(tags[0])} must not start with a digit"
    if label is not None and not LABEL_RE.fullmatch(label):
        return f"variant label {quote(label)} must be lowercase [0-9a-z_.]"
    return None
