"""conda's plugin manager, as far as the plugin's hooks meet it: pluggy with the ``conda``
project name, results checked for clashing names, and the lookups conda's commands make."""

from __future__ import annotations

import fnmatch
from collections import Counter
from typing import Any

import pluggy

from conda.auxlib import NULL
from conda.exceptions import CondaValueError, PluginError
from conda.plugins.hookspec import CondaSpecs


class CondaPluginManager(pluggy.PluginManager):
    def __init__(self) -> None:
        super().__init__("conda")
        self.add_hookspecs(CondaSpecs)

    def get_hook_results(self, name: str) -> list[Any]:
        """Every plugin's results of ``conda_NAME``; a name two plugins yield is an error."""
        results = [item for found in getattr(self.hook, f"conda_{name}")() for item in found]
        clashes = sorted(n for n, k in Counter(r.name for r in results).items() if k > 1)
        if clashes:
            raise PluginError(f"Conflicting plugins found for `{name}`: {', '.join(clashes)}")
        return sorted(results, key=lambda r: r.name)

    def get_subcommands(self) -> dict[str, Any]:
        return {s.name: s for s in self.get_hook_results("subcommands")}

    def get_health_checks(self) -> dict[str, Any]:
        return {c.name: c for c in self.get_hook_results("health_checks")}

    def get_settings(self) -> dict[str, Any]:
        return {s.name: s for s in self.get_hook_results("settings")}

    def get_virtual_package_records(self) -> tuple[Any, ...]:
        found = (p.to_virtual_package() for p in self.get_hook_results("virtual_packages"))
        return tuple(r for r in found if r is not NULL)

    def invoke_post_commands(self, command: str) -> None:
        for hook in self.get_hook_results("post_commands"):
            if command in hook.run_for:
                hook.action(command)

    def get_exporter_format_mapping(self) -> dict[str, Any]:
        """Format name or alias -> exporter; one claimed twice is a ``PluginError``."""
        mapping: dict[str, Any] = {}
        for exporter in self.get_hook_results("environment_exporters"):
            for key in (exporter.name, *exporter.aliases):
                if key in mapping:
                    raise PluginError(f"Format name conflicts detected: {key!r}")
                mapping[key] = exporter
        return mapping

    def get_environment_exporter_by_format(self, format_name: str) -> Any:
        found = self.get_exporter_format_mapping().get(format_name)
        if found is None:
            raise CondaValueError(f"Unknown export format '{format_name}'.")
        return found

    def detect_environment_exporter(self, filename: str) -> Any:
        matches = [
            e for e in self.get_hook_results("environment_exporters")
            if any(fnmatch.fnmatch(filename, p) for p in e.default_filenames)
        ]  # fmt: skip
        if len(matches) != 1:
            raise PluginError(f"{len(matches)} environment exporters handle {filename!r}")
        return matches[0]
