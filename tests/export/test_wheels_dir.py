"""--wheels-dir: byte-identical copies under non-variant names, hash-checked, pinned instead."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.export.conftest import ExportWorld, export_prefix
from variant_bridge import export
from variant_bridge.errors import ExportError
from variant_bridge.export import ExportModel
from variant_bridge.export.model import VARIANT_FILENAMES_NOTE, relative_reference
from variant_bridge.indexes import Downloads
from variant_bridge.indexes.transport import Transport


def _downloads() -> Downloads:
    """A command's downloads (a folder of its own, removed with the temporary directories)."""
    return Downloads(Path(tempfile.mkdtemp(prefix="vb-test-wheels-dir-")), transport=Transport())


def copy_wheels(model: ExportModel, directory: Path, **options: Any) -> ExportModel:
    options.setdefault("downloads", _downloads())
    return export.copy_wheels(model, directory, **options)


@contextlib.contextmanager
def copied_wheels(model: ExportModel, directory: Path, **options: Any) -> Iterator[ExportModel]:
    options.setdefault("downloads", _downloads())
    with export.copied_wheels(model, directory, **options) as copied:
        yield copied


pytestmark = pytest.mark.slow


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def exported(export_world: ExportWorld) -> ExportModel:
    return export_prefix(export_world)


def test_copies_are_byte_identical_under_the_non_variant_name(
    export_world: ExportWorld, exported: ExportModel, tmp_path: Path
) -> None:
    assert VARIANT_FILENAMES_NOTE in exported.notes
    model = copy_wheels(exported, tmp_path / "share" / "wheels", relative_to=tmp_path / "share")
    assert sorted(p.name for p in (tmp_path / "share" / "wheels").iterdir()) == [
        "gpuext-0.3-py3-none-any.whl",
        "tinyvar-1.0-py3-none-any.whl",
    ]
    by_name = {p.name: p for p in model.pip}
    for name in ("gpuext", "tinyvar"):
        requirement = by_name[name]
        assert requirement.copy is not None
        copy = Path(requirement.copy)
        assert copy.read_bytes() == export_world.installed[name].read_bytes()
        assert requirement.sha256 == sha256(copy)
        assert requirement.copy_relative == f"./wheels/{copy.name}"
        assert requirement.size == copy.stat().st_size
        # in the file's own folder: the relative form pip 23 accepts with a hash
        assert str(requirement) == f"file:./wheels/{copy.name}#sha256={requirement.sha256}"
        # the faithful pin is kept
        assert requirement.url == export_world.installed[name].as_uri()
    assert str(by_name["plainpkg"]) == "plainpkg==2.0"  # not a variant wheel: not copied
    assert VARIANT_FILENAMES_NOTE not in model.notes
    assert model.wheels_dir == str(tmp_path / "share" / "wheels")


@pytest.mark.parametrize(
    ("existing", "overwrite", "error"),
    [
        ("same", False, None),  # a second export into the same folder keeps the copy
        ("other", False, "exists with other content"),  # never replaced without --force
        ("other", True, None),  # --force replaces it
    ],
)
def test_an_existing_copy(
    *,
    export_world: ExportWorld,
    exported: ExportModel,
    tmp_path: Path,
    existing: str,
    overwrite: bool,
    error: str | None,
) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    copy = wheels / "tinyvar-1.0-py3-none-any.whl"
    source = export_world.installed["tinyvar" if existing == "same" else "gpuext"]
    shutil.copy(source, copy)
    before = copy.read_bytes()
    if error is not None:
        with pytest.raises(ExportError, match=error):
            copy_wheels(exported, wheels, relative_to=tmp_path, overwrite=overwrite)
        assert copy.read_bytes() == before
    else:
        copy_wheels(exported, wheels, relative_to=tmp_path, overwrite=overwrite)
        assert copy.read_bytes() == export_world.installed["tinyvar"].read_bytes()


def test_a_wheel_whose_bytes_changed_is_not_copied(
    export_world: ExportWorld, exported: ExportModel, tmp_path: Path
) -> None:
    import dataclasses

    changed = tmp_path / "src" / export_world.installed["tinyvar"].name
    changed.parent.mkdir()
    shutil.copy(export_world.installed["gpuext"], changed)
    pip = tuple(
        dataclasses.replace(p, url=changed.as_uri()) if p.name == "tinyvar" else p
        for p in exported.pip
    )
    model = dataclasses.replace(exported, pip=pip)
    with pytest.raises(ExportError) as info:
        copy_wheels(model, tmp_path / "wheels", relative_to=tmp_path)
    message = str(info.value)
    assert f"has sha256 {sha256(changed)}" in message
    assert sha256(export_world.installed["tinyvar"]) in message
    assert not (tmp_path / "wheels" / "tinyvar-1.0-py3-none-any.whl").exists()


def _marked(exported: ExportModel, tmp_path: Path, sha: str | None) -> tuple[ExportModel, Path]:
    """*exported* with tinyvar pinned to a cu126 wheel whose cuBLAS pins carry variant markers."""
    import dataclasses

    from tests.worlds.wheels import make_wheel

    lines = [
        f"nvidia-cublas-cu12=={v}; variant_label == '{label}'"
        for label, v in (("cu126", "12.6.4.1"), ("cu128", "12.8.4.1"))
    ]
    lower = "nvidia :: cuda_version_lower_bound :: 12.6"
    wheel = make_wheel(tmp_path / "src", "tinyvar", "1.0", label="cu126", properties=[lower],
                       requires=lines)  # fmt: skip
    pinned = {"url": wheel.as_uri(), "sha256": sha or sha256(wheel), "label": "cu126"}
    pip = tuple(
        dataclasses.replace(p, **pinned, properties=(lower,)) if p.name == "tinyvar" else p
        for p in exported.pip
    )
    return dataclasses.replace(exported, pip=pip), wheel


def test_a_wheel_with_variant_markers_is_copied_with_them_decided(
    exported: ExportModel, tmp_path: Path
) -> None:
    import zipfile

    model, original = _marked(exported, tmp_path, None)
    copied = copy_wheels(model, tmp_path / "wheels", relative_to=tmp_path)
    copy = tmp_path / "wheels" / "tinyvar-1.0-py3-none-any.whl"
    with zipfile.ZipFile(copy) as archive:
        metadata = archive.read("tinyvar-1.0.dist-info/METADATA").decode()
    assert "Requires-Dist: nvidia-cublas-cu12==12.6.4.1\n" in metadata
    assert "12.8.4.1" not in metadata
    (tinyvar,) = [p for p in copied.pip if p.name == "tinyvar"]
    assert (tinyvar.sha256, tinyvar.copy_sha256) == (sha256(original), sha256(copy))
    assert f"#sha256={sha256(copy)}" in str(tinyvar)
    # again: the same bytes are there, nothing to replace, no --force needed
    assert copy_wheels(model, tmp_path / "wheels", relative_to=tmp_path).pip == copied.pip


def test_a_wheel_with_variant_markers_whose_bytes_changed_is_not_copied(
    exported: ExportModel, tmp_path: Path
) -> None:
    model, original = _marked(exported, tmp_path, "ab" * 32)
    with pytest.raises(ExportError) as info:
        copy_wheels(model, tmp_path / "wheels", relative_to=tmp_path)
    assert str(info.value) == (
        f"cannot copy tinyvar 1.0 [cu126]: {original} has sha256 {sha256(original)}, but the "
        f"export pins {'ab' * 32} (nothing was copied)"
    )
    assert not (tmp_path / "wheels").exists()  # the folder it made is gone again


@pytest.mark.parametrize(
    ("path", "base", "expected"),
    [
        ("/p/share/wheels/a.whl", "/p/share", "./wheels/a.whl"),  # beside the manifest
        ("/p/wheels/a.whl", "/p/share", "../wheels/a.whl"),  # pixi accepts ../ too
        ("/p/share/a.whl", "/p/share", "./a.whl"),
    ],
)
def test_relative_reference(path: str, base: str, expected: str) -> None:
    assert relative_reference(Path(path), Path(base)) == expected


def test_a_remote_wheel_is_downloaded_for_its_copy(
    export_world: ExportWorld, exported: ExportModel, tmp_path: Path
) -> None:
    import dataclasses

    from tests.worlds.index_server import IndexServer

    wheel = export_world.installed["tinyvar"]
    with IndexServer(export_world.wheels) as index:
        url = index.file_url(wheel.name)
        pip = tuple(
            dataclasses.replace(p, url=url) if p.name == "tinyvar" else p for p in exported.pip
        )
        model = copy_wheels(
            dataclasses.replace(exported, pip=pip), tmp_path / "wheels", relative_to=tmp_path
        )
        assert f"/files/{wheel.name}" in index.paths_requested("/files/")
    [tinyvar] = [p for p in model.pip if p.name == "tinyvar"]
    assert (tinyvar.url, tinyvar.copy_relative) == (url, "./wheels/tinyvar-1.0-py3-none-any.whl")
    assert (tmp_path / "wheels" / "tinyvar-1.0-py3-none-any.whl").read_bytes() == wheel.read_bytes()


def test_a_remote_wheel_is_fetched_through_the_commands_transport(
    export_world: ExportWorld, exported: ExportModel, tmp_path: Path
) -> None:
    import dataclasses

    from tests.worlds.index_server import IndexServer

    wheel = export_world.installed["tinyvar"]
    logged: list[str] = []
    with IndexServer(export_world.wheels) as index:
        url = index.file_url(wheel.name)
        pip = tuple(
            dataclasses.replace(p, url=url) if p.name == "tinyvar" else p for p in exported.pip
        )
        copy_wheels(
            dataclasses.replace(exported, pip=pip),
            tmp_path / "wheels",
            relative_to=tmp_path,
            # --verbose lists this download too
            downloads=Downloads(tmp_path / "dl", transport=Transport(log=logged.append)),
        )
    assert f"GET {url}" in logged


def test_a_failed_copy_removes_the_copies_and_folders_it_made(
    export_world: ExportWorld, exported: ExportModel, tmp_path: Path
) -> None:
    import dataclasses

    # gpuext is copied first, then tinyvar's file turns out to have other bytes
    changed = tmp_path / "src" / export_world.installed["tinyvar"].name
    changed.parent.mkdir()
    shutil.copy(export_world.installed["gpuext"], changed)
    pip = tuple(
        dataclasses.replace(p, url=changed.as_uri()) if p.name == "tinyvar" else p
        for p in exported.pip
    )
    with pytest.raises(ExportError, match="has sha256"):
        copy_wheels(
            dataclasses.replace(exported, pip=pip), tmp_path / "a" / "b", relative_to=tmp_path
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]  # no a/, a/b/, gpuext copy


@pytest.mark.parametrize(
    "existing",
    [
        None,  # a new folder: removed with the copies
        "same",  # a copy with the same bytes was there before: kept
    ],
)
def test_copied_wheels_removes_its_copies_when_the_export_fails(
    export_world: ExportWorld, exported: ExportModel, tmp_path: Path, existing: str | None
) -> None:
    wheels = tmp_path / "share" / "wheels"
    before: list[str] = []
    if existing is not None:
        wheels.mkdir(parents=True)
        shutil.copy(export_world.installed["tinyvar"], wheels / "tinyvar-1.0-py3-none-any.whl")
        before = ["share", "share/wheels", "share/wheels/tinyvar-1.0-py3-none-any.whl"]
    share = tmp_path / "share"
    seen: list[str] = []

    def write_export(model: ExportModel) -> None:
        seen.extend(sorted(Path(p.copy).name for p in model.pip if p.copy))
        raise OSError("disk full")  # writing the export failed

    with (
        pytest.raises(OSError, match="disk full"),
        copied_wheels(exported, wheels, relative_to=share) as copied,
    ):
        write_export(copied)
    assert seen == ["gpuext-0.3-py3-none-any.whl", "tinyvar-1.0-py3-none-any.whl"]
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    with copied_wheels(exported, wheels, relative_to=share):
        pass  # success keeps them
    assert len(list(wheels.iterdir())) == 2
