"""``variant-bridge convert``: variant wheels become conda packages that rattler solves and
installs, with entry points and ``.data`` files placed for conda, and ``detect --prefix`` reads
the installed variant from the ``variant.json`` kept in the dist-info."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.solve.test_solve_cli import HERE_PYTHON, SM
from tests.worlds.channel import Channel, Pkg, cuda_packages
from tests.worlds.channel import solve as rattler_solve
from tests.worlds.prefix import install_prefix
from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.indexes.archive import WheelArchive
from variant_bridge.solve.convert import entry_points

VPS = ("__unix=0", "__linux=6.1", "__glibc=2.36", "__cuda=12.9", "__cuda_arch=9.0")
# torch's ROCm 6.4 build, two of its gfx names (MI300, MI250).
ROCM = ("amd :: gfx_arch :: gfx942", "amd :: gfx_arch :: gfx90a", "amd :: rocm_version :: 6.4")
ENTRY_POINTS = (
    "[console_scripts]\ngpulib-info = gpulib:main\n\n[gui_scripts]\ngpulib-gui = gpulib:gui\n"
)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    extras = {
        "gpulib-1.0.dist-info/entry_points.txt": ENTRY_POINTS,
        "gpulib-1.0.data/scripts/gpulib-tool": "#!python\nprint('tool')\n",
        "gpulib-1.0.data/headers/gpulib.h": "int gpulib(void);\n",
        "gpulib-1.0.data/data/share/gpulib/README": "data\n",
    }
    release = make_release(
        root, "gpulib", "1.0",
        {
            "cu126": ["nvidia :: cuda_version_lower_bound :: 12.6", *SM],
            "cu128": ["nvidia :: cuda_version_lower_bound :: 12.8", *SM],
            "rocm6.4": [*ROCM],
            "null": [],
        },
        namespace_priorities=["nvidia", "amd"], non_variant=False,
    )  # fmt: skip
    # Rewrite the cu128 wheel with entry points and .data members (same label and metadata).
    label_props = ["nvidia :: cuda_version_lower_bound :: 12.8", *SM]
    release.wheels["cu128"].unlink()
    make_wheel(root, "gpulib", "1.0", label="cu128", properties=label_props, files=extras,
               namespace_priorities=["nvidia", "amd"])  # fmt: skip
    return root


@pytest.fixture(scope="module")
def converted(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    channel = tmp_path_factory.mktemp("converted")
    result = Cli()("convert", str(wheels), "-o", str(channel), "--subdir", "linux-64", "--json")
    assert result.exit_code == 0, result.output
    return channel


def test_entry_points_become_conda_lines(wheels: Path) -> None:
    wheel = next(wheels.glob("gpulib-1.0-*-cu128.whl"))
    with WheelArchive(wheel) as archive:
        assert entry_points(archive) == ["gpulib-info = gpulib:main", "gpulib-gui = gpulib:gui"]


def test_packages_carry_the_translated_specs_and_the_wheel_files(converted: Path) -> None:
    repodata = json.loads((converted / "noarch" / "repodata.json").read_text())
    packages = list(repodata["packages"].values())
    cu128 = [p for p in packages if p["build"].startswith("cu128")]
    assert cu128
    for package in cu128:
        assert package["noarch"] == "python"
        assert "cuda-version >=12.8,<13" in package["depends"]
        # The GPU is a constraint, not a dependency: stock conda has no __cuda_arch.
        assert not any(d.startswith("__cuda_arch") for d in package["depends"])
        assert [c for c in package["constrains"] if c.startswith("__cuda_arch")]
    name = next(n for n, p in repodata["packages"].items() if p["build"].startswith("cu128"))
    with tarfile.open(converted / "noarch" / name) as archive:
        members = set(archive.getnames())
        link = json.loads(archive.extractfile("info/link.json").read())  # type: ignore[union-attr]
    assert "site-packages/gpulib-1.0.dist-info/variant.json" in members
    assert "site-packages/gpulib-1.0.dist-info/RECORD" not in members
    assert {
        "python-scripts/gpulib-tool",
        "include/gpulib/gpulib.h",
        "share/gpulib/README",
    } <= members
    assert link["noarch"]["entry_points"] == [
        "gpulib-info = gpulib:main",
        "gpulib-gui = gpulib:gui",
    ]


@pytest.mark.slow
def test_rattler_installs_the_converted_variant_and_detect_reads_it(
    converted: Path, tmp_path: Path
) -> None:
    conda = Channel(tmp_path / "conda").add([
        *cuda_packages(["12.6", "12.8", "12.9"]),
        Pkg("python", HERE_PYTHON, "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",)),
    ])  # fmt: skip
    records = rattler_solve([Channel(converted), conda], ["gpulib", "python"], VPS)
    chosen = next(r for r in records if r.name.normalized == "gpulib")
    assert str(chosen.build).startswith("cu128")
    prefix = install_prefix(records, tmp_path / "env", tmp_path / "cache", ["gpulib", "python"])
    major_minor = ".".join(HERE_PYTHON.split(".")[:2])
    site = prefix / "lib" / f"python{major_minor}" / "site-packages"
    assert (site / "gpulib" / "__init__.py").is_file()
    assert (site / "gpulib-1.0.dist-info" / "INSTALLER").read_text() == "conda\n"
    assert (prefix / "bin" / "gpulib-info").is_file()  # an entry point from info/link.json
    assert (prefix / "bin" / "gpulib-tool").is_file()  # a .data script
    assert os.access(prefix / "bin" / "gpulib-tool", os.X_OK)
    detected = Cli()("detect", "--prefix", str(prefix), "--json")
    assert detected.exit_code == 0, detected.output
    env = json.loads(detected.stdout)
    assert env["toolkit"]["version"] == "12.9"
    assert [(d["name"], d["label"]) for d in env["conda_variants"]] == [("gpulib", "cu128")]
    assert env["variant_wheels"] == []  # a conda package, not a PyPI install
    text = Cli()("detect", "--prefix", str(prefix))
    assert "Variant wheels installed as conda packages" in text.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cuda_arch", "chosen"),
    [
        (None, "cu128"),  # stock conda: no __cuda_arch, the constraint is satisfied
        ("7.5", "null"),  # a GPU none of the SM lists runs: the CUDA builds are excluded
        ("8.0", "cu128"),
    ],
)
def test_the_gpu_binds_where_it_is_known_and_not_where_it_is_absent(
    converted: Path, tmp_path: Path, cuda_arch: str | None, chosen: str
) -> None:
    conda = Channel(tmp_path / "conda").add([
        *cuda_packages(["12.8", "12.9"]),
        Pkg("python", HERE_PYTHON, "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",)),
    ])  # fmt: skip
    machine = [vp for vp in VPS if not vp.startswith("__cuda_arch")]
    if cuda_arch is not None:
        machine.append(f"__cuda_arch={cuda_arch}")
    records = rattler_solve([Channel(converted), conda], ["gpulib", "python"], machine)
    gpulib = next(r for r in records if r.name.normalized == "gpulib")
    assert str(gpulib.build).startswith(chosen)


def test_a_rocm_build_is_written_for_the_gpu_and_for_clients_that_cannot_see_it(
    converted: Path,
) -> None:
    repodata = json.loads((converted / "noarch" / "repodata.json").read_text())
    rocm = {p["build"]: p for p in repodata["packages"].values() if p["build"].startswith("rocm")}
    (known,) = [p for b, p in rocm.items() if "anygpu" not in b]
    (anygpu,) = [p for b, p in rocm.items() if "anygpu" in b]
    arch = "__amdgpu_arch ==9.0.10|==9.4.2"
    assert arch in known["depends"]  # chosen where the GPU is known
    assert "rocm-core 6.4.*" in known["depends"]
    assert "track_features" not in known
    # Stock conda has no __amdgpu_arch (nor __amdgpu): its copy constrains it, and its track
    # feature ranks it below the null build, so it is installed only when asked for.
    assert arch not in anygpu["depends"]
    assert anygpu["constrains"] == [arch]
    assert "rocm-core 6.4.*" in anygpu["depends"]
    assert anygpu["track_features"] == "variant-bridge-anygpu"
    assert anygpu["build_number"] == known["build_number"]
    assert anygpu["build"] == known["build"].replace("rocm6.4_", "rocm6.4_anygpu_")


def test_convert_says_which_copy_is_for_clients_that_cannot_see_the_gpu(
    wheels: Path, tmp_path: Path
) -> None:
    channel = tmp_path / "channel"
    result = Cli()("convert", str(wheels), "-o", str(channel), "--subdir", "linux-64", "--json")
    assert result.exit_code == 0, result.output
    (copy,) = json.loads(result.stdout)["any_gpu"]
    assert copy["name"] == "gpulib"
    assert copy["label"] == "rocm6.4"
    assert copy["build"].startswith("rocm6.4_anygpu_")
    text = Cli()("convert", str(wheels), "-o", str(tmp_path / "again"), "--subdir", "linux-64")
    assert (
        f"gpulib {copy['build']}: for clients that cannot see the GPU (stock conda), installed "
        "only when asked for (gpulib=*=rocm6.4*)"
    ) in text.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("amdgpu_arch", "spec", "chosen"),
    [
        (None, "gpulib", "null"),  # stock conda's view: no GPU seen, the null build
        (None, "gpulib * rocm*", "rocm6.4_anygpu"),  # asked for: the copy it can install
        ("9.4.2", "gpulib", "rocm6.4"),  # an MI300: the build with code for it
        ("11.5.1", "gpulib", "null"),  # a GPU no gfx name of the build runs on
        ("11.5.1", "gpulib * rocm*", None),  # never one it cannot run, even when asked
    ],
)
def test_the_amd_gpu_binds_where_it_is_known_and_not_where_it_is_absent(
    converted: Path, tmp_path: Path, amdgpu_arch: str | None, spec: str, chosen: str | None
) -> None:
    conda = Channel(tmp_path / "conda").add([
        Pkg("rocm-core", "6.4.1", "h0_0"),
        Pkg("python", HERE_PYTHON, "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",)),
    ])  # fmt: skip
    machine = ["__unix=0", "__linux=6.1", "__glibc=2.36"]
    if amdgpu_arch is not None:
        machine += ["__amdgpu=0", f"__amdgpu_arch={amdgpu_arch}"]
    if chosen is None:
        with pytest.raises(Exception, match="cannot be installed"):
            rattler_solve([Channel(converted), conda], [spec, "python"], machine)
        return
    records = rattler_solve([Channel(converted), conda], [spec, "python"], machine)
    gpulib = next(r for r in records if r.name.normalized == "gpulib")
    assert str(gpulib.build).rsplit("_", 1)[0] == chosen  # the build without its number


def _corrupt_member(wheel: Path, suffix: str) -> None:
    """Overwrite the start of the deflate stream of *wheel*'s member ending in *suffix* with
    0xff bytes (a block of the reserved type): the zip directory stays intact, and reading the
    member raises ``zlib.error``, which is no ``BadZipFile``."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        info = next(i for i in zf.infolist() if i.filename.endswith(suffix))
        assert info.compress_type == zipfile.ZIP_DEFLATED
    raw = bytearray(wheel.read_bytes())
    name_length = int.from_bytes(raw[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_length = int.from_bytes(raw[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_length + extra_length
    raw[start : start + 4] = b"\xff" * 4
    wheel.write_bytes(bytes(raw))


@pytest.mark.parametrize("member", ["/RECORD", "/__init__.py"])  # read while opened, or written
def test_a_member_whose_deflate_stream_is_corrupt_is_an_unreadable_wheel(
    cli: Cli, tmp_path: Path, member: str
) -> None:
    """One line naming the wheel, nothing written (the fuzz run's flipped byte was an internal
    error: ``zlib.error`` escaped)."""
    wheel = make_wheel(tmp_path / "w", "app", "1.0")
    _corrupt_member(wheel, member)
    out = tmp_path / "out"
    result = cli("convert", str(wheel), "-o", str(out), "--subdir", "linux-64")
    assert result.exit_code == 1, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {wheel}: not a readable wheel: Error -3 while decompressing")
    assert not list(out.rglob("*.tar.bz2"))
