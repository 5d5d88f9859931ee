"""The plugin's conda settings (``conda_settings``): read from ``.condarc`` under ``plugins:``
or from ``CONDA_PLUGINS_<NAME>`` as every conda setting is, e.g.::

    conda config --set plugins.variant_bridge_index_url https://download.pytorch.org/whl/variant/
    CONDA_PLUGINS_VARIANT_BRIDGE_CUDA_ARCH=true conda env create -f environment.yml

conda reads settings on many commands, so this module imports only conda's parameter types.
Where a conda has no plugin settings (or a setting is unset) the default applies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from variant_bridge.jobs.specs import SourceSpec

__all__ = [
    "CHECK_AFTER_CHANGE",
    "CUDA_ARCH",
    "EXTRA_INDEX_URLS",
    "FIND_LINKS",
    "INDEX_URL",
    "conda_settings",
    "flag",
    "sources",
]

INDEX_URL = "variant_bridge_index_url"
EXTRA_INDEX_URLS = "variant_bridge_extra_index_urls"
FIND_LINKS = "variant_bridge_find_links"
CUDA_ARCH = "variant_bridge_cuda_arch"
CHECK_AFTER_CHANGE = "variant_bridge_check_after_change"

_DEFAULTS: dict[str, Any] = {
    INDEX_URL: "",
    EXTRA_INDEX_URLS: (),
    FIND_LINKS: (),
    CUDA_ARCH: False,
    CHECK_AFTER_CHANGE: True,
}


def conda_settings() -> Iterator[Any]:
    """The settings, as the running conda's ``CondaSetting`` values."""
    from conda.common.configuration import PrimitiveParameter, SequenceParameter

    from variant_bridge.conda_plugin import _compat

    def strings() -> Any:
        return SequenceParameter(PrimitiveParameter("", element_type=str))

    described = (
        (INDEX_URL, PrimitiveParameter("", element_type=str),
         ("The simple index (PEP 503/691) of variant wheels that `conda variant` commands, the "
          "`conda doctor --fix` of variant-consistency and the variant exporters consult "
          "(--index-url), e.g. https://download.pytorch.org/whl/variant/.")),
        (EXTRA_INDEX_URLS, strings(),
         ("More simple indexes of variant wheels, consulted before the index "
          "(--extra-index-url).")),
        (FIND_LINKS, strings(),
         "Directories or pages of variant wheels (-f/--find-links)."),
        (CUDA_ARCH, PrimitiveParameter(False, element_type=bool),
         ("Register the __cuda_arch virtual package (the lowest compute capability of this "
          "machine's NVIDIA GPUs, detected by variant-bridge; CONDA_OVERRIDE_CUDA_ARCH "
          "overrides it), unless conda or another plugin provides __cuda_arch already.")),
        (CHECK_AFTER_CHANGE, PrimitiveParameter(True, element_type=bool),
         ("After conda changes a prefix holding variant wheels, warn when a wheel no longer "
          "agrees with it.")),
    )  # fmt: skip
    for name, parameter, description in described:
        yield _compat.setting(name=name, description=description, parameter=parameter)


def _value(name: str) -> Any:
    from conda.base.context import context

    try:
        found = getattr(context.plugins, name)
    except AttributeError:  # a conda without plugin settings, or the setting not loaded
        return _DEFAULTS[name]
    return _DEFAULTS[name] if found is None else found


def flag(name: str) -> bool:
    """A boolean setting's value (its default where conda has none)."""
    return bool(_value(name))


def sources() -> SourceSpec:
    """Where variant wheels come from, as the settings say (empty: no source configured)."""
    index = str(_value(INDEX_URL) or "").strip()
    extra = tuple(str(u) for u in _value(EXTRA_INDEX_URLS) or () if str(u).strip())
    links = tuple(str(d) for d in _value(FIND_LINKS) or () if str(d).strip())
    return SourceSpec(find_links=links, index_url=index or None, extra_index_urls=extra)
