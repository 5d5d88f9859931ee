"""A targets file: a cluster's node classes, each a declared machine (docs/clusters.md).

A user locks on a GPU-less login node for nodes of several classes. The file names each class
and declares its facts with the keys of ``--target`` (``platform``, ``cuda``, ``cuda_arch``,
``amdgpu_arch``, ``archspec``, ``glibc``, ``cuda_version``, ``rocm_version``, ``device_ip``,
...)::

    classes:
      h100: {platform: linux-64, cuda: "12.8", cuda_arch: "9.0", archspec: sapphirerapids,
             glibc: "2.28", cuda_version: "12.6"}
      mi300: {platform: linux-64, amdgpu_arch: gfx942, rocm_version: "6.4", archspec: zen4}

:func:`read_targets_file` checks everything once, at the edge: unknown keys, values of the wrong
shape and impossible pairs (``cuda_version 13.0`` beside a 12.x driver) are one
:class:`~variant_bridge.errors.InvalidTarget` naming the file, the class and the key.
:func:`node_environments` turns each class into one declared
:class:`~variant_bridge.environment.Environment` (nothing of this machine is used: ``strict``),
which ``select``, ``export`` and ``solve --lockfile`` take one by one.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from variant_bridge._values import value
from variant_bridge.detect.facts import parse_targets, target_keys
from variant_bridge.environment import Environment
from variant_bridge.errors import InvalidTarget, NotRegularFileError, quote
from variant_bridge.indexes.local import read_regular
from variant_bridge.mappings import load_tables
from variant_bridge.virtual_packages import impossible_toolkit

__all__ = ["NodeClass", "TargetsFile", "node_environments", "read_targets_file"]

MAX_BYTES = 1024 * 1024
"""A targets file is a few lines per class; anything larger is refused before it is parsed."""
MAX_CLASSES = 256
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", re.ASCII)
_TOP_KEYS = ("classes",)
# Keys whose value may be a YAML list: several GPUs, several device IPs.
_LISTS = ("cuda_arch", "amdgpu_arch", "device_ip")


@value
class NodeClass:
    """One named class of nodes: its facts, as checked ``--target`` items (canonical keys)."""

    name: str
    targets: Mapping[str, str]

    @property
    def platform(self) -> str:
        return self.targets["platform"]


@value
class TargetsFile:
    """A read and checked targets file."""

    path: str
    classes: tuple[NodeClass, ...]


def read_targets_file(path: str | os.PathLike[str]) -> TargetsFile:
    """Read and check a targets file (YAML).

    :raises InvalidTarget: one line naming the file, the class and the key, e.g.
        ``nodes.yaml: class 'h100', cuda_version '13.0': cuda-version 13.0 constrains
        __cuda >=13, so conda could not have solved it beside __cuda=12.8``.
    """
    where = str(path)
    document = _load(Path(path), where)
    if not isinstance(document, Mapping):
        raise InvalidTarget(f"{where}: expected a mapping with 'classes', got {_kind(document)}")
    unknown = [str(k) for k in document if k not in _TOP_KEYS]
    if unknown:
        raise InvalidTarget(f"{where}: unknown key {quote(unknown[0])} (expected: classes)")
    classes = document.get("classes")
    if not isinstance(classes, Mapping) or not classes:
        raise InvalidTarget(
            f"{where}: 'classes' must map class names to their facts, got {_kind(classes)}"
        )
    if len(classes) > MAX_CLASSES:
        raise InvalidTarget(f"{where}: {len(classes)} classes; at most {MAX_CLASSES}")
    return TargetsFile(
        where, tuple(_node_class(where, name, facts) for name, facts in classes.items())
    )


def node_environments(targets: TargetsFile) -> tuple[tuple[NodeClass, Environment], ...]:
    """One declared environment per class, in the file's order: the class's facts over pixi's
    platform defaults, nothing detected on this machine (``strict``)."""
    from variant_bridge.detect import detect_environment

    result = []
    for node in targets.classes:
        items = {k: v for k, v in node.targets.items() if k != "platform"}
        try:
            env = detect_environment(platform=node.platform, targets=items, env={}, strict=True)
        except InvalidTarget as e:
            raise InvalidTarget(f"{targets.path}: class {quote(node.name)}: {e}") from e
        result.append((node, env))
    return tuple(result)


def _load(path: Path, where: str) -> object:
    import yaml  # lazy: only a command given a targets file reads YAML

    try:
        data = read_regular(path, max_bytes=MAX_BYTES)
    except NotRegularFileError as e:  # a FIFO would block the read forever
        raise InvalidTarget(f"{e}; not a targets file") from e
    except OSError as e:
        if e.errno == errno.EFBIG:
            raise InvalidTarget(
                f"{where}: larger than {MAX_BYTES} bytes; not a targets file"
            ) from e
        raise InvalidTarget(f"{where}: cannot read the targets file: {e.strerror or e}") from e
    try:
        return yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (yaml.YAMLError, RecursionError, UnicodeDecodeError) as e:
        detail = " ".join(str(e).split())[:200]
        raise InvalidTarget(f"{where}: not valid YAML: {detail}") from e
    except ValueError as e:  # an integer past int()'s digits: PyYAML's int() of it
        limit = sys.get_int_max_str_digits()
        raise InvalidTarget(f"{where}: not valid YAML: a number longer than {limit} digits") from e


def _node_class(where: str, name: object, facts: object) -> NodeClass:
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise InvalidTarget(
            f"{where}: class name {quote(str(name))}: expected letters, digits, '_', '.' or '-'"
        )
    at = f"{where}: class {quote(name)}"
    if not isinstance(facts, Mapping):
        raise InvalidTarget(f"{at}: expected a mapping of facts, got {_kind(facts)}")
    keys = target_keys()
    items: dict[str, str] = {}
    for raw_key, raw in facts.items():
        key = str(raw_key).strip().lower().replace("-", "_")
        if key not in keys:
            raise InvalidTarget(
                f"{at}: unknown key {quote(str(raw_key))} (expected one of {', '.join(keys)})"
            )
        text = _text(at, key, raw)
        try:  # one key at a time, so the error names it
            items.update(parse_targets({key: text}))
        except InvalidTarget as e:
            raise InvalidTarget(f"{at}, {key} {quote(text)}: {_reason(e)}") from e
    if not items.get("platform"):
        raise InvalidTarget(f"{at}: platform missing (a conda platform like linux-64)")
    _check_pairs(at, items)
    return NodeClass(name, items)


def _text(at: str, key: str, raw: Any) -> str:
    """A value as ``--target`` takes it. YAML numbers are refused where they can lose digits
    (``12.10`` reads as ``12.1``); lists are allowed for several GPUs or device IPs."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, bool) or raw is None:
        raise InvalidTarget(f"{at}, {key}: expected a string, got {_kind(raw)}")
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, float):
        raise InvalidTarget(
            f"{at}, {key}: {raw!r} is a YAML number; quote it ('{raw}'): unquoted, 12.10 "
            "reads as 12.1"
        )
    if isinstance(raw, list) and key in _LISTS and raw:
        return ",".join(_text(at, key, item) for item in raw)
    raise InvalidTarget(f"{at}, {key}: expected a string, got {_kind(raw)}")


def _reason(error: InvalidTarget) -> str:
    """The part of a ``--target`` error after ``--target key='value': ``."""
    text = str(error)
    return text.split(": ", 1)[1] if text.startswith("--target ") and ": " in text else text


def _check_pairs(at: str, items: Mapping[str, str]) -> None:
    """Facts that cannot hold together on one node."""
    toolkits = load_tables().nvidia.toolkit_packages
    for key in (p.replace("-", "_") for p in toolkits):
        if items.get(key):
            problem = impossible_toolkit(key.replace("_", "-"), items[key], items.get("cuda"))
            if problem is not None:
                raise InvalidTarget(f"{at}, {key} {quote(items[key])}: {problem}")
    for arch, driver in (("cuda_arch", "cuda"), ("amdgpu_arch", "amdgpu")):
        if items.get(arch) and driver in items and not items[driver]:
            raise InvalidTarget(f"{at}, {arch} {quote(items[arch])}: {driver} is declared absent")
    if items.get("cuda_arch") and not items.get("cuda"):
        raise InvalidTarget(
            f"{at}, cuda_arch {quote(items['cuda_arch'])}: needs cuda (the driver's CUDA version)"
        )


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
