"""Conda solvers that see variant wheels (layer 2): repodata with ``v3.whl`` records, one
py-rattler solve over conda packages and wheels, installing and locking its result, and wheels
turned into conda packages.

rattler (and the ``.tar.bz2`` writer's stdlib modules) are imported where they are used.
"""

from __future__ import annotations
