"""Which variant metadata documents uv can read: its parser's shape, checked against the real uv.

uv (0.13.9, ``--preview-features wheel-variants``) parses a ``*-variants.json`` and a wheel's
``variant.json`` strictly, whatever their ``$schema`` says, and refuses the whole release when
one does not fit ("Unknown variant metadata schema", "unknown field `feature`", "data did not
match any variant of untagged enum ProviderKind"). The real v0.0.3 files of the published index
(torch 2.9.0, torchvision 0.24.0, cupy, cudf) do not fit: they carry PEP 817's
``default-priorities.feature``/``property`` and the providers' ``enable-if`` and
``install-time``. :func:`uv_refuses` says why in one line, so ``run`` can say so before uv runs
(docs/uv.md). The shape, as uv 0.13.9 accepts it (``tests/conformance/test_uv_dialect.py``
compares this rule with the real uv on the corpus's files and on variations of them):

- the top level has ``$schema`` (a string) and ``default-priorities``, and may have
  ``providers`` and ``variants``; nothing else;
- ``default-priorities`` has ``namespace`` (a list of strings) and nothing else;
- the providers are exactly the namespaces of ``default-priorities.namespace`` (any order); each
  is either ``{"requires": [...], "plugin-api": "...", "optional": bool}`` (``plugin-api`` and
  ``optional`` may be left out) or ``{"static-properties": {feature: [values]}}``;
- every variant's namespaces are in ``default-priorities.namespace``, each feature a list of
  strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["UV_CHECKED", "uv_refuses"]

UV_CHECKED = "0.13.9"
"""The uv release whose parser this rule was checked against."""

_TOP = ("$schema", "default-priorities", "providers", "variants")
_PLUGIN = frozenset({"requires", "plugin-api", "optional"})


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _provider(namespace: str, provider: object) -> str | None:
    if not isinstance(provider, Mapping):
        return f"provider {namespace!r} is not an object"
    keys = set(provider)
    if keys == {"static-properties"}:
        table = provider["static-properties"]
        if isinstance(table, Mapping) and all(_strings(v) for v in table.values()):
            return None
        return f"provider {namespace!r}: static-properties is not {{feature: [values]}}"
    extra = sorted(keys - _PLUGIN)
    if extra:
        return f"provider {namespace!r} has {', '.join(repr(k) for k in extra)}"
    if not _strings(provider.get("requires")):
        return f"provider {namespace!r} has no 'requires' list"
    if not isinstance(provider.get("plugin-api", ""), str):
        return f"provider {namespace!r}: 'plugin-api' is not a string"
    if not isinstance(provider.get("optional", False), bool):
        return f"provider {namespace!r}: 'optional' is not true or false"
    return None


def _priorities(document: Mapping[str, Any]) -> list[str] | str:
    priorities = document.get("default-priorities")
    if not isinstance(priorities, Mapping):
        return "no 'default-priorities' object"
    extra = sorted(set(priorities) - {"namespace"})
    if extra:
        said = ", ".join(f"'default-priorities.{k}'" for k in extra)
        return f"{said} (uv reads 'default-priorities.namespace' only)"
    namespaces = priorities.get("namespace")
    if not _strings(namespaces):
        return "'default-priorities.namespace' is not a list of names"
    assert isinstance(namespaces, list)
    return namespaces


def _variants(document: Mapping[str, Any], namespaces: set[str]) -> str | None:
    variants = document.get("variants", {})
    if not isinstance(variants, Mapping):
        return "'variants' is not an object"
    for label, table in variants.items():
        if not isinstance(table, Mapping):
            return f"variant {label!r} is not an object"
        for namespace, features in table.items():
            if namespace not in namespaces:
                return (
                    f"variant {label!r} uses namespace {namespace!r}, which "
                    "'default-priorities.namespace' lacks"
                )
            if not isinstance(features, Mapping) or not all(_strings(v) for v in features.values()):
                return f"variant {label!r}: {namespace} is not {{feature: [values]}}"
    return None


def uv_refuses(document: object) -> str | None:
    """Why uv (:data:`UV_CHECKED`) cannot read the variant metadata *document* (a parsed
    ``*-variants.json`` or ``variant.json``), in one line; ``None`` when it can."""
    if not isinstance(document, Mapping):
        return "it is not a JSON object"
    extra = sorted(set(document) - set(_TOP))
    if extra:
        return f"it has {', '.join(repr(k) for k in extra)} (uv reads {', '.join(_TOP)} only)"
    if not isinstance(document.get("$schema"), str):
        return "it has no '$schema' string"
    namespaces = _priorities(document)
    if isinstance(namespaces, str):
        return namespaces
    providers = document.get("providers", {})
    if not isinstance(providers, Mapping):
        return "'providers' is not an object"
    if set(providers) != set(namespaces):
        return (
            f"its providers ({', '.join(sorted(providers)) or 'none'}) are not the namespaces of "
            f"'default-priorities.namespace' ({', '.join(namespaces)})"
        )
    for namespace, provider in providers.items():
        why = _provider(namespace, provider)
        if why is not None:
            return why
    return _variants(document, set(namespaces))
