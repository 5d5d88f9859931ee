"""pixi manifests: :mod:`.render` writes a new ``pixi.toml``; :mod:`.update` applies an export to
an existing ``pixi.toml`` or ``pyproject.toml`` in place (it loads tomlkit, so it is imported only
when a manifest is updated). docs/share.md, "pixi"."""

from __future__ import annotations

from variant_bridge.export.pixi_toml.render import MIN_PIXI, platform_entry, render, to_dict

__all__ = ["MIN_PIXI", "platform_entry", "render", "to_dict"]
