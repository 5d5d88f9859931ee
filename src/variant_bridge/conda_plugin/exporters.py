"""``conda export --format variant-...``: the bridge's environment.yml, pixi.toml and pylock.toml
of the prefix conda exports, built by the export job
(:func:`~variant_bridge.jobs.export.run_export`, so the content is ``variant-bridge export``'s).

Format names, aliases and default file names must be unique among every exporter conda has
(``environment-yaml``/``yaml``/``yml``/``env.yml``, ``environment-json``/``json``,
``explicit``, ``requirements``/``reqs``/``txt``, ``environment.yml``, ``requirements.txt``, ...)
and every plugin's (conda-lockfiles: ``conda-lock-v1``/``conda-lock``, ``rattler-lock-v6``/
``pixi``/``pixi-lock-v6``, ``pixi.lock``): a clash is a conda error. So every name here starts
with ``variant-``, and at hook time an alias or file name another installed exporter claims is
left out (a name, and the exporter is left out).

The environment conda passes gives the prefix and, where conda filled them, its virtual packages
(else conda's plugin manager's, :mod:`.facts`); conda's ``--file``, ``--from-history`` and
``--no-builds`` are read from its parsed arguments. With ``--file`` the variant wheels are copied
into ``variant-wheels/`` beside it, as ``variant-bridge export -o`` does; to stdout the files name
the variant wheels themselves. Sources: the plugin's settings (:mod:`.settings`) and each
wheel's recorded origin.
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from variant_bridge._values import value

if TYPE_CHECKING:
    from variant_bridge.export.formats import ExportFormat

__all__ = ["FORMATS", "Format", "exporters", "taken"]


@value
class Format:
    """One ``conda export`` format of the bridge."""

    name: str
    aliases: tuple[str, ...]
    default_filenames: tuple[str, ...]
    bridge: ExportFormat
    """The export job's format (``environment-yml``, ``pixi-toml``, ``pylock``)."""
    kind: str
    """conda's ``EnvironmentFormat``: ``environment`` or ``lockfile``."""
    description: str


FORMATS = (
    Format("variant-environment-yaml", ("variant-yaml", "variant-yml"),
           ("variant-environment.yml", "variant-environment.yaml"), "environment-yml",
           "environment", "environment.yml with the variant wheels pinned to their files "
           "(variant-bridge)"),
    Format("variant-pixi-toml", ("variant-pixi",), ("pixi.toml",), "pixi-toml", "environment",
           "pixi.toml manifest with the variant wheels pinned (variant-bridge)"),
    Format("variant-pylock", ("variant-pylock-toml",), ("pylock.toml", "pylock.*.toml"),
           "pylock", "lockfile", "PEP 751 pylock.toml of the PyPI packages, variant wheels "
           "pinned with their hashes (variant-bridge)"),
)  # fmt: skip


def taken(ours: str = "variant_bridge.conda_plugin") -> tuple[frozenset[str], tuple[str, ...]]:
    """The names and aliases, and the default file names, of every other registered exporter
    (conda's own and other plugins'); an exporter hook that fails is skipped (conda reports
    it)."""
    from conda.base.context import context

    names: set[str] = set()
    files: list[str] = []
    for impl in context.plugin_manager.hook.conda_environment_exporters.get_hookimpls():
        if impl.function.__module__.startswith(ours):
            continue
        try:
            for other in impl.function() or ():
                names.add(str(other.name))
                names.update(str(a) for a in getattr(other, "aliases", ()) or ())
                files += [str(f) for f in getattr(other, "default_filenames", ()) or ()]
        except Exception:  # another plugin's failure is conda's to report
            continue
    return frozenset(names), tuple(files)


def _clashes(filename: str, others: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(filename, o) or fnmatch.fnmatch(o, filename) for o in others)


def exporters() -> Iterator[Any]:
    """The hook's exporters, each without the aliases and file names others claim."""
    from variant_bridge.conda_plugin import _compat

    names, files = taken()
    for fmt in FORMATS:
        if fmt.name in names:
            continue
        extra: dict[str, Any] = {}
        kind = _compat.environment_format(fmt.kind)
        if kind is not None:
            extra["environment_format"] = kind
        made = _compat.exporter(
            name=fmt.name,
            aliases=tuple(a for a in fmt.aliases if a not in names),
            default_filenames=tuple(f for f in fmt.default_filenames if not _clashes(f, files)),
            export=_exporter(fmt),
            description=fmt.description,
            **extra,
        )
        if made is not None:
            yield made


def _exporter(fmt: Format) -> Callable[[Any], str]:
    def export(env: Any) -> str:
        from variant_bridge.conda_plugin.errors import conda_errors

        with conda_errors(f"conda export --format {fmt.name}"):
            return _export(fmt, env)

    export.__name__ = f"export_{fmt.bridge.replace('-', '_')}"
    return export


def _virtual_packages(env: Any) -> tuple[Any, ...]:
    from variant_bridge.conda_plugin.facts import conda_virtual_packages, supplied

    given = tuple(getattr(env, "virtual_packages", None) or ())
    return supplied(given) if given else conda_virtual_packages()


def _export(fmt: Format, env: Any) -> str:
    """The export of the prefix *env* describes, as ``variant-bridge export`` writes it."""
    from conda.base.context import context

    from variant_bridge._version import __version__
    from variant_bridge.conda_plugin.errors import CondaVariantError
    from variant_bridge.conda_plugin.settings import FIND_LINKS, INDEX_URL, sources
    from variant_bridge.errors import ExportError
    from variant_bridge.jobs.context import Context
    from variant_bridge.jobs.export import ExportOutput, ExportRequest, run_export
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec

    args = getattr(context, "_argparse_args", None)
    file = getattr(args, "file", None)
    if not env.prefix:
        raise CondaVariantError(f"--format {fmt.name} exports an installed prefix; none given")
    if env.platform != context.subdir:
        raise CondaVariantError(
            f"--format {fmt.name} describes the prefix as installed ({context.subdir}); it "
            f"cannot be extrapolated to {env.platform}: export without --platform"
        )
    if fmt.bridge == "pylock" and not file:
        raise CondaVariantError(
            f"--format {fmt.name} needs --file FILE: a pylock.toml names copies of the variant "
            "wheels, written into variant-wheels/ beside it"
        )
    output = ExportOutput(fmt.bridge, Path(file), force=True) if file else ExportOutput(fmt.bridge)
    request = ExportRequest(
        from_history=bool(getattr(args, "from_history", False)),
        pin="version" if getattr(args, "no_builds", False) else "exact",
        producer=f"conda export --format {fmt.name} (variant-bridge {__version__})",
    )
    spec = EnvironmentSpec(prefix=Path(env.prefix), virtual_packages=_virtual_packages(env))
    quiet = bool(getattr(context, "quiet", False))
    configured = sources()
    try:
        with Context.open(configured, spec, FetchSpec(quiet=quiet)) as ctx:
            result = run_export(request, output, ctx)
            notes = (*result.notes, *ctx.notes)
    except ExportError as e:
        if configured:
            raise
        # The job names the CLI's options; inside conda the sources are the plugin's settings.
        hint = (f"in conda, name them with `conda config --append plugins.{FIND_LINKS} DIR` "
                f"or `--set plugins.{INDEX_URL} URL`")  # fmt: skip
        raise ExportError(f"{e}; {hint}") from e
    if not quiet:
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    return result.text
