"""conda's plugin markers: ``from conda.plugins import hookimpl`` (conda >= 26.9 exports
nothing else here; the types are in :mod:`conda.plugins.types`)."""

from conda.plugins.hookspec import hookimpl

__all__ = ["hookimpl"]
