"""A real hostile wheel (issue 22): well under 1 MB on disk, its ``METADATA`` inflates to 200 MiB.

Every reader refuses it with its size and memory stays bounded by the caps, not by what the file
claims: the find-links listing streams only the header block, an index's range reads never
inflate it, ``select`` never chooses it (the next best wheel is chosen, the bomb listed with its
reason) and the trust gate never hands it to an installer. Peak memory is measured in a child
process (``VmHWM`` on Linux, else ``resource.getrusage``), against a generous bound.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.worlds.index_server import IndexServer
from tests.worlds.wheels import make_release, make_wheel

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource is POSIX")

INFLATED = 200 * 1024 * 1024
BOUND_MB = 200
CU126 = ("nvidia :: cuda_version_lower_bound :: 12.6",)
BOMB = "bomb-1.0-py3-none-any-cu126.whl"
ROOT = Path(__file__).resolve().parents[2]


def _inflate_metadata(wheel: Path) -> None:
    """Rewrite *wheel* with its METADATA followed by 200 MiB of one byte (a long description),
    deflated: the zip stays small, streamed so that building it costs no memory either."""
    rewritten = wheel.with_suffix(".tmp")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(rewritten, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if not info.filename.endswith(".dist-info/METADATA"):
                dst.writestr(info, data)
                continue
            member = zipfile.ZipInfo(info.filename, info.date_time)
            member.compress_type = zipfile.ZIP_DEFLATED
            with dst.open(member, "w", force_zip64=True) as out:
                out.write(data.rstrip(b"\n") + b"\n\n")
                chunk = b"#" * (1 << 20)
                for _ in range(INFLATED // len(chunk)):
                    out.write(chunk)
    rewritten.replace(wheel)


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bombs")
    make_release(root, "bomb", "1.0", {"cu126": CU126, "null": []})
    _inflate_metadata(root / BOMB)
    _inflate_metadata(make_wheel(root, "lonely", "1.0"))
    assert (root / BOMB).stat().st_size < 1024 * 1024
    return root


# The peak of this process's own address space: Linux's VmHWM starts again at exec, while
# getrusage's ru_maxrss keeps the forked parent's (a large pytest process) across exec.
_PEAK = """
try:
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out["peak_mb"] = peak / 1024
"""


def _child(script: str, *args: str) -> dict[str, object]:
    """Run *script* in a fresh interpreter; it prints a JSON object, to which the peak RSS (MB)
    of that process is added."""
    program = f"import json, resource, sys\n{script}\n{_PEAK}\nprint(json.dumps(out))\n"
    done = subprocess.run(
        [sys.executable, "-c", program, *args],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


_SELECT = """
from variant_bridge.environment import Environment, VirtualPackage
from variant_bridge.indexes import Downloads, FindLinks, SimpleIndex, Transport
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.jobs.select import parse_requests, select
from variant_bridge.jobs.target import Target
from variant_bridge.platform_tags import TargetPython
from variant_bridge.translate import supported_properties
from tests.worlds.index_server import IndexServer

env = Environment("linux-64", (VirtualPackage("__glibc", "2.36"), VirtualPackage("__cuda", "12.9")))
target = Target(env, TargetPython.parse("3.12"), supported_properties(env))

def choose(source):
    with Transport() as transport, Downloads.temporary(transport=transport) as downloads:
        ctx = Context(Sources((source,)), downloads, target)
        (choice,) = select(parse_requests(["bomb"]), ctx, deps=False)
    return {"chosen": choice.selected.name,
            "skipped": {s.filename: s.reason for s in choice.files.skipped}}

if sys.argv[1] == "find-links":
    out = choose(FindLinks.parse(sys.argv[2]))
else:
    with IndexServer(__import__("pathlib").Path(sys.argv[2])) as index:
        out = choose(SimpleIndex.parse(index.url))
"""


@pytest.mark.parametrize("where", ["find-links", "index"])
def test_a_metadata_bomb_is_never_chosen_and_memory_stays_bounded(bombs: Path, where: str) -> None:
    out = _child(_SELECT, where, str(bombs))
    assert out["chosen"] == "bomb-1.0-py3-none-any-null.whl"  # the next best, not the bomb
    skipped = out["skipped"]
    assert isinstance(skipped, dict)
    size = re.fullmatch(
        r".*bomb-1\.0\.dist-info/METADATA is (\d+) bytes, more than the 16777216 read: refused",
        str(skipped[BOMB]),
    )
    assert size is not None, skipped[BOMB]
    assert int(size[1]) > INFLATED
    assert float(out["peak_mb"]) < BOUND_MB  # type: ignore[arg-type]


_VERIFY = """
from pathlib import Path
from variant_bridge.errors import InvalidMetadata
from variant_bridge.indexes import Candidate, Downloads, Transport
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes.trust import verify

wheel = Path(sys.argv[1])
candidate = Candidate(WheelFilename.parse(wheel.name), wheel.as_uri(), str(wheel.parent))
with Transport() as transport, Downloads.temporary(transport=transport) as downloads:
    try:
        verify(candidate, downloads)
        out = {"error": None}
    except InvalidMetadata as e:
        out = {"error": str(e)}
"""


def test_the_trust_gate_never_hands_a_metadata_bomb_to_an_installer(bombs: Path) -> None:
    out = _child(_VERIFY, str(bombs / BOMB))
    error = out["error"]
    assert isinstance(error, str)
    assert error.startswith(f"{BOMB}!bomb-1.0.dist-info/METADATA is ")
    assert error.endswith("more than the 16777216 read: refused; the wheel is not installed")
    assert float(out["peak_mb"]) < BOUND_MB  # type: ignore[arg-type]


def test_a_refused_wheel_is_named_when_nothing_else_is_left(bombs: Path) -> None:
    from variant_bridge.environment import Environment, VirtualPackage
    from variant_bridge.errors import SelectionError
    from variant_bridge.indexes import Downloads, FindLinks, SimpleIndex, Transport
    from variant_bridge.jobs.context import Context, Sources
    from variant_bridge.jobs.select import parse_requests, select
    from variant_bridge.jobs.target import Target
    from variant_bridge.platform_tags import TargetPython
    from variant_bridge.translate import supported_properties

    env = Environment("linux-64", (VirtualPackage("__glibc", "2.36"),))
    target = Target(env, TargetPython.parse("3.12"), supported_properties(env))
    refused = r"lonely-1\.0\.dist-info/METADATA is \d+ bytes, more than the 16777216 read: refused"
    with Transport() as transport, Downloads.temporary(transport=transport) as downloads:
        ctx = Context(Sources((FindLinks.parse(bombs),)), downloads, target)
        with pytest.raises(SelectionError, match=f"lonely-1.0-py3-none-any.whl: {refused}"):
            select(parse_requests(["lonely"]), ctx)
        with IndexServer(bombs) as index:
            ctx = Context(Sources((SimpleIndex.parse(index.url),)), downloads, target)
            (choice,) = select(parse_requests(["lonely"]), ctx)
    assert choice.selected is None
    assert re.search(f"lonely-1.0-py3-none-any.whl: skipped: .*{refused}$", choice.failure())
