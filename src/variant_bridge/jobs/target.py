"""The target of a command: the environment, its interpreter and what it supports, decided once.

:meth:`Target.of` is the one place an :class:`~variant_bridge.jobs.specs.EnvironmentSpec`
becomes a target: detection (:func:`~variant_bridge.detect.detect_environment`), the target
interpreter (:func:`~variant_bridge.detect.interpreter.resolve_target_python`) with the
``--strict`` rule, and the supported properties (computed once, with the CUDA policy decided
then). Which installed distributions count without asking the interpreter is
:attr:`Target.installed`. Heavy modules load when a target is made, not when this one is imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from variant_bridge._values import value
from variant_bridge.errors import ConflictingOptions, InvalidTarget
from variant_bridge.jobs.specs import EnvironmentSpec, Misuse

if TYPE_CHECKING:
    from variant_bridge.environment import Environment, PythonDistribution
    from variant_bridge.platform_tags import TargetPython
    from variant_bridge.translate.supported import SupportedProperties

__all__ = ["Target", "detect"]


def detect(spec: EnvironmentSpec) -> Environment:
    """The environment *spec* names (what ``detect``, ``env`` and ``run`` show).

    :raises ConflictingOptions: options that exclude each other (a usage error).
    :raises InvalidTarget, DetectionError: see
        :func:`~variant_bridge.detect.detect_environment`.
    """
    import os

    from variant_bridge.detect import detect_environment

    environ = os.environ if spec.environ is None else spec.environ
    if not spec.conda_prefix and "CONDA_PREFIX" in environ:
        environ = {k: v for k, v in environ.items() if k != "CONDA_PREFIX"}
    env = detect_environment(
        prefix=spec.prefix,
        lockfile=spec.lockfile,
        environment=spec.environment,
        platform=spec.platform,
        targets=spec.targets,
        env=environ,
        strict=spec.strict,
        machine=spec.virtual_packages,
    )
    return env if spec.cuda is None else requested_toolkit(env, spec.cuda)


def requested_toolkit(env: Environment, cuda: str) -> Environment:
    """*env* with the toolkit ``--cuda`` asks for, where nothing solved one.

    :raises InvalidTarget: *cuda* is no ``MAJOR.MINOR``, or conda could not solve that toolkit
        beside the environment's driver; :raises ConflictingOptions: the environment has a
        solved toolkit that differs (it decides).
    """
    import dataclasses
    import re

    from variant_bridge.environment import Source, Toolkit
    from variant_bridge.virtual_packages import impossible_toolkit

    if re.fullmatch(r"[1-9][0-9]?\.[0-9]{1,2}", cuda) is None:
        raise InvalidTarget(f"--cuda {cuda!r}: expected a CUDA MAJOR.MINOR, e.g. 12.6")
    solved = env.toolkit
    if solved is not None:
        if solved.version.split(".")[:2] == cuda.split("."):
            return env
        raise ConflictingOptions(
            Misuse.CUDA_AND_TOOLKIT,
            f"--cuda {cuda} asks for another toolkit than {solved} ({solved.source}): the solved "
            "toolkit decides; drop --cuda, or change the environment's cuda-version",
        )
    driver = env.cuda
    problem = impossible_toolkit("cuda-version", cuda, driver.version if driver else None)
    if problem is not None:
        raise InvalidTarget(f"--cuda {cuda}: {problem}")
    return dataclasses.replace(env, toolkit=Toolkit("cuda-version", cuda, Source.REQUESTED))


@value
class Target:
    """What the wheels are chosen for: the environment, its interpreter and what it supports."""

    env: Environment
    python: TargetPython
    supported: SupportedProperties
    """Computed once from :attr:`env` (its ``policy`` is the CUDA policy decided then)."""

    @property
    def installed(self) -> tuple[PythonDistribution, ...]:
        """What counts as installed in the target without asking its interpreter: the prefix's
        ``site-packages`` when the prefix's own Python is the target, else nothing."""
        from variant_bridge.platform_tags import PythonSource

        return self.env.python_packages if self.python.source is PythonSource.PREFIX else ()

    @classmethod
    def of(cls, spec: EnvironmentSpec) -> Target:
        """The target *spec* describes, every input checked (once) before detection runs.

        :raises ConflictingOptions: ``--python`` with ``--target python=``, or environment
            options that exclude each other.
        :raises InvalidTarget: with ``--strict``, a target interpreter that would be the running
            one; a malformed ``--python``.
        :raises DetectionError: the machine, prefix or lock file cannot be read.
        """
        from variant_bridge.translate import supported_properties

        if spec.python is not None and any(
            t.partition("=")[0].strip() == "python" for t in spec.targets
        ):
            raise ConflictingOptions(
                Misuse.PYTHON_TWICE,
                "Give the target Python once: --python or --target python=, not both.",
            )
        env = detect(spec)
        python = _interpreter(spec, env)
        return cls(env, python, supported_properties(env, policy=spec.cuda_policy))

    @classmethod
    def of_platform(cls, subdir: str | None, *, option: str = "--subdir") -> Target:
        """A target that is only a platform (``index``, ``convert``: records for every machine
        of *subdir*; ``None``: this machine's): no virtual packages, nothing detected or read;
        the interpreter is the running one (its version is never used).

        :raises InvalidTarget: *subdir* is no conda platform (naming *option*).
        """
        from variant_bridge.detect.interpreter import running_python
        from variant_bridge.detect.machine import host_platform
        from variant_bridge.environment import Environment, Source
        from variant_bridge.translate import supported_properties
        from variant_bridge.virtual_packages import check_platform

        platform = check_platform(subdir, where=option) if subdir else host_platform()
        env = Environment(
            platform=platform,
            origin=f"platform {platform}",
            platform_source=Source.TARGET if subdir else Source.DETECTED,
        )
        return cls(env, running_python(), supported_properties(env))


def _interpreter(spec: EnvironmentSpec, env: Environment) -> TargetPython:
    from variant_bridge.detect.interpreter import resolve_target_python, running_python
    from variant_bridge.platform_tags import PythonSource, TargetPython

    if not spec.interpreter and spec.python is None:
        # Only the environment counts: its Python's version, or the running one; nothing probed.
        if env.python is not None:
            return TargetPython.parse(
                env.python, source=PythonSource.ENVIRONMENT, origin=env.origin
            )
        return running_python()
    prefix: str | Path | None = env.prefix
    if prefix is None and spec.lockfile is not None:
        # The environment pixi installs the lock into, installed or not: its interpreter or
        # none, never the running one.
        from variant_bridge.detect.lockfile import pixi_environment_prefix

        prefix = pixi_environment_prefix(spec.lockfile, spec.environment, installed=False)
    python = resolve_target_python(spec.python, env, prefix=prefix)
    if spec.strict and spec.interpreter and python.source is PythonSource.RUNNING:
        raise InvalidTarget(
            f"--strict: the target Python would be this machine's ({python}); pass --python "
            "or --target python=, or read a prefix or lock that has one"
        )
    return python
