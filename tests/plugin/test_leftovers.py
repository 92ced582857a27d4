"""Nothing a child makes outlives it (docs/threat-model.md, "Nothing outlives a child"),
whoever grades: folders a child made without rights for their owner, and what an
interrupted run leaves."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
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


def _terminal_job(
    command: list[str], cwd: Path, base: Path, quiet: bool = False
) -> subprocess.Popen[bytes]:
    """``command`` started as a terminal's job (its own process group, Ctrl-C's default
    action), its temporary folder ``base/tmp``, the scratch folders on this disk (no
    bubblewrap), where they can be left; stdout and stderr as one pipe, or dropped."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(base / "tmp")}
    env["RLSYS_NO_BWRAP"] = "1"
    out = subprocess.DEVNULL if quiet else subprocess.PIPE
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=out,
        stderr=subprocess.DEVNULL if quiet else subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )


@contextlib.contextmanager
def _job_folder() -> Iterator[Path]:
    """A folder for one interrupted run, its scratch folders in its ``tmp`` (both reachable
    by the child's fresh uid), removed whatever the test found."""
    base = Path(tempfile.mkdtemp(prefix="rlsys-ctrlc-"))
    try:
        base.chmod(0o755)
        (base / "tmp").mkdir()
        (base / "tmp").chmod(0o755)
        yield base
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


def ctrl_c_as_in_a_terminal() -> None:
    """Ctrl-C's default action in the started pytest, as a terminal's job has it: a suite
    run as a background job of a script inherits SIGINT ignored, and then every press
    here was ignored (the grading ran on, 8 tests failed)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


_HANGS = "import time\n\ndef pipeline_capacity(*a, **k):\n    time.sleep(60)\n"


# Each waits real seconds in a pytest of its own (3-10 s at rest): --run-slow only.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("settings", "when", "to"),
    [
        ("own settings", "starting", "group"),
        ("own settings", "grading", "group"),
        ("own settings", "grading", "outer run"),  # `kill -INT` of the first pytest alone
        ("no settings", "starting", "group"),
        ("no settings", "grading", "group"),
    ],
)
def test_ctrl_c_ends_the_grading_and_leaves_no_scratch(settings: str, when: str, to: str) -> None:
    # A folder with its own pytest settings is graded by a clean re-run in a second
    # pytest: a Ctrl-C (SIGINT to the terminal's process group) once killed that one
    # 0.25 s later, with its scratch folder left on the disk.
    import signal
    import time

    with _job_folder() as base:
        project = base / "project"
        project.mkdir()
        (project / "rlsys_ledger.py").write_text(_HANGS)
        if settings == "own settings":
            (project / "pytest.ini").write_text("[pytest]\naddopts = -q\n")
        run = _terminal_job(
            [sys.executable, "-m", "pytest", "--rlsys-submission", "rlsys_ledger.py"],
            project,
            base,
        )
        deadline = time.monotonic() + 120
        while not list((base / "tmp").glob("rlsys-child-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list((base / "tmp").glob("rlsys-child-*")), "no child started"
        if when == "grading":  # the first call (which hangs) is under way
            time.sleep(3)
        if to == "group":
            os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C does
        else:
            os.kill(run.pid, signal.SIGINT)
        output = run.communicate(timeout=120)[0].decode("utf-8", "replace")
        assert run.returncode == pytest.ExitCode.INTERRUPTED, output
        assert list((base / "tmp").iterdir()) == [], output


@pytest.mark.slow
def test_a_ctrl_c_anywhere_in_the_start_up_ends_the_run_as_interrupted() -> None:
    # A Ctrl-C that landed inside the plugin's set-up (an import, the child's start, the
    # run's registration) ended pytest with exit -2 and no output, "plugin is not
    # registered" (exit 1) or an INTERNALERROR (exit 3): 1 press in 15-25 at these
    # delays.  Now it is held until the set-up is whole: every press ends as interrupted.
    import signal
    import time

    outcomes: list[tuple[int, int, list[str]]] = []
    for delay_ms in range(0, 60, 2):
        with _job_folder() as base:
            (base / "rlsys_ledger.py").write_text(_HANGS)
            run = _terminal_job(
                [sys.executable, "-m", "pytest", "--rlsys-submission", "rlsys_ledger.py"],
                base,
                base,
                quiet=True,
            )
            deadline = time.monotonic() + 120
            while not list((base / "tmp").glob("rlsys-child-*")) and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(delay_ms / 1000)
            os.killpg(run.pid, signal.SIGINT)
            run.wait(timeout=120)
            left = [p.name for p in (base / "tmp").iterdir()]
            outcomes.append((delay_ms, run.returncode, left))
    wrong = [o for o in outcomes if o[1] != pytest.ExitCode.INTERRUPTED or o[2]]
    assert wrong == []


@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_in_a_batch_leaves_no_scratch(presses: int) -> None:
    # A second Ctrl-C once cut the batch's cleanup short: its standby children's scratch
    # folders stayed.  Every live child is ended when the interpreter ends.
    import signal
    import time

    with _job_folder() as base:
        klass = base / "class"
        klass.mkdir(mode=0o700)
        for name in ("ann", "bob", "cy", "dee"):
            (klass / f"{name}.py").write_text(_HANGS)
        run = _terminal_job(
            [sys.executable, "-m", "pytest_rlsys", "batch", str(klass), "--jobs", "2"], base, base
        )
        deadline = time.monotonic() + 120
        while len(list((base / "tmp").glob("rlsys-child-*"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        for _ in range(presses):
            os.killpg(run.pid, signal.SIGINT)
            time.sleep(0.05)
        output = run.communicate(timeout=120)[0].decode("utf-8", "replace")
        assert run.returncode == 130, output
        assert "Traceback" not in output
        assert list((base / "tmp").iterdir()) == [], output


_HANGS_ONCE_CALLED = (
    "import time\n\n"
    "def pipeline_capacity(*a, **k):\n"
    "    open('called', 'w').close()  # in the child's scratch folder: the test waits for it\n"
    "    time.sleep(60)\n"
)


# Each waits for a call under way in a run of its own (1-3 s at rest): --run-slow only.
@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 2])
@pytest.mark.parametrize("entry", ["pytest", "rlsys grade"])
def test_an_interrupted_grading_records_no_score(entry: str, presses: int) -> None:
    # A Ctrl-C once left a score of 0 in every file asked for (Gradescope, PrairieLearn,
    # the score JSON), the cases not run counted as the submission's failures, and the
    # terminal's last line read "Points 0/100"; a second press while pytest ended printed
    # a traceback through the grader's cleanup and killed it (exit -2).
    import signal
    import time

    with _job_folder() as base:
        (base / "rlsys_ledger.py").write_text(_HANGS_ONCE_CALLED)
        files = {name: base / f"{name}.json" for name in ("report", "gradescope", "prairielearn")}
        if entry == "pytest":
            command = [sys.executable, "-m", "pytest", "--rlsys-submission", "rlsys_ledger.py"]
            command += [a for n, p in files.items() for a in (f"--rlsys-{n}", str(p))]
            interrupted = pytest.ExitCode.INTERRUPTED
        else:
            command = [sys.executable, "-m", "pytest_rlsys", "grade", "rlsys_ledger.py"]
            command += [a for n, p in files.items() for a in (f"--{n}", str(p))]
            interrupted = 130
        run = _terminal_job(command, base, base)
        deadline = time.monotonic() + 120
        while not list((base / "tmp").glob("rlsys-child-*/called")):
            assert time.monotonic() < deadline and run.poll() is None, "no call under way"
            time.sleep(0.05)
        for _ in range(presses):  # a second press while the run ends is ignored
            os.killpg(run.pid, signal.SIGINT)
            time.sleep(0.05)
        output = run.communicate(timeout=120)[0].decode("utf-8", "replace")
        assert run.returncode == interrupted, output
        assert "Traceback" not in output
        assert [p.name for p in files.values() if p.exists()] == [], output
        assert "Points" not in output
        if entry == "pytest":
            assert "Interrupted: no score is recorded and no file is written" in output
        assert list((base / "tmp").iterdir()) == [], output
