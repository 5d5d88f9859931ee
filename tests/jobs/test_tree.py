"""The dependency tree: variant packages reached through dependencies, constraints, conflicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jobs.conftest import choose
from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.environment import (
    Environment,
    PythonDistribution,
    Source,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.errors import SelectionError
from variant_bridge.indexes import Downloads, open_sources
from variant_bridge.indexes.transport import Transport
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.select import PackageChoice, parse_requests, select
from variant_bridge.jobs.target import Target
from variant_bridge.platform_tags import TargetPython
from variant_bridge.properties import VariantDescription
from variant_bridge.translate import supported_properties

PY = TargetPython.parse("3.12.7")
LOWER = "nvidia :: cuda_version_lower_bound :: {}"
CUDA = {"cu129": [LOWER.format("12.9")], "cu126": [LOWER.format("12.6")]}


def _env(driver: str | None, toolkit: str | None = None) -> Environment:
    vps = [VirtualPackage("__glibc", "2.36"), VirtualPackage("__unix", "0")]
    if driver:
        vps.append(VirtualPackage("__cuda", driver, source=Source.override("CONDA_OVERRIDE_CUDA")))
    tk = Toolkit("cuda-version", toolkit, Source.PREFIX) if toolkit else None
    return Environment("linux-64", tuple(vps), tk, python="3.12.7")


def _by_name(choices: tuple[PackageChoice, ...]) -> dict[str, PackageChoice]:
    return {c.files.project: c for c in choices}


def _label(choice: PackageChoice) -> str | None:
    assert choice.selected is not None, choice.failure()
    return choice.selected.label


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """torch-shaped: the app's variants pin their own build of a variant library."""
    root = tmp_path_factory.mktemp("tree")
    make_release(
        root, "app", "1.0", {**CUDA, "null": []},
        requires=[
            "gpulib==2.0; variant_label == 'cu126'",
            "gpulib==2.1; variant_label == 'cu129'",
            "helper[fast]>=1",
            "winonly; sys_platform == 'win32'",
        ],
    )  # fmt: skip
    make_release(root, "gpulib", "2.0", CUDA)  # a dependency published as variants
    make_release(root, "gpulib", "2.1", CUDA)
    make_wheel(root, "helper", "1.2", requires=["speedup; extra == 'fast'", "colour>=0.1"])
    make_wheel(root, "speedup", "0.3")
    make_wheel(root, "colour", "0.1.5")
    return root


@pytest.mark.parametrize(
    ("env", "app", "gpulib"),
    [
        (_env("12.9", "12.6"), "cu126", ("2.0", "cu126")),  # the toolkit decides both
        (_env("12.9"), "cu129", ("2.1", "cu129")),  # the driver decides both
    ],
)
def test_a_variant_dependency_is_chosen_by_the_same_rules(
    world: Path, env: Environment, app: str, gpulib: tuple[str, str]
) -> None:
    tree = _by_name(choose(["app"], env=env, python=PY, find_links=[world]))
    assert _label(tree["app"]) == app
    dep = tree["gpulib"]  # pinned by the chosen variant's own Requires-Dist (variant marker)
    assert (dep.files.version, _label(dep)) == gpulib
    assert dep.requested is False
    assert [str(r) for r in dep.required_by] == [
        f"app 1.0 requires gpulib=={gpulib[0]}; variant_label == '{app}'"
    ]
    # Its verdicts are the bridged ones, with a reason per file, as for a requested package.
    (rejected,) = [v for v in dep.selection.verdicts if not v.compatible] or [None]
    if env.toolkit is not None:
        assert rejected is not None
        assert "cuda_version_lower_bound 12.9" in rejected.reason


def test_the_tree_order_extras_and_target_markers(world: Path) -> None:
    choices = choose(["app"], env=_env("12.9"), python=PY, find_links=[world])
    assert [c.files.project for c in choices] == ["app", "gpulib", "helper", "speedup", "colour"]
    tree = _by_name(choices)
    assert tree["helper"].extras == ("fast",)
    assert "winonly" not in tree  # sys_platform == 'win32' is false for a linux-64 target
    assert [r.package for r in tree["speedup"].required_by] == ["helper 1.2"]


def test_without_deps_only_the_requested_packages(world: Path) -> None:
    sources = open_sources([world])
    target = Target(_env("12.9"), PY, supported_properties(_env("12.9")))
    with Downloads.temporary(transport=Transport()) as downloads:
        choices = select(
            parse_requests(["app"]), Context(Sources(sources), downloads, target), deps=False
        )
    assert [c.files.project for c in choices] == ["app"]


def test_versions_constrained_by_several_dependents(tmp_path: Path) -> None:
    make_wheel(tmp_path, "left", "1.0", requires=["shared>=1,<3"])
    make_wheel(tmp_path, "right", "1.0", requires=["shared>=2"])
    for version in ("1.0", "2.0", "2.5", "3.0"):
        make_wheel(tmp_path, "shared", version)
    tree = _by_name(choose(["left", "right"], env=_env(None), python=PY, find_links=[tmp_path]))
    assert tree["shared"].files.version == "2.5"  # the highest both allow, not 3.0
    assert sorted(str(r) for r in tree["shared"].required_by) == [
        "left 1.0 requires shared>=1,<3",
        "right 1.0 requires shared>=2",
    ]


def test_backtracking_to_an_older_version_that_fits(tmp_path: Path) -> None:
    make_wheel(tmp_path, "top", "2.0", requires=["base>=3"])
    make_wheel(tmp_path, "top", "1.0", requires=["base>=1"])
    make_wheel(tmp_path, "pin", "1.0", requires=["base<3"])
    make_wheel(tmp_path, "base", "2.0")
    make_wheel(tmp_path, "base", "3.0")
    tree = _by_name(choose(["top", "pin"], env=_env(None), python=PY, find_links=[tmp_path]))
    assert (tree["top"].files.version, tree["base"].files.version) == ("1.0", "2.0")


def test_a_conflict_names_every_requirement_and_who_stated_it(tmp_path: Path) -> None:
    make_wheel(tmp_path, "left", "1.0", requires=["shared>=3"])
    make_wheel(tmp_path, "right", "1.0", requires=["shared<2"])
    make_wheel(tmp_path, "shared", "1.0")
    make_wheel(tmp_path, "shared", "3.0")
    with pytest.raises(SelectionError) as caught:
        choose(["left", "right"], env=_env(None), python=PY, find_links=[tmp_path])
    message = str(caught.value)
    assert message.startswith("cannot resolve the dependency tree: ")
    assert "shared>=3 (required by left 1.0)" in message
    assert "shared<2 (required by right 1.0)" in message
    assert "(available: 1.0, 3.0)" in message
    assert "\n" not in message


def test_a_missing_dependency_names_its_dependent(tmp_path: Path) -> None:
    make_wheel(tmp_path, "needy", "1.0", requires=["nosuchdep>=1"])
    with pytest.raises(
        SelectionError, match=r"no files for 'nosuchdep' in .* \(required by needy 1\.0\)$"
    ):
        choose(["needy"], env=_env(None), python=PY, find_links=[tmp_path])


def test_a_direct_url_dependency_is_refused_by_name(tmp_path: Path) -> None:
    make_wheel(tmp_path, "urly", "1.0", requires=["other @ https://example.org/other-1.0.whl"])
    with pytest.raises(SelectionError, match=r"urly 1\.0 requires other @ https://.*: direct URL"):
        choose(["urly"], env=_env(None), python=PY, find_links=[tmp_path])


def test_a_dependency_without_a_compatible_variant_is_reported_not_swapped(tmp_path: Path) -> None:
    # Variants never change the version: the dependency's only version has no wheel for a
    # machine without CUDA, and that is what the tree says (install then refuses).
    make_wheel(tmp_path, "app", "1.0", requires=["gpuonly"])
    make_release(tmp_path, "gpuonly", "1.0", {"cu129": [LOWER.format("12.9")]}, non_variant=False)
    tree = _by_name(choose(["app"], env=_env(None), python=PY, find_links=[tmp_path]))
    assert tree["gpuonly"].failed
    assert "no __cuda" in tree["gpuonly"].failure()


def _installed(name: str, version: str, label: str | None = None) -> PythonDistribution:
    variant = VariantDescription.of([], label) if label == "null" else None
    return PythonDistribution(name, version, variant, unknown_variant_label=label)


def test_an_installed_dependency_that_satisfies_is_kept(world: Path) -> None:
    sources = open_sources([world])
    env = _env("12.9")
    target = Target(env, PY, supported_properties(env))
    installed = [
        _installed("colour", "0.1.0"),  # satisfies colour>=0.1: kept, as uv keeps it
        _installed("gpulib", "2.1", "cu126"),  # a variant: its build is chosen again
        _installed("app", "0.9"),  # requested: always chosen from the sources
    ]
    with Downloads.temporary(transport=Transport()) as downloads:
        tree = _by_name(
            select(
                parse_requests(["app"]),
                Context(Sources(sources), downloads, target),
                installed=installed,
            )
        )
    assert tree["colour"].installed is not None
    assert (tree["colour"].selected, tree["colour"].failed) == (None, False)
    assert (tree["gpulib"].files.version, _label(tree["gpulib"])) == ("2.1", "cu129")
    assert tree["app"].files.version == "1.0"


def test_the_loopback_index_gives_the_same_tree(world: Path) -> None:
    local = choose(["app"], env=_env("12.9"), python=PY, find_links=[world])
    with IndexServer(world) as index:
        remote = choose(["app"], env=_env("12.9"), python=PY, index_urls=[index.url])
    assert [(c.files.project, c.files.version, c.selected and c.selected.name) for c in local] == [
        (c.files.project, c.files.version, c.selected and c.selected.name) for c in remote
    ]
