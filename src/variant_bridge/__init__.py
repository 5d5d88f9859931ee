"""variant-bridge: wheel-variant properties <-> conda virtual packages."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]


def __dir__() -> list[str]:
    return __all__
