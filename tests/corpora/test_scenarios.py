"""The hostile-submission corpus: every folder of tests/corpora/scenarios holds a submission and
the per-section outcome it deserves (expected.json).  Each is graded through the real
isolation boundary with a fixed seed; a few also run through the pytest plugin, to show
that the grader exits normally and the report cannot be forged.

expected.json keys (all optional except description):
  source            the submission is this repository file instead of submission.py (the
                    shipped reference and template, so the scenarios never go stale)
  sections          {"todo1": {"score": 30}, ...}: exact section scores
  failing           fnmatch patterns: every case that did not pass matches one, and every
                    pattern matches such a case ([] means everything passes)
  passing_only      fnmatch patterns: every case that passed matches one
  statuses          {"todo1" or "*": ["error", ...]}: allowed statuses of unpassed cases
  message_contains  {"todo1": [fragment, [alternative, ...], ...]}: each fragment is in
                    the message of at least one unpassed case of that section
  not_implemented   sections in which every case is flagged "not implemented"
  limits            Limits overrides (e.g. short timeouts, a dedicated child user)
  max_seconds       wall-clock bound for grading it on an idle machine (times the
                    machine's slowness now, measured before and after)
  root_only         only meaningful when the grader runs as root
  no_survivors      check that no process of the child user is left afterwards
  slow              mark the test slow: over about 5 s (a plain `pytest` leaves it
                    out; `pytest --run-slow`, what CI runs, runs it)
"""

from __future__ import annotations

import atexit
import contextlib
import fnmatch
import hashlib
import json
import os
import pwd
import re
import shutil
import stat
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading import identity
from pytest_rlsys.grading import leftovers as leftovers_module
from pytest_rlsys.grading.grader import grade_file
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.outputs import registry, terminal
from pytest_rlsys.outputs.wording import message
from tests.conftest import processes, slowness
from tests.english import check_chinese
from tests.platform_checks import check_all

REPO = Path(__file__).parents[2]
SCENARIOS = Path(__file__).parent / "scenarios"
SEED = 20240601
IS_ROOT = os.geteuid() == 0
# Control characters in a message could draw fake lines in a terminal or a log.
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def load_expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCENARIOS / name / "expected.json").read_text("utf-8"))
    return data


HONEST_MARK = b"# rlsys-scenario: the honest part"
_COMPOSED = Path(tempfile.mkdtemp(prefix="rlsys-scenarios-"))
atexit.register(shutil.rmtree, _COMPOSED, ignore_errors=True)


def submission_path(name: str) -> Path:
    """The file to grade: a repository file, or submission.py plus the shared honest part
    when it ends with the marker line (one copy of the honest code for every scenario)."""
    source = load_expected(name).get("source")
    if source:
        return REPO / source
    path = SCENARIOS / name / "submission.py"
    data = path.read_bytes()
    if HONEST_MARK not in data:
        return path
    composed = _COMPOSED / name / "submission.py"
    composed.parent.mkdir(exist_ok=True)
    composed.write_bytes(data + (SCENARIOS / "honest_part.py").read_bytes())
    return composed


def scenario_names() -> list[str]:
    return sorted(p.name for p in SCENARIOS.iterdir() if (p / "expected.json").is_file())


def scenario_params() -> Iterator[Any]:
    # The plain loop grades every third scenario (0.5-3 s each, 24 s for all of them),
    # --run-slow every one.
    for index, name in enumerate(scenario_names()):
        slow = load_expected(name).get("slow") or index % 3
        yield pytest.param(name, marks=[pytest.mark.slow] if slow else [], id=name)


def limits_for(expected: dict[str, Any]) -> Limits:
    return Limits(**expected.get("limits", {}))


def require_environment(expected: dict[str, Any]) -> None:
    if expected.get("root_only") and not IS_ROOT:
        pytest.skip(
            "as non-root the child runs as the grader's own user and may signal it; "
            "only the root + unprivileged-user setup is defended"
        )
    user = expected.get("limits", {}).get("child_user")
    if user and user not in ("auto", "none") and IS_ROOT:
        try:
            pwd.getpwnam(user)
        except KeyError:
            pytest.skip(f"needs a user {user!r} on this machine")


def uid_of_child(expected: dict[str, Any]) -> range | None:
    """The uid the child runs as when it is a named user of its own.  Fresh uids ("auto")
    are not scanned: other graders on this host use the same block.  What this run's own
    children left is found instead through this process being their subreaper."""
    user = limits_for(expected).child_user
    if not IS_ROOT or user is None or user in ("none", "auto"):
        return None
    uid = pwd.getpwnam(user).pw_uid
    return range(uid, uid + 1)


def _subreaper(on: bool) -> None:
    """While on, orphans of anything this process starts (a daemon that escaped a
    grandchild) are re-parented here, so "children of this process" covers everything the
    scenario started and nothing another test or another grader on the host started."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, int(on), 0, 0, 0)  # CHILD_SUBREAPER


@pytest.fixture(autouse=True)
def own_descendants() -> Iterator[None]:
    _subreaper(True)
    try:
        yield
    finally:
        _subreaper(False)


def leftovers(uid: range | None) -> list[str]:
    """Processes the grading left behind: children of this process (zombies included; this
    process is the subreaper of everything it started) and processes of a dedicated
    child user.  Nothing another grader on the host started is counted."""
    found = []
    for pid, ppid, owner, state in processes():
        if ppid == os.getpid():
            found.append(f"child {pid} ({state})")
        elif uid is not None and owner in uid:
            found.append(f"process {pid} of uid {owner} ({state})")
    return found


def wait_for_no_leftovers(uid: range | None, seconds: float = 3.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while True:  # a killed process needs a moment to be reaped
        found = leftovers(uid)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _matches(case_id: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(case_id, p) for p in patterns)


def check_report(report: ScoreReport, expected: dict[str, Any]) -> None:
    """Assert everything expected.json says; the messages name the scenario's intent."""
    sections = report.sections()
    # The maximum is fixed whatever the submission did.
    assert report.max_score == 100
    unpassed = [c for c in report.cases if c.status != "passed"]
    for name, want in expected.get("sections", {}).items():
        got = sections[name]["score"]
        lost = [(c.id, c.status, message(c)) for c in unpassed if c.section == name]
        assert got == want["score"], f"{name}: {got}, expected {want['score']}; {lost[:5]}"
    if "failing" in expected:
        patterns = expected["failing"]
        stray = [(c.id, message(c)) for c in unpassed if not _matches(c.id, patterns)]
        assert not stray, f"cases lost outside {patterns}: {stray[:5]}"
        for pattern in patterns:
            assert any(fnmatch.fnmatchcase(c.id, pattern) for c in unpassed), (
                f"no case matching {pattern!r} failed"
            )
    if "passing_only" in expected:
        patterns = expected["passing_only"]
        lucky = [
            c.id for c in report.cases if c.status == "passed" and not _matches(c.id, patterns)
        ]
        assert not lucky, f"cases passed that should not: {lucky}"
    for where, allowed in expected.get("statuses", {}).items():
        for case in unpassed:
            if where in ("*", case.section):
                assert case.status in allowed, (case.id, case.status, message(case))
    for name, fragments in expected.get("message_contains", {}).items():
        messages = [message(c) for c in unpassed if c.section == name]
        for fragment in fragments:
            options = fragment if isinstance(fragment, list) else [fragment]
            assert any(o in m for m in messages for o in options), (
                f"{name}: no message contains {options}; messages: {sorted(set(messages))[:6]}"
            )
    for name in expected.get("not_implemented", []):
        cases = [c for c in report.cases if c.section == name]
        assert cases and all(c.not_implemented for c in cases), name
    for case in report.cases:
        assert not UNSAFE.search(message(case)), f"{case.id}: unsafe text {message(case)!r}"
        assert message(case).isprintable(), f"{case.id}: unprintable text {message(case)!r}"
    for fragment in expected.get("hidden_messages_exclude", []):
        leaks = [
            (c.id, message(c))
            for c in report.cases
            if c.visibility == "hidden" and fragment in message(c)
        ]
        assert not leaks, f"hidden cases show the submission's own text: {leaks[:3]}"
    check_outputs(report)
    check_chinese(report)


def check_outputs(report: ScoreReport) -> None:
    """Every output renders, is valid UTF-8, and parses (JSON, XML), whatever the text."""
    for kind in ("report", "gradescope", "prairielearn", "junit"):
        text = registry.render(kind, report)
        text.encode("utf-8")  # no lone surrogate survived
        if kind == "junit":
            ET.fromstring(text.encode("utf-8"))
        else:
            json.loads(text)
    for line in terminal.terminal_lines(report, "en"):
        assert line.isprintable() or "\t" in line, repr(line)


def scratch_left(made: list[str], seconds: float = 60.0) -> list[str]:
    """This run's own scratch folders that still exist once a removal running in the
    background (a huge tree) has had ``seconds`` to finish."""
    deadline = time.monotonic() + seconds
    while True:
        left = [p for p in made if os.path.lexists(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def owned_leftovers(uids: list[int]) -> list[str]:
    """System V IPC objects and files in the world-writable folders owned by ``uids``."""
    found = []
    for kind in ("shm", "sem", "msg"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        header = lines[0].split() if lines else []
        for line in lines[1:]:
            row = dict(zip(header, line.split(), strict=False))
            if {int(row.get("uid", -1)), int(row.get("cuid", -1))} & set(uids):
                found.append(f"{kind} {line.split()[1]}")
    for folder in leftovers_module.WORLD_WRITABLE:
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid in uids:
                        found.append(entry.path)
    return found


@pytest.mark.parametrize("name", list(scenario_params()))
def test_scenario(name: str) -> None:
    expected = load_expected(name)
    require_environment(expected)
    uid = uid_of_child(expected)
    assert not leftovers(uid), "processes were already left over before this scenario"
    scratch_mark = len(leftovers_module.scratch_made)
    uid_mark = len(identity.allocated_uids)
    slow = slowness() if "max_seconds" in expected else 1.0
    started = time.monotonic()
    report = grade_file(submission_path(name), seed=SEED, limits=limits_for(expected))
    elapsed = time.monotonic() - started
    if "max_seconds" in expected:
        slow = max(slow, slowness())
    check_report(report, expected)
    if expected.get("no_scratch_left"):
        assert not scratch_left(leftovers_module.scratch_made[scratch_mark:])
    if expected.get("nothing_owned_left"):
        uids = identity.allocated_uids[uid_mark:]
        assert uids, "the child did not run under a fresh uid"
        assert not owned_leftovers(uids), owned_leftovers(uids)
    check_all(report)  # every platform file, as its consumer reads it (tests/unit/test_interop.py)
    if "max_seconds" in expected:
        bound = expected["max_seconds"] * slow
        assert elapsed < bound, f"grading took {elapsed:.1f} s (bound {bound:.1f} s here now)"
    assert not wait_for_no_leftovers(uid if expected.get("no_survivors") else None)


def test_corpus_covers_the_issue() -> None:
    """The corpus the issue asks for is all here (a deleted folder fails loudly)."""
    required = {
        "reference",
        "template",
        "exit_at_import",
        "os_exit_at_import",
        "sys_exit_in_call",
        "os_exit_in_call",
        "always_true_eq",
        "legit_subclasses",
        "lying_subclasses",
        "fake_output",
        "fd_tamper",
        "report_forger",
        "parent_killer",
        "hang_everywhere",
        "hang_default_limits",
        "hang_at_import",
        "memory_flood",
        "output_flood",
        "recursion_crash",
        "base_exceptions",
        "signals_to_self",
        "syntax_error",
        "not_utf8",
        "missing_functions",
        "slow_but_correct",
        "monkeypatch_harness",
        "hidden_info",
        "mutates_inputs",
        "huge_results",
        "stop_self",
        # trust, round 2
        "text_unencodable",
        "deep_scratch",
        "ipc_leftovers",
        "huge_ints",
        "hidden_type_names",
        "reference_thief",
    }
    assert required <= set(scenario_names())
    for name in scenario_names():
        assert submission_path(name).is_file(), name
        assert load_expected(name)["description"], name


# -- through the real plugin ---------------------------------------------------------------


def run_plugin(
    pytester: pytest.Pytester, submission: Path, report: Path, *extra: str
) -> pytest.RunResult:
    if REPO in submission.parents:
        # In the repository the project's own pytest config sits above the file, and the
        # grader refuses that layout; a learner's upload sits in a folder of its own.
        upload = pytester.path / "upload"
        upload.mkdir(exist_ok=True)
        submission = Path(shutil.copy(submission, upload / "mine.py"))
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--rlsys-submission",
        str(submission),
        "--rlsys-report",
        str(report),
        f"--rlsys-seed={SEED}",
        *extra,
        timeout=120,
    )
    output = result.stdout.str() + result.stderr.str()
    assert result.ret in (0, 1), output  # never INTERNALERROR (3) or a usage error (4)
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    return result


def read_report(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text("utf-8"))
    assert doc["schema_version"] == "rlsys-score/1"
    return doc


def points_lines(result: pytest.RunResult) -> list[str]:
    """Lines that a "Points X/Y" reader would take for the grader's own."""
    return [line for line in result.stdout.lines if re.match(r"\s*Points\s+\d", line)]


@pytest.mark.parametrize(
    ("name", "score", "ret"),
    [
        ("reference", 100, 0),
        ("template", 0, 1),
        ("os_exit_at_import", 0, 1),
    ],
)
@pytest.mark.slow
def test_plugin_grades_normally(
    pytester: pytest.Pytester, name: str, score: float, ret: int
) -> None:
    report = pytester.path / "report.json"
    result = run_plugin(pytester, submission_path(name), report)
    assert result.ret == ret
    assert read_report(report)["score"] == score
    assert points_lines(result) == [f"Points {score}/100"]


@pytest.mark.slow
def test_plugin_fake_output_cannot_fake_the_score(pytester: pytest.Pytester) -> None:
    report = pytester.path / "report.json"
    result = run_plugin(pytester, submission_path("fake_output"), report)
    # Exactly one Points line, the real one; no escape sequence reached the terminal.
    assert points_lines(result) == ["Points 65/100"]
    assert "\x1b" not in result.stdout.str() + result.stderr.str()
    assert read_report(report)["score"] == 65


def _digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder the child's user may write to (as a careless course setup might have):
    the report's safety must then come from timing and atomic writes, not permissions."""
    folder = Path(tempfile.mkdtemp(prefix="rlsys-forger-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_plugin_report_forger_cannot_touch_the_report(
    pytester: pytest.Pytester, open_folder: Path
) -> None:
    expected = load_expected("report_forger")
    require_environment(expected)
    uid = uid_of_child(expected)
    submission = open_folder / "submission.py"
    shutil.copy(submission_path("report_forger"), submission)
    report = open_folder / "report.json"
    user = ["--rlsys-child-user", limits_for(expected).child_user or "none"] if IS_ROOT else []
    result = run_plugin(pytester, submission, report, *user)
    assert result.ret == 1
    first = _digest(report)
    doc = read_report(report)
    assert doc["score"] == 0 and "forged" not in doc
    assert points_lines(result) == ["Points 0/100"]
    evidence = {p.name for p in open_folder.iterdir()}
    from pytest_rlsys.grading import fence as fence_mod

    if (IS_ROOT and fence_mod.bwrap_fence() is not None) or fence_mod.landlock_abi() > 0:
        # Inside the fence the host is read-only to the child (bubblewrap's mounts, or
        # Landlock, which lets it write only its scratch folder): it could not write here
        # at all (nor read the grader's command line), so there is no evidence either.
        assert not any(name.startswith("forger") for name in evidence), evidence
        time.sleep(1.5)
        assert _digest(report) == first
        assert not wait_for_no_leftovers(uid)
        return
    # The forger really ran with write access to this folder, and every way of outliving
    # its process was refused.
    assert "forger-ran" in evidence
    assert not any(name.startswith("forger-daemon") for name in evidence), evidence
    for attempt in ("_fork_daemon", "_double_fork", "_thread", "_spawn"):
        assert any(name.startswith(f"forger-{attempt}-refused") for name in evidence), attempt
    time.sleep(1.5)  # a surviving daemon would rewrite the report now
    assert _digest(report) == first
    assert not wait_for_no_leftovers(uid)


@pytest.mark.skipif(not IS_ROOT, reason="as non-root the child may signal the grader itself")
@pytest.mark.slow
def test_plugin_survives_the_parent_killer(pytester: pytest.Pytester) -> None:
    expected = load_expected("parent_killer")
    require_environment(expected)
    report = pytester.path / "report.json"
    result = run_plugin(
        pytester,
        submission_path("parent_killer"),
        report,
        "--rlsys-child-user",
        limits_for(expected).child_user or "none",
    )
    assert result.ret == 1
    assert read_report(report)["score"] == 65
    assert points_lines(result) == ["Points 65/100"]
    assert not wait_for_no_leftovers(uid_of_child(expected))


@pytest.mark.parametrize("kind", ["directory", "missing"])
def test_plugin_unusable_submission_path_is_a_usage_error(
    pytester: pytest.Pytester, kind: str
) -> None:
    target = pytester.path / "work"
    if kind == "directory":
        target.mkdir()
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--rlsys-submission", str(target), timeout=60
    )
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--rlsys-submission" in output
    assert ("directory" if kind == "directory" else "no such file") in output
    assert "Traceback" not in output


# -- the isolation boundary directly -------------------------------------------------------


def test_child_is_not_dumpable_and_cannot_fork() -> None:
    """The child refuses core dumps and ptrace (PR_SET_DUMPABLE 0) and cannot fork (the
    seccomp allow-list refuses it; RLIMIT_NPROC=0 would too)."""
    from pytest_rlsys.grading.isolation import ChildProcess

    source = (
        "import ctypes, os\n"
        "def probe():\n"
        "    dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except OSError as exc:\n"
        "        return [dumpable, type(exc).__name__]\n"
        "    if pid == 0:\n"
        "        os._exit(0)\n"
        "    return [dumpable, 'forked']\n"
    )
    session = ChildProcess(source, "probe.py", ["probe"], Limits())
    try:
        outcome = session.call("probe", [], {})
    finally:
        session.close()
    assert outcome.kind == "returned", outcome
    assert outcome.value == [0, "PermissionError"]


def test_child_marks_oversized_values_clearly() -> None:
    from pytest_rlsys.grading.comparison import NONPLAIN_MARK
    from pytest_rlsys.grading.isolation import ChildProcess

    source = (
        "def big():\n    return {'a': 'x' * (20 * 1024 * 1024)}\n"
        "def deep():\n    v = []\n    v.append(v)\n    return v\n"
        "def wide():\n    return list(range(10**6))\n"
        "def huge_int():\n    return 10 ** 5000\n"
        "class Key(str):\n    pass\n"
        "class Twin(str):\n    __hash__ = object.__hash__\n"
        "    def __eq__(self, other):\n        return self is other\n"
        "def enum_keys():\n    return {Key('a'): 1.0, 'b': 2}\n"
        "def clash():\n    return {Twin('a'): 1, 'a': 2}\n"
    )
    funcs = ["big", "deep", "wide", "huge_int", "enum_keys", "clash"]
    session = ChildProcess(source, "values.py", funcs, Limits())
    try:
        got = {f: session.call(f, [], {}) for f in funcs}
    finally:
        session.close()
    assert all(o.kind == "returned" for o in got.values()), got
    assert "too large" in got["big"].value[NONPLAIN_MARK]
    assert "too large" in got["wide"].value[NONPLAIN_MARK]
    assert "more than 3000 digits" in got["huge_int"].value[NONPLAIN_MARK]
    depth, inner = 0, got["deep"].value
    while type(inner) is list:
        depth, inner = depth + 1, inner[0]
    assert "levels deep" in inner[NONPLAIN_MARK] and depth > 60
    assert got["enum_keys"].value == {"a": 1.0, "b": 2}
    assert NONPLAIN_MARK in got["clash"].value


def test_scratch_folder_is_private_and_removed() -> None:
    from pytest_rlsys.grading.isolation import ChildProcess

    source = (
        "import os\ndef where():\n    open('mark', 'w').close()\n"
        "    return [os.getcwd(), os.stat('.').st_mode]\n"
    )
    session = ChildProcess(source, "where.py", ["where"], Limits())
    try:
        scratch, mode = session.call("where", [], {}).value
        fenced = session.fenced
        if not fenced:
            assert stat.S_IMODE(os.stat(scratch).st_mode) & 0o077 == 0
    finally:
        session.close()
    if fenced:  # in the child's own /tmp (a private tmpfs): the host never had it
        assert not os.path.exists(os.path.join(scratch, "mark"))
    else:
        assert stat.S_IMODE(mode) & 0o077 == 0, oct(mode)
        assert not os.path.exists(scratch)


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_child_that_stops_reading_cannot_block_the_grader() -> None:
    """A child that answers early (a forged reply for its own call) and then never reads
    again: the next, large request must time out instead of blocking the grader's write."""
    from pytest_rlsys.grading.isolation import ChildProcess

    source = (
        "import json, os, sys\n"
        "def cheat():\n"
        "    ident = sys._getframe(1).f_locals['request']['id']\n"
        "    body = json.dumps({'id': ident, 'ok': True, 'value': 'early',\n"
        "                       'args_after': [[], {}]}).encode()\n"
        "    os.write(int(sys.argv[1]), len(body).to_bytes(4, 'big') + body)\n"
        "    while True:\n"
        "        pass\n"
        "def size(text):\n"
        "    return len(text)\n"
    )
    session = ChildProcess(
        source, "cheat.py", ["cheat", "size"], Limits(call_timeout_s=1, load_timeout_s=5)
    )
    try:
        assert session.call("cheat", [], {}).value == "early"  # its own answer, nothing more
        started = time.monotonic()
        outcome = session.call("size", ["x" * 4_000_000], {})
        assert outcome.kind == "timeout" and time.monotonic() - started < 5
        assert session.call("size", ["abc"], {}).value == 3  # a fresh child answers
    finally:
        session.close()
