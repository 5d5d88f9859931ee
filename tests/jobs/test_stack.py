"""Acceptance (issue 16): one GPU stack, one CUDA build.

Worlds of real metadata: the real ``torch-2.9.0-variants.json`` with wheels pinning the CUDA
components as the torch 2.10 declaration does, the real ``torchvision-0.24.0-variants.json`` with
torchvision's real ``Requires-Dist`` (``torch==2.9.0``, no CUDA component: only its label says its
toolkit), and cupy/cudf-shaped per-major releases (the real ``cupy-13.6.0`` and ``cudf-25.12``
variants: ``cu11``/``cu12``/``cu13`` and ``cuda12``/``cuda13``, lower bounds ``X.0``). GPU 9.0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.jobs.conftest import choose
from tests.jobs.test_torch_index import PY, environment
from tests.worlds.torch_index import INDEX, add_torchvision, build_torch_index, build_uv_stack
from tests.worlds.wheels import make_wheel
from variant_bridge.errors import SelectionError
from variant_bridge.jobs.select import PackageChoice


def _tree(
    root: Path, *, driver: str | None, toolkit: str | None, **kw: object
) -> dict[str, PackageChoice]:
    choices = choose(
        ["torch", "torchvision"], env=environment(driver=driver, toolkit=toolkit), python=PY,
        find_links=[root], **kw,  # type: ignore[arg-type]
    )  # fmt: skip
    return {c.files.project: c for c in choices}


def _labels(tree: dict[str, PackageChoice]) -> tuple[str | None, str | None]:
    torch, vision = tree["torch"].selected, tree["torchvision"].selected
    return (torch.label if torch else None, vision.label if vision else None)


def _reason(choice: PackageChoice, label: str) -> str:
    return next(v.reason for v in choice.selection.verdicts if v.label == label)


@pytest.fixture(scope="module")
def stack(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_torch_index(corpus, tmp_path_factory.mktemp("stack"))
    return add_torchvision(corpus, root)


@pytest.mark.parametrize(
    ("toolkit", "driver", "label"),
    [
        ("12.6", "12.9", "cuda12.6"),
        ("12.8", "12.9", "cuda12.8"),
        ("12.9", "12.9", "cuda12.8"),
        ("13.0", "13.0", "cuda13.0"),
        (None, "12.9", "cuda12.8"),  # no toolkit: uv's pick, for both
        (None, "13.0", "cuda13.0"),
    ],
)
def test_torchvision_takes_the_build_of_torchs_toolkit(
    stack: Path, toolkit: str | None, driver: str, label: str
) -> None:
    tree = _tree(stack, driver=driver, toolkit=toolkit)
    assert _labels(tree) == (label, label)
    cuda = label.removeprefix("cuda")
    chosen = tree["torchvision"].chosen
    assert chosen is not None
    assert chosen.reason.endswith(f"; follows torch 2.9.0 {label} (CUDA {cuda})")
    assert f"its label '{label}' says CUDA {cuda}" in chosen.reason
    assert tree["torchvision"].follows is not None
    assert tree["torch"].follows is None  # the anchor keeps its own choice


def test_the_label_refuses_a_newer_build_than_the_prefixs_toolkit(stack: Path) -> None:
    # The case: both torchvision labels declare lower bound 12.0; before labels were
    # evidence, the static priority took cuda12.8 beside torch's 12.6 runtime.
    tree = _tree(stack, driver="12.9", toolkit="12.6")
    assert _reason(tree["torchvision"], "cuda12.8") == (
        "variant cuda12.8: its label 'cuda12.8' says CUDA 12.8 but the prefix's toolkit is "
        "cuda-version 12.6"
    )


def test_a_toolkit_older_than_every_cuda_build_takes_the_cpu_builds_of_both(stack: Path) -> None:
    tree = _tree(stack, driver="12.9", toolkit="11.8")
    assert _labels(tree) == ("null", "null")


@pytest.fixture(scope="module")
def reversed_vision(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """torchvision preferring its cuda12.6 build (priority order swapped)."""
    root = build_torch_index(corpus, tmp_path_factory.mktemp("reversed"))
    add_torchvision(corpus, root)
    path = root / "torchvision-0.24.0-variants.json"
    document = json.loads(path.read_text())
    document["variants"]["cuda12.6"]["priority"]["order"] = ["1"]
    document["variants"]["cuda13.0"]["priority"]["order"] = ["3"]
    for wheel in root.glob("torchvision-*.whl"):
        wheel.unlink()
    path.unlink()
    _write_vision(root, document)
    return root


def _write_vision(root: Path, document: dict[str, object]) -> None:
    from tests.worlds.torch_index import TORCHVISION_REQUIRES

    (root / "torchvision-0.24.0-variants.json").write_text(json.dumps(document))
    variants: dict[str, object] = document["variants"]  # type: ignore[assignment]
    for label, properties in variants.items():
        one = {**document, "variants": {label: properties}}
        make_wheel(root, "torchvision", "0.24.0", label=label, requires=TORCHVISION_REQUIRES,
                   variant_json=json.dumps(one))  # fmt: skip


def test_torchvision_follows_even_against_its_own_preference(reversed_vision: Path) -> None:
    # Alone, torchvision prefers cuda12.6; in the tree it takes torch's cuda12.8.
    (alone,) = choose(
        ["torchvision"], env=environment(driver="12.9", toolkit="12.9"), python=PY,
        find_links=[reversed_vision], deps=False,
    )  # fmt: skip
    assert alone.selected is not None
    assert alone.selected.label == "cuda12.6"
    tree = _tree(reversed_vision, driver="12.9", toolkit="12.9")
    assert _labels(tree) == ("cuda12.8", "cuda12.8")
    assert _reason(tree["torchvision"], "cuda12.6").startswith(
        "variant cuda12.6: not CUDA 12.8, the toolkit of torch 2.9.0 cuda12.8 (one stack, one "
        "toolkit): toolkit CUDA 12.6: its label 'cuda12.6' says CUDA 12.6"
    )


def test_the_anchor_moves_to_the_toolkit_the_whole_stack_can_share(
    corpus: Path, tmp_path: Path
) -> None:
    # torchvision published for CUDA 12.6 and 13.0 only: with a 12.9 driver, torch's first
    # choice (cuda12.8) has no torchvision, its second (cuda12.6) has.
    root = build_torch_index(corpus, tmp_path / "world")
    add_torchvision(corpus, root, labels=("cuda12.6", "cuda13.0", "null"))
    tree = _tree(root, driver="12.9", toolkit=None)
    assert _labels(tree) == ("cuda12.6", "cuda12.6")
    torch = tree["torch"].chosen
    assert torch is not None
    assert "CUDA 12.6, the one toolkit its stack can share (torchvision 0.24.0 cannot follow" in (
        torch.reason
    )


def test_no_common_toolkit_is_an_error_naming_both_unless_the_mix_is_allowed(
    corpus: Path, tmp_path: Path
) -> None:
    root = build_torch_index(corpus, tmp_path / "world")
    add_torchvision(corpus, root, labels=("cuda13.0", "null"))
    with pytest.raises(SelectionError) as raised:
        _tree(root, driver="12.9", toolkit=None)
    message = str(raised.value)
    assert message.startswith(
        "torchvision 0.24.0 requires torch 2.9.0, but no CUDA toolkit fits torch 2.9.0 and "
        "torchvision 0.24.0: torch 2.9.0 can take cuda12.8 (CUDA 12.8), cuda12.6 (CUDA 12.6), "
        "null (CPU) [refused: variant cuda13.0: needs CUDA driver >= 13.0 but __cuda is 12.9]; "
    )
    assert (
        "; torchvision 0.24.0 can take null (CPU) [refused: variant cuda13.0: needs CUDA driver "
        ">= 13.0 but __cuda is 12.9]; "
    ) in message
    assert message.endswith("pass --allow-mix to keep each package's own choice")
    # The anchor never drops to its CPU build to agree (a silent downgrade).
    choices = choose(
        ["torch", "torchvision"], env=environment(driver="12.9", toolkit=None), python=PY,
        find_links=[root], allow_mix=True,
    )  # fmt: skip
    tree = {c.files.project: c for c in choices}
    assert _labels(tree) == ("cuda12.8", "null")
    assert tree["torch"].mixed == message.removesuffix(
        "; pass --allow-mix to keep each package's own choice"
    )


@pytest.fixture(scope="module")
def rapids(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cudf-shaped (labels cuda12, cuda13) requiring cupy-shaped (cu11, cu12, cu13): the real
    variants files, one wheel per label."""
    root = tmp_path_factory.mktemp("rapids")
    for name, version, requires in (
        ("cupy", "13.6.0", ()),
        ("cudf", "25.12.0a135", ("cupy>=13.6",)),
    ):
        real = corpus / INDEX / name / f"{name}-{version}-variants.json"
        document = json.loads(real.read_text())
        (root / real.name).write_text(real.read_text())
        for label, properties in document["variants"].items():
            one = {**document, "variants": {label: properties}}
            make_wheel(root, name, version, label=label, requires=requires,
                       variant_json=json.dumps(one))  # fmt: skip
    return root


@pytest.mark.parametrize("toolkit", ["12.0", "12.4", "12.6", "12.8", "12.9"])
def test_a_per_major_wheel_belongs_beside_any_toolkit_of_its_major(
    rapids: Path, toolkit: str
) -> None:
    choices = choose(
        ["cudf"], env=environment(driver="13.0", toolkit=toolkit), python=PY, find_links=[rapids]
    )
    tree = {c.files.project: c for c in choices}
    assert tree["cudf"].selected is not None
    assert tree["cupy"].selected is not None
    assert (tree["cudf"].selected.label, tree["cupy"].selected.label) == ("cuda12", "cu12")
    cupy = tree["cupy"].chosen
    assert cupy is not None
    assert "toolkit CUDA 12.x: its label 'cu12' says any CUDA 12.x (a per-major wheel)" in (
        cupy.reason
    )


def test_a_per_major_stack_shares_the_major(rapids: Path) -> None:
    choices = choose(
        ["cudf"], env=environment(driver="13.0", toolkit=None), python=PY, find_links=[rapids]
    )
    tree = {c.files.project: c for c in choices}
    assert tree["cudf"].selected is not None
    assert tree["cupy"].selected is not None
    assert (tree["cudf"].selected.label, tree["cupy"].selected.label) == ("cuda13", "cu13")


@pytest.fixture(scope="module")
def labels_only(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """torch and torchvision without a CUDA component pin anywhere: only labels say toolkits."""
    return build_uv_stack(corpus, tmp_path_factory.mktemp("labels-only"))


@pytest.mark.parametrize(
    ("toolkit", "driver", "label"),
    [("12.6", "12.9", "cuda12.6"), (None, "12.9", "cuda12.8"), (None, "13.0", "cuda13.0")],
)
def test_without_pins_the_package_others_require_anchors_the_stack(
    labels_only: Path, toolkit: str | None, driver: str, label: str
) -> None:
    tree = _tree(labels_only, driver=driver, toolkit=toolkit)
    assert _labels(tree) == (label, label)
    assert tree["torchvision"].follows is not None
    assert tree["torchvision"].follows.anchor == f"torch 2.9.0 {label}"
