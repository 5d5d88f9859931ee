"""The export model built from hand-made snapshots: pins, host requirements, pip lines, platform."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.export.conftest import ExportWorld, export_prefix
from tests.export.snapshots import (
    CF,
    HOST,
    NUMPY,
    RECORDS,
    TORCH_CU126,
    TORCH_ORIGIN,
    TORCH_PTX,
    environment,
)
from variant_bridge.environment import (
    CondaRecord,
    Environment,
    PythonDistribution,
    Source,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.errors import ExportError
from variant_bridge.export.build import Pinning, build_export
from variant_bridge.export.model import IndexOptions, PlatformDeclaration
from variant_bridge.export.origins import WheelOrigin
from variant_bridge.properties import VariantDescription


def specs(model_env: Environment, **options: object) -> list[str]:
    options.setdefault("origins", (TORCH_ORIGIN,))
    model = build_export(model_env, name="env", **options)  # type: ignore[arg-type]
    return [d.spec for d in model.dependencies]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, ["cuda-version=12.6=h0_3", "libcublas=12.6.77=h0_0", "python=3.12.7=h0_0_cpython"]),
        (
            {"pinning": Pinning("version")},
            ["cuda-version=12.6", "libcublas=12.6.77", "python=3.12.7"],
        ),
        ({"pinning": Pinning("none")}, ["cuda-version=12.6", "libcublas", "python"]),
        (  # only requests; the toolkit pin is added
            {"requested_specs": ("python=3.12", "libcublas")},
            ["python=3.12", "libcublas", "cuda-version=12.6"],
        ),
        (  # a loose toolkit request is replaced by the exact pin, not duplicated
            {"requested_specs": ("python", "cuda-version >=12")},
            ["python", "cuda-version=12.6"],
        ),
        ({"requested_specs": ()}, ["cuda-version=12.6"]),  # nothing recorded: the pin only
    ],
)
def test_conda_dependencies(options: dict[str, object], expected: list[str]) -> None:
    assert specs(environment(), **options) == expected


def test_the_toolkit_line_says_why_it_is_there() -> None:
    model = build_export(environment(), name="env", origins=(TORCH_ORIGIN,))
    toolkit = model.toolkit_dependency
    assert toolkit is not None
    assert toolkit.spec == "cuda-version=12.6=h0_3"
    assert "the solved CUDA toolkit" in (toolkit.comment or "")


def test_an_old_cudatoolkit_is_pinned_to_major_minor() -> None:
    env = environment(
        toolkit=Toolkit("cudatoolkit", "11.8.0", Source.PREFIX),
        conda_packages=(CondaRecord("python", "3.10.0", "h0"),),
    )
    assert specs(env, requested_specs=("python",)) == ["python", "cudatoolkit=11.8"]


def test_a_requested_spec_that_is_not_a_match_spec_is_an_error() -> None:
    with pytest.raises(ExportError, match="'python==='"):
        specs(environment(), requested_specs=("python===",))


def test_host_requirements_come_from_the_wheel_properties() -> None:
    model = build_export(environment(), name="env", origins=(TORCH_ORIGIN,))
    assert [(h.spec, h.wheels) for h in model.host_requirements] == [
        ("__cuda >=12.6", ("torch 2.9.0 [cu126]",)),
        ("__cuda_arch >=9.0,<10", ("torch 2.9.0 [cu126]",)),
    ]
    assert model.implied_specs == ("cuda-version >=12.6,<13",)  # reported, not added
    assert not any("expects" in note for note in model.notes)  # consistent with the pin


def test_no_host_requirements_drops_them() -> None:
    model = build_export(
        environment(), name="env", origins=(TORCH_ORIGIN,), host_requirements=False
    )
    assert model.host_requirements == ()


def test_a_wheel_built_for_a_newer_toolkit_is_reported() -> None:
    torch = PythonDistribution(
        "torch",
        "2.9.0",
        variant=VariantDescription.parse("cu128: nvidia :: cuda_version_lower_bound :: 12.8"),
        location="/env/site-packages/torch-2.9.0.dist-info",
    )
    origin = WheelOrigin("torch", "2.9.0", "cu128", "https://x/t.whl", None, "direct_url.json")
    model = build_export(environment(python_packages=(torch,)), name="env", origins=(origin,))
    assert any(
        "torch 2.9.0 [cu128] expects cuda-version >=12.8,<13" in note
        and "cuda-version=12.6" in note
        for note in model.notes
    )


def cpu_model(channels: tuple[str, ...], installed: tuple[CondaRecord, ...] = ()) -> list[object]:
    wheel = PythonDistribution(
        "fastlib",
        "1.0",
        variant=VariantDescription.parse("v3: x86_64 :: level :: v3"),
        location="/env/site-packages/fastlib-1.0.dist-info",
    )
    origin = WheelOrigin("fastlib", "1.0", "v3", "https://x/f.whl", "cd" * 32, "direct_url.json")
    records = tuple(
        CondaRecord(r.name, r.version, r.build, channel=channels[0]) for r in (*RECORDS, *installed)
    )
    env = environment(python_packages=(wheel,), conda_packages=records, toolkit=None)
    model = build_export(env, name="env", origins=(origin,))
    return [
        (h.spec, h.expressible, h.rattler_spec.startswith("__archspec["))
        for h in model.host_requirements
    ]


def test_a_cpu_level_becomes_conda_forges_metapackage_where_it_can_be_had() -> None:
    assert cpu_model((CF,)) == [("_x86_64-microarch-level >=3", True, True)]


def test_a_cpu_level_without_conda_forge_is_a_comment_not_a_line() -> None:
    # conda ANDs environment.yml lines and cannot match the CEP 29 regex: nothing to write.
    [(spec, expressible, regex)] = cpu_model(("file:///private/channel",))
    assert not expressible
    assert regex
    assert isinstance(spec, str)
    assert spec.startswith("__archspec build one of: ")
    assert "haswell" in spec


def test_an_unpinned_variant_wheel_is_an_error_naming_it() -> None:
    unknown = WheelOrigin("torch", "2.9.0", "cu126", None, None, "no direct_url.json and ...")
    with pytest.raises(ExportError, match=r"torch 2\.9\.0 \[cu126\]") as info:
        build_export(environment(), name="env", origins=(unknown,))
    assert "--allow-unpinned" in str(info.value)


def test_allow_unpinned_exports_name_equals_version_and_says_so() -> None:
    unknown = WheelOrigin("torch", "2.9.0", "cu126", None, None, "no direct_url.json")
    model = build_export(
        environment(), name="env", origins=(unknown,), pinning=Pinning(allow_unpinned=True)
    )
    torch = next(p for p in model.pip if p.name == "torch")
    assert str(torch) == "torch==2.9.0"
    assert any("exported unpinned" in note for note in model.notes)


def test_pip_lines() -> None:
    model = build_export(
        environment(),
        name="env",
        origins=(TORCH_ORIGIN,),
        index_options=IndexOptions("https://pypi.example/simple", (), ("/wheels",)),
    )
    assert [str(p) for p in model.pip] == [
        "numpy==2.1.0",
        f"torch @ {TORCH_ORIGIN.url}#sha256={'ab' * 32}",
    ]
    assert model.index_options.pip_lines() == (
        "--index-url https://pypi.example/simple",
        "--find-links file:///wheels",
    )


@pytest.mark.parametrize(
    ("location", "line"),
    [
        ("/srv/my wheels", "--find-links file:///srv/my%20wheels"),  # QA: pip split it in two
        ("/srv/wheels#1", "--find-links file:///srv/wheels%231"),  # " #" would start a comment
        ("https://x.example/links/", "--find-links https://x.example/links/"),  # URLs unchanged
        ("file:///srv/w", "--find-links file:///srv/w"),
        ("rel dir", "--find-links 'rel dir'"),  # no URL form: quoted as shlex (pip) reads it
    ],
)
def test_find_links_lines_are_one_word_for_pip(location: str, line: str) -> None:
    import shlex

    [written] = IndexOptions(None, (), (location,)).pip_lines()
    assert written == line
    assert len(shlex.split(written)) == 2  # pip's requirements-file parser: option + value


PIP_FILE = "https://files.pythonhosted.org/packages/ab/cd/numpy-2.1.0-cp312-none-any.whl"
LOCAL_INDEX = "http://127.0.0.1:8765/files/numpy-2.1.0-py3-none-any.whl"


@pytest.mark.parametrize(
    ("direct_url", "location", "options", "noted"),
    [
        # QA: installed from a private index, exported as a bare numpy==2.1.0
        (LOCAL_INDEX, None, IndexOptions(), True),
        (LOCAL_INDEX, None, IndexOptions(None, (), ("https://x.example/links/",)), True),
        # the index it came from is in the export: nothing to say
        (LOCAL_INDEX, None, IndexOptions("http://127.0.0.1:8765/simple"), False),
        (LOCAL_INDEX, None, IndexOptions(None, ("http://127.0.0.1:8765/simple",)), False),
        (PIP_FILE, None, IndexOptions(), False),  # PyPI's own files host
        ("file:///wheels/numpy-2.1.0-py3-none-any.whl", None, IndexOptions(), False),
        (None, None, IndexOptions(), False),  # no direct_url.json: nothing known
        (None, LOCAL_INDEX, IndexOptions(), True),  # a pixi.lock entry's URL
    ],
)
def test_a_plain_wheel_from_another_index_is_noted(
    direct_url: str | None, location: str | None, options: IndexOptions, noted: bool
) -> None:
    numpy = PythonDistribution(
        "numpy",
        "2.1.0",
        location=location or "/env/site-packages/numpy-2.1.0.dist-info",
        direct_url=direct_url,
    )
    env = environment(python_packages=(TORCH_CU126, numpy))
    model = build_export(env, name="env", origins=(TORCH_ORIGIN,), index_options=options)
    assert "numpy==2.1.0" in [str(p) for p in model.pip]  # still name==version
    notes = [n for n in model.notes if n.startswith("numpy 2.1.0 was installed from")]
    assert bool(notes) is noted
    if noted:
        assert notes == [
            (
                f"numpy 2.1.0 was installed from {LOCAL_INDEX}, not from PyPI, but is exported "
                "as numpy==2.1.0, which is looked up on PyPI: pass the index it came from with "
                "--index-url or --extra-index-url"
            )
        ]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        # the wheels need __cuda >=12.6 and __cuda_arch 9.x; cuda-version constrains __cuda >=12
        ({}, PlatformDeclaration("linux-64", cuda="12.6", cuda_arch="9.0")),
        (  # kernels for 9.x plus PTX: every GPU from 9.0 up, which pixi can state
            {"python_packages": (TORCH_PTX,)},
            PlatformDeclaration("linux-64", cuda="12.6", cuda_arch="9.0"),
        ),
        (  # no variant wheels: the toolkit's major is enough (pixi's `cuda = "12"`)
            {"python_packages": (NUMPY,)},
            PlatformDeclaration("linux-64", cuda="12"),
        ),
        (  # no toolkit, no wheels, nothing depends on __cuda: a plain platform
            {
                "python_packages": (NUMPY,),
                "toolkit": None,
                "conda_packages": (RECORDS[0], RECORDS[2]),
            },
            PlatformDeclaration("linux-64"),
        ),
        (  # a record that needs a newer glibc than pixi's default 2.28 declares it
            {
                "python_packages": (NUMPY,),
                "toolkit": None,
                "conda_packages": (CondaRecord("new", "1", "0", depends=("__glibc >=2.34",)),),
            },
            PlatformDeclaration("linux-64", glibc="2.34"),
        ),
    ],
)
def test_the_pixi_platform_declares_the_lowest_sufficient_machine(
    changes: dict[str, object], expected: PlatformDeclaration
) -> None:
    model = build_export(environment(**changes), name="env", origins=(TORCH_ORIGIN,))
    assert replace(model.platform_declaration, unenforceable=()) == expected


@pytest.mark.parametrize(
    ("torch", "unenforceable"),
    [
        (TORCH_CU126, ["__cuda_arch >=9.0,<10"]),  # kernels for 9.x only: a 10.0 GPU is not ok
        (TORCH_PTX, []),  # plus PTX: upward closed
    ],
)
def test_a_bound_pixi_cannot_declare_is_recorded(
    torch: PythonDistribution, unenforceable: list[str]
) -> None:
    env = environment(python_packages=(torch,))
    model = build_export(env, name="env", origins=(TORCH_ORIGIN,))
    assert [h.spec for h in model.platform_declaration.unenforceable] == unenforceable


def test_a_cpu_level_declares_the_generic_microarchitecture() -> None:
    wheel = PythonDistribution(
        "fastlib",
        "1.0",
        variant=VariantDescription.parse("v3: x86_64 :: level :: v3"),
        location="/env/site-packages/fastlib-1.0.dist-info",
    )
    origin = WheelOrigin("fastlib", "1.0", "v3", "https://x/f.whl", None, "direct_url.json")
    model = build_export(environment(python_packages=(wheel,)), name="env", origins=(origin,))
    assert model.platform_declaration.archspec == "x86_64_v3"


DRIVER = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
SM_ARCH = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"
NO_GPU = tuple(vp for vp in HOST if vp.name not in ("__cuda", "__cuda_arch"))
NEWER_GPU = (
    *NO_GPU,
    VirtualPackage("__cuda", "13.0", "0", Source.DETECTED),
    VirtualPackage("__cuda_arch", "12.0", "0", Source.DETECTED),
)


PINS = "VARIANT_BRIDGE_EXPORTED_PINS"


def pinned(**values: str) -> dict[str, str]:
    """The variables an export writes: the pins, and the list that marks them as exported."""
    names = {"driver": DRIVER, "sm": SM_ARCH}
    pins = {names[k]: v for k, v in values.items()}
    return {**pins, PINS: " ".join(f"{k}={v}" for k, v in pins.items())} if pins else {}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        # toolkit policy: lower bounds up to the toolkit's 12.6 (not the driver's 12.9); the GPU
        # the environment targets (not the lowest the wheels accept)
        ({}, pinned(driver="12.6", sm="9.0")),
        # QA: an exporting machine without a GPU wrote "none" for a cu126 environment
        ({"virtual_packages": NO_GPU}, pinned(driver="12.6")),
        # QA: an H100 host was pinned to 8.0, the lowest GPU the wheels accept; the target's
        ({"virtual_packages": NEWER_GPU}, pinned(driver="12.6", sm="12.0")),
        # QA: a cuda-version 12.6 export without variant wheels wrote 12.0 (uv then took the
        # CPU build of a >=12.6 wheel); the toolkit's value is what select uses
        ({"virtual_packages": NO_GPU, "python_packages": (NUMPY,)}, pinned(driver="12.6")),
        # no toolkit, no variant wheels: uv detects the machine, as select does: no pins
        (
            {"python_packages": (NUMPY,), "toolkit": None, "conda_packages": (RECORDS[0],)},
            {},
        ),
        # variant wheels without a toolkit (driver policy): the driver is the machine's
        ({"toolkit": None, "conda_packages": (RECORDS[0],)}, pinned(sm="9.0")),
    ],
)
def test_activation_env_pins_the_environments_toolkit_and_target_gpu(
    changes: dict[str, object], expected: dict[str, str]
) -> None:
    model = build_export(environment(**changes), name="env", origins=(TORCH_ORIGIN,))
    assert dict(model.activation_env) == expected


def test_activation_env_is_the_same_without_host_requirements() -> None:
    model = build_export(
        environment(), name="env", origins=(TORCH_ORIGIN,), host_requirements=False
    )
    assert dict(model.activation_env) == pinned(driver="12.6", sm="9.0")


def test_the_view_names_every_fact_with_its_source() -> None:
    lines = build_export(environment(), name="env", origins=(TORCH_ORIGIN,)).view.lines()
    assert lines == (
        "driver: __cuda=12.9 (CONDA_OVERRIDE_CUDA)",
        "toolkit: cuda-version=12.6 (conda-meta)",
        "GPU architecture: __cuda_arch=9.0 (CONDA_OVERRIDE_CUDA_ARCH)",
        "CPU: __archspec=1=haswell (detected)",
        "C library: __glibc=2.36 (detected)",
    )


def test_no_host_requirements_also_keeps_them_off_the_pixi_platform() -> None:
    model = build_export(
        environment(), name="env", origins=(TORCH_ORIGIN,), host_requirements=False
    )
    # only what the pinned packages need: the toolkit's major, no GPU architecture
    assert model.platform_declaration == PlatformDeclaration("linux-64", cuda="12")


@pytest.mark.parametrize("kind", ["constrains", "depends"])
def test_a_malformed_virtual_package_spec_in_a_record_is_an_error_naming_it(
    world_copy: ExportWorld, kind: str
) -> None:
    """The attack's C4: ``constrains: [__cuda >]`` crashed export."""
    (record,) = world_copy.prefix.glob("conda-meta/cuda-version-*.json")
    data = json.loads(record.read_text())
    data[kind] = [*data.get(kind, []), "__cuda >"]
    record.write_text(json.dumps(data))
    with pytest.raises(ExportError) as error:
        export_prefix(world_copy)
    message = str(error.value)
    assert f"cuda-version=12.6=h0_3: invalid {kind} entry '__cuda >': " in message
    assert str(world_copy.prefix) in message
