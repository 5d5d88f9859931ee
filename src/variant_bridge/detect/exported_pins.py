"""Exported pins are not facts: the ``NV_VARIANT_PROVIDER_FORCE_*`` values an ``export`` writes to
``[activation.env]`` steer uv inside the environment, and come back as environment variables
whenever it is activated (``pixi run``, ``pixi shell``). ``export`` lists them, with their values,
in :data:`~variant_bridge.uv_settings.EXPORTED_PINS_VARIABLE`; a variable that still has the
listed value is the export's pin and is set aside, so detection (or ``CONDA_OVERRIDE_*``) says
what the machine has. A value set afterwards (``export NV_...=12.8``) differs and counts as the
user's declaration again (docs/semantics.md, "Exported pins").
"""

from __future__ import annotations

from collections.abc import Mapping

from variant_bridge._values import value
from variant_bridge.uv_settings import EXPORTED_PINS_VARIABLE, parse_exported_pins

__all__ = ["ExportedPins", "split_exported_pins"]


@value
class ExportedPins:
    """The process environment without the export's pins, and what was set aside."""

    environ: Mapping[str, str]
    pins: tuple[tuple[str, str], ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(
            f"exported pin: {name}={value} ({EXPORTED_PINS_VARIABLE}) steers uv in this "
            "environment; it is not a fact about this machine, so detection and CONDA_OVERRIDE_* "
            "are used instead"
            for name, value in self.pins
        )


def split_exported_pins(environ: Mapping[str, str]) -> ExportedPins:
    """*environ* without the variables that still hold the value the export listed."""
    listed = parse_exported_pins(environ.get(EXPORTED_PINS_VARIABLE, ""))
    pinned = tuple(
        (name, value) for name, value in listed.items() if environ.get(name) == value and value
    )
    if not pinned:
        return ExportedPins(environ)
    names = {name for name, _ in pinned}
    return ExportedPins({k: v for k, v in environ.items() if k not in names}, pinned)
