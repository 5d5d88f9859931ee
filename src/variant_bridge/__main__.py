"""The ``variant-bridge`` executable and ``python -m variant_bridge``: the same command line."""

from __future__ import annotations

import gc

__all__ = ["main"]

YOUNG_COLLECTION = 50_000
"""Allocations between two of the executable's collections of young objects (Python's: 700)."""


def main() -> None:
    """Run the command line (:func:`variant_bridge.cli.run`) on this process's arguments.

    A command's process creates most of its objects while it imports (modules, classes, tables)
    and keeps them to the end; with Python's default threshold the cyclic garbage collector
    walks them again every 700 allocations, ~5% of a cold ``install``. Collecting every
    :data:`YOUNG_COLLECTION` allocations instead, set before click and the command's modules
    are imported, skips that; garbage cycles are still collected in a long command, a few MB
    at most later. (Tests call the commands in process, under Python's defaults.)
    """
    gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])
    from variant_bridge.cli import run

    run()


if __name__ == "__main__":
    main()
