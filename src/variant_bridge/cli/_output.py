"""Output shared by the commands: the ``--json`` option, JSON shapes and the text printers.

Results go to stdout (one JSON object with ``--json``); diagnostics go to stderr. The JSON shapes
are documented in docs/cli.md and are built here only, so ``detect`` and ``translate --from-conda``
print the same ``supported`` object.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from variant_bridge.environment import (
    Environment,
    PythonDistribution,
    SourceKind,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.translate.supported import SupportedFeature, SupportedProperties

if TYPE_CHECKING:
    from variant_bridge.export.model import PipRequirement
    from variant_bridge.health import Detail, Finding, Fix, HealthReport
    from variant_bridge.translate.evidence import InstalledToolkit, ToolkitEvidence

__all__ = [
    "echo_environment",
    "echo_findings",
    "echo_json",
    "echo_notes",
    "echo_supported",
    "environment_json",
    "evidence_json",
    "finding_json",
    "heading",
    "health_json",
    "json_option",
    "supported_json",
    "toolkit_json",
    "variant_wheels_json",
]

F = TypeVar("F", bound=Callable[..., Any])

_INDENT = "  "
_WIDTH = 100
# Text output shortens longer value lists (nvidia's upper bounds run to 78 values); --json has all.
_MAX_VALUES = 16
_HEAD_VALUES = 4


def json_option(function: F) -> F:
    """Add ``--json`` (stored as ``as_json``) to a command: one JSON object on stdout."""
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print one JSON object on stdout instead of text.",
    )(function)


def echo_json(data: object) -> None:
    """Print *data* as indented JSON (keys in insertion order, which is meaningful: priority)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def heading(text: str) -> None:
    click.echo(click.style(text, bold=True))


# -- JSON shapes -------------------------------------------------------------------------------


def _virtual_package_json(vp: VirtualPackage) -> dict[str, str]:
    return {"name": vp.name, "version": vp.version, "build": vp.build, "source": str(vp.source)}


def variant_wheels_json(pip: Iterable[PipRequirement]) -> list[dict[str, Any]]:
    """An export's variant wheels (its labelled pip requirements): where each pins, and the
    copy its file was written to."""
    return [
        {
            "name": p.name,
            "version": p.version,
            "label": p.label,
            "url": p.url,
            "sha256": p.sha256,
            "copy": p.copy,
        }
        for p in pip
        if p.label is not None
    ]


def toolkit_json(toolkit: Toolkit | None) -> dict[str, str] | None:
    """A toolkit or runtime package (``cuda-version``, ``rocm-core``) with its source."""
    if toolkit is None:
        return None
    return {"package": toolkit.package, "version": toolkit.version, "source": str(toolkit.source)}


def supported_json(supported: SupportedProperties) -> dict[str, Any]:
    """``supported`` (priority order), plus where each feature came from and what is unsupported."""
    sources: dict[str, dict[str, str]] = {}
    for f in supported.features:
        sources.setdefault(f.namespace, {})[f.feature] = f.source
    return {
        "supported": supported.as_dict(),
        "sources": sources,
        "unsupported": [
            {"namespace": ns, "reason": reason} for ns, reason in supported.unsupported
        ],
    }


def evidence_json(found: ToolkitEvidence) -> dict[str, Any]:
    """A variant's CUDA toolkit evidence (``select`` candidates, ``detect`` variant wheels)."""
    return {
        "cuda": str(found.toolkit) if found.toolkit is not None else None,
        "known": found.known,
        "evidence": [
            {
                "kind": e.kind.value,
                "cuda": str(e.cuda),
                "text": e.text,
                "pypi": e.pypi,
                "version": e.version,
                "conda": e.conda,
                "rule": e.rule,
            }
            for e in found.evidence
        ],
    }


def _installed_toolkits(
    env: Environment, supported: SupportedProperties
) -> dict[str, InstalledToolkit]:
    """The toolkit evidence of each installed or locked variant wheel whose properties are known."""
    variants = [d for d in env.python_packages if d.variant is not None and not d.variant.is_null]
    if not variants:
        return {}  # nothing to read: the evidence machinery (markers, packaging) stays unloaded
    from variant_bridge.translate.evidence import installed_toolkit

    found: dict[str, InstalledToolkit] = {}
    for dist in variants:
        toolkit = installed_toolkit(dist, env, supported)
        if toolkit is not None:
            found[dist.name] = toolkit
    return found


def _installed_json(dist: PythonDistribution, toolkit: InstalledToolkit | None) -> dict[str, Any]:
    return {
        "name": dist.name,
        "version": dist.version,
        "label": dist.variant_label,
        # null: a locked wheel on an index, whose variant.json detection does not fetch
        "properties": (None if dist.variant is None else [str(p) for p in dist.variant.properties]),
        "location": dist.location,
        # The CUDA toolkit its own Requires-Dist say it was built against; `refused`: why the
        # toolkit policy would not choose it for this environment. null: nothing to read.
        "toolkit": (
            None
            if toolkit is None
            else {
                **evidence_json(toolkit.evidence),
                "summary": toolkit.evidence.summary(),
                "refused": toolkit.refused,
                "problems": list(toolkit.problems),
            }
        ),
    }


def environment_json(
    env: Environment, supported: SupportedProperties, health: HealthReport | None = None
) -> dict[str, Any]:
    """The ``detect --json`` object (*health*: what ``doctor`` finds there, if examined)."""
    toolkits = _installed_toolkits(env, supported)
    return {
        "origin": env.origin,
        "platform": env.platform,
        "platform_source": str(env.platform_source),
        "python": env.python,
        "python_source": None if env.python_source is None else str(env.python_source),
        "policy": supported.policy,
        "virtual_packages": [_virtual_package_json(vp) for vp in env.virtual_packages],
        "toolkit": toolkit_json(env.toolkit),
        # The ROCm runtime (amd :: rocm_version), each GPU when several are known, and the
        # features no conda package describes (Intel's device_ip), each with its source.
        "rocm": toolkit_json(env.rocm),
        "gpus": [_virtual_package_json(vp) for vp in env.gpus],
        "declared_features": [
            {
                "namespace": d.namespace,
                "feature": d.feature,
                "values": list(d.values),
                "source": str(d.source),
            }
            for d in env.declared_features
        ],
        **supported_json(supported),
        "variant_wheels": [
            _installed_json(dist, toolkits.get(dist.name))
            for dist in env.python_packages
            if dist.variant_label is not None
        ],
        # Variant wheels installed as conda packages (variant-bridge convert).
        "conda_variants": [_installed_json(dist, None) for dist in env.conda_variants],
        "notes": [*env.notes, *supported.notes],
        "health": health_json(health),
    }


def _fix_json(fix: Fix) -> dict[str, Any]:
    return {
        "kind": fix.kind.value,
        "packages": list(fix.packages),
        "command": fix.command,
        "argv": list(fix.argv),
        "complete": fix.complete,
        "note": fix.note,
    }


def _detail_json(detail: Detail) -> dict[str, Any]:
    from variant_bridge.health import Disagreement, LibraryCopies  # only with findings

    if isinstance(detail, LibraryCopies):
        return {
            "pypi": detail.pypi,
            "pypi_version": detail.pypi_version,
            "conda": detail.conda,
            "conda_version": detail.conda_version,
            "basis": detail.basis.value,
            "pypi_said": detail.pypi_said,
            "conda_said": detail.conda_said,
            "required_by": list(detail.required_by),
        }
    if isinstance(detail, Disagreement):
        return {
            "name": detail.name,
            "version": detail.version,
            "label": detail.label,
            "reasons": [{"kind": r.kind.value, "text": r.text} for r in detail.reasons],
            "runs_here": detail.runs_here,
            "toolkit_only": detail.toolkit_only,
            "toolkit": detail.toolkit,
            "origin": detail.origin,
            "sha256": detail.sha256,
        }
    return {"name": detail.name, "version": detail.version, "installer": detail.installer}


def finding_json(finding: Finding) -> dict[str, Any]:
    """One health finding (``doctor --json``, ``detect --json``'s ``health``; docs/cli.md)."""
    return {
        "id": finding.id,
        "kind": finding.kind.value,
        "severity": finding.severity.value,
        "subject": finding.subject,
        "message": finding.message,
        "fixes": [_fix_json(f) for f in finding.fixes],
        "details": _detail_json(finding.detail),
    }


def health_json(report: HealthReport | None) -> dict[str, Any]:
    """An environment's health; ``None``: nothing was examined (no PyPI side)."""
    if report is None:
        return {"healthy": True, "worst": None, "checked": 0, "findings": [], "problems": []}
    worst = report.worst
    return {
        "healthy": report.healthy,
        "worst": worst.value if worst is not None else None,
        "checked": report.checked,
        "findings": [finding_json(f) for f in report.findings],
        "problems": list(report.problems),
    }


# -- text --------------------------------------------------------------------------------------


def _rows(rows: Iterable[Sequence[str]], *, indent: str = _INDENT) -> None:
    """Print left-aligned columns separated by two spaces."""
    table = [tuple(row) for row in rows]
    if not table:
        return
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    for row in table:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        click.echo(indent + "  ".join([*cells, row[-1]]).rstrip())


def _wrap(text: str, *, indent: str) -> str:
    import textwrap  # lazy: --json never wraps

    return textwrap.fill(
        text,
        width=_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
    )


def _grouped(
    features: Sequence[SupportedFeature],
) -> list[tuple[str, str, tuple[str, ...], str]]:
    """``(namespace, feature-text, values, source)`` lines; boolean flags of one namespace and
    source (``x86_64 :: avx2 :: on`` ...) share one line, or ``detect`` would print dozens."""
    lines: list[tuple[str, str, tuple[str, ...], str]] = []
    flags: dict[tuple[str, str], list[str]] = {}
    for f in features:
        if f.values == ("on",):
            key = (f.namespace, f.source)
            if key not in flags:
                flags[key] = []
                lines.append((f.namespace, "", ("on",), f.source))
            flags[key].append(f.feature)
        else:
            lines.append((f.namespace, f.feature, f.values, f.source))
    result = []
    for namespace, feature, values, source in lines:
        names = flags.get((namespace, source), []) if not feature else [feature]
        text = names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"
        result.append((namespace, text, values, source))
    return result


def _values_text(values: Sequence[str]) -> str:
    if len(values) <= _MAX_VALUES:
        return ", ".join(values)
    shown = [*values[:_HEAD_VALUES], "…", *values[-2:]]
    return f"{', '.join(shown)} ({len(values)} values)"


def echo_supported(supported: SupportedProperties) -> None:
    """The supported properties per namespace (most preferred first), each with its source."""
    heading(f"Supported variant properties (most preferred first; CUDA policy: {supported.policy})")
    if not supported.features:
        click.echo(f"{_INDENT}(none)")
    for namespace, feature, values, source in _grouped(supported.features):
        click.echo(_wrap(f"{namespace} :: {feature} :: {_values_text(values)}", indent=_INDENT))
        if source:
            click.echo(_wrap(f"from {source}", indent=_INDENT * 3))
    if supported.unsupported:
        click.echo()
        heading("Unsupported namespaces (only null or non-variant wheels match)")
        for namespace, reason in supported.unsupported:
            click.echo(_wrap(f"{namespace}: {reason}", indent=_INDENT))


def echo_notes(notes: Sequence[str]) -> None:
    if notes:
        click.echo()
        heading("Notes")
        for note in notes:
            click.echo(_wrap(f"- {note}", indent=_INDENT))


def _echo_devices(env: Environment) -> None:
    """The ROCm runtime, each GPU when several are known, and features with no conda
    counterpart; nothing when there is none of them."""
    rows = []
    if env.rocm is not None:
        rows.append(("ROCm runtime", str(env.rocm), str(env.rocm.source)))
    rows += [("GPU", str(vp), str(vp.source)) for vp in env.gpus]
    rows += [("no conda counterpart", str(d), str(d.source)) for d in env.declared_features]
    if rows:
        heading("GPUs and runtimes beyond the virtual packages")
        _rows(rows)
        click.echo()


_TOOLKIT_ORIGINS = {
    SourceKind.REQUESTED: "requested with --cuda: nothing here solved one",
    SourceKind.TARGET: "declared with --target",
    SourceKind.FROM_CONDA: "declared in the conda specs",
}


def _toolkit_origin(env: Environment) -> str:
    """Where the toolkit heading's toolkit came from: solved (a prefix's or lock's
    cuda-version), or requested or declared instead."""
    if env.toolkit is None:
        return "the solved cuda-version"
    return _TOOLKIT_ORIGINS.get(env.toolkit.source.kind, "the solved cuda-version")


def echo_environment(
    env: Environment,
    supported: SupportedProperties,
    *,
    title: str | None = None,
    locked: bool = False,
    notes: Sequence[str] = (),
    health: HealthReport | None = None,
) -> None:
    """The human ``detect`` report (also ``translate --from-conda``'s).

    :param locked: *env* is a lock file's (its wheels are locked, not installed).
    :param notes: the command's own notes, shown first.
    :param health: what ``doctor`` finds there (a prefix or lock), shown before the notes.
    """
    # detect names where the platform and Python came from; given specs (a title) are declared.
    facts = [env.platform if title else f"{env.platform} ({env.platform_source})"]
    if env.python:
        facts.append(f"Python {env.python}" + ("" if title else f" ({env.python_source})"))
    heading(f"{title or 'Environment: ' + env.origin} ({', '.join(facts)})")
    click.echo()
    heading("Virtual packages")
    if env.virtual_packages:
        _rows((str(vp), str(vp.source)) for vp in env.virtual_packages)
    else:
        click.echo(f"{_INDENT}(none)")
    click.echo()
    heading(f"CUDA toolkit ({_toolkit_origin(env)})")
    if env.toolkit is not None:
        _rows([(str(env.toolkit), str(env.toolkit.source))])
    else:
        click.echo(f"{_INDENT}(none solved in this environment)")
    click.echo()
    _echo_devices(env)
    echo_supported(supported)
    wheels = [dist for dist in env.python_packages if dist.variant_label is not None]
    toolkits = _installed_toolkits(env, supported) if wheels else {}
    if wheels:
        click.echo()
        heading("Locked variant wheels" if locked else "Installed variant wheels")
        for dist in wheels:
            if dist.variant is None:
                props = "(properties unknown: not downloaded)"
            else:
                props = "; ".join(str(p) for p in dist.variant.properties) or "(null variant)"
            click.echo(_wrap(f"{dist} {props}", indent=_INDENT))
            toolkit = toolkits.get(dist.name)
            if toolkit is not None and toolkit.evidence.evidence:
                click.echo(_wrap(toolkit.evidence.summary(), indent=_INDENT * 3))
    if env.conda_variants:
        click.echo()
        heading("Variant wheels installed as conda packages")
        for dist in env.conda_variants:
            props = "; ".join(str(p) for p in dist.variant.properties) if dist.variant else ""
            click.echo(_wrap(f"{dist} {props or '(null variant)'}", indent=_INDENT))
    if health is not None:
        click.echo()
        heading("Health (variant-bridge doctor)")
        if health.findings:
            echo_findings(health, indent=_INDENT)
        else:
            click.echo(f"{_INDENT}no problems found ({health.checked} PyPI distributions checked)")
    echo_notes([*notes, *env.notes, *supported.notes])


def echo_findings(report: HealthReport, *, indent: str = "") -> None:
    """One line per finding (``severity: message``), then its fixes (``fix:``, alternatives
    ``or:``); a fix the previous finding already printed is not repeated (one command removes
    every orphan)."""
    previous: tuple[Fix, ...] = ()
    for finding in report.findings:
        click.echo(f"{indent}{finding.severity.value}: {finding.message}")
        if finding.fixes == previous:
            continue
        previous = finding.fixes
        for i, fix in enumerate(finding.fixes):
            click.echo(f"{indent}    {'fix:' if i == 0 else 'or: '} {fix}")
