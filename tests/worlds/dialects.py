"""The real index's variant metadata re-written for tools that cannot read it as published.

uv 0.13.9 and variantlib 0.2.2 read only one of the 192 real ``*-variants.json`` files as they
are (v0.0.2 xgboost): uv refuses ``default-priorities.feature`` / ``property`` and ``enable-if``,
variantlib refuses them too, and uv skips the NVIDIA provider unless it is declared as
``nvidia-variant-provider>=0.0.1,<1.0.0``. To compare choices on every file, the same variants,
namespace order and static values are written in the dialect each reads:

- :func:`uv_readable_document`: PEP 850 (``peps/850/v0.2.0``); static namespaces (``install-time:
  false``, ``plugin-use: none|build``) as ``static-properties``; nvidia, x86_64 and aarch64 as the
  providers uv builds in; any other namespace (``amd``, ``intel``) as a provider uv does not
  have, so its variants are unsupported there as they are here.
- :func:`variantlib_document`: variantlib's ``v0.2.0``; the plugins are variant-bridge's own
  (loaded by variantlib's entry-point loader), the rest ``optional`` (not enabled).

Labels and properties are copied as they are. The documents are plain dicts written here, not
by the code under test.
"""

from __future__ import annotations

from typing import Any

from tests.worlds.wheels import NVIDIA_PROVIDER, SCHEMAS, default_provider

__all__ = ["static_values", "uv_readable_document", "variantlib_document"]

VARIANTLIB_SCHEMA = "https://variants-schema.wheelnext.dev/v0.2.0.json"
_BRIDGED = ("nvidia", "x86_64", "aarch64")


def static_values(document: dict[str, Any], namespace: str) -> dict[str, list[str]] | None:
    """The static values of *namespace* when its provider is not an install-time plugin."""
    provider = document["providers"][namespace]
    install_time = provider.get("install-time")
    if install_time is None:
        install_time = provider.get("plugin-use", "all") == "all"
    if install_time:
        return None
    static = (document.get("static-properties") or {}).get(namespace)
    values: dict[str, list[str]] = static or document["default-priorities"]["property"][namespace]
    return values


def uv_readable_document(document: dict[str, Any]) -> dict[str, Any]:
    providers: dict[str, Any] = {}
    for namespace in document["providers"]:
        static = static_values(document, namespace)
        if static is not None:
            providers[namespace] = {"static-properties": static}
        elif namespace == "nvidia":
            providers[namespace] = dict(NVIDIA_PROVIDER)
        else:
            providers[namespace] = default_provider(namespace)
    return {
        "$schema": SCHEMAS["pep850"],
        "default-priorities": {"namespace": document["default-priorities"]["namespace"]},
        "providers": providers,
        "variants": document["variants"],
    }


def variantlib_document(document: dict[str, Any], plugin_apis: dict[str, str]) -> dict[str, Any]:
    providers: dict[str, Any] = {}
    for namespace in document["providers"]:
        static = static_values(document, namespace)
        if static is not None:
            providers[namespace] = {"static-properties": static}
        elif namespace in _BRIDGED:
            providers[namespace] = {
                "requires": ["variant-bridge"],
                "plugin-api": plugin_apis[namespace],
            }
        else:
            providers[namespace] = {"requires": [f"{namespace}-variant-provider"], "optional": True}
    return {
        "$schema": VARIANTLIB_SCHEMA,
        "default-priorities": {"namespace": document["default-priorities"]["namespace"]},
        "providers": providers,
        "variants": document["variants"],
    }
