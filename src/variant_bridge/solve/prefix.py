"""Install solved conda packages into a prefix with ``rattler.install`` (the wheels of a
solution go in afterwards with the hash-checked uv/pip install: rattler does not install
``v3.whl`` records)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from variant_bridge.errors import SolveError

__all__ = ["install_conda"]


def install_conda(records: Sequence[Any], prefix: Path, specs: Sequence[str]) -> None:
    """``rattler.install`` of solved conda records into *prefix* (created when missing).

    :param specs: the requested conda specs, recorded in conda-meta.
    :raises SolveError: rattler could not link a package (its message, on one line).
    """
    import rattler

    with tempfile.TemporaryDirectory(prefix="variant-bridge-pkgs-") as cache:
        try:
            asyncio.run(
                rattler.install(
                    list(records),
                    target_prefix=prefix,
                    cache_dir=Path(cache),
                    show_progress=False,
                    # py-rattler 0.28 wants the inner objects here.
                    requested_specs=[rattler.MatchSpec(s)._match_spec for s in specs] or None,
                )
            )
        except Exception as e:  # rattler's own exception types
            text = " ".join(str(e).split())
            raise SolveError(f"rattler could not install into {prefix}: {text}") from e
