"""Updating a pixi manifest in place touches only what an export owns."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.export.snapshots import NUMPY, TORCH_ORIGIN, model
from variant_bridge.errors import ExportError
from variant_bridge.export.pixi_toml.render import MIN_PIXI, render
from variant_bridge.export.pixi_toml.update import apply, manifest_kind, update

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomlkit as tomllib  # tomlkit.loads returns a dict-like document


def loads(text: str) -> dict[str, object]:
    return dict(tomllib.loads(text))


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


USER_PIXI = """\
# My project: keep this comment
[workspace]
name = "mine"  # the name
channels = ["conda-forge"]
platforms = ["linux-64", "osx-arm64"]  # two platforms
version = "0.1.0"

[tasks]
train = "python train.py"  # training

[dependencies]
python = ">=3.11"  # loose on purpose
rich = "*"

[system-requirements]
libc = { family = "glibc", version = "2.28" }

[feature.docs.dependencies]
mkdocs = "*"

[environments]
docs = ["docs"]
"""

UNOWNED_PIXI = (
    "# My project: keep this comment\n",
    'name = "mine"  # the name\n',
    'version = "0.1.0"\n',
    '[tasks]\ntrain = "python train.py"  # training\n',
    'rich = "*"\n',
    '[system-requirements]\nlibc = { family = "glibc", version = "2.28" }\n',
    '[feature.docs.dependencies]\nmkdocs = "*"\n\n[environments]\ndocs = ["docs"]\n',
)


def test_update_keeps_everything_it_does_not_own() -> None:
    after = update(USER_PIXI, model(), kind="pixi")
    for text in UNOWNED_PIXI:
        assert text in after
    data = loads(after)
    assert data["workspace"]["platforms"] == [  # type: ignore[index]
        {"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}},
        "osx-arm64",
    ]
    assert data["workspace"]["requires-pixi"] == f">={MIN_PIXI}"  # type: ignore[index]
    # osx-arm64 is declared too: the linux-64 builds go to linux-64's target tables
    assert data["dependencies"] == {"python": ">=3.11", "rich": "*"}  # the user's, untouched
    assert 'python = ">=3.11"  # loose on purpose\n' in after
    linux = data["target"]["linux-64"]  # type: ignore[index]
    assert linux["dependencies"]["python"] == {"version": "==3.12.7", "build": "h0_0_cpython"}
    assert linux["pypi-dependencies"]["torch"] == {"url": TORCH_ORIGIN.url}
    assert "NV_VARIANT_PROVIDER_FORCE_SM_ARCH" in linux["activation"]["env"]
    assert "pypi-dependencies" not in data
    assert "activation" not in data
    # order of the user's tables is kept; new tables come after them
    assert after.index("[tasks]") < after.index("[dependencies]") < after.index("[environments]")
    assert after.index("[environments]") < after.index("[target.linux-64.dependencies]")


def the_platform_pins(after: str, kind: str = "pixi") -> dict[str, Any]:
    data: dict[str, Any] = loads(after)
    root = data["tool"]["pixi"] if kind == "pyproject" else data
    return root["target"]["linux-64"] if "target" in root else root


@pytest.mark.parametrize(
    ("text", "kind", "targeted"),
    [
        (  # QA: linux-64 builds in the top-level table broke the osx-arm64 solve
            (
                '[workspace]\nplatforms = ["linux-64", "osx-arm64"]\n[dependencies]\n'
                'python = "3.12.*"\n'
            ),
            "pixi",
            True,
        ),
        (  # only another platform declared: ours is appended, the pins are still per target
            '[workspace]\nplatforms = ["osx-arm64"]\n[dependencies]\npython = "3.12.*"\n',
            "pixi",
            True,
        ),
        (  # a pyproject's [tool.pixi]: the same, under tool.pixi.target
            (
                '[project]\nname = "p"\n[tool.pixi.workspace]\nplatforms = ["linux-64", "win-64"]\n'
                '[tool.pixi.dependencies]\npython = "3.12.*"\n'
            ),
            "pyproject",
            True,
        ),
        (  # only the exported platform: the top-level tables are the platform's
            '[workspace]\nplatforms = ["linux-64"]\n[dependencies]\npython = "3.12.*"\n',
            "pixi",
            False,
        ),
    ],
)
def test_multi_platform_pins_go_to_the_target_tables(text: str, kind: str, targeted: bool) -> None:
    result = apply(text, model(), kind=kind, path="/proj/pixi.toml")  # type: ignore[arg-type]
    data: dict[str, Any] = loads(result.text)
    root = data["tool"]["pixi"] if kind == "pyproject" else data
    pins = the_platform_pins(result.text, kind)
    assert pins["dependencies"]["python"] == {"version": "==3.12.7", "build": "h0_0_cpython"}
    assert pins["pypi-dependencies"]["torch"] == {"url": TORCH_ORIGIN.url}
    assert pins["activation"]["env"]["NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"] == "12.6"
    if targeted:
        assert root["dependencies"] == {"python": "3.12.*"}  # the user's loose spec stays
        assert set(root) >= {"workspace", "dependencies", "target"}
        assert "pypi-dependencies" not in root
        assert any("target.linux-64" in n for n in result.notes)
        # applying it again changes nothing (tomlkit round trip of the nested tables)
        assert apply(result.text, model(), kind=kind).text == result.text  # type: ignore[arg-type]
    else:
        assert "target" not in root
        assert result.notes == (
            (
                '/proj/pixi.toml: replaced dependencies.python = "3.12.*" (not an exact pin) by '
                'the exported { version = "==3.12.7", build = "h0_0_cpython" }'
            ),
        )


def test_replacing_an_exact_pin_needs_no_note() -> None:
    text = '[workspace]\nplatforms = ["linux-64"]\n[dependencies]\npython = "==3.11.0"\n'
    result = apply(text, model(), kind="pixi")
    assert result.notes == ()
    assert loads(result.text)["dependencies"]["python"]["version"] == "==3.12.7"  # type: ignore[index]


def test_update_is_idempotent() -> None:
    once = update(USER_PIXI, model(), kind="pixi")
    assert update(once, model(), kind="pixi") == once


def test_an_unchanged_value_keeps_the_users_formatting() -> None:
    text = USER_PIXI.replace('rich = "*"', 'numpy = "*"\nrich = "*"').replace(
        'python = ">=3.11"  # loose on purpose',
        'python = { build = "h0_0_cpython",   version = "==3.12.7" }  # exact',
    )
    after = update(text, model(), kind="pixi")
    assert 'python = { build = "h0_0_cpython",   version = "==3.12.7" }  # exact' in after


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

[tool.pixi.tasks]
test = "pytest"

[tool.ruff]
line-length = 100
"""


def test_update_a_pyproject_under_tool_pixi() -> None:
    after = update(USER_PYPROJECT, model(), kind="pyproject")
    for text in (
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
        '[project]\nname = "mine"\ndependencies = ["requests"]\n',
        "# the pixi part\n",
        '[tool.pixi.tasks]\ntest = "pytest"\n',
        "[tool.ruff]\nline-length = 100\n",
    ):
        assert text in after
    pixi = loads(after)["tool"]["pixi"]  # type: ignore[index]
    assert "name" not in pixi["workspace"]  # the name lives in [project]
    assert pixi["workspace"]["channels"] == ["conda-forge", "nvidia"]  # nothing missing
    assert pixi["dependencies"]["cuda-version"] == {"version": "==12.6", "build": "h0_3"}
    assert "[tool.pixi.pypi-dependencies]" in after
    assert "[tool.pixi.activation.env]" in after


def test_update_adds_tool_pixi_to_a_plain_pyproject() -> None:
    after = update('[project]\nname = "mine"\n', model(), kind="pyproject")
    assert after.startswith('[project]\nname = "mine"\n')
    assert loads(after)["tool"]["pixi"]["workspace"]["platforms"] == [  # type: ignore[index]
        {"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}}
    ]


def test_update_appends_missing_channels_after_the_users() -> None:
    text = '[workspace]\nchannels = ["https://prefix.dev/conda-forge"]\nplatforms = ["linux-64"]\n'
    other = model(env={"conda_packages": ()})
    after = update(text, other, kind="pixi")
    assert loads(after)["workspace"]["channels"] == ["https://prefix.dev/conda-forge"]  # type: ignore[index]
    after = update(text, model(), kind="pixi")
    assert loads(after)["workspace"]["channels"] == [  # type: ignore[index]
        "https://prefix.dev/conda-forge",
        "conda-forge",
    ]


@pytest.mark.parametrize(
    ("platforms", "expected"),
    [
        (  # a CPU entry and a named CUDA entry: only the CUDA one is ours to raise
            '["linux-64", { name = "gpu", platform = "linux-64", cuda = "12" }]',
            [
                "linux-64",
                {"name": "gpu", "platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}},
            ],
        ),
        (  # the user's other keys (glibc) stay
            '[{ platform = "linux-64", cuda = "12.0", glibc = "2.31" }]',
            [{"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}, "glibc": "2.31"}],
        ),
        (  # another subdir only: ours is appended
            '["osx-arm64"]',
            ["osx-arm64", {"platform": "linux-64", "cuda": {"driver": "12.6", "arch": "9.0"}}],
        ),
    ],
)
def test_update_the_platform_entry(platforms: str, expected: list[object]) -> None:
    after = update(f"[workspace]\nplatforms = {platforms}\n", model(), kind="pixi")
    assert loads(after)["workspace"]["platforms"] == expected  # type: ignore[index]


def test_update_keeps_a_declared_gpu_architecture_when_the_wheels_need_none() -> None:
    text = (
        "[workspace]\n"
        'platforms = [{ platform = "linux-64", cuda = { driver = "12.0", arch = "8.6" } }]\n'
    )
    cpu_only = model(env={"python_packages": (NUMPY,)})  # toolkit 12.6 -> cuda "12"
    after = update(text, cpu_only, kind="pixi")
    assert loads(after)["workspace"]["platforms"] == [  # type: ignore[index]
        {"platform": "linux-64", "cuda": {"driver": "12", "arch": "8.6"}}
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[workspace\nname = 1\n", "not valid TOML"),  # broken table header
        (
            'dependencies = ["python"]\n',
            "dependencies must be a table, found an array",
        ),  # wrong type
        ('[workspace]\nplatforms = "linux-64"\n', "platforms is not an array"),
    ],
)
def test_update_refuses_what_it_cannot_edit(text: str, message: str) -> None:
    with pytest.raises(ExportError, match=message) as info:
        update(text, model(), kind="pixi", path="/proj/pixi.toml")
    assert "/proj/pixi.toml" in str(info.value)


def test_a_project_table_is_updated_in_place_of_workspace() -> None:
    # Manifests from before pixi 0.40 call the table [project].
    after = update('[project]\nname = "old"\nplatforms = ["linux-64"]\n', model(), kind="pixi")
    data = loads(after)
    assert "workspace" not in data
    assert data["project"]["platforms"][0]["cuda"]["driver"] == "12.6"  # type: ignore[index]


def add_platform(text: str, platform: str) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    doc["workspace"]["platforms"].insert(0, platform)  # type: ignore[index,union-attr]
    return tomlkit.dumps(doc)


@pytest.mark.parametrize(
    "first",
    [
        "new",  # QA: `export -o pixi.toml`, then osx-arm64 added by hand, then --update
        "updated",  # the single-platform pins an earlier --update wrote (tomlkit's spacing)
    ],
)
def test_adding_a_platform_moves_the_exports_own_top_level_pins(first: str) -> None:
    # QA: the pins went to [target.linux-64.*] but the first export's top-level pins stayed
    # (and applied to osx-arm64 too)
    if first == "new":
        text = render(model())
    else:
        text = update('[workspace]\nplatforms = ["linux-64"]\n', model(), kind="pixi")
    text = add_platform(text, "osx-arm64")
    text = text.replace("[dependencies]\n", '[dependencies]\nrich = "*"\n', 1)
    result = apply(text, model(), kind="pixi", path="/proj/pixi.toml")
    data: dict[str, Any] = loads(result.text)
    # ours (identical to what this export writes for linux-64) moved to the target tables
    assert data["dependencies"] == {"rich": "*"}  # the user's entry stays
    assert "pypi-dependencies" not in data  # emptied by us, removed
    assert "activation" not in data
    linux = data["target"]["linux-64"]
    assert linux["dependencies"]["python"] == {"version": "==3.12.7", "build": "h0_0_cpython"}
    assert linux["pypi-dependencies"] == {"numpy": "==2.1.0", "torch": {"url": TORCH_ORIGIN.url}}
    assert linux["activation"]["env"]["NV_VARIANT_PROVIDER_FORCE_SM_ARCH"] == "9.0"
    [note] = result.notes
    assert "this export's earlier top-level pins moved there too" in note
    assert "dependencies.python" in note
    assert "activation.env.NV_VARIANT_PROVIDER_FORCE_SM_ARCH" in note
    assert apply(result.text, model(), kind="pixi").text == result.text  # idempotent


def test_top_level_entries_that_differ_from_the_export_are_left_alone() -> None:
    text = (
        '[workspace]\nplatforms = ["linux-64", "osx-arm64"]\n'
        '[dependencies]\npython = { version = "==3.12.6", build = "h0_0_cpython" }\n'
        '[pypi-dependencies]\nnumpy = "==2.0.0"\n'
        '[activation.env]\nNV_VARIANT_PROVIDER_FORCE_SM_ARCH = "8.0"\nOTHER = "1"\n'
    )
    result = apply(text, model(), kind="pixi")
    data: dict[str, Any] = loads(result.text)
    assert data["dependencies"] == {"python": {"version": "==3.12.6", "build": "h0_0_cpython"}}
    assert data["pypi-dependencies"] == {"numpy": "==2.0.0"}
    assert data["activation"]["env"] == {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "8.0", "OTHER": "1"}
    assert "the top-level tables were left as they were" in result.notes[0]
