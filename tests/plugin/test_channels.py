"""No channel between two children graded at once (docs/threat-model.md, "What two children
share"): in each platform mode a grader runs two children side by side, one sends through
every kernel object they could share (record locks, OFD locks, flock, a shared futex,
inotify, files and their names, an abstract socket, System V and POSIX queues, the
keyring, a signal) and the other tries to receive; only what the mode's row documents as
open may carry anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.plugin.test_fence import ROOT, _launch, needs_bwrap, needs_landlock, needs_root

HERE = Path(__file__).parent


def _pair(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [*_launch(mode), sys.executable, str(HERE / "pair_probe.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd="/",
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _open(found: dict[str, Any]) -> set[str]:
    return {name for name, what in found["channels"].items() if what == "open"}


# 3.5 s each: --run-slow only (the plain loop is the developer's quick one).
@pytest.mark.slow
@needs_root
@needs_landlock
@pytest.mark.parametrize(
    "mode", [pytest.param("bubblewrap", marks=needs_bwrap), "container", "non-root"]
)
def test_behind_landlock_no_kernel_object_reaches_the_other_child(mode: str) -> None:
    found = _pair(mode)
    assert found["fence"]["level"] in ("bubblewrap", "landlock")
    assert len(found["channels"]) == 12
    assert _open(found) == set()


@needs_root
@pytest.mark.slow
@pytest.mark.parametrize(
    "mode",
    [
        "no-landlock",  # bubblewrap's private /tmp, /var/tmp and /dev/shm
        "container+no-landlock",  # nothing confines writes: the allow-list refuses them
        "non-root+no-landlock",  # the same uid, and still nothing written to share
    ],
)
def test_without_landlock_no_kernel_object_reaches_the_other_child(mode: str) -> None:
    found = _pair(mode)
    assert found["fence"]["level"] == "seccomp"
    assert len(found["channels"]) == 12
    assert _open(found) == set()
