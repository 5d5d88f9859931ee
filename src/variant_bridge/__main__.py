"""``python -m variant_bridge``: the same command line as the ``variant-bridge`` script."""

from __future__ import annotations

from variant_bridge.cli import run

__all__: list[str] = []

if __name__ == "__main__":
    run()
