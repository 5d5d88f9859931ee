"""The environment options every command shares, and the one place that turns them into a snapshot.

``--prefix P | --lockfile F [--environment E] [--platform P]``, ``--target K=V`` and
``--cuda-policy``: ``detect``, ``select``, ``install``, ``env``, ``run`` and ``export`` read an
environment the same way, so they take the same options with the same help.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from variant_bridge._values import value
from variant_bridge.environment import CUDA_POLICIES, CudaPolicy
from variant_bridge.errors import ConflictingOptions

if TYPE_CHECKING:
    from variant_bridge.environment import Environment

__all__ = ["EnvironmentOptions", "environment_options", "usage_errors"]

F = TypeVar("F", bound=Callable[..., Any])


@value
class EnvironmentOptions:
    """The parsed environment options of one command."""

    prefix: Path | None
    lockfile: Path | None
    environment: str | None
    platform: str | None
    targets: tuple[str, ...]
    cuda_policy: CudaPolicy | None
    strict: bool = False

    def detect(self) -> Environment:
        """The snapshot these options describe (detection happens here, not at parse time)."""
        from variant_bridge.detect import detect_environment

        with usage_errors():
            return detect_environment(
                prefix=self.prefix,
                lockfile=self.lockfile,
                environment=self.environment,
                platform=self.platform,
                targets=self.targets,
                strict=self.strict,
            )


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """Options that contradict each other (found where they are checked, once, in detection)
    become the running command's usage error: exit 2, with its usage line."""
    try:
        yield
    except ConflictingOptions as e:
        from variant_bridge.detect import Conflict  # only on this error path

        words = {
            Conflict.PREFIX_AND_LOCKFILE: (
                "--prefix and --lockfile cannot be used together; pick one."
            ),
            Conflict.ENVIRONMENT_WITHOUT_LOCKFILE: (
                "--environment needs --lockfile (it names a pixi.lock environment)."
            ),
        }
        text = words.get(e.kind, str(e)) if isinstance(e.kind, Conflict) else str(e)
        raise click.UsageError(text, click.get_current_context()) from e


def _collect(kwargs: dict[str, Any], *, cuda_policy: bool) -> EnvironmentOptions:
    return EnvironmentOptions(
        kwargs.pop("prefix"),
        kwargs.pop("lockfile"),
        kwargs.pop("environment"),
        kwargs.pop("platform"),
        kwargs.pop("targets"),
        kwargs.pop("cuda_policy") if cuda_policy else None,
        kwargs.pop("strict"),
    )


def environment_options(*, cuda_policy: bool = True) -> Callable[[F], F]:
    """Add the shared environment options; the command receives ``env_options``."""

    def decorate(function: F) -> F:
        options = [
            click.option(
                "--prefix",
                # Not file_okay=False: that made a file exit 2 with usage text while a missing
                # directory exits 1; detection says what is wrong with either, in one line.
                type=click.Path(path_type=Path),
                help="A conda prefix to read (conda-meta and site-packages). "
                "Default: $CONDA_PREFIX, if set.",
            ),
            click.option(
                "--lockfile",
                type=click.Path(path_type=Path),  # likewise: a directory is detection's error
                help="A pixi.lock to read instead of a prefix.",
            ),
            click.option(
                "--environment",
                "-e",
                metavar="NAME",
                help="The pixi.lock environment (with --lockfile). Default: 'default'.",
            ),
            click.option(
                "--platform",
                metavar="SUBDIR",
                help="The conda platform, e.g. linux-64, osx-arm64. Default: this machine's.",
            ),
            click.option(
                "--target",
                "-t",
                "targets",
                multiple=True,
                metavar="KEY=VALUE",
                help=(
                    "Declare a fact instead of detecting it (repeatable). KEY: cuda, cuda_arch, "
                    "amdgpu, amdgpu_arch, archspec, glibc, linux, osx, win, cuda_version, "
                    "cudatoolkit, rocm_version, device_ip, python, platform (e.g. cuda=12.8, "
                    "cuda_arch=9.0, amdgpu_arch=gfx942, archspec=haswell, glibc=2.28, "
                    "platform=linux-64); an empty VALUE declares the virtual package absent; "
                    "cuda_version=12.6 (or cudatoolkit=11.8) declares the solved toolkit, "
                    "rocm_version=6.4 the ROCm runtime, device_ip=20.1.0 Intel GPU IPs; "
                    "cuda_arch=8.0,9.0 declares several GPUs, each of which must run the "
                    "chosen wheel. Wins over CONDA_OVERRIDE_* and detection."
                ),
            ),
            click.option(
                "--strict",
                is_flag=True,
                help=(
                    "Use no fact of this machine: virtual packages are the declared ones over "
                    "pixi's platform defaults (nothing is detected), and a platform or target "
                    "Python that would be this machine's is an error."
                ),
            ),
        ]
        if cuda_policy:
            options.append(
                click.option(
                    "--cuda-policy",
                    type=click.Choice(CUDA_POLICIES),
                    help=(
                        "toolkit: nvidia values must also agree with the solved cuda-version; "
                        "driver: only with the driver (__cuda), as uv and the NVIDIA provider "
                        "do. Default: toolkit when one is solved."
                    ),
                )
            )

        # wraps() also carries click's __click_params__: options declared below this decorator.
        @functools.wraps(function)
        def wrapper(**kwargs: Any) -> Any:
            kwargs["env_options"] = _collect(kwargs, cuda_policy=cuda_policy)
            return function(**kwargs)

        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate
