"""Numbers of any length (issue 22): a 5,000-digit version in a request, a requirement, a
``Requires-Python``, a ``$schema`` URL, a conda spec, ``--cuda`` or a targets file is one error
line naming the input, shortened (or, inside one wheel, a note and that requirement left out),
never ``unexpected ValueError: Exceeds the limit (4300 digits)``.

Python's ``int()`` refuses numbers past 4,300 digits with a ``ValueError``; ``packaging`` accepts
such a version in a specifier and fails only when it compares. Real parts: wheels built here, a
rattler-indexed channel, a rattler-installed prefix with a dist-info as an installer leaves it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.worlds.channel import Channel, base_packages, cuda_packages
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, add_dist_info, install_prefix, solve
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.errors import LINE_LIMIT

pytestmark = pytest.mark.slow

HUGE = "1." + "9" * 5000
SHORTENED = "1." + "9" * 78 + "…' (5002 characters)"
LOWER = "nvidia :: cuda_version_lower_bound :: {}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("huge")
    wheels = root / "wheels"
    make_release(wheels, "tinyvar", "1.0", {"cu126": [LOWER.format("12.6")], "null": []})
    hostile = root / "hostile"
    make_wheel(hostile, "app", "1.0", requires=[f"depa=={HUGE}", "tinyvar"])
    make_wheel(hostile, "depa", "1.0")
    make_wheel(hostile, "late", "1.0", requires_python=f">={HUGE}")
    make_release(hostile, "tinyvar", "1.0", {"cu126": [LOWER.format("12.6")]})
    channel = Channel(root / "channel").add([*cuda_packages(("12.6",)), *base_packages()])
    specs = ["cuda-version 12.6.*", "python"]
    records = solve([channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
    prefix = install_prefix(records, root / "env", root / "pkgs", specs)
    document = json.loads((wheels / "tinyvar-1.0-variants.json").read_text())
    document["$schema"] = f"https://variants-schema.wheelnext.dev/v0.0.{'9' * 5000}.json"
    document["variants"] = {"cu126": document["variants"]["cu126"]}
    add_dist_info(prefix / "lib" / "python3.12" / "site-packages", "tinyvar", "1.0",
                  variant=document)  # fmt: skip
    schema = root / "schema"
    schema.mkdir()
    for wheel in wheels.glob("*.whl"):
        (schema / wheel.name).write_bytes(wheel.read_bytes())
    (schema / "tinyvar-1.0-variants.json").write_text(json.dumps(document))
    return {"wheels": wheels, "hostile": hostile, "channel": channel.path, "env": prefix,
            "schema": schema}  # fmt: skip


def one_line(result: object, code: int = 1) -> str:
    """The one error line of a refused command: no internal error, shortened input."""
    exit_code, stderr = result.exit_code, result.stderr  # type: ignore[attr-defined]
    assert exit_code == code, stderr
    lines = [line for line in stderr.splitlines() if line.startswith(("error:", "Error:"))]
    assert len(lines) == 1, stderr
    assert "unexpected" not in lines[0]
    assert "4300" not in lines[0]
    assert len(lines[0]) < LINE_LIMIT
    return lines[0]


def test_a_request(cli: Cli, world: dict[str, Path]) -> None:
    result = cli("select", f"tinyvar=={HUGE}", "-f", str(world["wheels"]), "--python", "3.12")
    line = one_line(result)
    assert line.startswith("error: invalid package request 'tinyvar==1.999")
    assert line.endswith(f"'{SHORTENED} is not a PEP 440 version")


def test_a_requirement_and_a_requires_python_inside_a_wheel(
    cli: Cli, world: dict[str, Path]
) -> None:
    """One wheel's bad line is left out with a note; the tree is still chosen."""
    result = cli("select", "app", "late", "-f", str(world["hostile"]), "--python", "3.12",
                 "-t", "cuda=12.8", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    chosen = {c["package"]: c for c in json.loads(result.stdout)}
    assert set(chosen) == {"app", "late", "tinyvar"}  # depa: its only requirement was unreadable
    (problem,) = chosen["app"]["problems"]
    assert problem.startswith("app-1.0-py3-none-any.whl: invalid requirement 'depa==1.999")
    assert problem.endswith(f"'{SHORTENED} is not a PEP 440 version")


def test_a_schema_url_in_a_variants_json(cli: Cli, world: dict[str, Path]) -> None:
    result = cli("select", "tinyvar", "-f", str(world["schema"]), "--python", "3.12")
    line = one_line(result)
    assert line.startswith(f"error: {world['schema'] / 'tinyvar-1.0-variants.json'}: $schema: "
                           "unknown variant metadata schema")  # fmt: skip
    assert "(5048 characters)" in line


def test_a_schema_url_in_an_installed_dist_info(cli: Cli, world: dict[str, Path]) -> None:
    """``detect --prefix`` says which file it cannot read (it broke with an internal error)."""
    line = one_line(cli("detect", "--prefix", str(world["env"])))
    assert "tinyvar-1.0.dist-info/variant.json: $schema: unknown variant metadata schema" in line


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["solve", f"cuda-version {HUGE}"], "error: invalid conda spec 'cuda-version 1.999"),
        (["solve", f"tinyvar=={HUGE}"], "error: invalid conda spec 'tinyvar==1.999"),
        (["translate", "--from-conda", f"__cuda={HUGE}"], "error: invalid spec '__cuda=1.999"),
        (["detect", "-t", f"cuda={HUGE}"], f"error: --target cuda='{SHORTENED}: expected"),
    ],
)
def test_specs_and_declarations(
    cli: Cli, world: dict[str, Path], args: list[str], says: str
) -> None:
    if args[0] == "solve":
        args = [*args, "-c", str(world["channel"]), "--platform", "linux-64"]
    assert one_line(cli(*args)).startswith(says)


def test_cuda_option_is_a_short_usage_error(cli: Cli) -> None:
    line = one_line(cli("select", "tinyvar", "--cuda", HUGE), code=2)
    assert (
        line
        == f"Error: Invalid value for '--cuda': '{SHORTENED}: expected a CUDA MAJOR.MINOR, e.g. 12.6"
    )


def test_a_targets_file(cli: Cli, tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(f'classes:\n  a:\n    platform: linux-64\n    cuda: "{HUGE}"\n')
    line = one_line(cli("detect", "--targets", str(nodes)))
    assert (
        line == f"error: {nodes}: class 'a', cuda '{SHORTENED}: expected a CUDA version like 12.8"
    )


def test_a_requirement_past_64_bits_has_no_conda_form(cli: Cli, tmp_path: Path) -> None:
    """A number Python reads but conda cannot hold (rattler's are 64-bit): convert refuses the
    wheel naming the requirement, instead of rattler's 5,000-character parse error."""
    wheel = make_wheel(tmp_path / "w", "app", "1.0", requires=["depa==1." + "9" * 100])
    line = one_line(cli("convert", str(wheel), "-o", str(tmp_path / "out")))
    assert line.startswith("error: app-1.0-py3-none-any.whl: requirement 'depa==1.999")
    assert "has no conda form" in line


def test_an_installed_version_when_export_looks_up_its_wheel(
    cli: Cli, world: dict[str, Path], tmp_path: Path
) -> None:
    """A dist-info whose version no number can hold, installed from a file: ``export -f``
    finds no wheel of that version and falls back on the file its direct_url.json names (it
    was an internal error)."""
    import shutil

    prefix = shutil.copytree(world["env"], tmp_path / "env", symlinks=True)
    site = prefix / "lib" / "python3.12" / "site-packages"
    shutil.rmtree(site / "tinyvar-1.0.dist-info")
    wheel = world["wheels"] / "tinyvar-1.0-py3-none-any-cu126.whl"
    metadata = f"Metadata-Version: 2.4\nName: tinyvar\nVersion: {HUGE}\n"
    add_dist_info(site, "tinyvar", "1.0", metadata=metadata,
                  direct_url={"url": wheel.as_uri(), "archive_info": {}})  # fmt: skip
    out = tmp_path / "environment.yml"
    result = cli("export", "--prefix", str(prefix), "-f", str(world["wheels"]), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert "unexpected" not in result.stderr
    assert "  # tinyvar 1.999" in out.read_text()
