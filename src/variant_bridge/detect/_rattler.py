"""py-rattler's native extension (``rattler.rattler``) without the ``rattler`` package around it.

``import rattler`` imports every one of its submodules (solver, index, networking, sigstore, ...):
about twice what loading the extension itself costs, on the path of every cold ``detect`` and
``install``. Detection needs three native classes, so it loads the extension alone. The module is
registered under its own name, so a later ``import rattler`` in the same process (``export``,
``solve``) finds it there instead of initialising it a second time, which PyO3 refuses.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType

from variant_bridge.errors import DetectionError

__all__ = ["native"]

_NAME = "rattler.rattler"


def native() -> ModuleType:
    """The loaded ``rattler.rattler`` extension module.

    :raises DetectionError: py-rattler is not installed, or its extension cannot be loaded.
    """
    found = sys.modules.get(_NAME)
    if found is not None:
        return found
    package = importlib.util.find_spec("rattler")  # finds the package; imports nothing
    locations = package.submodule_search_locations if package is not None else None
    spec = importlib.machinery.PathFinder.find_spec(_NAME, list(locations or ()))
    if spec is None or spec.loader is None:
        raise DetectionError("cannot load py-rattler's native extension: is py-rattler installed?")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NAME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_NAME]
        raise
    return module
