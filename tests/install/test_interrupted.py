"""``install`` killed with ``kill -9`` at random moments, then run again: real uv, a real venv.

Each trial starts ``variant-bridge install`` (alternating the CUDA driver, so every run has
variants to replace), kills the command itself with SIGKILL after a random delay within a full
run's duration, then checks what a user would find: no ``direct_url.json`` naming anything but
the real wheel, no installer still running, and the next complete run cleans every scratch
directory the killed ones left and installs the chosen tree.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.worlds.wheels import make_release, make_wheel
from variant_bridge.install import find_uv

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; PDEATHSIG"),
]

SCRIPT = Path(sys.executable).with_name("variant-bridge")
TRIALS = int(os.environ.get("VARIANT_BRIDGE_KILL_TRIALS", "30"))
LOWER = "nvidia :: cuda_version_lower_bound :: {}"
_PF_EXITING = 0x4  # include/linux/sched.h


def _world(root: Path) -> Path:
    """A tree of variant and plain packages, each with some bulk so installing takes a while."""
    bulk = {f"bulk/part{i}.py": "x = 1\n" * 2000 for i in range(20)}
    variants = {"cu129": [LOWER.format("12.9")], "cu126": [LOWER.format("12.6")]}
    deps = [f"gpulib{i}>=1" for i in range(4)] + [f"plain{i}" for i in range(4)]
    make_release(root, "gpuapp", "1.0", {**variants, "null": []}, requires=deps)
    for i in range(4):
        make_release(root, f"gpulib{i}", "1.0", variants, non_variant=False)
        make_wheel(root, f"plain{i}", "1.0", files={f"plain{i}/{k}": v for k, v in bulk.items()})
    return root


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _wait_for_installer(pid: int, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in _children(pid):
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"pip\0install" in cmdline:
                return
        time.sleep(0.001)


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _dying(pid: int) -> bool:
    """Killed but not yet gone (a loaded machine has not run its exit yet): SIGKILL pending, or
    the kernel already tearing it down (PF_EXITING)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        flags = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[6])
    except (OSError, IndexError, ValueError):
        return True  # gone meanwhile
    pending = 0
    for line in status.splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")):
            pending |= int(line.split()[1], 16)
    return bool(pending & (1 << (signal.SIGKILL - 1))) or bool(flags & _PF_EXITING)


def _orphans_after(children: list[int], *, timeout: float) -> list[int]:
    """The children still running, neither killed nor dying, once *timeout* has passed (or none
    as soon as every child is gone or dying). The kernel kills them as their parent dies, but a
    loaded machine may not have scheduled them yet, and a child forked but not yet exec'd exits
    by itself once it runs and sees its parent gone: a condition with a deadline, not a sleep."""
    deadline = time.monotonic() + timeout
    while True:
        left = [pid for pid in children if _alive(pid) and not _dying(pid)]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.01)


def _running_against(venv: Path) -> list[str]:
    """Command lines of processes still working on *venv* (an orphaned installer)."""
    hits = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(venv) in cmdline and "variant-bridge" not in cmdline.split(" ")[0]:
            hits.append(cmdline)
    return hits


def _direct_urls(venv: Path) -> dict[str, str]:
    return {
        path.parent.name: json.loads(path.read_text())["url"]
        for path in venv.glob("lib/python*/site-packages/*.dist-info/direct_url.json")
    }


def test_kill_9_leaves_no_staging_origin_no_orphan_and_the_next_run_cleans_up(
    tmp_path: Path,
) -> None:
    world = _world(tmp_path / "wheels")
    venv = tmp_path / "venv"
    uv = find_uv()
    assert uv is not None
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    scratch_tmp = tmp_path / "tmp"
    scratch_tmp.mkdir()
    environ = {**os.environ, "TMPDIR": str(scratch_tmp), "UV_CACHE_DIR": str(tmp_path / "uv")}

    def command(driver: str) -> list[str]:
        return [str(SCRIPT), "install", "gpuapp", "-f", str(world), "--python",
                str(venv / "bin" / "python"), "--installer", "uv", "-t", f"cuda={driver}"]  # fmt: skip

    started = time.monotonic()
    subprocess.run(command("12.6"), env=environ, check=True, capture_output=True)
    full = time.monotonic() - started

    rng = random.Random(20261125)
    scratch = scratch_tmp / f"variant-bridge-{os.getuid()}"
    most_left = 0
    seen: Counter[str] = Counter()
    for trial in range(TRIALS):
        driver = ("12.9", "12.6")[trial % 2]
        process = subprocess.Popen(
            command(driver), env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if trial % 3 == 2:  # a third: killed as soon as the installer runs
            _wait_for_installer(process.pid, timeout=full * 3)
        else:
            time.sleep(rng.uniform(0, full * 1.1))
        children = _children(process.pid)
        process.send_signal(signal.SIGKILL)
        process.wait()
        seen["during a child process" if children else "outside any child"] += 1
        orphans = _orphans_after(children, timeout=10.0)
        assert orphans == [], f"trial {trial}: {_running_against(venv)} outlived the command"
        deadline = time.monotonic() + 5
        while _running_against(venv) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _running_against(venv) == [], f"trial {trial}: an installer outlived the command"
        for dist_info, url in _direct_urls(venv).items():
            assert url.startswith(world.as_uri() + "/"), f"trial {trial}: {dist_info} -> {url}"
        # Leftovers never pile up: each run removes those of the runs killed before it.
        left = list(scratch.iterdir()) if scratch.exists() else []
        assert len(left) <= 2, f"trial {trial}: {left}"  # this run's downloads and install
        most_left = max(most_left, len(left))
    print(f"\n{TRIALS} kill -9 trials: {dict(seen)}")  # the figure for the report (pytest -s)

    final = subprocess.run(
        command("12.9"), env=environ, capture_output=True, text=True, check=False
    )
    assert final.returncode == 0, final.stderr
    assert list(scratch.iterdir()) == []  # what the last killed run left is gone too
    assert most_left > 0  # killed runs did leave scratch directories behind
    labels = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import gpuapp, gpulib0, gpulib3 as g; print(gpuapp.VARIANT_LABEL, gpulib0.VARIANT_LABEL, g.VARIANT_LABEL)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert labels == ["cu129", "cu129", "cu129"]
    again = subprocess.run(
        command("12.9"), env=environ, capture_output=True, text=True, check=False
    )
    assert "Nothing to install" in again.stdout  # repaired once, then idempotent
