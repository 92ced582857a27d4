"""Nothing a child makes outlives it (docs/threat-model.md, "Nothing outlives a child"),
whoever grades: folders a child made without rights for their owner, and what an
interrupted run leaves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.plugin.test_fence import NOBODY, ROOT, needs_root

_LOCKED_OUT = r"""
import os
def make():
    os.makedirs("a/b/c")
    open("a/b/c/f", "w").write("hidden-input-7")
    os.mkdir("a/b/c/none", 0)  # no rights at all
    os.mkdir("a/b/wo", 0o300)  # write and search, no listing
    os.mkdir("a/b/wo/inner", 0o300)
    open("a/b/wo/inner/g", "w").write("x")
    return os.getcwd()
"""
_GRADER = (
    "import json, os, sys\n"
    "from pytest_rlsys.grading import leftovers\n"
    "from pytest_rlsys.grading.isolation import ChildProcess\n"
    "from pytest_rlsys.grading.outcomes import Limits\n"
    "child = ChildProcess(sys.argv[1], 'w.py', ['make'], Limits())\n"
    "outcome = child.call('make', [], {})\n"
    "child.close()\n"
    "mine = [p for p in leftovers.scratch_made if os.path.lexists(p)]\n"
    "print(json.dumps({'kind': outcome.kind, 'left': mine}))\n"
)


@needs_root  # the grader runs as nobody, started by root
def test_a_non_root_grader_removes_folders_the_child_locked_itself_out_of() -> None:
    done = subprocess.run(
        [*NOBODY, sys.executable, "-c", _GRADER, _LOCKED_OUT],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": tempfile.gettempdir()},
        cwd="/",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["kind"] == "returned"
    assert found["left"] == []


@pytest.mark.parametrize("mode", [0o300, 0o000, 0o100])
def test_remove_tree_gives_its_owner_the_rights_back(tmp_path: Path, mode: int) -> None:
    from pytest_rlsys.grading.leftovers import remove_tree

    if os.geteuid() == 0:
        pytest.skip("root ignores folder modes: the grader that is not root is the case")
    top = tmp_path / "scratch"
    (top / "a" / "b").mkdir(parents=True)
    (top / "a" / "b" / "f").write_text("x")
    (top / "a" / "b").chmod(mode)
    (top / "a").chmod(mode)
    remove_tree(str(top))
    assert not top.exists()
