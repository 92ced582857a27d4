"""The rlsys command: grade, batch, template, ledger."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.cli import ExitCode, main
from pytest_rlsys.grading.grader import MAX_SUBMISSION_BYTES
from pytest_rlsys.resources import exercise_path, solution_path
from tests.conftest import REPO, load_report, processes


def test_help_and_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "batch DIR" in capsys.readouterr().out
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_template_writes_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "mine.py"
    assert main(["template", str(target)]) == 0
    # The template, its grading command naming the file as written.
    written = target.read_text(encoding="utf-8")
    assert written == exercise_path().read_text(encoding="utf-8").replace(
        "--rlsys-submission rlsys_ledger.py", "--rlsys-submission mine.py"
    )
    assert main(["template", str(target)]) == 2
    assert "--force" in capsys.readouterr().err


def test_grade_ignores_the_users_pytest_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -x --bogus-flag\n")
    (tmp_path / "mine.py").write_text(solution_path().read_text(encoding="utf-8"))
    assert main(["grade", "mine.py", "--seed", "3", "--report", "score.json"]) == 0
    assert load_report(tmp_path / "score.json")["score"] == 100


@pytest.mark.slow
def test_grade_loads_into_a_child_started_first_and_leaves_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The child's interpreter starts before the grading modules load and the battery is
    # built (its start-up overlaps them, as in the plugin); a path with nothing to grade
    # closes it again.
    from pytest_rlsys import session
    from pytest_rlsys.grading import supervision

    real = session.GradingSession.open.__func__  # type: ignore[attr-defined]
    started: list[bool] = []

    def spy(cls: Any, request: Any, standby: Any = None, row: bool = False) -> Any:
        started.append(standby is not None and standby.proc is not None)
        return real(cls, request, standby, row)

    monkeypatch.setattr(session.GradingSession, "open", classmethod(spy))
    mine = tmp_path / "mine.py"
    mine.write_text(solution_path().read_text(encoding="utf-8"))
    report = tmp_path / "score.json"
    assert main(["grade", str(mine), "--seed", "3", "--report", str(report)]) == 0
    assert load_report(report)["score"] == 100
    assert main(["grade", str(tmp_path / "missing.py"), "--seed", "3"]) == ExitCode.USAGE
    assert started == [True, True]
    assert not supervision.LIVE  # neither child is left running


def test_batch_grades_a_folder_and_survives_broken_submissions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)  # as root, batch refuses a class folder others can read
    (subs / "alice.py").write_text(solution_path().read_text(encoding="utf-8"))
    (subs / "bob.py").write_text(exercise_path().read_text(encoding="utf-8"))
    (subs / "carol.py").write_bytes(b"\xff\xfe not utf-8")
    (subs / "dave").mkdir()
    (subs / "dave" / "a.py").write_text("import os\nos._exit(1)\n")
    (subs / "erin").mkdir()  # no .py inside: an error row, not a crash
    (subs / "frank.txt").write_text("my answer")  # not .py: a row too, the learner kept
    (subs / "gail").mkdir()  # the template's name among others: graded, as the kits do
    (subs / "gail" / "rlsys_ledger.py").write_text(solution_path().read_text(encoding="utf-8"))
    (subs / "gail" / "test_mine.py").write_text("def test_x():\n    pass\n")
    out_csv, out_json = tmp_path / "grades.csv", tmp_path / "grades.json"
    before = set(_live_children())
    assert (
        main(
            [
                "batch",
                str(subs),
                "--jobs",
                "2",
                "--seed",
                "5",
                "--csv",
                str(out_csv),
                "--json",
                str(out_json),
                "--no-progress",
                "--timeout",
                "2",
            ]
        )
        == 0
    )
    with open(out_csv, encoding="utf-8") as handle:
        rows = {r["submission"]: r for r in csv.DictReader(handle)}
    assert set(rows) == {"alice.py", "bob.py", "carol.py", "dave", "erin", "frank.txt", "gail"}
    assert float(rows["gail"]["score"]) == 100
    assert float(rows["alice.py"]["score"]) == 100
    assert float(rows["bob.py"]["score"]) == 0
    assert rows["alice.py"]["status"] == rows["bob.py"]["status"] == "graded"
    # "did not load" (tried, score 0, the reason) differs from "did not try"
    assert float(rows["carol.py"]["score"]) == 0 and rows["carol.py"]["status"] == "not_loaded"
    assert "UTF-8" in rows["carol.py"]["message"]
    assert float(rows["dave"]["score"]) == 0 and rows["dave"]["status"] == "not_loaded"
    assert rows["dave"]["message"]
    assert rows["erin"]["status"] == "not_graded" and "found 0" in rows["erin"]["message"]
    assert rows["erin"]["score"] == ""
    assert rows["frank.txt"]["status"] == "not_graded"
    assert "not a .py file" in rows["frank.txt"]["message"]
    full = json.loads(out_json.read_text(encoding="utf-8"))
    assert full["seed"] == 5
    alice = next(r for r in full["submissions"] if r["submission"] == "alice.py")
    assert alice["report"]["reproducibility"]["seed"] == 5
    assert "3 graded, 2 did not load (score 0), 2 not graded" in capsys.readouterr().err
    # Children started ahead for submissions that never came are gone too.
    deadline = time.monotonic() + 10
    while set(_live_children()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(_live_children()) - before == set()


def _live_children() -> list[int]:
    """Processes whose parent is this one (zombies excluded)."""
    return [pid for pid, ppid, _, state in processes() if ppid == os.getpid() and state != "Z"]


_HANGS = """
import time
def pipeline_capacity(*a, **k):
    with open("rlsys-in-call", "w") as fh:  # in its scratch folder, its cwd
        fh.write("1")
    time.sleep(600)
transfer_ledger = evaluate_topology = pipeline_capacity
"""

# Right on every graded case; hangs only on a number given as a string, which the
# behaviour probes give (the template leaves it open) and no case does: the batch is then
# interrupted in the probes, after the grading.
_HANGS_IN_PROBES = (
    solution_path().read_text(encoding="utf-8")
    + """
import time as _time
_graded = pipeline_capacity
def pipeline_capacity(stage_rates, *a, **k):
    if any(isinstance(v, str) for v in dict(stage_rates).values()):
        with open("rlsys-in-call", "w") as fh:
            fh.write("1")
        _time.sleep(600)
    return _graded(stage_rates, *a, **k)
"""
)


def _descendants(root: int) -> list[int]:
    """Every live process below ``root`` (zombies excluded)."""
    table = [(pid, ppid) for pid, ppid, _, state in processes() if state != "Z"]
    found: list[int] = []
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in table if ppid in frontier} - set(found)
        found += frontier
    return found


@pytest.mark.slow
@pytest.mark.parametrize("where", ["grading", "probes"])
def test_one_sigint_ends_a_batch_at_once(tmp_path: Path, where: str) -> None:
    """Ctrl-C stops the call under way and begins no other submission.  The pool once
    waited, as it shut down, for the running call's time limit and then graded the rest
    of the class; a second Ctrl-C ended only that wait, a third the one at exit."""
    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)  # as root, batch refuses a class folder others can read
    for name in ("a", "b", "c"):
        (subs / f"{name}.py").write_text(
            _HANGS if where == "grading" else _HANGS_IN_PROBES, encoding="utf-8"
        )
    code = (
        # As from a terminal: a suite started in the background has SIGINT ignored, and
        # every process it starts inherits that.
        "import signal\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from pytest_rlsys.cli import main\n"
        "raise SystemExit(main())\n"
    )
    command = [sys.executable, "-c", code, "batch", str(subs), "--no-progress"]
    command += ["--jobs", "1", "--timeout", "300", "--budget", "900"]
    batch = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # The bounds are wide for a loaded machine; each wait ends once its condition holds.
        deadline = time.monotonic() + 120
        in_call = False
        while not in_call and batch.poll() is None and time.monotonic() < deadline:
            in_call = any(
                os.path.exists(f"/proc/{pid}/cwd/rlsys-in-call") for pid in _descendants(batch.pid)
            )
            time.sleep(0.05)
        assert in_call, "no submission reached its call"
        children = _descendants(batch.pid)
        batch.send_signal(signal.SIGINT)
        assert batch.wait(timeout=120) == ExitCode.INTERRUPTED
        assert batch.stderr is not None and b"rlsys: interrupted" in batch.stderr.read()
        live = {pid for pid, _, _, state in processes() if state != "Z"}
        assert not live & set(children)  # the batch collected its children before it ended
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
        if batch.stderr is not None:
            batch.stderr.close()


@pytest.mark.parametrize("args", [["nowhere"], ["{tmp}", "--jobs", "0"], ["{tmp}", "--seed", "x"]])
def test_batch_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert main(["batch", *[a.format(tmp=tmp_path) for a in args]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlsys batch") and "Traceback" not in err


def test_batch_of_a_folder_without_python_files_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not a class of learners who all handed in notes: the wrong folder, said before grading.
    subs = tmp_path / "docs"
    subs.mkdir(mode=0o700)
    (subs / "notes.txt").write_text("x")
    assert main(["batch", str(subs), "--csv", str(tmp_path / "rows.csv")]) == 2
    assert "no submissions (.py files)" in capsys.readouterr().err
    assert not (tmp_path / "rows.csv").exists()


def test_batch_rows_are_learners_not_python_s_cache_or_its_own_outputs(tmp_path: Path) -> None:
    # Run twice with its outputs in the class folder, after Python left a __pycache__
    # there: the second run's rows are the same learners, no grades.csv or cache row.
    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    (subs / "ann.py").write_text("def pipeline_capacity(a, b, c):\n    return {}\n")
    (subs / "__pycache__").mkdir()
    (subs / "__pycache__" / "ann.cpython-311.pyc").write_bytes(b"\0")
    (subs / "notes.txt").write_text("still a row: a learner handed it in")
    (subs / "s2").mkdir()
    for name in ("a.py", "b.py"):
        (subs / "s2" / name).write_text("x = 1\n")
    argv = ["batch", str(subs), "--csv", str(subs / "grades.csv"), "--no-progress"]
    argv += ["--json", str(subs / "grades.json"), "--jobs", "1", "--no-behaviour"]
    for _ in range(2):
        assert main(argv) == 0
        rows = json.loads((subs / "grades.json").read_text("utf-8"))["submissions"]
        assert [r["submission"] for r in rows] == ["ann.py", "notes.txt", "s2"]
        # Which files, and the rule that would have picked one.
        assert rows[2]["message"].endswith("rlsys_ledger.py among several, found 2: a.py, b.py")


def test_batch_finds_each_learner_inside_section_folders(tmp_path: Path) -> None:
    # An LMS export: sections holding learners' folders.  A folder holding only folders
    # groups learners; each learner is one row named by its path below the class folder.
    from pytest_rlsys.cli.batch import MAX_FOLDER_DEPTH, find_submissions

    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    learners = ["Section A/Li Na", "Section A/Zhang Wei 张伟", "Section B/Zhang Wei 张伟"]
    learners += ["Term 2/Section C/Ōe"]
    for learner in learners:
        (subs / learner).mkdir(parents=True)
        (subs / learner / "rlsys_ledger.py").write_text("x = 1\n")
    (subs / "ann.py").write_text("x = 1\n")  # the flat layout beside them, as before
    (subs / "dave").mkdir()
    (subs / "dave" / "notes.txt").write_text("a learner's folder with no .py: a row")
    (subs / "dave" / "sub").mkdir()
    (subs / "Section B" / "empty").mkdir()  # handed in nothing: a row all the same
    (subs / "Section B" / "link").symlink_to(subs / "Section A")  # never followed
    deep = subs / "deep"
    for _ in range(MAX_FOLDER_DEPTH + 2):
        deep = deep / "d"
    deep.mkdir(parents=True)
    found = {name: (path, problem) for name, path, problem in find_submissions(subs)}
    for learner in learners:
        assert found[learner] == (subs / learner / "rlsys_ledger.py", "")
    assert found["ann.py"] == (subs / "ann.py", "")
    assert found["dave"][0] is None and "found 0" in found["dave"][1]
    assert found["Section B/empty"][0] is None and "found 0" in found["Section B/empty"][1]
    assert found["Section B/link"] == (subs / "Section B" / "link", "")  # refused when graded
    [(_, (path, problem))] = [item for item in found.items() if item[0].startswith("deep")]
    assert path is None and f"nested over {MAX_FOLDER_DEPTH} folders deep" in problem
    assert len(found) == len(learners) + 5
    # The same rows come out of rlsys batch, each learner graded under their own name.
    out_csv = tmp_path / "grades.csv"
    argv = ["batch", str(subs), "--csv", str(out_csv), "--no-progress", "--jobs", "1"]
    assert main([*argv, "--no-behaviour"]) == 0
    with open(out_csv, encoding="utf-8") as handle:
        rows = {r["submission"]: r["status"] for r in csv.DictReader(handle)}
    assert set(rows) == set(found)
    assert all(rows[learner] == "graded" for learner in learners)


def test_similarity_names_each_file_on_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Several files, one line each: the line says which file it is about, the name
    # escaped as a batch row's (a control character cannot forge a line of its own).
    empty, odd = tmp_path / "empty.py", tmp_path / "a\x1b[2Jb.py"
    empty.write_text("")
    odd.write_text("x = 1\n")
    gone = tmp_path / "gone.py"
    assert main(["similarity", str(empty), str(odd), str(gone)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [
        str(empty),
        str(tmp_path / "a\\x1b[2Jb.py"),
        str(gone),
    ]
    assert all("rlsys similarity (instructors only)" in line for line in lines)


@pytest.mark.parametrize("command", ["grade", "batch"])
def test_a_rubric_weighing_an_unknown_case_is_a_usage_error_before_grading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    rubric = tmp_path / "rubric.toml"
    rubric.write_text('[weights]\n"todo2.hidden.nonexistent" = 2\n')
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "a.py").write_text(solution_path().read_text(encoding="utf-8"))
    target = str(tmp_path / "class" / ("a.py" if command == "grade" else ""))
    report = ["--report", str(tmp_path / "score.json")] if command == "grade" else []
    report += ["--csv", str(tmp_path / "rows.csv")] if command == "batch" else []
    assert main([command, target, "--rubric", str(rubric), *report]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rlsys {command}") and "Traceback" not in err
    assert "todo2.hidden.nonexistent" in err and "score report" in err
    assert not (tmp_path / "score.json").exists() and not (tmp_path / "rows.csv").exists()


def test_ledger_reports_the_example_topology(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", str(REPO / "examples" / "topology.json"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["capacity"]["bottlenecks"] == ["learner", "reward", "rollout"]
    assert report["transfer"]["critical_fabrics"] == ["pcie-1"]
    assert report["admission"]["decision"] == "tune"


def test_ledger_takes_stage_rates_from_a_result_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_rlsys.resources import schema_dir

    topo = {
        "stage_rates": {"rollout": 1, "learner": 1},
        "arrival_rate": 0.1,
        "items_per_work_unit": {"rollout": 1, "learner": 1},
        "placement": {"rollout": "A", "learner": "A"},
        "edges": [],
        "memory_by_pool": {"A": 10},
        "memory_limits": {"A": 20},
        "stage_phases": {"learner": "update"},
    }
    path = tmp_path / "topo.json"
    path.write_text(json.dumps(topo))
    example = schema_dir() / "examples" / "pt-verl-closure.example.json"
    assert main(["ledger", str(path), "--result", str(example), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stage_rates"]["learner"] == pytest.approx(1 / 1.367)


def test_ledger_takes_the_size_limit_its_message_offers_to_raise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A result file over the limit says "(or raise the limit)": ledger takes --max-mib.
    from pytest_rlsys.resources import schema_dir

    example = str(schema_dir() / "examples" / "pt-verl-closure.example.json")
    argv = ["ledger", str(REPO / "examples" / "closure_topology.json"), "--result", example]
    assert main([*argv, "--max-mib", "0.001"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "over the size limit of 1048 bytes" in err and "raise the limit" in err
    assert main([*argv, "--max-mib", "5", "--json"]) == ExitCode.OK


@pytest.mark.parametrize(
    ("result", "says"),
    [
        ("schemas/examples/pt-verl-closure.example.json", []),
        (
            "schemas/examples/pt-verl-closure.v1-unpaired.example.json",
            [
                "its own checks fail on its evidence (initial_lora_match, updated_lora_match, "
                "config_paired;"
            ],
        ),
        (
            "tests/corpora/result_corpus/honest/failed_in_sync.json",
            ["records a failed run (group retain, phase sync)"],
        ),
    ],
)
def test_ledger_says_when_the_result_file_is_no_valid_run(
    capsys: pytest.CaptureFixture[str], result: str, says: list[str]
) -> None:
    # Trial 5, O7: an unpaired or failed run gave "decision: accept" with no word of it.
    topology = str(REPO / "examples" / "closure_topology.json")
    assert main(["ledger", topology, "--result", str(REPO / result)]) == 0
    out = capsys.readouterr().out
    caveats = [line for line in out.splitlines() if line.startswith("  caveat: ")]
    assert "decision: accept" in out
    for fragment in says:
        assert any(fragment in line for line in caveats), out
    assert bool(caveats) == bool(says)
    if says:
        assert "no better than the run: rely on it only with a result file that" in out
    assert main(["ledger", topology, "--result", str(REPO / result), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["result_caveats"]) == len(caveats)


def test_ledger_refuses_result_options_without_a_result_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Trial (f): `--group retain` without --result was silently ignored, so the report
    # looked as if it read the retain group.  A usage error names the fix; with --result
    # the same option is taken, and the default group stays release.
    topology = str(REPO / "examples" / "topology.json")
    assert main(["ledger", topology, "--group", "retain"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("rlsys ledger: error: --group applies to a closure result file")
    assert "pass --result FILE too, or leave it out" in err
    assert main(["ledger", topology, "--max-mib", "3"]) == ExitCode.USAGE
    assert "--max-mib applies to a closure result file" in capsys.readouterr().err
    example = str(REPO / "schemas" / "examples" / "pt-verl-closure.example.json")
    closure = str(REPO / "examples" / "closure_topology.json")
    reports = {}
    for group in ("release", "retain", None):
        argv = ["ledger", closure, "--result", example, "--json"]
        assert main(argv + (["--group", group] if group else [])) == ExitCode.OK
        reports[group] = json.loads(capsys.readouterr().out)["stage_rates"]
    assert reports[None] == reports["release"] != reports["retain"]


def test_ledger_on_a_folder_says_it_is_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial 5, O6: "unsupported file type '(no extension)'" for a folder.
    assert main(["ledger", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path} is a folder; give the topology file itself" in err
    assert "file type" not in err


@pytest.mark.parametrize(
    ("text", "suffix", "fragment"),
    [
        ("{", ".json", "not valid JSON"),
        ("[]", ".json", "mapping at the top level"),
        ('{"stage_rates": {}}', ".json", "missing keys"),
        ("a = [", ".toml", "not valid TOML"),
    ],
)
def test_ledger_bad_topologies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, suffix: str, fragment: str
) -> None:
    path = tmp_path / f"topo{suffix}"
    path.write_text(text)
    assert main(["ledger", str(path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_ledger_inconsistent_topology(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topo = {
        "stage_rates": {"a": 1},
        "arrival_rate": 1,
        "items_per_work_unit": {"b": 1},
        "placement": {},
        "edges": [],
        "memory_by_pool": {},
        "memory_limits": {},
    }
    path = tmp_path / "topo.json"
    path.write_text(json.dumps(topo))
    assert main(["ledger", str(path)]) == 2
    assert "not consistent" in capsys.readouterr().err


@pytest.mark.slow  # grades a folder and each file again: 2.9 s
def test_batch_gives_a_refused_file_the_row_rlsys_grade_gives_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link, a FIFO or a file gone before its turn: scored 0 of the full maximum with
    the reason, as `rlsys grade` records the same path (both go through open_grader)."""
    from pytest_rlsys.cli import batch as commands

    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    (subs / "alice.py").write_text(solution_path().read_text(encoding="utf-8"))
    (subs / "bob.py").symlink_to(solution_path())
    os.mkfifo(subs / "carol.py")
    (subs / "erin.py").write_bytes(b"#" * (MAX_SUBMISSION_BYTES + 1))
    (subs / "fay.py").write_bytes(b"")
    (subs / "gus").mkdir()  # a folder holding no .py file: not graded either
    (subs / "gus" / "rlsys_ledger.py.txt").write_text("x = 1\n")
    listed = commands.find_submissions
    monkeypatch.setattr(
        commands,
        "find_submissions",
        lambda folder, lang: [*listed(folder, lang), ("dave.py", folder / "dave.py", "")],
    )
    out_csv, out_json = tmp_path / "grades.csv", tmp_path / "grades.json"
    argv = ["batch", str(subs), "--seed", "2", "--csv", str(out_csv), "--json", str(out_json)]
    assert main([*argv, "--no-progress"]) == 0
    with open(out_csv, encoding="utf-8") as handle:
        rows = {r["submission"]: r for r in csv.DictReader(handle)}
    json_rows = {r["submission"]: r for r in json.loads(out_json.read_text())["submissions"]}
    assert float(rows["alice.py"]["score"]) == 100
    # An empty file was read: the digest of its no bytes.  A refused file was never read:
    # no digest at all, or every refused file would look identical to the empty one.
    assert rows["fay.py"]["submission_sha256"] == hashlib.sha256(b"").hexdigest()
    # ... and did not load: 0 of 100 with the reason, as `rlsys grade` scores it (the
    # lead's decision, course trial r5 M1: an empty file is the learner's doing).
    assert rows["fay.py"]["status"] == json_rows["fay.py"]["status"] == "not_loaded"
    assert (float(rows["fay.py"]["score"]), float(rows["fay.py"]["max_score"])) == (0, 100)
    assert "the file is empty" in rows["fay.py"]["message"]
    assert json_rows["fay.py"]["report"]["score"] == 0
    assert "the file is empty" in json_rows["fay.py"]["report"]["load_error"]
    # Not graded (not the learner's doing, or no file) has no score (not 0.0 for one and
    # blank for another); the folder says what it holds instead of a .py file.
    assert rows["gus"]["status"] == "not_graded" and rows["gus"]["score"] == ""
    assert rows["gus"]["message"].endswith("found 0; other files: rlsys_ledger.py.txt")
    # ... and compared, as docs/similarity.md says: nothing of its own, score 0.
    assert (
        json_rows["fay.py"]["similarity"]["closest"],
        json_rows["fay.py"]["similarity"]["score"],
    ) == (None, 0)
    reasons = {
        "bob.py": "symbolic link",
        "carol.py": "not a regular file",
        "dave.py": "no such",
        "erin.py": "at most 2 MiB",
    }
    for name, reason in reasons.items():
        row = rows[name]
        assert row["submission_sha256"] == "" and json_rows[name]["submission_sha256"] is None
        assert row["status"] == "not_loaded", row
        assert float(row["score"]) == 0 and float(row["max_score"]) == 100, row
        assert reason in row["message"], row
        report = tmp_path / f"{name}.json"
        code = main(["grade", str(subs / name), "--seed", "2", "--report", str(report)])
        assert code == (ExitCode.USAGE if name == "dave.py" else ExitCode.OK)
        doc = load_report(report)
        assert (doc["score"], doc["max_score"]) == (0, 100)
        assert doc["reproducibility"]["submission_sha256"] is None
        # Visible cases say the reason; hidden ones only the grader's word for it.
        messages = {case["message"] for case in doc["tests"] if case["visibility"] == "visible"}
        assert len(messages) == 1 and messages.pop().endswith(row["message"]), name
        assert doc["load_error"] == row["message"], name
    err = capsys.readouterr().err
    assert "dave.py: no such file" in err and "--rlsys-submission" not in err


def test_help_and_errors_are_the_commands_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--help"]) == 0
    top = capsys.readouterr().out
    closure = next(line for line in top.splitlines() if line.strip().startswith("closure"))
    # Every closure subcommand the runner has is named (from its own parser).
    from rlsys_closure.cli import build_parser as closure_parser

    sub = next(a for a in closure_parser()._actions if hasattr(a, "choices") and a.choices)
    assert set(sub.choices) <= set(closure.replace("|", " ").split())
    assert all(len(line) <= 80 for line in top.splitlines()), top
    assert main(["batch", "--help"]) == 0
    assert "one subfolder per" in " ".join(capsys.readouterr().out.split())
    helps = {}
    for command in ("template", "kit"):
        assert main([command, "--help"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        helps[command] = text[text.index("--force") :].split("--", 2)[1]
    assert helps["template"] != helps["kit"]
    # rlsys grade names its own argument, not the pytest option it runs on.
    assert main(["grade", str(tmp_path / "nosuch.py")]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("rlsys grade: error:") and "nosuch.py: no such file" in err
    assert "--rlsys-" not in err
    target = tmp_path / "kit"
    assert main(["kit", "gradescope", str(target), "--wheel", "nosuch.whl"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "argument --wheel: nosuch.whl: no such file" in err and not target.exists()


@pytest.mark.parametrize("command", ["grade", "batch"])
def test_two_outputs_naming_one_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # The second would silently overwrite the first (trial Q5): said before any grading.
    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    (subs / "a.py").write_text(solution_path().read_text(encoding="utf-8"))
    same = str(tmp_path / "out.json")
    argv = ["grade", str(subs / "a.py"), "--report", same, "--gradescope", same]
    if command == "batch":
        argv = ["batch", str(subs), "--csv", same, "--json", same]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "name the same file" in err and "Traceback" not in err
    assert not (tmp_path / "out.json").exists()


def test_a_missing_input_file_is_a_usage_error_in_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial (e): a missing input exited 2 (grade, batch, ledger), 1 (validate, closure
    # summary and plot) or 3 (result).  The one rule: exit 2, "PATH: no such file".
    from rlsys_closure.cli import main as closure

    nope = str(tmp_path / "nope.json")
    example = str(REPO / "schemas" / "examples" / "pt-verl-closure.example.json")
    commands = {
        "rlsys grade": (main, ["grade", str(tmp_path / "nope.py")]),
        "rlsys batch": (main, ["batch", str(tmp_path / "class")]),
        "rlsys validate": (main, ["validate", example, nope]),
        "rlsys result": (main, ["result", nope]),
        "rlsys ledger": (main, ["ledger", nope]),
        "rlsys ledger --result": (
            main,
            ["ledger", str(REPO / "examples" / "closure_topology.json"), "--result", nope],
        ),
        "summary": (closure, ["summary", nope]),
        "plot": (closure, ["plot", nope, "-o", str(tmp_path / "t.png")]),
    }
    for name, (run, argv) in commands.items():
        assert run(argv) == ExitCode.USAGE, name
        captured = capsys.readouterr()
        assert "no such f" in captured.err and "Traceback" not in captured.err, (name, captured)
        assert captured.err.startswith(name.split(" --")[0]), (name, captured.err)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_batch_says_which_folder_is_missing_and_what_to_give(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    # Course trial r5 L-d: "PATH: no such folder" said nothing of what to give instead.
    gone, file = tmp_path / "clas", tmp_path / "alice.py"
    file.write_text("x = 1\n", encoding="utf-8")
    for path, said in (
        (
            gone,
            {"en": "no such folder; give the class folder", "zh": "文件夹不存在；请给出班级文件夹"},
        ),
        (
            file,
            {"en": "is not a folder; give the class folder", "zh": "不是文件夹；请给出班级文件夹"},
        ),
    ):
        assert main(["batch", str(path), "--lang", lang]) == ExitCode.USAGE
        err = capsys.readouterr().err
        assert str(path) in err and said[lang] in err and "Traceback" not in err, err
    assert "rlsys grade FILE" in err  # one file: the command that grades it


def test_batch_refuses_an_output_path_that_is_a_graded_submission(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    (subs / "alice.py").write_text("x = 1\n")
    (subs / "bob").mkdir()
    (subs / "bob" / "rlsys_ledger.py").write_text("y = 2\n")
    for flag, target in (("--csv", "alice.py"), ("--json", "bob/rlsys_ledger.py")):
        code = main(["batch", str(subs), flag, str(subs / target), "--no-progress"])
        assert code == ExitCode.USAGE
        err = capsys.readouterr().err
        assert flag in err and "is a submission of this batch" in err
    assert (subs / "alice.py").read_text() == "x = 1\n"
    assert (subs / "bob" / "rlsys_ledger.py").read_text() == "y = 2\n"


def test_a_file_whose_analysis_exceeds_its_limit_is_named_and_every_output_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The similarity analysis runs in a child under the grading child's limits: one file
    # over them is "not compared" with the reason, every other row and output is written.
    from pytest_rlsys.grading.outcomes import Limits
    from pytest_rlsys.similarity import analyse

    real = analyse.Analysis.run

    def run(self: analyse.Analysis, data: bytes) -> object:
        if b"HOSTILE" in data:  # this one gets a deadline no interpreter can meet
            self.close()
            return real(analyse.Analysis(Limits(load_timeout_s=0.001)), data)
        return real(self, data)

    monkeypatch.setattr(analyse.Analysis, "run", run)
    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    chapter = REPO / "tests" / "corpora" / "learner_corpus" / "ok_chapter_reference.py"
    (subs / "alice.py").write_text(chapter.read_text(encoding="utf-8"))
    (subs / "trudy.py").write_text("HOSTILE = 1\n")
    out = {kind: tmp_path / f"class.{kind}" for kind in ("csv", "json", "html")}
    argv = ["batch", str(subs), "--no-progress", "--no-behaviour", "--jobs", "2"]
    assert main([*argv, *(f"--{k}={p}" for k, p in out.items())]) == 0
    rows = {r["submission"]: r for r in json.loads(out["json"].read_text())["submissions"]}
    assert "took over" in rows["trudy.py"]["similarity"]["not_compared"]
    assert rows["alice.py"]["similarity"]["flagged_by"] == ["code", "sentences"]
    with open(out["csv"], encoding="utf-8") as handle:
        cells = {r["submission"]: r for r in csv.DictReader(handle)}
    assert "took over" in cells["trudy.py"]["similarity_not_compared"]
    assert cells["alice.py"]["similarity_flagged_by"] == "code sentences"
    page = out["html"].read_text(encoding="utf-8")
    assert "trudy.py (its analysis took over" in page and "code, sentences" in page


def test_batch_compares_the_bytes_it_graded_never_the_path_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file swapped on disk after it was graded: the comparison is of what was graded.
    from pytest_rlsys.cli import batch as commands

    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    (subs / "ann.py").write_text("def pipeline_capacity(a, b, c):\n    return {}\n")

    def swapped(grader: object) -> None:
        (subs / "ann.py").write_text(solution_path().read_text(encoding="utf-8"))

    monkeypatch.setattr(commands, "_probe", swapped)
    out = tmp_path / "class.json"
    assert main(["batch", str(subs), "--no-progress", f"--json={out}"]) == 0
    (row,) = json.loads(out.read_text())["submissions"]
    assert (
        row["submission_sha256"]
        == hashlib.sha256(b"def pipeline_capacity(a, b, c):\n    return {}\n").hexdigest()
    )
    assert not row["similarity"]["flagged"]  # the swapped-in reference copy was not read
