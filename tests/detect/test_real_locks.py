"""Honest environment facts (§11) on the real pixi.lock files of the shared corpus.

Every environment and platform of every real lock: ``detect --lockfile`` takes the virtual
packages the lock declares (v7 ``platforms:``), the toolkit and the Python it locks, and nothing of
this machine's when the lock declares what the platform is. The expected values are read from
the YAML here, independently of the code under test (rattler).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from variant_bridge.detect import detect_environment
from variant_bridge.environment import Source

LOCKS = "real/pixi-locks"
_CONDA_FILE_RE = re.compile(r"(?P<name>.+)-(?P<version>[^-]+)-(?P<build>[^-]+)\.(?:conda|tar\.bz2)")


def _locked_conda(entry: Any) -> tuple[str, str] | None:
    url = entry.get("conda") if isinstance(entry, dict) else None
    if not isinstance(url, str):
        return None
    match = _CONDA_FILE_RE.fullmatch(url.rsplit("/", 1)[-1])
    return (match["name"], match["version"]) if match else None


def cases(corpus: Path) -> Iterator[tuple[Path, str, str, dict[str, Any]]]:
    """(lock, environment, platform name, expectations) for every locked platform."""
    for lock in sorted((corpus / LOCKS).glob("*/pixi.lock")):
        data = yaml.safe_load(lock.read_text())
        declared = {p["name"]: p.get("virtual-packages", []) for p in data.get("platforms", [])}
        for env_name, env in data["environments"].items():
            for platform, entries in (env.get("packages") or {}).items():
                locked = dict(filter(None, map(_locked_conda, entries)))
                yield (
                    lock,
                    env_name,
                    platform,
                    {
                        "declared": declared.get(platform, []),
                        "python": locked.get("python"),
                        "toolkit": locked.get("cuda-version") or locked.get("cudatoolkit"),
                    },
                )


def _vp(text: str) -> tuple[str, str, str]:
    name, _, rest = text.partition("=")
    version, _, build = rest.partition("=")
    return name, version, build or "0"


def test_detect_agrees_with_every_real_lock(corpus: Path) -> None:
    checked = declared_platforms = 0
    for lock, env_name, platform, expected in cases(corpus):
        env = detect_environment(lockfile=lock, environment=env_name, platform=platform, env={})
        where = f"{lock.parent.name} {env_name}/{platform}"
        assert env.python == expected["python"], where
        assert (env.toolkit.version if env.toolkit else None) == expected["toolkit"], where
        got = {vp.name: vp for vp in env.virtual_packages}
        for name, version, build in map(_vp, expected["declared"]):
            assert name in got, where
            assert (got[name].version, got[name].source) == (version, Source.LOCKFILE), where
            if name == "__archspec":
                assert got[name].build == build, where
        if expected["declared"]:
            declared_platforms += 1
            # Described, not measured: nothing comes from this machine's detection.
            assert all(vp.source != Source.DETECTED for vp in env.virtual_packages), where
        checked += 1
    assert checked >= 30
    assert declared_platforms >= 10


@pytest.mark.parametrize(
    ("lock", "platform", "cuda"),
    [
        ("pixi__examples__multi-machine", "p2", "12"),  # linux-64 with __cuda=12
        (
            "pixi__tests__data__non-satisfiability__conditional-dependency-not-locked",
            "linux-64-cuda",
            "12",
        ),
        ("pixi__tests__data__satisfiability__conditional-dependency-cuda", "linux-64-cuda", "12"),
        ("pixi__tests__data__satisfiability__permuted-virtual-packages", "extra", "12.0"),
        ("pixi__examples__multi-machine", "linux-64", None),  # declares no __cuda: none here
    ],
)
def test_named_platforms_describe_their_machine(
    corpus: Path, lock: str, platform: str, cuda: str | None
) -> None:
    path = corpus / LOCKS / lock / "pixi.lock"
    data = yaml.safe_load(path.read_text())
    env_name = next(iter(data["environments"]))
    env = detect_environment(lockfile=path, environment=env_name, platform=platform, env={})
    if cuda is None:
        declared = [
            _vp(t)[1]
            for p in data["platforms"]
            if p["name"] == platform
            for t in p.get("virtual-packages", [])
            if t.startswith("__cuda=")
        ]
        assert (env.cuda.version if env.cuda else None) == (declared[0] if declared else None)
    else:
        assert env.cuda is not None
        assert (env.cuda.version, env.cuda.source) == (cuda, Source.LOCKFILE)
    # --strict accepts it: every fact is declared by the lock or one of pixi's defaults.
    detect_environment(lockfile=path, environment=env_name, platform=platform, env={}, strict=True)


def test_windows_gets_pixis_default_win(corpus: Path) -> None:
    env = detect_environment(platform="win-64", env={})
    win = env.virtual_package("__win")
    assert win is not None
    assert (win.version, win.source) == ("10.0", Source.PLATFORM_DEFAULT)
