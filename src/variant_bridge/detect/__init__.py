"""Detection (layer 2): build the frozen :class:`~variant_bridge.environment.Environment`.

Sources: this machine (py-rattler), a conda prefix (``conda-meta`` + ``site-packages``), a
pixi.lock environment, or declared targets. Virtual packages are layered per package, first wins:
``--target``, ``CONDA_OVERRIDE_*``, the NVIDIA provider's variables, then the base set (this
machine's detection, or for another platform the lock's declared packages and pixi's platform
defaults); the set is then filtered to the target platform (CEP 30). The rules are
docs/semantics.md §2; the variables are read from the explicit *env* mapping only, their names
from the mapping tables.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from variant_bridge._values import value
from variant_bridge.detect.devices import complete_devices
from variant_bridge.detect.exported_pins import split_exported_pins
from variant_bridge.detect.facts import (
    Fact,
    check_value,
    conda_override_facts,
    fact_virtual_package,
    parse_targets,
    provider_override_facts,
    target_facts,
    target_toolkit,
)
from variant_bridge.environment import Environment, Source, SourceKind, Toolkit, VirtualPackage
from variant_bridge.errors import ConflictingOptions, DetectionError, InvalidTarget, clip, quote
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.virtual_packages import (
    VERSION_SHAPES,
    impossible_toolkit,
    microarchitecture_problem,
    not_on_platform,
)

if TYPE_CHECKING:
    from variant_bridge.detect.prefix import PrefixContents

__all__ = ["Conflict", "ConflictingSources", "detect_environment", "parse_targets"]


class Conflict(enum.Enum):
    """Which environment options contradict each other."""

    PREFIX_AND_LOCKFILE = "prefix and lockfile"
    ENVIRONMENT_WITHOUT_LOCKFILE = "environment without lockfile"


class ConflictingSources(ConflictingOptions):
    """The options that name what to read contradict each other (a shell words this its way)."""

    kind: Conflict

    def __init__(self, kind: Conflict, message: str) -> None:
        super().__init__(kind, message)


def detect_environment(
    *,
    prefix: str | os.PathLike[str] | None = None,
    lockfile: str | os.PathLike[str] | None = None,
    environment: str | None = None,
    platform: str | None = None,
    targets: Mapping[str, str] | Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    strict: bool = False,
    machine: Sequence[VirtualPackage] | None = None,
) -> Environment:
    """Build the snapshot of one target environment.

    :param prefix: a conda prefix; ``None`` means ``$CONDA_PREFIX`` when set (and no *lockfile*).
    :param lockfile: a pixi.lock; excludes *prefix*.
    :param environment: the lock environment (default ``default``); needs *lockfile*.
    :param platform: the conda subdir to describe (with *lockfile*: a lock platform name or
        subdir); default: the prefix's records, the lock's host/only platform, or this machine.
    :param targets: ``["cuda=12.8", ...]`` or ``{"cuda": "12.8"}``; see :func:`parse_targets`.
    :param env: the process environment to read ``CONDA_PREFIX``, ``CONDA_OVERRIDE_*`` and
        ``NV_VARIANT_PROVIDER_FORCE_*`` from; ``None`` means :data:`os.environ`.
    :param strict: use nothing of this machine's (semantics.md §11): the virtual packages are
        the declared ones over pixi's documented platform defaults, never detected; a platform or
        Python that would be this machine's is an error.
    :param machine: this machine's virtual packages as a host supplies them (a conda plugin:
        conda's own, ``Source.supplied("conda")``), used instead of rattler's detection;
        declarations and override variables still win, and for another platform (or *strict*)
        neither is used.
    :raises InvalidTarget: invalid targets/overrides, conflicting options, a declared toolkit
        conda could not solve beside the driver.
    :raises DetectionError: the machine, prefix or lock file cannot be read; with *strict*, a
        fact this machine's detection would supply.
    """
    from variant_bridge.detect.machine import host_platform

    if prefix is not None and lockfile is not None:
        raise ConflictingSources(
            Conflict.PREFIX_AND_LOCKFILE, "--prefix and --lockfile are mutually exclusive"
        )
    if environment is not None and lockfile is None:
        raise ConflictingSources(
            Conflict.ENVIRONMENT_WITHOUT_LOCKFILE,
            f"--environment {quote(environment)} needs --lockfile",
        )
    # An export's pins for uv (its [activation.env]) are set aside: they are not facts.
    variables = (exported := split_exported_pins(os.environ if env is None else env)).environ
    tables = load_tables()
    declared = parse_targets(targets, tables=tables)
    target_platform = declared.get("platform")
    if lockfile is None and platform is not None:
        # With a lock file, *platform* may be a rich-platform alias; read_lockfile checks it.
        platform = check_value("platform", platform, where="--platform") or None
        if target_platform is not None and platform is not None and platform != target_platform:
            raise InvalidTarget(
                f"--platform {platform!r} and --target platform={target_platform!r} disagree"
            )
    # Every declared fact is checked before the disk is touched: bad input fails fast.
    layers = [
        target_facts(declared, tables=tables),
        conda_override_facts(variables, tables=tables),
        provider_override_facts(variables, tables=tables),
    ]
    host = host_platform(tables)
    notes: list[str] = list(exported.notes)

    implicit_prefix = False
    if prefix is None and lockfile is None and variables.get("CONDA_PREFIX"):
        prefix, implicit_prefix = variables["CONDA_PREFIX"], True

    if prefix is not None:
        read = _from_prefix(prefix, implicit_prefix, target_platform or platform, host, notes)
    elif lockfile is not None:
        read = _from_lockfile(
            lockfile,
            environment,
            platform=platform,
            target_platform=target_platform,
            host=host,
            notes=notes,
        )
    else:
        wanted = target_platform or platform or host
        named = target_platform or platform
        measured = wanted == host and not strict
        origin = "this machine" if measured else f"declared targets for {wanted}"
        read = _Read(
            Environment(
                platform=wanted,
                origin=origin,
                platform_source=Source.TARGET if named else Source.DETECTED,
            ),
            None if named else "this machine's platform",
        )
    result, chosen_by = read.environment, read.chosen_by

    decided = _decide(result.platform, layers, tables, notes=notes, chosen_by=chosen_by)
    virtual_packages = _virtual_packages(
        result.platform,
        decided,
        measure=result.platform == host and not read.lock_declared and not strict,
        lock_declared=read.lock_declared,
        notes=notes,
        machine=machine,
    )
    if declared.get("python"):
        result = replace(result, python=declared["python"], python_source=Source.TARGET)
    toolkit = _toolkit(result.toolkit, target_toolkit(declared, tables=tables), notes)
    done = replace(result, virtual_packages=virtual_packages, toolkit=toolkit)
    done = complete_devices(
        done,
        declared=declared,
        decided=decided,
        variables=variables,
        measure=result.platform == host and not read.lock_declared and not strict,
        tables=tables,
        notes=notes,
    )
    _check_toolkit(done, notes)
    if strict:
        _refuse_undeclared(done)
    return replace(done, notes=tuple(notes))


def _toolkit(
    read: Toolkit | None, declared: tuple[str, str] | None, notes: list[str]
) -> Toolkit | None:
    """The toolkit: a declared one (``--target cuda_version=12.6``; empty: none) wins over the
    one read from the prefix or lock, with a note."""
    if declared is None:
        return read
    package, version = declared
    toolkit = Toolkit(package, version, Source.TARGET) if version else None
    if read is not None:
        instead = f"{toolkit}" if toolkit else "no toolkit"
        notes.append(f"{read} ({read.source}) overridden by --target: {instead}")
    return toolkit


def _check_toolkit(env: Environment, notes: list[str]) -> None:
    """A toolkit conda could not have solved beside the driver: an error when declared, a
    warning (with the rule) when read from a prefix or lock (semantics.md §11)."""
    toolkit, cuda = env.toolkit, env.cuda
    if toolkit is None:
        return
    problem = impossible_toolkit(toolkit.package, toolkit.version, cuda.version if cuda else None)
    if problem is None:
        return
    assert cuda is not None
    if toolkit.source.declared:
        raise InvalidTarget(
            f"--target {toolkit.package.replace('-', '_')}={toolkit.version!r}: {problem}"
        )
    notes.append(
        f"warning: {toolkit} ({toolkit.source}) is impossible beside __cuda={cuda.version} "
        f"({cuda.source}): {problem}"
    )


def _refuse_undeclared(env: Environment) -> None:
    """``--strict``: every fact declared, read from the prefix or lock, or a pixi default."""
    borrowed = [
        f"{vp} ({vp.source})"
        for vp in env.virtual_packages
        if vp.source.kind is SourceKind.DETECTED
    ]
    if env.platform_source.kind is SourceKind.DETECTED:
        borrowed.insert(0, f"platform {env.platform} (this machine's)")
    if env.python_source is not None and env.python_source.kind is SourceKind.DETECTED:
        borrowed.append(f"python {env.python} (this machine's)")
    if borrowed:
        raise DetectionError(
            "--strict: these facts come from this machine, not from what was declared: "
            + ", ".join(borrowed)
            + "; declare them (--platform, --target K=V, a lock platform with virtual packages)"
        )


@value
class _Read:
    """What the prefix, lock or nothing gave, before virtual packages are decided."""

    environment: Environment
    chosen_by: str | None
    """How the platform was chosen when nobody named it, for messages."""
    lock_declared: tuple[VirtualPackage, ...] = ()


def _from_prefix(
    prefix: str | os.PathLike[str],
    implicit: bool,
    wanted: str | None,
    host: str,
    notes: list[str],
) -> _Read:
    contents = _read_prefix(prefix, implicit=implicit)
    if wanted is not None and contents.platform not in (None, wanted):
        raise InvalidTarget(
            f"platform {wanted!r} does not match the prefix's platform "
            f"{contents.platform!r} ({contents.path})"
        )
    notes.extend(contents.notes)
    if wanted is not None:
        source, chosen_by = Source.TARGET, None
    elif contents.platform:
        source, chosen_by = Source.PREFIX, "the prefix's platform"
    else:
        source, chosen_by = Source.DETECTED, "this machine's platform"
    environment = Environment(
        platform=wanted or contents.platform or host,
        toolkit=contents.toolkit,
        conda_packages=contents.conda_packages,
        python_packages=contents.python_packages,
        conda_variants=contents.conda_variants,
        python=contents.python,
        origin=f"prefix {contents.path}" + (" ($CONDA_PREFIX)" if implicit else ""),
        prefix=str(contents.path),
        platform_source=source,
        python_source=Source.PREFIX if contents.python else None,
    )
    return _Read(environment, chosen_by)


def _from_lockfile(
    lockfile: str | os.PathLike[str],
    environment: str | None,
    *,
    platform: str | None,
    target_platform: str | None,
    host: str,
    notes: list[str],
) -> _Read:
    from variant_bridge.detect.lockfile import read_lockfile

    locked = read_lockfile(
        lockfile, environment=environment, platform=platform or target_platform, host=host
    )
    if target_platform is not None and locked.platform != target_platform:
        raise InvalidTarget(
            f"--target platform={target_platform!r} does not match the locked platform "
            f"{locked.platform!r} ({locked.origin})"
        )
    notes.extend(locked.notes)
    result = Environment(
        platform=locked.platform,
        toolkit=locked.toolkit,
        conda_packages=locked.conda_packages,
        python_packages=locked.python_packages,
        python=locked.python,
        origin=locked.origin,
        platform_source=Source.LOCKFILE,
        python_source=Source.LOCKFILE if locked.python else None,
        lockfile=str(lockfile),
        lock_environment=environment,
    )
    chosen_by = None if platform or target_platform else "the locked platform"
    return _Read(result, chosen_by, _parse_declared(locked.declared_virtual_packages, notes))


def _read_prefix(prefix: str | os.PathLike[str], *, implicit: bool) -> PrefixContents:
    """The prefix, with messages that say whether it came from ``--prefix`` or a (perhaps stale)
    ``$CONDA_PREFIX``."""
    from variant_bridge.detect.prefix import read_prefix

    if implicit:
        return read_prefix(
            prefix,
            named=f"$CONDA_PREFIX={clip(str(prefix))}",
            hint=" (unset it or pass --prefix)",
        )
    return read_prefix(prefix, named=f"--prefix {clip(str(prefix))}")


def _parse_declared(texts: Iterable[str], notes: list[str]) -> tuple[VirtualPackage, ...]:
    """Lock v7 platform virtual packages, ``__cuda=12.6`` / ``__archspec=1=haswell``; one that
    does not parse, or whose version has the wrong shape, is left out with a note."""
    packages = []
    for text in texts:
        name, _, rest = text.strip().partition("=")
        version, _, build = rest.partition("=")
        shape = VERSION_SHAPES.get(name)
        if not name.startswith("__") or not version:
            notes.append(f"ignored locked virtual package {quote(text)}: expected __name=version")
            continue
        if shape is not None and not shape.matches(version):
            notes.append(f"ignored locked virtual package {quote(text)}: expected {shape.expected}")
            continue
        packages.append(VirtualPackage(name, version, build or "0", Source.LOCKFILE))
    return tuple(packages)


def _decide(
    platform: str,
    layers: list[dict[str, Fact]],
    tables: MappingTables,
    *,
    notes: list[str],
    chosen_by: str | None,
) -> dict[str, Fact]:
    """The declared fact that wins per virtual package (first layer first), for *platform*."""
    from variant_bridge.detect.machine import applies_to

    decided: dict[str, Fact] = {}
    for layer in layers:
        for name, fact in layer.items():
            if not applies_to(name, platform):
                if fact.source == Source.TARGET:
                    raise InvalidTarget(
                        f"{_describe(fact)}: {not_on_platform(name, platform)}"
                        + _chosen_hint(platform, chosen_by)
                    )
                notes.append(f"{_describe(fact)} ignored: {name} does not exist on {platform}")
                continue
            if name == "__archspec" and fact.source == Source.TARGET and fact.value:
                info = tables.platform.subdirs.get(platform)
                family = info.cpu_family if info is not None else None
                problem = microarchitecture_problem(fact.value, platform, cpu_family=family)
                if problem is not None:
                    raise InvalidTarget(
                        f"{_describe(fact)}: {problem}" + _chosen_hint(platform, chosen_by)
                    )
            winner = decided.setdefault(name, fact)
            if winner is not fact:
                notes.append(f"{_describe(fact)} overridden by {_describe(winner)}")
    return decided


def _virtual_packages(
    platform: str,
    decided: dict[str, Fact],
    *,
    measure: bool,
    lock_declared: tuple[VirtualPackage, ...],
    notes: list[str],
    machine: Sequence[VirtualPackage] | None = None,
) -> tuple[VirtualPackage, ...]:
    """The declared facts over a base: this machine's detection when *measure*, else the lock's
    declarations (pixi.lock v7 ``platforms:``) completed by pixi's platform defaults."""
    from variant_bridge.detect.machine import (
        applies_to,
        detect_virtual_packages,
        platform_defaults,
    )

    if measure and machine is not None:
        base = tuple(machine)
    elif measure:
        cuda = decided.get("__cuda")
        base = detect_virtual_packages(cuda=None if cuda is None else (cuda.value or ""))
    else:
        # Another machine, a lock platform that declares its own virtual packages, or --strict:
        # the declarations and pixi's defaults, never this machine's facts.
        defaults = {vp.name: vp for vp in platform_defaults(platform)}
        defaults.update({vp.name: vp for vp in lock_declared})
        base = tuple(defaults.values())

    packages = {vp.name: vp for vp in base if applies_to(vp.name, platform)}
    for name, fact in decided.items():
        if fact.value is None:
            packages.pop(name, None)
        else:
            vp_name, version, build = fact_virtual_package(fact)
            packages[vp_name] = VirtualPackage(vp_name, version, build, fact.source)

    # A GPU architecture needs its driver package, as in rattler (__amdgpu_arch without
    # __amdgpu cannot be declared with --target: the key declares both).
    for arch_name, driver in (("__cuda_arch", "__cuda"), ("__amdgpu_arch", "__amdgpu")):
        arch = packages.get(arch_name)
        if arch is None or driver in packages:
            continue
        if arch.source == Source.TARGET:
            key = driver.removeprefix("__")
            raise InvalidTarget(
                f"--target {arch_name[2:]}={arch.version!r} needs {driver} "
                f"(declare --target {key}=...)"
            )
        del packages[arch_name]
        notes.append(f"{arch_name} from {arch.source} dropped: no {driver}")
    return tuple(sorted(packages.values(), key=lambda vp: vp.name))


def _chosen_hint(platform: str, chosen_by: str | None) -> str:
    """Where a platform nobody named came from: the user may not know it was chosen."""
    if chosen_by is None:
        return ""
    more = ": pass --platform to describe another" if chosen_by.startswith("this") else ""
    return f"; {platform} is {chosen_by}{more}"


def _describe(fact: Fact) -> str:
    """How the user wrote *fact*: ``--target cuda='12.8'`` or ``CONDA_OVERRIDE_CUDA='12.8'``."""
    if fact.source == Source.TARGET:
        return f"--target {fact.name[2:]}={fact.raw!r}"
    return f"{fact.source}={fact.raw!r}"
