"""``variant-bridge select`` and ``install``: the variant wheel that agrees with the environment."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from variant_bridge.cli._environment import EnvironmentOptions, environment_options
from variant_bridge.cli._output import echo_json, heading, json_option

if TYPE_CHECKING:
    from variant_bridge.environment import Environment
    from variant_bridge.jobs.select import PackageChoice
    from variant_bridge.platform_tags import TargetPython

__all__ = ["install", "select"]

F = TypeVar("F", bound=Callable[..., Any])


def _source_options(function: F) -> F:
    function = click.option(
        "--python",
        "python",
        metavar="PY",
        help="The target interpreter: a path or a version like 3.12. Default: the prefix's "
        "python if it has one, else the running one.",
    )(function)
    function = click.option(
        "--extra-index-url",
        "extra_index_urls",
        multiple=True,
        metavar="URL",
        help="More simple indexes (repeatable).",
    )(function)
    function = click.option(
        "--index-url",
        "index_url",
        metavar="URL",
        help="A PEP 503 / PEP 691 simple index, e.g. https://example.org/simple/.",
    )(function)
    return click.option(
        "--find-links",
        "-f",
        "find_links",
        multiple=True,
        metavar="DIR",
        help="A directory (or page) of wheels and *-variants.json files (repeatable).",
    )(function)


def _choose(
    packages: Sequence[str],
    env_options: EnvironmentOptions,
    *,
    find_links: Sequence[str],
    index_url: str | None,
    extra_index_urls: Sequence[str],
    python: str | None,
    download_to: Path | None = None,
) -> tuple[Environment, TargetPython, tuple[PackageChoice, ...], tuple[str, ...]]:
    from variant_bridge.detect.interpreter import resolve_target_python
    from variant_bridge.indexes.urls import check_url
    from variant_bridge.jobs.select import choose

    if not find_links and index_url is None and not extra_index_urls:
        raise click.UsageError("Give at least one --find-links DIR or --index-url URL.")
    if python is not None and any(
        t.partition("=")[0].strip() == "python" for t in env_options.targets
    ):
        raise click.UsageError(
            "Give the target Python once: --python or --target python=, not both."
        )
    # Named by the option that carried them, before anything is detected or fetched.
    if index_url is not None:
        check_url(index_url, option="--index-url")
    for url in extra_index_urls:
        check_url(url, option="--extra-index-url")
    env = env_options.detect()
    target = resolve_target_python(python, env, prefix=env.prefix)
    index_urls = tuple(u for u in (index_url, *extra_index_urls) if u)
    choices = choose(
        packages,
        env=env,
        python=target,
        find_links=find_links,
        index_urls=index_urls,
        policy=env_options.cuda_policy,
        download_to=download_to,
    )
    return env, target, choices, index_urls


def _echo_choice(choice: PackageChoice) -> None:
    chosen = choice.chosen
    title = f"{choice.files.project} {choice.files.version}"
    heading(f"{title}: {chosen.filename if chosen else 'no compatible wheel'}")
    for verdict in choice.selection.verdicts:
        mark = f"#{verdict.rank}" if verdict.rank is not None else " x"
        click.echo(f"  {mark:>3}  {verdict.filename}")
        click.echo(f"        {verdict.reason}")
    for name, why in choice.files.skipped:
        click.echo(f"    -  {name}")
        click.echo(f"        skipped: {why}")
    if choice.selected is not None and choice.requirements is None:
        click.echo(
            "  note: its requirements were not checked against the prefix's CUDA libraries "
            "(the index has no PEP 658 metadata; `install` checks after downloading)"
        )


def _summary(env: Environment, target: TargetPython, policy: str) -> str:
    cuda = env.cuda
    arch = env.cuda_arch
    toolkit = env.toolkit
    parts = [
        f"__cuda={cuda.version} ({cuda.source})" if cuda else "no __cuda",
        f"__cuda_arch={arch.version} ({arch.source})" if arch else "no __cuda_arch",
        f"{toolkit} ({toolkit.source})" if toolkit else "no cuda-version",
        f"CUDA policy {policy}",
    ]
    return f"Environment: {env.origin} ({env.platform}); {', '.join(parts)}\nTarget: {target}"


def _warn_duplicates(choices: Sequence[PackageChoice]) -> None:
    sys.stdout.flush()  # keep the report and the warnings in order when both go to one pipe
    for choice in choices:
        for duplicate in choice.duplicates:
            click.echo(f"warning: {duplicate.message}", err=True)


@click.command(short_help="Choose the variant wheel that agrees with the environment.")
@click.argument("packages", nargs=-1, required=True, metavar="PKG[==VER]...")
@_source_options
@environment_options()
@json_option
def select(
    *,
    packages: tuple[str, ...],
    find_links: tuple[str, ...],
    index_url: str | None,
    extra_index_urls: tuple[str, ...],
    python: str | None,
    env_options: EnvironmentOptions,
    as_json: bool,
) -> None:
    """Choose, for each package, the wheel consistent with the environment's conda view
    (__cuda, __cuda_arch, __archspec, __glibc and the solved cuda-version), and say why for
    every file: PEP 825 ranking over the bridged supported properties, then the null variant,
    then the non-variant wheel. Exit status 1 when a package has no compatible wheel.

    \b
    Examples:
      variant-bridge select torch --index-url https://download.pytorch.org/whl/variant/
      variant-bridge select mypkg==1.0 -f ./wheels --prefix "$CONDA_PREFIX" --json
      variant-bridge select mypkg -f ./wheels -t cuda=12.8 -t cuda_arch=9.0 --python 3.12
    """
    env, target, choices, _ = _choose(
        packages,
        env_options,
        find_links=find_links,
        index_url=index_url,
        extra_index_urls=extra_index_urls,
        python=python,
    )
    policy = env_options.cuda_policy or env.default_policy()
    if as_json:
        echo_json([c.to_json() for c in choices])
    else:
        click.echo(_summary(env, target, policy))
        for choice in choices:
            click.echo()
            _echo_choice(choice)
    _warn_duplicates(choices)
    failed = [c for c in choices if c.selected is None]
    if failed:
        from variant_bridge.cli import CliError

        names = ", ".join(f"{c.files.project} {c.files.version}" for c in failed)
        where = "under candidates in the JSON" if as_json else "above"
        raise CliError(f"no compatible wheel for {names} (each file's reason is listed {where})")


@click.command(short_help="Install the variant wheels select chooses, with uv or pip.")
@click.argument("packages", nargs=-1, required=True, metavar="PKG[==VER]...")
@_source_options
@environment_options()
@click.option(
    "--installer",
    type=click.Choice(["uv", "pip"]),
    help="Which installer runs. Default: uv when available, else pip.",
)
@click.option(
    "--dry-run", is_flag=True, help="Choose, download and hash-check, but install nothing."
)
@json_option
def install(
    *,
    packages: tuple[str, ...],
    find_links: tuple[str, ...],
    index_url: str | None,
    extra_index_urls: tuple[str, ...],
    python: str | None,
    env_options: EnvironmentOptions,
    installer: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Install exactly the wheels `select` chooses into the target interpreter (the prefix's
    python by default), each hash-checked against its index first: a mismatch installs nothing.
    The installer (uv or pip) resolves the remaining dependencies from the same indexes.
    Warns when a chosen wheel requires nvidia-* wheels whose libraries the conda prefix already
    has.

    \b
    Examples:
      variant-bridge install torch --index-url https://download.pytorch.org/whl/variant/
      variant-bridge install mypkg -f ./wheels --prefix "$CONDA_PREFIX" --installer pip
      variant-bridge install mypkg -f ./wheels --dry-run --json
    """
    # The chosen remote wheels are downloaded (hash-checked) once, into `downloads`: first to read
    # their requirements for the duplicate check, then to install them. click removes the
    # directory when the command ends, however it ends.
    ctx = click.get_current_context()
    downloads = Path(ctx.with_resource(tempfile.TemporaryDirectory(prefix="variant-bridge-")))
    from variant_bridge.install import install as run_install
    from variant_bridge.install import plan_install

    env, target, choices, index_urls = _choose(
        packages,
        env_options,
        find_links=find_links,
        index_url=index_url,
        extra_index_urls=extra_index_urls,
        python=python,
        download_to=downloads,
    )
    plan = plan_install(
        choices,
        python=target,
        installer=installer,  # type: ignore[arg-type]
        find_links=find_links,
        index_urls=index_urls,
        platform=env.platform,
    )
    policy = env_options.cuda_policy or env.default_policy()
    if not as_json:
        click.echo(_summary(env, target, policy))
        for choice in choices:
            chosen = choice.chosen
            assert chosen is not None  # plan_install refused otherwise
            click.echo(f"  {choice.files.project} {choice.files.version}: {chosen.filename}")
            click.echo(f"      {chosen.reason}")
    _warn_duplicates(choices)
    result = run_install(plan, dry_run=dry_run, cache_dir=downloads)
    if as_json:
        echo_json(
            {
                "installer": plan.installer,
                "python": target.executable,
                "dry_run": dry_run,
                "command": list(result.command),
                "packages": [
                    {**c.to_json(), "sha256_checked": sha}
                    for c, (_, sha) in zip(choices, result.hashes, strict=True)
                ],
            }
        )
    else:
        verb = "Would install" if dry_run else "Installed"
        names = ", ".join(c.name for c in plan.candidates)
        click.echo(f"{verb} with {plan.installer} into {target.executable}: {names}")
        if dry_run and result.output:
            click.echo(result.output, err=True)
    sys.stdout.flush()
