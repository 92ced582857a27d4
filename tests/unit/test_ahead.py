"""Running the battery ahead of the pytest items (grading.ahead): same grade, same child
discipline, nothing handed over that was not asked for."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading.ahead import (
    SWITCH_INTERVAL_S,
    CaseRunner,
    RunAhead,
    RunnerStuck,
    StandbyPool,
)
from pytest_rlsys.grading.grader import Grader, open_grader
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.outputs import scorejson
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.wording import message

# -- RunAhead on its own ----------------------------------------------------------------


def test_runs_in_plan_order_and_hands_over_only_what_is_asked() -> None:
    ran: list[str] = []

    def run(case: str, _next: str | None) -> str:
        ran.append(case)
        return case.upper()

    ahead: RunAhead[str] = RunAhead(lambda: None, run)
    ahead.plan(["a", "b", "c"])
    assert ahead.take("a", 5) == "A"
    assert ahead.take("c", 5) == "C"  # waits for the worker to get there
    assert ahead.take("a", 5) is None  # handed over once
    assert ahead.take("zz", 5) is None  # not planned: the caller runs it itself
    assert ahead.stop()
    assert ran == ["a", "b", "c"]


def test_warm_up_comes_first_and_the_worker_waits_for_a_plan() -> None:
    events: list[str] = []

    def run(case: str, _next: str | None) -> str:
        events.append(case)
        return case

    ahead: RunAhead[str] = RunAhead(lambda: events.append("warm"), run)
    time.sleep(0.05)
    assert events == ["warm"]  # loaded, waiting for the order
    ahead.plan(["x"])
    ahead.plan(["y"])  # a second plan is ignored
    ahead.take("x", 5)
    assert ahead.stop()
    assert events == ["warm", "x"]


def test_stop_ends_the_worker_before_the_rest_of_the_plan() -> None:
    gate = threading.Event()
    ran: list[str] = []

    def run(case: str, _next: str | None) -> str:
        ran.append(case)
        gate.wait(5)  # the case in progress, cut short by the interrupt
        return case

    ahead: RunAhead[str] = RunAhead(lambda: None, run)
    ahead.plan([f"c{i}" for i in range(50)])
    while not ran:
        time.sleep(0.001)
    assert ahead.stop(interrupt=gate.set, timeout=5)
    assert ran == ["c0"]
    assert ahead.take("c7", 5) is None  # never run: the caller would run it itself


def test_a_hung_worker_is_a_timeout_not_a_hang() -> None:
    release = threading.Event()

    def run(case: str, _next: str | None) -> str:
        release.wait(10)
        return case

    ahead: RunAhead[str] = RunAhead(lambda: None, run)
    ahead.plan(["slow"])
    began = time.monotonic()
    with pytest.raises(TimeoutError, match="slow"):
        ahead.take("slow", 0.2)
    assert time.monotonic() - began < 5
    release.set()
    assert ahead.stop(timeout=5)


def test_switch_interval_is_short_while_running_and_restored_after() -> None:
    before = sys.getswitchinterval()
    gate = threading.Event()
    ahead: RunAhead[str] = RunAhead(lambda: gate.wait(5), lambda case, _next: case)
    assert sys.getswitchinterval() == min(before, SWITCH_INTERVAL_S)
    gate.set()
    ahead.plan([])
    assert ahead.stop(timeout=5)
    assert sys.getswitchinterval() == before


def test_a_reset_runs_with_the_lock_released() -> None:
    # The reset kills and reaps a child (seconds, at worst): a caller asking for a result
    # meanwhile must not be held at the lock.
    free: list[bool] = []
    ahead: RunAhead[str] | None = None

    def reset() -> None:
        assert ahead is not None
        other = threading.Thread(target=lambda: ahead.planned)  # takes the lock
        other.start()
        other.join(2)
        free.append(not other.is_alive())

    ahead = RunAhead(lambda: None, lambda case, following: case, reset)
    ahead.expect(["a", "b"])
    time.sleep(0.2)  # the guess has run
    ahead.plan(["b"])
    assert ahead.take("b", 5) == "b"
    assert ahead.stop() and free == [True]


# -- CaseRunner: the hand-over -------------------------------------------------------------


class _Judge:
    """A fake grader whose cases take ``case_s`` (a case of several calls at a long
    per-call time limit) and that records how many threads drive its "child" at once."""

    def __init__(
        self, case_s: float, backstop_s: float, hang: threading.Event | None = None
    ) -> None:
        self.case_s, self.backstop_s, self.hang = case_s, backstop_s, hang
        self.lock = threading.Lock()
        self.driving = self.most = 0
        self.started = threading.Event()
        self.judged: list[tuple[str, str]] = []
        self.interrupted = 0

    def warm_up(self) -> None:
        pass

    def judge(self, case_id: str, following: str | None) -> str:
        with self.lock:
            self.driving += 1
            self.most = max(self.most, self.driving)
        self.started.set()
        try:
            if self.hang is not None:
                self.hang.wait(30)  # a worker that ignores every interrupt
            else:
                time.sleep(self.case_s)
        finally:
            with self.lock:
                self.driving -= 1
        self.judged.append((case_id, threading.current_thread().name))
        return case_id

    def reset(self) -> None:
        pass

    def drop_begun(self) -> None:
        pass

    def interrupt(self) -> None:
        self.interrupted += 1

    def backstop_seconds(self) -> float:
        return self.backstop_s


def test_a_case_taken_over_waits_for_the_longest_case_of_the_worker() -> None:
    # The worker is inside a case that lasts 1.5 s, far longer than load + one call;
    # the caller asks for a case outside the plan: it runs it only after the worker's
    # case has ended, never beside it.
    judge = _Judge(case_s=1.5, backstop_s=5.0)
    runner: CaseRunner[str] = CaseRunner(judge)
    runner.run_ahead()
    runner.plan(["a", "b"])
    assert judge.started.wait(5)
    assert runner.result("z") == "z"
    assert judge.most == 1 and judge.interrupted == 0
    assert judge.judged[-1] == ("z", threading.current_thread().name)
    assert not runner.ahead and runner.stop()


def test_a_worker_that_does_not_stop_is_a_grader_fault_not_a_second_driver() -> None:
    hang = threading.Event()
    judge = _Judge(case_s=0, backstop_s=0.3, hang=hang)
    runner: CaseRunner[str] = CaseRunner(judge)
    runner.run_ahead()
    runner.plan(["a"])
    assert judge.started.wait(5)
    try:
        with pytest.raises(RunnerStuck):
            runner.result("z")
        assert judge.interrupted == 1  # the worker's case was cut short first
        assert judge.most == 1 and "z" not in {case for case, _ in judge.judged}
        assert "did not stop" in " ".join(runner.notes)
    finally:
        hang.set()


def test_the_grader_waits_as_long_as_its_longest_case_can_take(tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_text("", encoding="utf-8")
    limits = Limits(call_timeout_s=15)
    grader = open_grader(GradingRequest(submission=path, seed=3, limits=limits))
    longest = max(len(case.calls) for case in grader.cases)
    assert longest > 1  # the battery has cases of several calls
    assert grader.backstop_seconds() >= limits.load_timeout_s + 15 * longest


def test_one_standby_pool_starts_the_next_child_and_closes_the_rest() -> None:
    made: list[Any] = []

    class Child:
        def __init__(self) -> None:
            self.closed = False
            made.append(self)

        def close(self) -> None:
            self.closed = True

    pool: StandbyPool[Child] = StandbyPool(Child)
    first = pool.take()  # started now, and one more for the next take
    assert len(made) == 2
    second = pool.take()
    assert second is made[1] and len(made) == 3
    pool.close()
    assert [c.closed for c in made] == [False, False, True]  # a taken child is owned
    assert first is not second
    single: StandbyPool[Child] = StandbyPool(Child, ahead=0)  # the plugin's one child
    single.take()
    assert len(made) == 4


# -- the Grader: background and foreground give the same grade -------------------------

SHORT = Limits(call_timeout_s=0.5, load_timeout_s=5, budget_s=30)

SUBMISSIONS = {
    "reference": None,  # the packaged reference, unchanged
    "off_by_one": ("if margin < 0)", "if margin <= 0)"),
    "crash_on_call": (
        "def pipeline_capacity(",
        "def pipeline_capacity(*a, **k):\n    import os\n\n    os._exit(3)\n\n\ndef _old_capacity(",
    ),
    "hang_in_ledger": (
        "def transfer_ledger(",
        "def transfer_ledger(*a, **k):\n    while True:\n        pass\n\n\ndef _old_ledger(",
    ),
    "syntax_error": ("def pipeline_capacity(", "def pipeline_capacity(:\ndef _x("),
}


def _source(reference_source: str, name: str) -> str:
    edit = SUBMISSIONS[name]
    if edit is None:
        return reference_source
    old, new = edit
    assert old in reference_source
    return reference_source.replace(old, new, 1)


def _grade(path: Path, data: bytes, background: bool, pick: Any = None) -> Any:
    assert path.read_bytes() == data
    request = GradingRequest(submission=path, seed=3, limits=SHORT, background=background)
    grader = open_grader(request)
    ids = [case.id for case in grader.cases]
    if pick is not None:
        time.sleep(0.3)  # the worker is well into its guess (the battery's order) by now
        ids = pick(ids)
    grader.plan(ids)
    for case_id in ids:
        grader.run_case(case_id)
    return _score_doc(grader)


def _score_doc(grader: Grader) -> Any:
    """The score JSON of ``grader``'s report, without its wall time (the only thing that
    may differ between two gradings of the same file)."""
    doc = json.loads(scorejson.render(grader.report(), RenderOptions()))
    doc.pop("elapsed_s", None)
    return doc


@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_background_and_foreground_grade_alike(
    tmp_path: Path, reference_source: str, name: str
) -> None:
    path = tmp_path / "mine.py"
    data = _source(reference_source, name).encode()
    path.write_bytes(data)
    assert _grade(path, data, background=True) == _grade(path, data, background=False)


# A submission whose answers depend on how many calls it has had: any case run in a
# discarded guess would change the grade of the cases after it.
STATEFUL = """
_calls = [0]
_real = pipeline_capacity


def pipeline_capacity(*args, **kwargs):
    _calls[0] += 1
    print("call", _calls[0])
    if _calls[0] % 3 == 0:
        raise ValueError("every third call fails")
    return _real(*args, **kwargs)
"""


@pytest.mark.parametrize(
    "pick",
    [
        pytest.param(lambda ids: ids[::-1], id="reversed"),
        pytest.param(lambda ids: [i for i in ids if "hidden" in i][5:], id="subset"),
        pytest.param(lambda ids: ids[:40], id="prefix"),
    ],
)
def test_a_wrong_guess_of_the_order_is_undone(
    tmp_path: Path, reference_source: str, pick: Any
) -> None:
    path = tmp_path / "mine.py"
    data = (reference_source + STATEFUL).encode()
    path.write_bytes(data)
    assert _grade(path, data, True, pick) == _grade(path, data, False, pick)


def test_guess_then_plan_resets_only_when_they_differ() -> None:
    resets: list[int] = []
    ran: list[str] = []
    gate = threading.Event()

    def run(case: str, _next: str | None) -> str:
        gate.wait(5)
        ran.append(case)
        return case

    same: RunAhead[str] = RunAhead(lambda: None, run, lambda: resets.append(1))
    same.expect(["a", "b", "c"])
    gate.set()
    while len(ran) < 2:
        time.sleep(0.001)
    same.plan(["a", "b", "c"])
    assert [same.take(c, 5) for c in "abc"] == ["a", "b", "c"]
    assert same.stop() and resets == [] and ran == ["a", "b", "c"]

    ran.clear()
    other: RunAhead[str] = RunAhead(lambda: None, run, lambda: resets.append(1))
    other.expect(["a", "b", "c"])
    while len(ran) < 2:
        time.sleep(0.001)
    other.plan(["b", "c"])
    assert [other.take(c, 5) for c in "bc"] == ["b", "c"]
    assert other.take("a", 5) is None
    assert other.stop() and resets == [1]
    assert ran[-2:] == ["b", "c"]  # the plan, run again from its start after the reset


def _background(tmp_path: Path, source: str) -> tuple[Grader, list[str]]:
    """A background grader of ``source`` and its case ids, in battery order."""
    path = tmp_path / "mine.py"
    path.write_text(source, encoding="utf-8")
    grader = open_grader(GradingRequest(submission=path, seed=3, limits=SHORT, background=True))
    return grader, [case.id for case in grader.cases]


def test_a_run_cut_short_reports_only_the_cases_asked_for(
    tmp_path: Path, reference_source: str
) -> None:
    grader, ids = _background(tmp_path, reference_source)
    grader.plan(ids)
    grader.run_case(ids[0])
    time.sleep(0.2)  # the worker has run well past the first case by now
    report = grader.report()
    statuses = [case.status for case in report.cases]
    assert statuses[0] == "passed"
    assert set(statuses[1:]) == {"not_run"}  # as if the other items never ran (-x)
    assert grader.child is not None and grader.child.proc is None  # and the child is gone


def test_a_case_outside_the_plan_is_run_by_the_caller(
    tmp_path: Path, reference_source: str
) -> None:
    grader, ids = _background(tmp_path, reference_source)
    grader.plan(ids[:2])
    assert [grader.run_case(i).status for i in (ids[0], ids[5], ids[1])] == ["passed"] * 3
    statuses = {case.id: case.status for case in grader.report().cases}
    assert {i for i, status in statuses.items() if status == "passed"} == {ids[0], ids[1], ids[5]}


def test_the_child_survives_the_worker_that_started_it(
    tmp_path: Path, reference_source: str
) -> None:
    # The parent-death signal (bwrap's --die-with-parent, the child's PR_SET_PDEATHSIG)
    # follows the thread that forked the child: a child the worker started was SIGKILLed
    # once the caller took over and the worker ended (about 1 run in 4 before the fix;
    # 15 runs all pass with it, about 1 % by chance without).
    for run in range(15):
        (tmp_path / str(run)).mkdir()
        grader, ids = _background(tmp_path / str(run), reference_source)
        try:
            grader.plan(ids[:2])
            got = [grader.run_case(i) for i in (ids[0], ids[5], ids[1])]
            assert [r.status for r in got] == ["passed"] * 3, [message(r) for r in got]
        finally:
            grader.close()


def test_run_is_told_the_case_that_follows() -> None:
    pairs: list[tuple[str, str | None]] = []

    def run(case: str, following: str | None) -> str:
        pairs.append((case, following))
        return case

    ahead: RunAhead[str] = RunAhead(lambda: None, run)
    ahead.plan(["a", "b", "c"])
    assert ahead.take("c", 5) == "c"
    assert ahead.stop()
    assert pairs == [("a", "b"), ("b", "c"), ("c", None)]


def test_cases_asked_before_any_plan_are_graded_as_if_nothing_ran(
    tmp_path: Path, reference_source: str
) -> None:
    # Without a plan everything the thread ran was a guess: the first case asked for
    # starts from a fresh child and no counts, as in a run without the thread.
    grader, ids = _background(tmp_path, reference_source + STATEFUL)
    time.sleep(0.3)  # the thread has run a good part of the battery by now
    for case_id in ids:
        grader.run_case(case_id)
    path = tmp_path / "mine.py"
    assert _score_doc(grader) == _grade(path, path.read_bytes(), background=False)
