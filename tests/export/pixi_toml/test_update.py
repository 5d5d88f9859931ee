"""Updating a pixi manifest in place changes only the entries the export marked as its own."""

from __future__ import annotations

import itertools
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from tests.export.corpus import corpus_files, read_corpus_file
from tests.export.snapshots import NUMPY, TORCH_ORIGIN, TORCH_PTX, pixi_model
from variant_bridge.errors import ExportError
from variant_bridge.export.build import Pinning
from variant_bridge.export.model import IndexOptions
from variant_bridge.export.pixi_toml.render import MIN_PIXI, render
from variant_bridge.export.pixi_toml.update import apply, manifest_kind, update

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomlkit as tomllib  # tomlkit.loads returns a dict-like document


def loads(text: str) -> dict[str, Any]:
    return dict(tomllib.loads(text))


def assert_untouched(before: str, after: str) -> None:
    """Every line of *before* is in *after*, unchanged and in the same order, and every value
    *before* holds reads back the same."""
    lines = iter(after.splitlines())
    for line in before.splitlines():
        assert any(line == other for other in lines), f"line changed or moved: {line!r}"
    # tomlkit reads what pixi reads (TOML 1.1's multi-line inline tables, in real manifests)
    assert_values_kept(tomlkit.parse(before).unwrap(), tomlkit.parse(after).unwrap())
    # the export's tables stand apart: a blank line before each header it added
    known = set(before.splitlines())
    lines = after.splitlines()
    for previous, line in itertools.pairwise(lines):
        if line.startswith("[") and (line not in known or previous not in known):
            assert not previous.strip(), f"no blank line before {line!r}"


def assert_values_kept(before: Any, after: Any, where: str = "") -> None:
    if isinstance(before, dict):
        assert isinstance(after, dict), where
        for key, value in before.items():
            assert key in after, f"{where}{key} removed"
            assert_values_kept(value, after[key], f"{where}{key}.")
    else:
        assert after == before, where


@pytest.mark.parametrize(
    ("filename", "kind"),
    [
        ("pixi.toml", "pixi"),
        ("/work/proj/pyproject.toml", "pyproject"),
        ("other.toml", "pixi"),
    ],
)
def test_manifest_kind(filename: str, kind: str) -> None:
    assert manifest_kind(filename) == kind


# QA: `--update --from-history` moved `python` into [target.linux-64.dependencies] (osx-arm64
# lost it) and replaced the comment on cuda-version with the tool's.
MULTI_PLATFORM = """\
# My project: keep this comment
[workspace]
name = "mine"  # the name
channels = ["conda-forge"]
platforms = ["linux-64", "osx-arm64"]  # two platforms
version = "0.1.0"

[tasks]
train = "python train.py"  # training

[dependencies]
python = "3.12.*"  # our python, on every platform
cuda-version = ">=12"  # any 12
rich = "*"

[pypi-dependencies]
torch = "*"

[feature.docs.dependencies]
mkdocs = "*"

[environments]
docs = ["docs"]
"""


def test_a_multi_platform_manifest_keeps_every_line_of_the_user() -> None:
    result = apply(MULTI_PLATFORM, pixi_model(), kind="pixi", path="/proj/pixi.toml")
    after = result.text
    assert after.startswith(MULTI_PLATFORM)  # only new tables, after the user's
    assert_untouched(MULTI_PLATFORM, after)
    linux = loads(after)["target"]["linux-64"]
    # the pins for linux-64 go to its target tables, except for the entries the user wrote
    assert linux["dependencies"] == {"libcublas": {"version": "==12.6.77", "build": "h0_0"}}
    assert linux["pypi-dependencies"] == {"numpy": "==2.1.0"}
    # plain platforms: the driver floor as [system-requirements]; no GPU is declared, so uv
    # gets no GPU pin either (only facts the manifest declares are pinned)
    assert loads(after)["system-requirements"] == {"cuda": "12.6"}
    assert "NV_VARIANT_PROVIDER_FORCE_SM_ARCH" not in linux["activation"]["env"]
    assert linux["activation"]["env"]["NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"] == "12.6"
    assert "[target.linux-64.dependencies]\nlibcublas = " in after
    assert after.count("# variant-bridge") == 5  # cuda, libcublas, numpy and two variables
    notes = "\n".join(result.notes)
    # the user's entries that let the environment drift are named, with the wanted value
    assert 'dependencies.cuda-version = ">=12" is yours' in notes
    assert "admits CUDA toolkits other than the environment's 12.6" in notes
    assert 'pypi-dependencies.torch = "*" is yours' in notes
    assert "possibly another variant than cu126" in notes
    assert f"the export would write {{ url = {TORCH_ORIGIN.url!r} }}".replace("'", '"') in notes
    assert "python" not in notes  # 3.12.* admits the environment's 3.12.7
    # what [system-requirements] cannot state is said
    assert "needs __cuda_arch >=9.0,<10|>=9.0, which [system-requirements] cannot state" in notes
    assert apply(after, pixi_model(), kind="pixi").text == after  # a second run: no change


def test_a_second_update_with_nothing_new_is_byte_identical() -> None:
    for text in (MULTI_PLATFORM, '[workspace]\nplatforms = ["linux-64"]\n', ""):
        once = update(text, pixi_model(), kind="pixi")
        assert update(once, pixi_model(), kind="pixi") == once


SINGLE_PLATFORM = """\
[workspace]
name = "mine"
channels = ["conda-forge"]
platforms = ["linux-64"]

[dependencies]
python = ">=3.11"  # loose on purpose
libcublas = "*"
"""


def test_the_users_specs_are_never_tightened() -> None:
    # QA: without --from-history, `libcublas = "*"` became an exact build pin
    result = apply(SINGLE_PLATFORM, pixi_model(), kind="pixi")
    assert_untouched(SINGLE_PLATFORM, result.text)
    deps = loads(result.text)["dependencies"]
    assert deps["libcublas"] == "*"
    assert deps["python"] == ">=3.11"
    assert deps["cuda-version"] == {"version": "==12.6", "build": "h0_3"}  # the export's own
    assert "cuda-version = " in result.text.split('libcublas = "*"\n', 1)[1]  # appended after
    # both specs admit what is installed; only the GPU range pixi cannot state is noted
    [note] = result.notes
    assert "__cuda_arch" in note
    assert "[system-requirements] cannot state" in note


def test_a_user_spec_that_excludes_the_environment_is_noted() -> None:
    text = SINGLE_PLATFORM.replace('">=3.11"', '"3.11.*"')
    result = apply(text, pixi_model(), kind="pixi", path="/proj/pixi.toml")
    assert 'python = "3.11.*"  # loose on purpose\n' in result.text
    [note] = [n for n in result.notes if "python" in n]
    assert note.startswith('/proj/pixi.toml: dependencies.python = "3.11.*" is yours')
    assert "it does not admit the environment's python 3.12.7 (h0_0_cpython)" in note


def test_the_exports_own_entries_follow_the_environment() -> None:
    first = update(SINGLE_PLATFORM, pixi_model(), kind="pixi")
    newer = replace(NUMPY, version="2.2.0")
    changed = pixi_model(env={"python_packages": (TORCH_PTX, newer)})
    after = update(first, changed, kind="pixi")
    assert loads(after)["pypi-dependencies"]["numpy"] == "==2.2.0"
    assert 'numpy = "==2.2.0"  # variant-bridge\n' in after
    # ... and an entry of the export's that the environment no longer has goes
    gone = update(first, pixi_model(env={"python_packages": (TORCH_PTX,)}), kind="pixi")
    assert "numpy" not in loads(gone)["pypi-dependencies"]
    assert_untouched(SINGLE_PLATFORM, gone)


def test_removing_the_marker_makes_an_entry_the_users() -> None:
    first = update(SINGLE_PLATFORM, pixi_model(), kind="pixi")
    mine = first.replace('numpy = "==2.1.0"  # variant-bridge', 'numpy = ">=2"  # I decide')
    after = update(mine, pixi_model(pinning=Pinning("exact")), kind="pixi")
    assert 'numpy = ">=2"  # I decide\n' in after


def test_pin_modes_apply_to_the_exports_entries_only() -> None:
    after = update(SINGLE_PLATFORM, pixi_model(pinning=Pinning("version")), kind="pixi")
    deps = loads(after)["dependencies"]
    assert deps["libcublas"] == "*"  # the user's
    assert deps["cuda-version"] == "12.6.*"  # the toolkit stays pinned
    assert loads(after)["pypi-dependencies"]["numpy"] == "==2.1.0"


def test_an_empty_manifest_gets_a_marked_workspace() -> None:
    after = update("", pixi_model(), kind="pixi")
    workspace = loads(after)["workspace"]
    assert workspace["platforms"] == [
        {"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}}
    ]
    assert workspace["requires-pixi"] == f">={MIN_PIXI}"
    assert 'requires-pixi = ">=0.71"  # variant-bridge\n' in after
    assert "system-requirements" not in loads(after)


@pytest.mark.parametrize(
    ("platforms", "expected"),
    [
        (  # plain platforms, the export's: they stay plain ([system-requirements] declares)
            '["linux-64"]  # variant-bridge',
            ["linux-64"],
        ),
        (  # the export's own, with a platform the user added: only linux-64's entry changes
            '["osx-arm64", { platform = "linux-64", cuda = "12" }]  # variant-bridge',
            ["osx-arm64", {"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}}],
        ),
        (  # the user's: left as it is (a note says what the export would declare)
            '["linux-64", { name = "gpu", platform = "linux-64", cuda = "12" }]',
            ["linux-64", {"name": "gpu", "platform": "linux-64", "cuda": "12"}],
        ),
    ],
)
def test_the_platform_entry_is_edited_only_when_it_is_the_exports(
    platforms: str, expected: list[object]
) -> None:
    result = apply(f"[workspace]\nplatforms = {platforms}\n", pixi_model(), kind="pixi")
    assert loads(result.text)["workspace"]["platforms"] == expected
    assert any("workspace.platforms is yours" in n for n in result.notes) is (
        "variant-bridge" not in platforms
    )
    rich = any(isinstance(e, dict) for e in expected)
    assert ("system-requirements" in loads(result.text)) is not rich


def test_a_platform_the_users_manifest_does_not_list_is_an_error() -> None:
    with pytest.raises(
        ExportError, match=r"workspace\.platforms is yours and does not list linux-64"
    ):
        apply('[workspace]\nplatforms = ["osx-arm64"]\n', pixi_model(), kind="pixi", path="p")


def test_channels_the_user_wrote_are_not_extended() -> None:
    text = '[workspace]\nchannels = ["https://prefix.dev/conda-forge"]\nplatforms = ["linux-64"]\n'
    result = apply(text, pixi_model(), kind="pixi")
    assert loads(result.text)["workspace"]["channels"] == ["https://prefix.dev/conda-forge"]
    assert any("does not list conda-forge" in n for n in result.notes)
    owned = text.replace('conda-forge"]\n', 'conda-forge"]  # variant-bridge\n', 1)
    after = update(owned, pixi_model(), kind="pixi")
    assert loads(after)["workspace"]["channels"] == [
        "https://prefix.dev/conda-forge",
        "conda-forge",
    ]


def test_a_users_uv_variable_stays_and_is_not_listed_as_an_exported_pin() -> None:
    text = (  # rich platforms: the GPU is declared, so the export wants its pin too
        '[workspace]\nplatforms = [{ platform = "linux-64", cuda = "12" }]  # variant-bridge\n'
        '[activation.env]\nNV_VARIANT_PROVIDER_FORCE_SM_ARCH = "8.0"  # my GPU\nOTHER = "1"\n'
    )
    result = apply(text, pixi_model(), kind="pixi")
    env = loads(result.text)["activation"]["env"]
    assert env["NV_VARIANT_PROVIDER_FORCE_SM_ARCH"] == "8.0"
    assert env["OTHER"] == "1"
    assert env["VARIANT_BRIDGE_EXPORTED_PINS"] == (
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.6"
    )
    assert any("NV_VARIANT_PROVIDER_FORCE_SM_ARCH" in n and "is yours" in n for n in result.notes)


def test_adding_a_platform_moves_the_exports_own_top_level_pins() -> None:
    # QA: `export -o pixi.toml`, then osx-arm64 added by hand, then --update: the first
    # export's linux-64 pins stayed at the top level and applied to osx-arm64 too
    strict = pixi_model(strict_host_requirements=True)  # a rich platform entry
    text = render(strict).replace("platforms = [{", 'platforms = ["osx-arm64", {', 1)
    text = text.replace("[dependencies]\n", '[dependencies]\nrich = "*"\n', 1)
    result = apply(text, pixi_model(), kind="pixi", path="/proj/pixi.toml")
    data = loads(result.text)
    assert data["dependencies"] == {"rich": "*"}  # the user's entry stays
    assert "pypi-dependencies" not in data  # emptied by the move, removed
    assert "activation" not in data
    linux = data["target"]["linux-64"]
    assert linux["dependencies"]["python"] == {"version": "==3.12.7", "build": "h0_0_cpython"}
    assert linux["pypi-dependencies"] == {"numpy": "==2.1.0", "torch": {"url": TORCH_ORIGIN.url}}
    assert linux["activation"]["env"]["NV_VARIANT_PROVIDER_FORCE_SM_ARCH"] == "9.0"
    [note] = result.notes
    assert "the export's own top-level pins for linux-64 moved to [target.linux-64.*]" in note
    assert "dependencies.python" in note
    assert apply(result.text, pixi_model(), kind="pixi").text == result.text
    assert apply(result.text, strict, kind="pixi").text == result.text


USER_PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "mine"
dependencies = ["requests"]

# the pixi part
[tool.pixi.workspace]
channels = ["conda-forge", "nvidia"]
platforms = ["linux-64"]

[tool.pixi.dependencies]
python = "3.12.*"  # ours

[tool.pixi.tasks]
test = "pytest"

[tool.ruff]
line-length = 100
"""


def test_update_a_pyproject_under_tool_pixi() -> None:
    result = apply(USER_PYPROJECT, pixi_model(), kind="pyproject", path="pyproject.toml")
    assert_untouched(USER_PYPROJECT, result.text)
    pixi = loads(result.text)["tool"]["pixi"]
    assert "name" not in pixi["workspace"]  # the name lives in [project]
    assert pixi["dependencies"]["python"] == "3.12.*"
    assert pixi["dependencies"]["cuda-version"] == {"version": "==12.6", "build": "h0_3"}
    assert "[tool.pixi.pypi-dependencies]" in result.text
    assert "[tool.pixi.activation.env]" in result.text
    assert update(result.text, pixi_model(), kind="pyproject") == result.text


def test_update_adds_tool_pixi_to_a_plain_pyproject() -> None:
    after = update('[project]\nname = "mine"\n', pixi_model(), kind="pyproject")
    assert after.startswith('[project]\nname = "mine"\n')
    pixi = loads(after)["tool"]["pixi"]
    assert pixi["workspace"]["platforms"] == [
        {"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}}
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[workspace\nname = 1\n", "not valid TOML"),  # broken table header
        (
            'dependencies = ["python"]\n[workspace]\nplatforms = ["linux-64"]\n',
            "dependencies must be a table, found an array",
        ),  # wrong type
        ('[workspace]\nplatforms = "linux-64"\n', "platforms is not an array"),
    ],
)
def test_update_refuses_what_it_cannot_edit(text: str, message: str) -> None:
    with pytest.raises(ExportError, match=message) as info:
        update(text, pixi_model(), kind="pixi", path="/proj/pixi.toml")
    assert "/proj/pixi.toml" in str(info.value)


def test_a_project_table_is_updated_in_place_of_workspace() -> None:
    # Manifests from before pixi 0.40 call the table [project].
    text = '[project]\nname = "old"\nplatforms = ["linux-64"]  # variant-bridge\n'
    data = loads(update(text, pixi_model(), kind="pixi"))
    assert "workspace" not in data
    assert data["project"]["platforms"] == ["linux-64"]
    assert data["system-requirements"] == {"cuda": "12.6"}


@pytest.mark.parametrize("manifest", corpus_files("real/pixi-locks/*/pixi.toml"))
def test_real_manifests_keep_every_line(manifest: Path) -> None:
    text = read_corpus_file(manifest)
    result = apply(text, pixi_model(), kind="pixi", path=str(manifest))
    assert_untouched(text, result.text)
    assert apply(result.text, pixi_model(), kind="pixi").text == result.text
    data = tomlkit.parse(result.text).unwrap()
    root = data["target"]["linux-64"] if "linux-64" in data.get("target", {}) else data
    assert root["pypi-dependencies"]["torch"] == {"url": TORCH_ORIGIN.url}


@pytest.mark.parametrize(
    "text",
    [
        '[dependencies]\npython = "3.12.*"  # ours\n\n[tasks]\nx = "y"\n',
        '[dependencies]\npython = "3.12.*"\n# a closing comment\n\n\n[tasks]\nx = "y"\n',
        '[dependencies]\npython = "3.12.*"',
        "[dependencies]\n",
        '[dependencies]\npython = "3.12.*"\n[dependencies.numpy]\nversion = "*"\n',
        '[workspace]\nname = "p"\n\n[dependencies]\na = "1"\n\n# after\n',
    ],
)
def test_adding_many_entries_at_once_gives_the_per_key_result(text: str) -> None:
    """The bulk add (linear) writes exactly what tomlkit's per-key insert (quadratic) writes."""
    import tomlkit

    from variant_bridge.export.pixi_toml.items import add_all_marked, add_marked

    entries = {f"pkg{i}": {"version": f"=={i}", "build": "h0"} for i in range(5)}
    entries["plain"] = "==1.0"
    notes = {"pkg1": "why"}
    one_by_one = tomlkit.parse(text)
    for key, value in entries.items():
        add_marked(one_by_one["dependencies"], key, value, notes.get(key))
    at_once = tomlkit.parse(text)
    add_all_marked(at_once["dependencies"], entries, notes)
    assert tomlkit.dumps(at_once) == tomlkit.dumps(one_by_one)
    assert tomlkit.parse(tomlkit.dumps(at_once)) == tomlkit.parse(tomlkit.dumps(one_by_one))


def test_a_variant_index_is_an_extra_index_never_the_users_index_url() -> None:
    """pixi's `index-url` replaces PyPI for every PyPI dependency: the user's `requests` would
    no longer resolve. The export's indexes are extra ones."""
    text = (
        '[workspace]\nplatforms = ["linux-64"]\n\n[pypi-dependencies]\nrequests = "*"\n\n'
        '[pypi-options]\nindex-url = "https://mirror.example/simple"  # our mirror\n'
    )
    indexes = IndexOptions("https://variants.example/simple", (), ())
    after = update(text, pixi_model(index_options=indexes), kind="pixi")
    options = loads(after)["pypi-options"]
    assert options["index-url"] == "https://mirror.example/simple"
    assert options["extra-index-urls"] == ["https://variants.example/simple"]
    assert 'index-url = "https://mirror.example/simple"  # our mirror\n' in after
    assert loads(after)["pypi-dependencies"]["requests"] == "*"
    # an earlier export's own index-url (it replaced PyPI) is taken back
    earlier = text.replace("  # our mirror", "  # variant-bridge")
    after = update(earlier, pixi_model(index_options=indexes), kind="pixi")
    assert "index-url" not in loads(after)["pypi-options"]
    assert loads(after)["pypi-options"]["extra-index-urls"] == ["https://variants.example/simple"]


def test_own_copies_are_the_paths_of_marked_pypi_entries_only() -> None:
    """The copies an update may replace are those its own entries name; a path the user wrote
    (no marker) names a file the export never replaces."""
    from variant_bridge.export.pixi_toml.update import own_copies

    text = """\
[pypi-dependencies]
gpulib = { path = "./variant-wheels/gpulib-1.0-py3-none-any.whl" }  # variant-bridge: variant cu126
mine = { path = "./variant-wheels/mine-1.0-py3-none-any.whl" }
plain = "==1.0"  # variant-bridge

[feature.legacy.pypi-dependencies]
gpulib = { path = "./variant-wheels/legacy/gpulib-1.0-py3-none-any.whl" }  # variant-bridge

[target.linux-64.pypi-dependencies]
other = { path = "other.whl" }  # variant-bridge
"""
    assert own_copies(text, kind="pixi", path="pixi.toml") == (
        "./variant-wheels/gpulib-1.0-py3-none-any.whl",
        "./variant-wheels/legacy/gpulib-1.0-py3-none-any.whl",
        "other.whl",
    )
    pyproject = "[project]\nname = 'p'\n\n" + text.replace("[", "[tool.pixi.", 3)  # the 3 tables
    assert "./variant-wheels/gpulib-1.0-py3-none-any.whl" in own_copies(
        pyproject, kind="pyproject", path="pyproject.toml"
    )
