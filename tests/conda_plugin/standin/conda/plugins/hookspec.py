"""The hook specifications a plugin may implement (the subset of conda's ``CondaSpecs`` the
bridge implements, with conda's names and signatures: every hook takes no argument and yields
the dataclasses of :mod:`conda.plugins.types`)."""

from __future__ import annotations

from collections.abc import Iterable

import pluggy

hookspec = pluggy.HookspecMarker("conda")
hookimpl = pluggy.HookimplMarker("conda")


class CondaSpecs:
    @hookspec
    def conda_subcommands(self) -> Iterable[object]:
        """``CondaSubcommand``: ``conda NAME ...``."""

    @hookspec
    def conda_virtual_packages(self) -> Iterable[object]:
        """``CondaVirtualPackage``: facts of this machine for the solver."""

    @hookspec
    def conda_pre_commands(self) -> Iterable[object]:
        """``CondaPreCommand``."""

    @hookspec
    def conda_post_commands(self) -> Iterable[object]:
        """``CondaPostCommand``: run after the commands named in ``run_for``."""

    @hookspec
    def conda_health_checks(self) -> Iterable[object]:
        """``CondaHealthCheck``: ``conda doctor`` checks (and ``--fix``)."""

    @hookspec
    def conda_settings(self) -> Iterable[object]:
        """``CondaSetting``: ``context.plugins.NAME``, ``CONDA_PLUGINS_NAME``."""

    @hookspec
    def conda_environment_exporters(self) -> Iterable[object]:
        """``CondaEnvironmentExporter``: ``conda export --format NAME``."""
