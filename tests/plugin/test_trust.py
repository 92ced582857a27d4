"""A learner who controls the submission's folder, its file type and its text: the cases
that tests/corpora/scenarios (one submission file each) cannot express — layouts around the file,
special files, and the grader's own cleanup and uid bookkeeping."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_rlsys import escaping
from pytest_rlsys.grading import fence as fence_mod
from pytest_rlsys.grading import identity as identity_mod
from pytest_rlsys.grading import isolation, leftovers, private
from pytest_rlsys.grading.fence import landlock_abi
from pytest_rlsys.grading.grader import (
    SubmissionPathError,
    grade_file,
    open_grader,
    read_submission,
)
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.outputs import scorejson, terminal
from pytest_rlsys.outputs.wording import message
from pytest_rlsys.resources import FUNCTIONS, exercise_path, solution_path
from tests.conftest import processes, slowness

IS_ROOT = os.geteuid() == 0
root_only = pytest.mark.skipif(not IS_ROOT, reason="the defence needs root (fresh uids)")
SECRET = "TOP-SECRET-9f3c1e"
EVIL_PLUGIN = (
    "import pathlib, pytest\n"
    "pathlib.Path(__file__).with_name('evil-imported').write_text('yes')\n"
    "@pytest.hookimpl(tryfirst=True)\n"
    "def pytest_runtest_call(item):\n"
    "    raise pytest.skip.Exception('evil')\n"
)


def _upload(tmp: Path, source: str | None = None) -> Path:
    folder = tmp / "upload"
    folder.mkdir()
    path = folder / "mine.py"
    path.write_text(
        source if source is not None else exercise_path().read_text("utf-8"), encoding="utf-8"
    )
    return path


def _outputs(folder: Path) -> list[str]:
    names = {
        "report": "score.json",
        "gradescope": "gs.json",
        "prairielearn": "pl.json",
        "junit": "junit.xml",
    }
    args = []
    for flag, name in names.items():
        args += [f"--rlsys-{flag}", str(folder / name)]
    return args


def _read_outputs(folder: Path) -> dict[str, str]:
    texts = {}
    for name in ("score.json", "gs.json", "pl.json", "junit.xml"):
        text = (folder / name).read_text(encoding="utf-8")
        if name.endswith(".json"):
            json.loads(text)
        else:
            ET.fromstring(text.encode("utf-8"))
        texts[name] = text
    return texts


# -- 1. config in, beside or above the submission's folder ---------------------------------


@pytest.mark.parametrize(
    "layout",
    # One grading in a subprocess each: the plain loop keeps one layout (slow policy).
    [
        "conftest_beside",
        *(
            pytest.param(layout, marks=pytest.mark.slow)
            for layout in ("ini_beside", "pyproject_beside", "ini_above", "pythonpath_plugin")
        ),
    ],
)
def test_folder_config_takes_no_part_in_plain_pytest(
    pytester: pytest.Pytester, layout: str
) -> None:
    sub = _upload(pytester.path)
    folder = sub.parent
    (folder / "evil.py").write_text(EVIL_PLUGIN, encoding="utf-8")
    cwd = pytester.path
    if layout == "ini_beside":
        (folder / "pytest.ini").write_text("[pytest]\nrlsys_child_user = none\n", "utf-8")
    elif layout == "pyproject_beside":
        (folder / "pyproject.toml").write_text(
            "[tool.pytest.ini_options]\nrlsys_memory_mb = '100000'\n", "utf-8"
        )
    elif layout == "conftest_beside":
        (folder / "conftest.py").write_text(EVIL_PLUGIN, encoding="utf-8")
        cwd = folder
    elif layout == "ini_above":
        (pytester.path / "tox.ini").write_text("[pytest]\naddopts = -p no:randomly\n", "utf-8")
    else:
        (folder / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p evil\n", "utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        result = pytester.runpytest_subprocess(
            "-p",
            "no:cacheprovider",
            "--rlsys-submission",
            str(sub),
            "--rlsys-report",
            str(pytester.path / "score.json"),
            timeout=120,
        )
    output = result.stdout.str() + result.stderr.str()
    # Graded in a clean pytest of its own: the template fails its cases, as always, and
    # the folder's settings and hooks (memory, child user, a skip-everything hook) are
    # not in the grade.
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    assert "Traceback" not in output and "Points 0/100" in output
    doc = json.loads((pytester.path / "score.json").read_text("utf-8"))
    assert doc["score"] == 0 and doc["max_score"] == 100
    assert all(case["status"] != "skipped" for case in doc["tests"])


def test_rlsys_grade_ignores_the_folder_config(tmp_path: Path) -> None:
    sub = _upload(tmp_path)
    folder = sub.parent
    (folder / "evil.py").write_text(EVIL_PLUGIN, encoding="utf-8")
    (folder / "pytest.ini").write_text(
        "[pytest]\npythonpath = .\naddopts = -p evil\nrlsys_child_user = none\n", "utf-8"
    )
    (folder / "conftest.py").write_text(EVIL_PLUGIN, encoding="utf-8")
    rlsys = str(Path(sys.executable).parent / "rlsys")
    done = subprocess.run(
        [rlsys, "grade", "mine.py", "--report", "score.json", "--seed", "1"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (folder / "evil-imported").exists()
    doc = json.loads((folder / "score.json").read_text("utf-8"))
    assert doc["score"] == 0 and doc["max_score"] == 100


# -- 2. links and special files --------------------------------------------------------------


def _secret_file(tmp: Path) -> Path:
    secret = tmp / "instructor" / "secret.py"
    secret.parent.mkdir()
    secret.write_text(f"# {SECRET}\n" + solution_path().read_text("utf-8"), encoding="utf-8")
    secret.chmod(0o600)
    return secret


@pytest.mark.parametrize(
    "kind", ["symlink_to_solution", "symlink_to_devzero", "fifo", "linked_folder"]
)
def test_special_files_are_refused_and_reported(tmp_path: Path, kind: str) -> None:
    secret = _secret_file(tmp_path)
    folder = tmp_path / "upload"
    folder.mkdir()
    sub = folder / "mine.py"
    if kind == "symlink_to_solution":
        sub.symlink_to(secret)
    elif kind == "symlink_to_devzero":
        sub.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(sub)
    else:
        (folder / "linked").symlink_to(secret.parent, target_is_directory=True)
        sub = folder / "linked" / "secret.py"
    started = time.monotonic()
    report = grade_file(sub, seed=1)
    assert time.monotonic() - started < 30  # a FIFO never blocks the grader
    assert report.score == 0 and report.max_score == 100
    messages = {message(c) for c in report.cases}
    assert all(SECRET not in m for m in messages)
    reason = "symbolic link" if kind != "fifo" else "not a regular file"
    assert any(reason in m for m in messages), messages


def test_refused_file_through_the_plugin_writes_every_report(pytester: pytest.Pytester) -> None:
    secret = _secret_file(pytester.path)
    folder = pytester.path / "upload"
    folder.mkdir()
    (folder / "mine.py").symlink_to(secret)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--rlsys-submission",
        str(folder / "mine.py"),
        *_outputs(pytester.path),
        timeout=120,
    )
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 1 and "Traceback" not in output and SECRET not in output
    texts = _read_outputs(pytester.path)
    assert json.loads(texts["score.json"])["score"] == 0
    assert all(SECRET not in text for text in texts.values())
    assert "symbolic link" in texts["gs.json"]


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_nothing_to_grade_still_writes_the_platform_files(
    pytester: pytest.Pytester, kind: str
) -> None:
    target = pytester.path / "mine.py"
    if kind == "directory":
        target.mkdir()
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--rlsys-submission",
        str(target),
        *_outputs(pytester.path),
        timeout=120,
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    texts = _read_outputs(pytester.path)
    assert json.loads(texts["score.json"])["score"] == 0
    assert json.loads(texts["gs.json"])["score"] == 0
    assert ("directory" if kind == "directory" else "no such file") in texts["gs.json"]


def test_oversized_file_is_read_with_a_bound(tmp_path: Path) -> None:
    sub = tmp_path / "mine.py"
    sub.write_bytes(b"#" * (3 * 1024 * 1024))
    with pytest.raises(SubmissionPathError, match="MiB") as info:
        read_submission(sub)
    assert not info.value.usage
    grader = open_grader(GradingRequest(submission=sub, seed=1))
    assert grader.refusal is not None and "MiB" in grader.refusal.text("en")


# -- 4. cleanup -------------------------------------------------------------------------------


def test_remove_tree_is_bounded_and_handles_any_depth(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    deep = tree
    for _ in range(50):
        deep = deep / ("d" * 200)  # far past PATH_MAX (4096) in total
    os.makedirs(tree)
    current = os.getcwd()
    try:
        os.chdir(tree)
        for _ in range(50):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
    finally:
        os.chdir(current)
    for i in range(2000):
        (tree / f"f{i}").write_bytes(b"x")
    started = time.monotonic()
    leftovers.remove_tree(str(tree), timeout_s=0.0)  # past its limit it goes on in background
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 60
    while tree.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not tree.exists()
    leftovers.remove_tree(str(tmp_path / "never-existed"))  # nothing to do, no error


def test_cleanup_failure_cannot_stop_the_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_rlsys.plugin.run import GradingRun

    def broken(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded (rmtree)")

    monkeypatch.setattr(leftovers, "remove_tree", broken)
    monkeypatch.setattr(leftovers, "clean_uid", broken)  # no sweep behind Landlock
    # Another grader's leftover (its pid gone), swept as the first child starts: its
    # removal raising must cost neither that child nor the note of the child's own.
    dead = next(p for p in range(4_000_000, 4_100_000) if not os.path.exists(f"/proc/{p}"))
    stale = Path(tempfile.gettempdir()) / f"rlsys-child-{dead}-stale"
    stale.mkdir()
    monkeypatch.setattr(leftovers, "_STALE_SWEPT", [])
    # Outside bubblewrap, so that the child's scratch folder is on the host's disk.
    monkeypatch.setattr(fence_mod, "_BWRAP_PROBED", True)
    monkeypatch.setattr(fence_mod, "_BWRAP", None)
    sub = _upload(tmp_path)
    report = tmp_path / "score.json"
    run = GradingRun.open(GradingRequest(submission=sub, seed=1, outputs={"report": report}))
    assert run.grader is not None
    run.grader.run_case(run.grader.cases[0].id)  # a child ran and left a scratch folder

    class Session:
        exitstatus = 0
        config = SimpleNamespace(option=SimpleNamespace(collectonly=False))

    run.pytest_sessionfinish(Session())  # type: ignore[arg-type]
    assert json.loads(report.read_text("utf-8"))["score"] == 0  # written all the same
    assert run.write_errors == [] and Session.exitstatus == 0
    assert run.final is not None
    from pytest_rlsys.messages import said

    assert said("cleanup_failed", exc="RecursionError") in run.final.notes  # for instructors
    stale.rmdir()


# -- 5. kernel objects --------------------------------------------------------------------------


@root_only
def test_clean_uid_removes_ipc_files_and_processes() -> None:
    uid = identity_mod.child_identity("auto")
    assert uid is not None and uid.fresh
    # A world-writable folder the uid can reach (tmp_path's parents are root-only).
    folder = Path(tempfile.mkdtemp(prefix="rlsys-shared-"))
    folder.chmod(0o1777)
    code = (
        "import ctypes, os, time\n"
        "libc = ctypes.CDLL(None)\n"
        "assert libc.shmget(0, 1 << 20, 0o1000 | 0o600) >= 0\n"
        "assert libc.semget(0, 1, 0o1000 | 0o600) >= 0\n"
        "assert libc.msgget(0, 0o1000 | 0o600) >= 0\n"
        f"open({str(folder / 'left')!r}, 'w').write('x')\n"
        f"os.mkdir({str(folder / 'leftdir')!r})\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    python = identity_mod.child_interpreter(uid)
    if python is None:
        pytest.skip("no Python executable by an unprivileged uid on this machine")
    proc = subprocess.Popen(
        [python, "-I", "-S", "-c", code],
        user=uid.uid,
        group=uid.gid,
        extra_groups=[],
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert leftovers._sysv_objects(uid.uid)
        leftovers.clean_uid(uid.uid, folders=(str(folder),))
        proc.wait(timeout=10)
        assert proc.returncode == -9  # the sleeping process was killed
        assert leftovers._sysv_objects(uid.uid) == []
        deadline = time.monotonic() + 30
        while list(folder.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(folder.iterdir()) == []
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


# -- 6/7. hidden cases never show the submission's text or the case's data ---------------------


def test_a_check_that_crashes_scores_zero_without_data(tmp_path: Path) -> None:
    sub = tmp_path / "mine.py"
    sub.write_text(solution_path().read_text("utf-8"), encoding="utf-8")
    grader = open_grader(GradingRequest(submission=sub, seed=1))
    hidden = next(c for c in grader.cases if c.visibility == "hidden")

    def crash(outcomes: object) -> object:
        raise OverflowError(f"secret args {hidden.calls[0].args!r}")

    grader.by_id[hidden.id] = dataclasses.replace(hidden, check=crash)  # type: ignore[arg-type]
    result = grader.run_case(hidden.id)
    grader.close()
    assert result.status == "error" and result.cents == 0
    assert "secret" not in message(result) and result.kind == "grader_fault"
    # Which exception a hidden case provoked is not named anywhere (it could be chosen).
    assert "OverflowError" not in message(result)
    notes = [note.text("en") for note in grader.learner_notes]
    assert any("internal grader error" in note for note in notes)
    assert not any("OverflowError" in note for note in notes)


# -- 3. text ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "\ud800",
        "\uffff",
        "\u200b\u202e\u2066",
        "\x1b[2J\r",
        "a" + " " * 200 + "Points 100/100",
        "\U0001f600 ok 中文",
    ],
)
def test_clean_text_is_printable_utf8_and_one_line(text: str) -> None:
    cleaned = escaping.clean_line(text)
    assert cleaned.isprintable()
    cleaned.encode("utf-8")
    assert "  " not in cleaned
    if text.isprintable() and "  " not in text:
        assert cleaned == text  # honest text is left alone
    output = escaping.clean_output(text + "\nsecond\tline")
    assert output.split("\n")[1] == "second    line"
    assert all(line.isprintable() for line in output.split("\n"))


# -- 8. uids --------------------------------------------------------------------------------


@root_only
def test_fresh_uids_are_never_reused_in_one_run() -> None:
    seen = set()
    lock = threading.Lock()

    def take(count: int) -> None:
        for _ in range(count):
            identity = identity_mod.child_identity("auto")
            assert identity is not None
            with lock:
                assert identity.uid not in seen
                seen.add(identity.uid)

    threads = [threading.Thread(target=take, args=(1500,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 6000
    assert all(identity_mod.EPHEMERAL_UID_BASE <= uid < 2**32 - 1 for uid in seen)


# -- 9. private files --------------------------------------------------------------------------


@root_only
def test_private_folders_are_root_only_once_grading_starts(tmp_path: Path) -> None:
    sub = tmp_path / "mine.py"
    shutil.copy(exercise_path(), sub)
    grade_file(sub, seed=1, limits=Limits(budget_s=1))
    for folder in private.private_folders():
        assert not private.readable_by_others(folder), folder
    assert solution_path().parent in private.private_folders()


@root_only
def test_batch_folder_readable_by_others_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    folder.chmod(0o755)
    problem = private.check_folder_private(folder)
    assert problem is not None and "chmod 700" in problem
    folder.chmod(0o700)
    assert private.check_folder_private(folder) is None
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_batch_grades_links_as_zero_and_never_follows_them(tmp_path: Path) -> None:
    from pytest_rlsys.cli import main

    secret = _secret_file(tmp_path)
    subs = tmp_path / "class"
    subs.mkdir()
    subs.chmod(0o700)
    shutil.copy(solution_path(), subs / "honest.py")
    (subs / "linked.py").symlink_to(secret)
    (subs / "linkdir").symlink_to(secret.parent, target_is_directory=True)
    out = tmp_path / "grades.json"
    assert (
        main(
            ["batch", str(subs), "--jobs", "1", "--seed", "3", "--json", str(out), "--no-progress"]
        )
        == 0
    )
    rows = {r["submission"]: r for r in json.loads(out.read_text("utf-8"))["submissions"]}
    assert rows["honest.py"]["score"] == 100
    for name in ("linked.py", "linkdir"):
        assert rows[name].get("score", 0) == 0
        assert SECRET not in json.dumps(rows[name])
    if IS_ROOT:
        subs.chmod(0o755)
        assert main(["batch", str(subs), "--no-progress"]) == 2


def test_learner_text_cannot_wrap_onto_a_line_of_its_own(pytester: pytest.Pytester) -> None:
    """On an 80-column log no line holding the submission's text wraps, so no piece of it
    starts a visual line: the only "Points" line at a line start is the grader's."""
    fake = "x" * 63 + "Points 100/100" + "y" * 200
    source = (
        solution_path().read_text("utf-8")
        + "\nimport sys\nprint("
        + repr(fake)
        + ")\n"
        + "def pipeline_capacity(*a, **k):\n    raise RuntimeError("
        + repr(fake)
        + ")\n"
    )
    folder = pytester.path / "upload"
    folder.mkdir()
    (folder / "mine.py").write_text(source, encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--rlsys-submission",
        str(folder / "mine.py"),
        "--rlsys-lang",
        "en",
        timeout=180,
    )
    lines = result.stdout.lines
    start = next(
        i
        for i, line in enumerate(lines)
        if "output of the submission" in line or "rlsys score" in line
    )
    shown = lines[start + 1 :]
    assert all(terminal.display_width(line) <= 80 for line in shown), [
        line for line in shown if terminal.display_width(line) > 80
    ]
    points = [line for line in shown if line.lstrip().startswith("Points")]
    assert points == ["Points 70/100"], points  # the grader's own line, and only it


@pytest.mark.slow
def test_actions_kit_never_runs_a_pytest_rlsys_folder_of_the_learners(tmp_path: Path) -> None:
    """On GitHub's runners the grader runs in the learner's repository: a `pytest_rlsys/`
    folder there must not stand in for the grader (`python -P -m`, not `python -m`)."""
    from pytest_rlsys.cli import main

    repo = tmp_path / "repo"
    assert main(["kit", "actions", str(repo)]) == 0
    decoy = repo / "pytest_rlsys"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("", encoding="utf-8")
    (decoy / "__main__.py").write_text(
        "import os, pathlib\n"
        "pathlib.Path('decoy-ran').write_text('yes')\n"
        "out = pathlib.Path(os.environ['RUNNER_TEMP']) / 'rlsys' / 'score.json'\n"
        'out.write_text(\'{"score": 100, "max_score": 100, "sections": {}}\')\n',
        encoding="utf-8",
    )
    summary = tmp_path / "summary.md"
    env = dict(
        os.environ,
        RLSYS_PYTHON=sys.executable,
        GITHUB_STEP_SUMMARY=str(summary),
        RUNNER_TEMP=str(tmp_path),
        RLSYS_SEED="1",  # the course's secret (without it the kit grades nothing)
    )
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["bash", ".github/rlsys/grade.sh"], cwd=repo, env=env, capture_output=True, timeout=300
    )
    assert not (repo / "decoy-ran").exists()
    assert done.returncode == 1  # the untouched starter: below full marks
    artifact = json.loads((tmp_path / "rlsys" / "rlsys-score.json").read_text("utf-8"))
    assert artifact["score"] == 0 and "Points 0/100" in summary.read_text("utf-8")


def test_a_file_name_with_escapes_is_shown_escaped(pytester: pytest.Pytester) -> None:
    folder = pytester.path / "upload"
    folder.mkdir()
    name = "a\x1b[2J\u202eb.py"
    (folder / name).write_text(exercise_path().read_text("utf-8"), encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--rlsys-submission", str(folder / name), timeout=120
    )
    out = result.stdout.str()
    assert "\x1b" not in out and "\u202e" not in out
    assert "a\\x1b[2J\\u202eb.py" in out


# -- the child's interpreter is taken on trust, confirmed only when a load dies ---------


def test_a_standby_child_loads_the_submission_while_the_grader_prepares(
    tmp_path: Path,
) -> None:
    # The load is asked for when the grader adopts the standby child (its private files
    # protected by then), not when the first case runs: the submission's imports overlap
    # the battery's build.  Its load time limit counts from that request.
    sub = tmp_path / "mine.py"
    sub.write_text(solution_path().read_text() + '\nprint("loaded", flush=True)\n')
    limits = GradingRequest(submission=sub, seed=1).limits
    standby = isolation.ChildProcess.on_standby(list(FUNCTIONS), limits)
    grader = open_grader(GradingRequest(submission=sub, seed=1), standby)
    try:
        assert grader.child is standby
        waited = time.monotonic() + 20
        while "loaded" not in standby.output() and time.monotonic() < waited:
            time.sleep(0.02)
        assert "loaded" in standby.output()  # no case asked for yet
        assert standby.ensure_loaded().ok
        grader.run_all()
        report = grader.report()
        assert report.score == report.max_score
    finally:
        grader.close()


def test_an_interpreter_that_cannot_start_is_replaced_by_a_probed_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The likely pick (no probe) is wrong, as on a machine where a static check passes a
    # Python its user still cannot run: the load fails, the probe finds one that runs.
    broken = tmp_path / "python-that-is-not"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    monkeypatch.setattr(identity_mod, "likely_interpreter", lambda user: str(broken))
    child = isolation.ChildProcess("def f(x):\n    return x\n", "mine.py", ["f"], Limits())
    try:
        assert child.ensure_loaded().ok
        assert child.interpreter != str(broken)
        assert child.call("f", [41], {}).value == 41
    finally:
        child.close()


def test_a_link_behind_a_root_only_folder_is_not_taken_for_reachable() -> None:
    # A kit's venv: bin/python links to a system Python others may run, but the venv
    # folder is root-only (setup.sh), so another uid cannot exec the link.  The likely
    # pick skipped nothing there: every kit's first load failed ("unshare: failed to
    # execute .../rlsys-venv/bin/python: Permission denied" in the instructor's log) and
    # only the probe that followed found the system Python.
    target = "/bin/sh"
    folder = Path(tempfile.mkdtemp(prefix="rlsys-venv-"))
    try:
        folder.chmod(0o755)
        (folder / "bin").mkdir(mode=0o755)
        (folder / "bin" / "python").symlink_to(target)
        link = str(folder / "bin" / "python")
        assert identity_mod._others_can_reach(target)
        assert identity_mod._others_can_reach(link)
        folder.chmod(0o700)
        assert not identity_mod._others_can_reach(link)
        assert identity_mod._others_can_reach(target)
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_a_grader_that_cannot_exec_its_own_python_starts_one_it_can(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A root pyenv run by a dropped uid: the grader runs, but exec of its own path is
    # refused.  The likely pick (no child identity) skips it without a failed start.
    unreachable = tmp_path / "python"
    unreachable.write_text("")
    unreachable.chmod(0o600)
    monkeypatch.setattr(identity_mod.sys, "executable", str(unreachable))
    monkeypatch.setattr(identity_mod.os, "access", lambda p, m: p != str(unreachable))
    picked = identity_mod.likely_interpreter(None)
    assert picked != str(unreachable)
    assert picked in identity_mod._candidates()


def test_a_submission_that_exits_127_at_import_is_its_own_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 127 is also what a Python that cannot start exits with: the probe confirms the
    # interpreter, so the crash stays the submission's (and the load is not retried twice).
    probes: list[object] = []
    real = identity_mod.child_interpreter
    monkeypatch.setattr(
        identity_mod, "child_interpreter", lambda user: probes.append(user) or real(user)
    )
    child = isolation.ChildProcess("import os\nos._exit(127)\n", "mine.py", ["f"], Limits())
    try:
        load = child.ensure_loaded()
        assert not load.ok and load.stage == "crashed"
        assert "exited with code 127" in load.message
        assert len(probes) == 1
        assert child.ensure_loaded() is load  # a failed load is final
    finally:
        child.close()


# -- round 3, class 1: hidden feedback from a closed vocabulary ----------------------------

_WRAP = """
_NAMES = ("pipeline_capacity", "transfer_ledger", "evaluate_topology")
_ORIGINAL = {{n: globals()[n] for n in _NAMES}}
{pad}
def _wrapped(name):
    def call(*args, **kwargs):
        import os, signal, time
        token = {token!r}
        time.sleep(0.001 * (len(repr(args)) % 7))  # timing per case is the submission's too
        {body}
    return call


for _name in list(_ORIGINAL):
    globals()[_name] = _wrapped(_name)
"""
# Each behaviour twice, with two different learner choices (the token): a hidden case's
# record must be the same for both, so the choice carries nothing out.
_CHOOSERS = {
    "builtin_class": (
        "KeyError",
        "IndexError",
        "raise getattr(__builtins__, token, KeyError)(repr(args))",
    ),
    "own_class": (
        "LEAK_A",
        "LEAK_B",
        "raise type(token + repr(args)[:40], (Exception,), {})(repr(args))",
    ),
    "exit_code": (3, 77, "os._exit(token)"),
    "signal": (15, 10, "os.kill(os.getpid(), token)"),
    "line": ("", "\n" * 40, "raise KeyError('x')"),
    "nested_path": (
        0,
        1,
        (
            "result = _ORIGINAL[name](*args, **kwargs)\n"
            "        for key, value in result.items():\n"
            "            if type(value) is list and value:\n"
            "                value[token % len(value)] = 'LEAK_' + repr(args)[:30]\n"
            "        return result"
        ),
    ),
    "invented_keys": (
        "LEAK_1",
        "LEAK_2",
        "return {token + repr(args)[:30]: {'$rlsys_nonplain': token}}",
    ),
}


def _hidden_part(report: Any) -> list[dict[str, Any]]:
    return [t for t in scorejson.document(report)["tests"] if t["visibility"] == "hidden"]


@pytest.mark.slow  # whole gradings, one per behaviour: about 30 s each on 2 cores
@pytest.mark.parametrize("behaviour", sorted(_CHOOSERS))
def test_hidden_feedback_is_the_same_whatever_the_submission_chooses(
    tmp_path: Path, behaviour: str
) -> None:
    from pytest_rlsys.grading.verdicts import HIDDEN_KINDS, PATH_KINDS
    from pytest_rlsys.messages import HIDDEN_WORDS, hidden_message

    first, second, body = _CHOOSERS[behaviour]
    parts = []
    for token in (first, second):
        pad = token if behaviour == "line" else ""
        source = solution_path().read_text("utf-8") + _WRAP.format(pad=pad, token=token, body=body)
        path = tmp_path / f"{behaviour}_{len(parts)}.py"
        path.write_text(source, encoding="utf-8")
        # Both gradings must finish: where a budget runs out depends on the load (60 s ran
        # out for a child that dies on every call, beside two CPU hogs), so it is 60 s
        # times this machine's slowness now.
        limits = Limits(call_timeout_s=2.0, budget_s=60.0 * slowness())
        report = grade_file(path, seed=3, limits=limits)
        parts.append(_hidden_part(report))
        visible = [c for c in report.cases if c.visibility == "visible"]
        assert any(c.status != "passed" for c in visible)  # the behaviour did happen
    assert parts[0] == parts[1]  # nothing the submission chose reached a hidden case
    words = {w.get(lang) for w in HIDDEN_WORDS.values() for lang in ("en", "zh")}
    assert set(HIDDEN_WORDS) == set(HIDDEN_KINDS)
    for test in parts[0]:
        assert test["kind"] in HIDDEN_KINDS
        path = test.get("path", "")
        # The kind's words at its schema path, and (issue 42) the other schema paths that
        # differ: the battery's own paths, whatever the submission chose.
        words = hidden_message(test["kind"], path, "en")
        assert test["message"] == words or test["message"].startswith(f"{words}; also at $.")
        assert path == "" or test["kind"] in PATH_KINDS
        assert "LEAK" not in json.dumps(test)
    assert words  # the vocabulary is not empty


def test_a_reloaded_child_cannot_show_what_an_earlier_one_left(tmp_path: Path) -> None:
    # The first child writes the hidden input where the next child's import can find it
    # and raise it as its load error; only the grader's words may be shown then.
    spot = tmp_path / "spot"
    spot.mkdir(mode=0o777)
    spot.chmod(0o777)
    source = (
        solution_path().read_text("utf-8") + "import os\n"
        f"SPOT = {str(spot / 'note')!r}\n"
        "if os.path.exists(SPOT):\n"
        "    raise RuntimeError('LEAK ' + open(SPOT).read())\n" + "\n_real = pipeline_capacity\n"
        "def pipeline_capacity(*args, **kwargs):\n"
        "    with open(SPOT, 'w') as f:\n"
        "        f.write(repr(args))\n"
        "    os._exit(1)\n"
    )
    path = tmp_path / "mine.py"
    path.write_text(source, encoding="utf-8")
    report = grade_file(path, seed=3, limits=Limits(call_timeout_s=2.0))
    text = json.dumps(scorejson.document(report))
    assert "LEAK" not in text
    assert report.load_error is None  # the first load succeeded


def test_hidden_output_is_never_shown(tmp_path: Path) -> None:
    source = solution_path().read_text("utf-8") + (
        "\n_real = transfer_ledger\n"
        "def transfer_ledger(*args, **kwargs):\n"
        "    import hashlib\n"
        "    print('LEAK', hashlib.sha1(repr(args).encode()).hexdigest())\n"
        "    return _real(*args, **kwargs)\n"
    )
    path = tmp_path / "mine.py"
    path.write_text(source, encoding="utf-8")
    grader = open_grader(GradingRequest(submission=path, seed=3))
    grader.run_all()
    report = grader.report()
    printed = grader.captured_output()
    import hashlib

    def digest(case: Any) -> str:
        return hashlib.sha1(repr(tuple(case.calls[0].args)).encode()).hexdigest()

    mine = [c for c in grader.cases if c.calls[0].func == "transfer_ledger"]
    visible = {digest(c) for c in mine if c.visibility == "visible"}
    hidden = {digest(c) for c in mine if c.visibility == "hidden"} - visible
    assert visible and any(d in printed for d in visible)  # visible calls' output is shown
    assert hidden and not any(d in printed for d in hidden)
    assert report.score == report.max_score


def test_the_score_schema_lists_the_closed_vocabulary() -> None:
    from pytest_rlsys.grading.verdicts import HIDDEN_KIND, HIDDEN_KINDS, PROBLEM_KINDS
    from pytest_rlsys.messages import HIDDEN_WORDS

    schema = json.loads((Path(__file__).parents[2] / "schemas/rlsys-score.v1.json").read_text())
    item = schema["properties"]["tests"]["items"]
    assert set(item["properties"]["kind"]["enum"]) == set(PROBLEM_KINDS) | set(HIDDEN_KINDS)
    assert item["then"]["properties"]["kind"]["enum"] == list(HIDDEN_KINDS)
    assert set(HIDDEN_KIND) == set(PROBLEM_KINDS) and set(HIDDEN_KIND.values()) == set(HIDDEN_KINDS)
    assert set(HIDDEN_WORDS) == set(HIDDEN_KINDS)


# -- round 3, class 2: nothing outlives a child ----------------------------------------------

_LEAVER = r"""
import ctypes, os
NEST = {nest!r}
def _leave(tag):
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", NEST):
        try:
            with open(os.path.join(folder, "rlsys-left-" + tag), "w") as fh:
                fh.write("LEAK")
        except OSError:
            pass
    libc = ctypes.CDLL(None, use_errno=True)
    # add_key("user", "rlsys-left", "LEAK", 4, KEY_SPEC_USER_KEYRING): outlives the process
    libc.syscall(248 if os.uname().machine == "x86_64" else 217,
                 b"user", b"rlsys-left-" + tag.encode(), b"LEAK", 4, -4)
_leave("import")
"""


def _fence_params() -> list[Any]:

    fenced = fence_mod.bwrap_fence() is not None
    return [
        pytest.param("bwrap", marks=pytest.mark.skipif(not fenced, reason="no bubblewrap")),
        "fallback",
    ]


def _key_users() -> set[int]:
    try:
        lines = Path("/proc/key-users").read_text().splitlines()
    except OSError:
        return set()
    return {int(line.split(":")[0]) for line in lines if line.strip()}


def _left_behind(nest: Path) -> list[str]:
    folders = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", str(nest)]
    return [
        os.path.join(f, name)
        for f in folders
        if os.path.isdir(f)
        for name in os.listdir(f)
        if name.startswith("rlsys-left-")
    ]


@root_only
@pytest.mark.parametrize("fence", _fence_params())
def test_nothing_a_child_writes_survives_it(
    tmp_path: Path, fence: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_rlsys.grading import identity

    if fence == "fallback":
        monkeypatch.setattr(fence_mod, "_BWRAP_PROBED", True)
        monkeypatch.setattr(fence_mod, "_BWRAP", None)
    # A nested world-writable folder below an ordinary one, as /tmp/.X11-unix is.
    outer = Path(tempfile.mkdtemp(prefix="rlsys-nest-", dir="/var/tmp"))
    outer.chmod(0o755)
    nest = outer / "inner"
    nest.mkdir()
    nest.chmod(0o1777)
    monkeypatch.setattr(leftovers, "_walks", {})  # found at start-up: this one is new
    try:
        source = (
            solution_path().read_text("utf-8")
            + _LEAVER.format(nest=str(nest))
            + (
                "\n_real = pipeline_capacity\n"
                "def pipeline_capacity(*a, **k):\n"
                "    _leave('call')\n"
                "    return _real(*a, **k)\n"
            )
        )
        path = tmp_path / "mine.py"
        path.write_text(source, encoding="utf-8")
        mark = len(identity.allocated_uids)
        report = grade_file(path, seed=2)
        uids = set(identity.allocated_uids[mark:])
        assert report.score == report.max_score  # the writes did not cost the grade
        assert _left_behind(nest) == []
        assert not uids & _key_users()  # no kernel key of the child's uid exists
        assert not [p for p in processes() if p[2] in uids]
    finally:
        leftovers.remove_tree(str(outer))


@pytest.mark.slow  # two walks of the whole machine: 1-9 s on 2 cores with the load
def test_the_walk_reads_a_leaf_only_where_its_link_count_is_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A world-writable folder below a folder that has no other subfolder: found whether
    # or not the file system's link counts are trusted (the walk skips reading a folder
    # of link count 2 only where that count is exact), and the same folders either way.
    outer = Path(tempfile.mkdtemp(prefix="rlsys-leaf-", dir="/var/tmp"))
    outer.chmod(0o755)
    (outer / "inner").mkdir(mode=0o755)
    nest = outer / "inner" / "open"
    nest.mkdir()
    nest.chmod(0o1777)
    try:
        trusted: list[str] = []
        leftovers._walk(65534, trusted)
        monkeypatch.setattr(leftovers, "_counting_devices", frozenset)
        untrusted: list[str] = []
        leftovers._walk(65534, untrusted)
        # Only this test's own tree is compared: the rest of the machine changes while
        # it runs (other tests make and remove world-writable folders).
        ours = [sorted(p for p in f if p.startswith(str(outer))) for f in (trusted, untrusted)]
        assert ours[0] == ours[1] == [str(nest)]
    finally:
        leftovers.remove_tree(str(outer))


_HANGER = r"""
import os, time
def pipeline_capacity(*a, **k):
    try:  # refused behind Landlock; the child hangs either way
        with open("/tmp/rlsys-hang-" + str(os.getuid()), "w") as fh:
            fh.write("LEAK")
    except OSError:
        pass
    with open("rlsys-in-call", "w") as fh:  # its scratch folder: writable behind every fence
        fh.write("1")
    time.sleep(600)
transfer_ledger = evaluate_topology = pipeline_capacity
"""


@root_only
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL", "SIGINT"])
@pytest.mark.parametrize("fence", _fence_params())
def test_a_grader_that_is_ended_leaves_no_child(tmp_path: Path, fence: str, how: str) -> None:
    import signal
    import subprocess
    import sys

    from pytest_rlsys.grading import identity

    path = tmp_path / "mine.py"
    path.write_text(_HANGER, encoding="utf-8")
    code = (
        # SIGINT's default action (KeyboardInterrupt), as a grader started from a terminal
        # has it.  A process inherits an ignored SIGINT and Python then leaves it ignored:
        # a suite started in the background by a shell without job control (`pytest &` in
        # a script, `nohup pytest &`) ran this grader deaf to the SIGINT below, in its 300 s
        # call for the whole 120 s wait (twice, in a hog run of the whole suite).
        "import signal\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import sys\n"
        "from pathlib import Path\n"
        "from pytest_rlsys.grading.grader import grade_file\n"
        "from pytest_rlsys.grading.outcomes import Limits\n"
        "grade_file(Path(sys.argv[1]), limits=Limits(call_timeout_s=300, budget_s=900))\n"
    )
    env = dict(os.environ)
    if fence == "fallback":
        env["RLSYS_NO_BWRAP"] = "1"
    before = {p[0] for p in processes()}
    # Started with SIGINT ignored whoever started this suite (see ``code``): the grader's
    # own start must restore it, in a foreground run as in a background one.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        grader = subprocess.Popen([sys.executable, "-c", code, str(path)], env=env)
    finally:
        signal.signal(signal.SIGINT, previous)
    # Every wait below ends as soon as its condition holds; the bounds are wide because
    # a loaded machine starts, ends and reaps slowly, and the speed is not the point.
    try:
        deadline = time.monotonic() + 120
        child_uids: set[int] = set()
        in_call = False
        while time.monotonic() < deadline and not in_call:
            # This grader's children only: other gradings on a shared machine (another
            # session's, a parallel test run) have fresh uids too.
            table = list(processes())
            parent = {p[0]: p[1] for p in table}

            def ours(pid: int, parent: dict[int, int] = parent) -> bool:
                for _ in range(64):
                    pid = parent.get(pid, 0)
                    if pid == grader.pid:
                        return True
                    if pid <= 1:
                        return False
                return False

            children = [
                p
                for p in table
                if p[0] not in before and p[2] >= identity.EPHEMERAL_UID_BASE and ours(p[0])
            ]
            child_uids = {p[2] for p in children}
            # In its call once it has written its marker (in its scratch folder, its cwd).
            in_call = any(os.path.exists(f"/proc/{p[0]}/cwd/rlsys-in-call") for p in children)
            time.sleep(0.05)
        assert in_call, "the child never reached its call"
        grader.send_signal(getattr(signal, how))
        grader.wait(timeout=120)
        deadline = time.monotonic() + 60

        def left() -> list[tuple[int, int, int, str]]:
            # Only this grader's: an earlier test's child may share a fresh uid.
            return [p for p in processes() if p[2] in child_uids and p[0] not in before]

        # Zombies count as gone: where PID 1 never reaps (CI's container) they stay for good.
        while time.monotonic() < deadline and [p for p in left() if p[3] != "Z"]:
            time.sleep(0.05)
        assert not [p for p in left() if p[3] != "Z"]
        left = [f"/tmp/rlsys-hang-{uid}" for uid in child_uids]
        if fence == "bwrap" or how != "SIGKILL" or landlock_abi():
            # A grader killed outright cannot sweep: only a fence leaves nothing then.
            assert not [f for f in left if os.path.exists(f)]
    finally:
        if grader.poll() is None:
            grader.kill()
        for uid in child_uids:
            with contextlib.suppress(OSError):
                os.unlink(f"/tmp/rlsys-hang-{uid}")


# -- round 3, class 3: bounded work in the parent --------------------------------------------

_STRAY = r"""
import json, os, sys, fcntl
def flood():
    fd = int(sys.argv[1])
    try:
        fcntl.fcntl(fd, 1031, 1 << 20)  # F_SETPIPE_SZ: a bigger pipe, as the attack did
    except OSError:
        pass
    body = json.dumps({"id": -1, "ok": True, "value": 0, "args_after": [[], {}]}).encode()
    frame = len(body).to_bytes(4, "big") + body
    while True:
        os.write(fd, frame * 64)
def fine():
    return 1
"""


@pytest.mark.timeout(60)
def test_stray_frames_cannot_keep_a_call_alive() -> None:
    child = isolation.ChildProcess(
        _STRAY, "stray.py", ["flood", "fine"], Limits(call_timeout_s=1, load_timeout_s=5)
    )
    try:
        started = time.monotonic()
        outcome = child.call("flood", [], {})
        assert outcome.kind in ("timeout", "protocol")
        assert time.monotonic() - started < 3  # its deadline, whatever kept arriving
        assert child.call("fine", [], {}).value == 1  # a fresh child answers
    finally:
        child.close()


_FORGER = r"""
import json, os, sys
def _forge(*args, **kwargs):
    ident = sys._getframe(1).f_locals["request"]["id"]
    huge = ["x" * 1000] * 10000  # a list where a type name (a string) belongs
    value = {"$rlsys_nonplain": huge}
    body = json.dumps({"id": ident, "ok": True, "value": value, "args_after": [[], {}]})
    os.write(int(sys.argv[1]), len(body).to_bytes(4, "big") + body.encode())
    raise type("E" * 5000, (Exception,), {})("M" * 1_000_000)
pipeline_capacity = transfer_ledger = evaluate_topology = _forge
"""
_RAISER = r"""
def _raise(*args, **kwargs):
    raise type("\u202e" * 3000, (Exception,), {})("\x1b[2J" * 300_000)
pipeline_capacity = transfer_ledger = evaluate_topology = _raise
"""


@pytest.mark.slow  # a whole grading that hits the output bound: about 16 s
@pytest.mark.parametrize("source", [_FORGER, _RAISER], ids=["forged_marker", "huge_texts"])
def test_the_score_json_has_a_stated_size_bound(tmp_path: Path, source: str) -> None:
    from pytest_rlsys.grading.scoring import MAX_CASE_JSON_BYTES, MAX_REPORT_EXTRA_BYTES
    from pytest_rlsys.outputs.text import dump_json

    path = tmp_path / "mine.py"
    path.write_text(source, encoding="utf-8")
    report = grade_file(path, seed=1, limits=Limits(call_timeout_s=2.0))
    size = len(dump_json(scorejson.document(report)).encode("utf-8"))
    bound = len(report.cases) * MAX_CASE_JSON_BYTES + MAX_REPORT_EXTRA_BYTES
    assert size <= bound, (size, bound)
    assert size < 2 * 1024 * 1024  # and, in absolute terms, small


def test_batch_csv_and_progress_escape_learner_text(tmp_path: Path) -> None:
    import csv
    import io

    from pytest_rlsys.cli import main
    from pytest_rlsys.cli.batch import _Progress

    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    (subs / "=cmd\x1b[2J.py").write_text(
        'raise type("=HYPERLINK(\\"http://evil\\")", (Exception,), {})("x")\n', encoding="utf-8"
    )
    out = tmp_path / "grades.csv"
    assert main(["batch", str(subs), "--seed", "1", "--csv", str(out), "--no-progress"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "\x1b" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and all(
        not str(value).startswith(("=", "+", "-", "@", "\t", "\r"))
        for row in rows
        for value in row.values()
    )
    assert rows[0]["submission"].startswith("'=cmd")
    progress = _Progress(1, enabled=False)
    progress.started("\x1b[2J\u202efake")
    assert "\x1b" not in progress.slowest() and "\u202e" not in progress.slowest()


def test_rlsys_result_prints_no_raw_escape_from_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_rlsys.cli import main

    doc = json.loads(
        (Path(__file__).parents[2] / "schemas/examples/pt-verl-closure.example.json").read_text()
    )
    doc["\x1b[2J\x1b[8mverdict: pass\u202e"] = 1  # an unknown key, named in the errors
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    for argv in (["result", str(path)], ["result", str(path), "--json"], ["validate", str(path)]):
        main(argv)
        printed = capsys.readouterr().out
        assert printed
        assert not any(ch in printed for ch in "\x1b\u202e\x9b"), argv
        if "--json" in argv:
            json.loads(printed)  # still valid JSON


# -- round 3, class 5: inputs that made the grader fail -------------------------------------


def test_a_class_folder_with_1100_nested_folders_gets_every_row(tmp_path: Path) -> None:
    from pytest_rlsys.cli import main

    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    (subs / "ok.py").write_text("x = 1\n", encoding="utf-8")
    deep = subs / "deep"
    deep.mkdir()
    current = deep
    for _ in range(1100):  # os.walk recursed here (RecursionError, no CSV for anyone)
        current = current / "d"
        current.mkdir()
    (current / "mine.py").write_text("x = 1\n", encoding="utf-8")
    os.mkfifo(subs / "pipe.py")  # a FIFO named *.py: a row with its reason, no hang
    out = tmp_path / "grades.csv"
    try:
        code = main(["batch", str(subs), "--seed", "1", "--csv", str(out), "--no-progress"])
    finally:
        # pytest's own clean-up of old tmp folders recurses: it could not remove this tree.
        leftovers.remove_tree(str(deep))
    assert code == 0
    rows = {row["submission"]: row for row in __import__("csv").DictReader(out.open())}
    # "deep" holds only folders: a grouping (section folders), walked to its depth limit,
    # where the one row says why it goes no deeper (named by its path there).
    deep_rows = [name for name in rows if name.startswith("deep")]
    assert set(rows) - set(deep_rows) == {"ok.py", "pipe.py"} and len(deep_rows) == 1
    assert deep_rows[0].startswith("deep/d/d/") and rows[deep_rows[0]]["status"] == "not_graded"
    assert "nested" in rows[deep_rows[0]]["message"]
    assert rows["pipe.py"]["message"] and rows["pipe.py"]["score"] in ("0", "0.0", "")


@pytest.mark.timeout(60)
def test_validate_on_a_mixed_unique_items_array_is_linear(tmp_path: Path) -> None:
    from pytest_rlsys.cli import main

    doc = json.loads(
        (Path(__file__).parents[2] / "schemas/examples/pt-verl-closure.example.json").read_text()
    )
    tags: list[Any] = [i if i % 2 else f"t{i}" for i in range(20_000)]
    doc["groups"]["release"]["resume_calls"][0]["tags"] = tags  # ~158 KB, uniqueItems
    path = tmp_path / "result.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    started = time.monotonic()
    assert main(["validate", str(path)]) == 1  # the ints are not tag strings
    assert time.monotonic() - started < 15  # was over 2 minutes (a quadratic fallback)


def test_unique_items_keeps_json_equality() -> None:
    import jsonschema_rs  # the result schemas' validator (resultfile.schemas)

    _all_unique = jsonschema_rs.validator_for({"uniqueItems": True}).is_valid
    assert not _all_unique([1, 1.0])
    assert _all_unique([1, True]) and _all_unique([0, False, None, ""])
    assert not _all_unique([{"a": [1, 2]}, {"a": [1.0, 2]}])
    assert _all_unique([[1, 2], [2, 1]]) and not _all_unique(["x", 3, "x"])


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "devzero", "root_only_link"])
def test_artefacts_are_read_through_the_safe_read_rule(tmp_path: Path, kind: str) -> None:
    from pytest_rlsys.resultfile.artefacts import (
        ADAPTER_WEIGHTS,
        ArtefactError,
        adapter_sha256,
        read_samples_jsonl,
    )

    adapters = tmp_path / "adapters"
    adapters.mkdir()
    weights, log = adapters / ADAPTER_WEIGHTS, tmp_path / "samples.jsonl"
    secret = tmp_path / "secret"
    secret.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00TOPSECRET")
    secret.chmod(0o600)
    for target in (weights, log):
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "devzero":
            target.symlink_to("/dev/zero")
        else:
            target.symlink_to(secret)
    for read in (lambda: adapter_sha256(adapters), lambda: read_samples_jsonl(log)):
        with pytest.raises(ArtefactError) as caught:
            read()
        message = str(caught.value)
        assert "TOPSECRET" not in message and "header length" not in message
        assert "link" in message or "not a regular file" in message


def test_children_started_while_the_fence_is_probed_wait_for_its_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch starts children from several threads at once: one that asks while the
    first probe runs gets the probe's answer, never "no fence" (it once ran behind the
    fallback fence, and its sweep walked the whole file system during the batch)."""
    import threading

    answer = ("/usr/bin/bwrap", "/usr/bin/setpriv")
    probes: list[int] = []

    def slow_probe() -> tuple[str, str]:
        probes.append(1)
        time.sleep(0.2)
        return answer

    monkeypatch.setattr(fence_mod, "_BWRAP_PROBED", False)
    monkeypatch.setattr(fence_mod, "_BWRAP", None)
    monkeypatch.setattr(fence_mod, "_probe_bwrap", slow_probe)
    got: list[object] = []
    threads = [
        threading.Thread(target=lambda: got.append(fence_mod.bwrap_fence())) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert got == [answer] * 4 and probes == [1]


# -- fence trial (round 5): the reference in a checkout, loads, the time budget --------------


@root_only
def test_a_checkout_holding_the_graders_venv_has_its_reference_made_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's quick start: a checkout with .venv inside it, installed non-editable.
    # /proc/<ppid>/cmdline names CHECKOUT/.venv/bin/python; one walk up was solutions/
    # (world-readable): a clean-room attack ran it and scored 100/100.
    checkout = tmp_path / "course"
    (checkout / ".venv" / "bin").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text('[project]\nname = "pytest_rlsys"\n')
    copies = ["solutions", "pytest_rlsys/grading/battery", "tests/corpora", ".git", "exercises"]
    for name in copies:
        (checkout / name).mkdir(parents=True, exist_ok=True)
        (checkout / name).chmod(0o755)
    (checkout / "solutions" / "rlsys_ledger.py").write_bytes(solution_path().read_bytes())
    (checkout / "exercises" / "rlsys_ledger.py").write_bytes(exercise_path().read_bytes())
    other = tmp_path / "other"  # a project that is not this one keeps its modes
    (other / "solutions").mkdir(parents=True)
    (other / "solutions").chmod(0o755)
    (other / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    monkeypatch.setattr(sys, "prefix", str(checkout / ".venv"))
    monkeypatch.setattr(sys, "argv", ["rlsys", "grade", str(other / "solutions" / "x.py")])
    monkeypatch.setattr(private, "_done", False)
    private.protect_private_files()
    for name in copies[:-1]:
        assert not private.readable_by_others(checkout / name), name
    # The template is no secret: exercises/ is left alone unless it holds the reference.
    assert private.readable_by_others(checkout / "exercises")
    assert private.readable_by_others(other / "solutions")
    (checkout / "exercises" / "rlsys_ledger.py").write_bytes(solution_path().read_bytes())
    assert (checkout / "exercises").resolve() in private.private_folders()


@root_only
def test_an_upload_that_claims_to_be_a_checkout_changes_no_folder_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The learner controls the folder beside the file: a pyproject.toml naming this project
    # and tests/ a link to another user's folder once had root make its corpora/ 0700.
    upload, victim = tmp_path / "upload", tmp_path / "victim"
    (victim / "corpora").mkdir(parents=True)
    (victim / "corpora").chmod(0o755)
    upload.mkdir()
    (upload / "pyproject.toml").write_text('[project]\nname = "pytest-rlsys"\n')
    (upload / "tests").symlink_to(victim)
    (upload / "solutions").mkdir()
    (upload / "solutions").chmod(0o755)
    monkeypatch.setattr(sys, "argv", ["rlsys", "grade", str(upload / "mine.py")])
    monkeypatch.setattr(private, "_done", False)
    private.protect_private_files()
    assert private.readable_by_others(victim / "corpora")
    assert not private.readable_by_others(upload / "solutions")  # inside it: kept private


@pytest.mark.parametrize(
    ("source", "key", "exc"),
    [
        ("x = " + "+".join(["1"] * 5000) + "\n", "too_complex", "RecursionError"),
        ("x = " + "not " * 10000 + "1\n", "too_complex", "MemoryError"),
        ("x = 1\x00\n", "nul_bytes", "ValueError"),
        ("if 1:\n\tx = 1\n        y = 2\n", "load_raised_at", "TabError"),
    ],
    ids=["recursion", "memory", "nul", "tab"],
)
def test_every_way_compile_fails_is_a_precise_load_error(source: str, key: str, exc: str) -> None:
    # A 150k-term `1+1+...` and 100k nested `not` made compile raise in the harness,
    # uncaught: a traceback, and "exited with code 1 (sys.exit / os._exit?)".
    child = isolation.ChildProcess(source, "mine.py", ["pipeline_capacity"], Limits())
    try:
        load = child.ensure_loaded()
    finally:
        child.close()
    assert not load.ok and load.said is not None
    assert (load.said.key, load.exc_type) == (key, exc), load.message
    assert "Traceback" not in child.output()


_SLOW_HANG = (
    "import time\n"
    "time.sleep({load})\n"
    "def _hang(*a, **k):\n"
    "    while True:\n"
    "        time.sleep(100)\n"
    "pipeline_capacity = transfer_ledger = evaluate_topology = _hang\n"
)


@pytest.mark.slow  # waits out a budget: 3.6 s
def test_the_budget_bounds_reloads_and_calls_too(tmp_path: Path) -> None:
    # Loads for most of its load limit, then hangs in every call: each timeout costs a
    # fresh child and a reload, and the case begun just before the budget's end ran a
    # whole reload and a call past it (58 s against 45 s in the clean-room attack).
    path = tmp_path / "mine.py"
    path.write_text(_SLOW_HANG.format(load=2.0))
    limits = Limits(call_timeout_s=1.0, load_timeout_s=3.0, budget_s=3.5)
    report = grade_file(path, seed=1, limits=limits)
    # Without the cap: 2 s load + 1 s timeout, then a reload and a call begun at 3 s: 6 s.
    assert report.elapsed_s < limits.budget_s + 1.0 * slowness(), report.elapsed_s
    cut = [c for c in report.cases if c.kind == "over_budget"]
    assert cut and all(c.status == "not_run" for c in cut)


@pytest.mark.slow  # waits out a budget: 1.7 s
def test_the_probes_budget_bounds_their_reload(tmp_path: Path) -> None:
    # The behaviour probes' 15 s: a reload of the child ran before it was counted.
    path = tmp_path / "mine.py"
    path.write_text(_SLOW_HANG.format(load=2.0))
    grader = open_grader(
        GradingRequest(submission=path, limits=Limits(call_timeout_s=1.0, load_timeout_s=3.0))
    )
    calls = [(f, [], {}) for f in ("pipeline_capacity", "transfer_ledger", "evaluate_topology")]
    began = time.monotonic()
    try:
        grader.answer(calls, 1.5)
    finally:
        grader.close()
    assert time.monotonic() - began < 1.5 + 1.0 * slowness()
