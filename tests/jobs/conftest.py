"""The ``select`` job driven from text, as the test modules of the use cases call it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence

from variant_bridge.environment import CudaPolicy, Environment
from variant_bridge.indexes import Downloads, open_sources
from variant_bridge.indexes.transport import Transport
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.select import PackageChoice, parse_requests, select
from variant_bridge.jobs.target import Target
from variant_bridge.platform_tags import TargetPython
from variant_bridge.translate import supported_properties


def context(
    *,
    env: Environment,
    python: TargetPython,
    downloads: Downloads,
    find_links: Sequence[str | os.PathLike[str]] = (),
    index_urls: Sequence[str] = (),
    policy: CudaPolicy | None = None,
) -> Context:
    """A context made of parts (the environment given, not detected)."""
    target = Target(env, python, supported_properties(env, policy=policy))
    return Context(Sources(open_sources(find_links, index_urls)), downloads, target)


def choose(
    requests: Sequence[str],
    *,
    env: Environment,
    python: TargetPython,
    find_links: Sequence[str | os.PathLike[str]] = (),
    index_urls: Sequence[str] = (),
    policy: CudaPolicy | None = None,
    downloads: Downloads | None = None,
    deps: bool = True,
    allow_mix: bool = False,
) -> tuple[PackageChoice, ...]:
    """:func:`select` over text inputs; with *downloads*, chosen remote wheels are fetched there."""
    with contextlib.ExitStack() as stack:
        fetch_chosen = downloads is not None
        if downloads is None:
            downloads = stack.enter_context(Downloads.temporary(transport=Transport()))
        ctx = context(
            env=env, python=python, downloads=downloads, find_links=find_links,
            index_urls=index_urls, policy=policy,
        )  # fmt: skip
        return select(
            parse_requests(requests), ctx, fetch_chosen=fetch_chosen, deps=deps,
            allow_mix=allow_mix,
        )  # fmt: skip
