"""Cost of ``export`` on a large prefix, against reading the same records with bare rattler.

    .venv/bin/python bench/bench_export.py [-n 7] [--records 1000] [--dists 200]

Builds a synthetic conda prefix in a temporary directory: ``--records`` ``conda-meta/*.json``
records shaped like the ones rattler and conda write (60 files each, with ``paths_data``), and
``--dists`` ``*.dist-info`` directories in site-packages, one in twenty a variant wheel installed
from an HTTPS URL (``variant.json`` + ``direct_url.json`` with its hash). Then times, in the same
process and interleaved:

- export: ``Context.open(..., EnvironmentSpec(prefix=...))`` + ``prepare_export`` + rendering
  environment.yml and pixi.toml (detection, history, origins, translation, the model, both texts);
- baseline: ``rattler.PrefixRecord.from_path`` over the same ``conda-meta/*.json`` files.

and ``--update`` of the pixi.toml it wrote (every entry marked as the export's, so each is
checked and kept: a no-op) against the baseline of a tomlkit round trip of the same text
(``tomlkit.dumps(tomlkit.parse(text))``), the least any comment-keeping edit costs.

Prints the medians and the ratios.

``--scaling 500,2000,5000`` instead times, per size, the whole ``export`` job as the command runs
it (``run_export``) to ``-o environment.yml`` (the baseline) and ``--update`` of a user's commented
pixi.toml that has none of the records yet (every pin added: the case that was quadratic, issue
22), then prints each ratio: ``--update`` must stay within 3x environment.yml at 5,000 records.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

OVERRIDES = {
    "CONDA_OVERRIDE_CUDA": "12.9",
    "CONDA_OVERRIDE_CUDA_ARCH": "9.0",
    "CONDA_OVERRIDE_ARCHSPEC": "haswell",
    "CONDA_OVERRIDE_GLIBC": "2.36",
}
CHANNEL = "https://conda.anaconda.org/conda-forge/"
FILES_PER_RECORD = 60


def _record(name: str, version: str, build: str, subdir: str, index: int) -> dict[str, object]:
    files = [f"lib/{name}/file{n:03d}.so" for n in range(FILES_PER_RECORD)]
    sha = hashlib.sha256(f"{name}-{version}".encode()).hexdigest()
    fn = f"{name}-{version}-{build}.conda"
    return {
        "name": name,
        "version": version,
        "build": build,
        "build_number": 0,
        "subdir": subdir,
        "depends": [f"pkg{index - 1:04d} >=1.0"] if index > 0 else [],
        "constrains": [],
        "license": "MIT",
        "md5": sha[:32],
        "sha256": sha,
        "size": 12345,
        "timestamp": 1_700_000_000_000,
        "fn": fn,
        "url": f"{CHANNEL}{subdir}/{fn}",
        "channel": CHANNEL,
        "extracted_package_dir": f"/pkgs/{name}-{version}-{build}",
        "requested_specs": [],
        "files": files,
        "paths_data": {
            "paths": [
                {"_path": f, "path_type": "hardlink", "sha256": sha, "size_in_bytes": 100}
                for f in files
            ],
            "paths_version": 1,
        },
        "link": {"source": f"/pkgs/{name}-{version}-{build}", "type": 1},
    }


def build_prefix(root: Path, records: int, dists: int) -> Path:
    prefix = root / "env"
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True)
    (meta / "history").write_text("")
    specs = [
        ("python", "3.12.7", "h0_0_cpython", "linux-64"),
        ("cuda-version", "12.6", "h0_3", "noarch"),
    ] + [(f"pkg{i:04d}", f"1.0.{i}", "h0_0", "linux-64") for i in range(records - 2)]
    for i, (name, version, build, subdir) in enumerate(specs):
        data = _record(name, version, build, subdir, i if name.startswith("pkg") else 0)
        (meta / f"{name}-{version}-{build}.json").write_text(json.dumps(data))
    site = prefix / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    for i in range(dists):
        name = f"dist{i:03d}"
        info = site / f"{name}-2.0.dist-info"
        info.mkdir()
        files = {
            "METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 2.0\n\n",
            "INSTALLER": "uv\n",
        }
        if i % 20 == 0:
            label = "cu126"
            files["variant.json"] = json.dumps(
                {
                    "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
                    "default-priorities": {"namespace": ["nvidia"]},
                    "variants": {label: {"nvidia": {"cuda_version_lower_bound": ["12.6"]}}},
                }
            )
            url = f"https://wheels.example/{name}-2.0-py3-none-any-{label}.whl"
            files["direct_url.json"] = json.dumps(
                {"url": url, "archive_info": {"hashes": {"sha256": "ab" * 32}}}
            )
        for file, text in files.items():
            (info / file).write_text(text)
        record = [f"{info.name}/{file},sha256=x,1" for file in files] + [f"{info.name}/RECORD,,"]
        (info / "RECORD").write_text("\n".join(record) + "\n")
    return prefix


def median_seconds(function: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--repeats", type=int, default=7)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--dists", type=int, default=200)
    parser.add_argument(
        "--scaling",
        metavar="N,N,...",
        help="time -o environment.yml against --update pixi.toml at these record counts instead",
    )
    args = parser.parse_args()
    if args.scaling:
        _scaling([int(n) for n in args.scaling.split(",")], args.dists, args.repeats)
        return

    import rattler

    from variant_bridge.export import ExportModel, render
    from variant_bridge.jobs.context import Context
    from variant_bridge.jobs.export import ExportRequest, prepare_export
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec

    with tempfile.TemporaryDirectory(prefix="vb-bench-export-") as tmp:
        prefix = build_prefix(Path(tmp), args.records, args.dists)
        paths = sorted((prefix / "conda-meta").glob("*.json"))

        environment = EnvironmentSpec(prefix=prefix, environ=OVERRIDES)
        fetch = FetchSpec(no_cache=True)

        def prepared() -> ExportModel:
            # What `export` runs: its context (detection reads the prefix) and the model.
            with Context.open(None, environment, fetch) as ctx:
                return prepare_export(ExportRequest(), ctx)

        def export() -> None:
            model = prepared()
            render(model, "environment-yml")
            render(model, "pixi-toml")

        def baseline() -> None:
            for path in paths:
                rattler.PrefixRecord.from_path(path)

        export()  # warm-up: imports, mapping tables, archspec
        baseline()
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(args.repeats):  # interleaved, so drift hits both alike
            ours += median_seconds(export, 1)
            theirs += median_seconds(baseline, 1)
        model = prepared()
        update_ratio = _update(model, args.repeats)
        ours_median = statistics.median(ours)
        theirs_median = statistics.median(theirs)
        print(
            f"prefix: {len(paths)} conda records ({FILES_PER_RECORD} files each), "
            f"{args.dists} dist-infos ({sum(1 for p in model.pip if p.label)} variant wheels)"
        )
        print(
            f"export (detect + model + environment.yml + pixi.toml): "
            f"{ours_median * 1000:8.1f} ms  (median of {args.repeats})"
        )
        print(
            f"rattler.PrefixRecord.from_path x {len(paths)}:      "
            f"{theirs_median * 1000:8.1f} ms  (median of {args.repeats})"
        )
        print(f"ratio export / baseline: {ours_median / theirs_median:.2f}x")
        print(update_ratio)


def _update(model: object, repeats: int) -> str:
    """``--update`` of the export's own manifest against a tomlkit round trip of it."""
    import tomlkit

    from variant_bridge.export import ExportModel, render
    from variant_bridge.export.pixi_toml.update import apply

    assert isinstance(model, ExportModel)
    text = render(model, "pixi-toml")
    assert apply(text, model, kind="pixi").text == text  # a no-op, as a second run must be
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(repeats):
        ours += median_seconds(lambda: apply(text, model, kind="pixi"), 1)
        theirs += median_seconds(lambda: tomlkit.dumps(tomlkit.parse(text)), 1)
    ours_median, theirs_median = statistics.median(ours), statistics.median(theirs)
    return (
        f"--update of its {len(text.splitlines())}-line pixi.toml: {ours_median * 1000:8.1f} ms; "
        f"tomlkit round trip: {theirs_median * 1000:8.1f} ms; "
        f"ratio {ours_median / theirs_median:.2f}x"
    )


USER_MANIFEST = """\
# our project
[workspace]
name = "proj"
channels = ["conda-forge"]  # our channels
platforms = ["linux-64"]

[tasks]
start = "python -m proj"  # run it

[dependencies]
python = "3.12.*"  # our python
"""


def _scaling(sizes: list[int], dists: int, repeats: int) -> None:
    """``run_export`` to environment.yml and ``--update`` of a user's pixi.toml, per size."""
    from variant_bridge.jobs.export import ExportOutput, ExportRequest, ExportSource, run_export

    for records in sizes:
        with tempfile.TemporaryDirectory(prefix="vb-bench-export-") as tmp:
            root = Path(tmp)
            prefix = build_prefix(root, records, dists)
            request = ExportRequest(ExportSource(prefix=prefix), environ=OVERRIDES)
            # Both pin the (synthetic, remote) variant files: nothing is copied.
            to_yml = ExportOutput(path=root / "environment.yml", force=True, pin_filenames=True)
            manifest = root / "pixi.toml"
            update = ExportOutput("pixi-toml", update=manifest, pin_filenames=True)
            yml: list[float] = []
            upd: list[float] = []
            for _ in range(repeats):
                yml += median_seconds(lambda: run_export(request, to_yml), 1)  # noqa: B023
                manifest.write_text(USER_MANIFEST)
                upd += median_seconds(lambda: run_export(request, update), 1)  # noqa: B023
            a, b = statistics.median(yml), statistics.median(upd)
            print(
                f"{records:6d} records: -o environment.yml {a:7.2f} s; --update pixi.toml "
                f"{b:7.2f} s; ratio {b / a:5.2f}x (median of {repeats})"
            )


if __name__ == "__main__":
    main()
