"""Why a user's own manifest entry is not what the export would write, or ``None`` when it does no
harm: ``--update`` never changes the user's entries, it says when one of them lets a re-solve
or a re-install drift from the exported environment (docs/share.md, "Updating an existing
manifest"). A spec that admits the installed package is fine, with one exception: the CUDA
toolkit, which must stay at the ``major.minor`` the variant wheels were chosen for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from variant_bridge.export.dependencies import major_minor
from variant_bridge.export.model import ExportModel

__all__ = ["Judge"]

# Versions a toolkit pin to `major.minor` must refuse (around the installed one).
_OTHER_TOOLKITS = ("{major}.{below}", "{major}.{above}", "{next}.0", "{prev}.8")


@dataclass(frozen=True, slots=True)
class Judge:
    """Judges the user's entries against one export."""

    model: ExportModel

    def why(self, table: str, key: str, user: Any, wanted: Any) -> str | None:
        """Why the user's *user* value at ``table.key`` is not good enough (the export wants
        *wanted*), or ``None``."""
        if user == wanted:
            return None
        if table == "dependencies":
            return self._conda(key, user)
        if table == "pypi-dependencies":
            return self._pypi(key, user, wanted)
        return None

    def _conda(self, name: str, user: Any) -> str | None:
        installed = next((r for r in self.model.installed_conda if r[0] == name), None)
        spec = _match_spec(name, user)
        if installed is None or spec is None:
            return None
        _, version, build = installed
        if not _matches(spec, installed, self.model.platform):
            return f"it does not admit the environment's {name} {version} ({build})"
        toolkit = self.model.toolkit_dependency
        if toolkit is not None and toolkit.name == name:
            pin = major_minor(version)
            others = [v for v in _around(pin) if _matches(spec, (name, v, build), "noarch")]
            if others:
                return (
                    f"it also admits CUDA toolkits other than the environment's {pin} (such as "
                    f"{others[0]}), and a re-solve may pick one the variant wheels were not "
                    "chosen for"
                )
        return None

    def _pypi(self, name: str, user: Any, wanted: Any) -> str | None:
        requirement = next((p for p in self.model.pip if p.name == name), None)
        if requirement is None:
            return None
        if isinstance(wanted, dict):
            other = (
                f", possibly another variant than {requirement.label}" if requirement.label else ""
            )
            return f"it lets the installer choose the file{other}"
        text = user.get("version") if isinstance(user, dict) else user
        if not isinstance(text, str) or text.strip() == "*":
            return None
        try:
            admits = SpecifierSet(text).contains(requirement.version, prereleases=True)
        except InvalidSpecifier:
            return None
        return None if admits else f"it does not admit the installed {name} {requirement.version}"


def _match_spec(name: str, value: Any) -> Any:
    """The rattler MatchSpec a pixi dependency value stands for, or ``None`` for a source
    (``path``, ``git``, ``url``) or a spec rattler cannot read."""
    from rattler import MatchSpec  # heavy: only when a user's entry is judged

    if isinstance(value, str):
        version, build = value, None
    elif isinstance(value, dict) and not {"path", "git", "url"} & set(value):
        version, build = str(value.get("version", "*")), value.get("build")
    else:
        return None
    text = name if version.strip() in ("", "*") and build is None else f"{name} {version}"
    if build is not None:
        text += f" {build}"
    try:
        return MatchSpec(text)
    except Exception:  # a spec rattler refuses is the user's business, not a note
        return None


def _matches(spec: Any, record: tuple[str, str, str], subdir: str) -> bool:
    from rattler import PackageRecord
    from rattler.package import BuildString

    name, version, build = record
    try:
        return bool(spec.matches(PackageRecord(name, version, BuildString(build), 0, subdir)))
    except Exception:
        return False


def _around(pin: str) -> list[str]:
    major, _, minor = pin.partition(".")
    m, n = int(major), int(minor or 0)
    values = {
        "major": m,
        "below": max(n - 1, 0),
        "above": n + 1,
        "next": m + 1,
        "prev": max(m - 1, 0),
    }
    found = [t.format(**values) for t in _OTHER_TOOLKITS]
    return [v for v in dict.fromkeys(found) if major_minor(v) != pin]
