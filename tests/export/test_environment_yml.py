"""environment.yml: the text reads back as the data, conda's keys only, and a truthful header."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from packaging.requirements import Requirement

from tests.export.snapshots import CF, NUMPY, TORCH_ORIGIN, model
from variant_bridge.environment import CondaRecord
from variant_bridge.export import environment_yml
from variant_bridge.export.build import Pinning
from variant_bridge.export.environment_yml import NODEFAULTS, render, to_dict
from variant_bridge.export.model import IndexOptions


def test_the_text_reads_back_as_the_data() -> None:
    m = model(index_options=IndexOptions(None, (), ("/srv/wheels",)))
    assert yaml.safe_load(render(m)) == to_dict(m)


def test_only_keys_conda_knows() -> None:
    assert set(to_dict(model())) == {"name", "channels", "dependencies"}


def test_dependencies_then_host_requirements_then_pip() -> None:
    data = to_dict(model())
    assert data["dependencies"] == [
        "cuda-version=12.6=h0_3",
        "libcublas=12.6.77=h0_0",
        "python=3.12.7=h0_0_cpython",
        "__cuda >=12.6",
        {"pip": ["numpy==2.1.0", f"torch @ {TORCH_ORIGIN.url}#sha256={'ab' * 32}"]},
    ]


def test_a_virtual_package_only_a_plugin_provides_is_a_header_comment_naming_it() -> None:
    """Stock conda has no __cuda_arch: written as a dependency, `conda env create` fails with
    PackagesNotFoundInChannelsError (checked against conda 26.1, docs/share.md)."""
    m = model()
    text = render(m)
    assert "__cuda_arch" not in "".join(str(d) for d in to_dict(m)["dependencies"])
    assert (
        "#   __cuda_arch >=9.0,<10 (needs the nvidia-virtual-packages conda plugin; NOT a "
        "dependency, stock conda lacks it) <- torch 2.9.0 [cu126]"
    ) in text.splitlines()
    (note,) = [n for n in environment_yml.notes(m) if "__cuda_arch" in n]
    assert "the nvidia-virtual-packages plugin provides it" in note
    assert "--strict-host-requirements" in note


def test_strict_writes_the_plugin_requirement_too() -> None:
    m = model(strict_host_requirements=True)
    assert "__cuda_arch >=9.0,<10" in to_dict(m)["dependencies"]
    assert environment_yml.notes(m) == []


def test_two_wheels_requirements_on_one_virtual_package_become_their_intersection() -> None:
    """conda would glue two lines into `>=8.0,<9|>=9.0,<10,>=7.5,<8|>=9.0,<10`, where `,` binds
    tighter than `|`: one line, the intersection, says what both wheels need."""
    from variant_bridge.environment import PythonDistribution
    from variant_bridge.properties import VariantDescription

    def wheel(name: str, props: str) -> PythonDistribution:
        return PythonDistribution(
            name, "1.0", variant=VariantDescription.parse(f"cu128: {props}"),
            location=f"/env/{name}-1.0.dist-info",
        )  # fmt: skip

    a = wheel("alib", "nvidia :: cuda_version_lower_bound :: 12.6; nvidia :: sm_arch :: "
              "80_real; nvidia :: sm_arch :: 90_real")  # fmt: skip
    b = wheel("blib", "nvidia :: cuda_version_lower_bound :: 12.8; nvidia :: sm_arch :: "
              "75_real; nvidia :: sm_arch :: 90_real")  # fmt: skip
    m = model(env={"python_packages": (a, b)}, origins=(), pinning=Pinning(allow_unpinned=True),
              strict_host_requirements=True)  # fmt: skip
    specs = [d for d in to_dict(m)["dependencies"] if isinstance(d, str) and d.startswith("__")]
    assert specs == ["__cuda >=12.8", "__cuda_arch >=9.0,<10"]
    (arch,) = [h for h in m.host_requirements if h.spec.startswith("__cuda_arch")]
    assert arch.wheels == ("alib 1.0 [cu128]", "blib 1.0 [cu128]")


def test_every_pip_line_is_a_pep_508_requirement() -> None:
    m = model(index_options=IndexOptions("https://idx.example/simple", ("https://x/simple",), ()))
    pip = to_dict(m)["dependencies"][-1]["pip"]
    options = [line for line in pip if line.startswith("--")]
    assert options == [
        "--index-url https://idx.example/simple",
        "--extra-index-url https://x/simple",
    ]
    requirements = [Requirement(line) for line in pip if not line.startswith("--")]
    assert [(r.name, str(r.specifier), r.url) for r in requirements] == [
        ("numpy", "==2.1.0", None),
        ("torch", "", f"{TORCH_ORIGIN.url}#sha256={'ab' * 32}"),
    ]


def test_no_pip_section_without_pypi_packages() -> None:
    data = to_dict(model(env={"python_packages": ()}))
    assert not any(isinstance(d, dict) for d in data["dependencies"])


@pytest.mark.parametrize(
    ("channel", "nodefaults"),
    [
        (CF, True),  # conda-forge only: keep Anaconda's defaults out of the solve
        ("https://repo.anaconda.com/pkgs/main", False),  # uses defaults itself
        ("defaults", False),
    ],
)
def test_nodefaults_unless_defaults_are_used(channel: str, nodefaults: bool) -> None:
    records = (CondaRecord("python", "3.12.7", "h0", channel=channel),)
    data = to_dict(
        model(env={"conda_packages": records, "toolkit": None, "python_packages": (NUMPY,)})
    )
    assert (NODEFAULTS in data["channels"]) is nodefaults


def test_the_header_states_producer_origin_view_and_requirements() -> None:
    text = render(model(producer="variant-bridge 0.1.0: variant-bridge export --prefix /env"))
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert header[0] == "# Produced by variant-bridge 0.1.0: variant-bridge export --prefix /env"
    assert "# from prefix /env (linux-64)." in header
    assert "#   driver: __cuda=12.9 (CONDA_OVERRIDE_CUDA)" in header
    assert "#   toolkit: cuda-version=12.6 (conda-meta)" in header
    assert "#   GPU architecture: __cuda_arch=9.0 (CONDA_OVERRIDE_CUDA_ARCH)" in header
    assert "#   CPU: __archspec=1=haswell (detected)" in header
    assert "#   __cuda >=12.6 <- torch 2.9.0 [cu126]" in header
    # the header comes first: nothing but comments before `name:`
    assert text.splitlines()[len(header)] == "name: env"


def test_what_the_wheels_also_expect_says_what_pins_it_and_what_nothing_pins() -> None:
    from variant_bridge.environment import PythonDistribution
    from variant_bridge.properties import VariantDescription

    header = [line for line in render(model()).splitlines() if line.startswith("#")]
    assert (
        "# The variant wheels also expect (not added as dependencies): cuda-version >=12.6,<13 "
        "(pinned above: cuda-version=12.6=h0_3)"
    ) in header
    rocm = PythonDistribution(
        "torch", "2.9.0", location="/env/torch-2.9.0.dist-info",
        variant=VariantDescription.parse(
            "rocm6.4: amd :: gfx_arch :: gfx942; amd :: rocm_version :: 6.4"
        ),
    )  # fmt: skip
    m = model(env={"python_packages": (rocm,)}, origins=(), pinning=Pinning(allow_unpinned=True))
    text = render(m)
    assert "toolkit is pinned" not in text  # no toolkit pin covers a ROCm runtime
    assert (
        "# The variant wheels also expect (not added as dependencies): rocm-core 6.4.* "
        "(not pinned: no rocm-core among the dependencies)"
    ) in text.splitlines()


def test_the_toolkit_and_host_lines_carry_comments() -> None:
    lines = render(model()).splitlines()
    assert "  - cuda-version=12.6=h0_3  # the solved CUDA toolkit (conda-meta)" in lines
    assert "  - __cuda >=12.6  # torch 2.9.0 [cu126]" in lines


def test_an_inexpressible_requirement_is_a_comment_only() -> None:
    from variant_bridge.environment import PythonDistribution
    from variant_bridge.export.origins import WheelOrigin
    from variant_bridge.properties import VariantDescription

    wheel = PythonDistribution(
        "fastlib",
        "1.0",
        variant=VariantDescription.parse("avx: x86_64 :: avx512f :: on"),
        location="/env/fastlib-1.0.dist-info",
    )
    origin = WheelOrigin("fastlib", "1.0", "avx", "https://x/f.whl", None, "direct_url.json")
    m = model(env={"python_packages": (wheel,)}, origins=(origin,))
    data = to_dict(m)
    assert not any(str(d).startswith("__archspec") for d in data["dependencies"])
    assert "conda cannot express this; NOT enforced" in render(m)


@pytest.mark.parametrize(
    "name",
    [
        "yes",  # YAML 1.1 reads it as a boolean
        "1.0",  # a float
        "my env: gpu",  # ": " starts a mapping
        "gpu #1",  # " #" starts a comment
        "- dash",  # a sequence entry
        "'quoted'",
    ],
)
def test_awkward_names_are_quoted_so_they_read_back(name: str) -> None:
    m = model(env={"python_packages": (NUMPY,)})
    m = dataclasses.replace(m, name=name)
    assert yaml.safe_load(render(m))["name"] == name


def test_an_empty_environment_has_empty_lists_not_nulls() -> None:
    m = model(env={"conda_packages": (), "toolkit": None, "python_packages": ()})
    text = render(m)
    assert "channels: []\n" in text
    assert "dependencies: []\n" in text
    data = yaml.safe_load(text)
    assert (data["channels"], data["dependencies"]) == ([], [])
    assert data == to_dict(m)


def test_variant_filenames_are_said_to_need_a_variant_aware_installer() -> None:
    from variant_bridge.export.model import VARIANT_FILENAMES_NOTE

    header = [line for line in render(model()).splitlines() if line.startswith("#")]
    assert "# Note: the variant wheels are pinned by their variant filenames" in " ".join(header)
    assert "--preview-features wheel-variants" in " ".join(header)
    assert "--wheels-dir" in " ".join(header)
    # a plain wheel URL needs no such note
    plain = dataclasses.replace(
        TORCH_ORIGIN, url="https://wheels.example/torch-2.9.0-py3-none-any.whl"
    )
    assert VARIANT_FILENAMES_NOTE not in model(origins=(plain,)).notes


def test_a_copied_wheel_is_the_pip_line_and_the_original_stays_in_the_header() -> None:
    m = model()
    [torch] = [p for p in m.pip if p.name == "torch"]
    copy = "/share/wheels/torch-2.9.0-cp312-cp312-linux.whl"
    m = dataclasses.replace(
        m,
        pip=tuple(dataclasses.replace(p, copy=copy) if p.name == "torch" else p for p in m.pip),
        wheels_dir="/share/wheels",
    )
    pip = to_dict(m)["dependencies"][-1]["pip"]
    assert pip[-1] == f"torch @ file://{copy}#sha256={'ab' * 32}"
    header = " ".join(line for line in render(m).splitlines() if line.startswith("#"))
    assert "byte-identical copies of the variant wheels in /share/wheels" in header
    assert f"{TORCH_ORIGIN.url}#sha256={'ab' * 32}" in header  # the faithful pin
    assert torch.reference == f"torch @ {TORCH_ORIGIN.url}#sha256={'ab' * 32}"


@pytest.mark.parametrize(
    ("python_packages", "claims_variants"),
    [
        ((), False),  # QA: no pip section, yet "The variant wheels in the pip section were..."
        ((NUMPY,), False),  # plain wheels only
        (None, True),  # torch [cu126]: the claim is true
    ],
)
def test_the_header_claims_variant_wheels_only_when_there_are_some(
    python_packages: tuple[object, ...] | None, claims_variants: bool
) -> None:
    env = {} if python_packages is None else {"python_packages": python_packages}
    text = render(model(env=env))
    assert ("variant wheels in the pip section were chosen" in text) is claims_variants
    assert ("has no variant wheels; the bridged view when it was exported:" in text) is not (
        claims_variants
    )
    assert "#   driver: __cuda=12.9 (CONDA_OVERRIDE_CUDA)" in text  # the view is still stated
