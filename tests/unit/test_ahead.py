"""Children started ahead (grading.ahead) and the cases planned next begun while one is
judged (``Grader.plan``, ``Grader.run_case(case, following)``): the same grade as one
case at a time."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading import grader as grader_module
from pytest_rlsys.grading.ahead import StandbyPool
from pytest_rlsys.grading.grader import Grader, open_grader
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.outputs import scorejson
from pytest_rlsys.outputs.registry import RenderOptions
from tests.conftest import slowness


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


# -- pipelined (the next cases' calls sent early) vs one case at a time ------------------

SHORT = Limits(call_timeout_s=0.5, load_timeout_s=5, budget_s=30)


def _short() -> Limits:
    """SHORT, its budget times this machine's slowness now: two gradings compared must
    both finish, and where a budget runs out depends on the load (crash_on_call, a child
    started again for each call, used up 30 s beside two CPU hogs)."""
    return dataclasses.replace(SHORT, budget_s=SHORT.budget_s * slowness())


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

# A submission whose answers depend on how many calls it has had: a call sent for a case
# and then dropped, or sent twice, would change the grade of the cases after it.
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


def _source(reference_source: str, name: str) -> str:
    edit = SUBMISSIONS[name]
    if edit is None:
        return reference_source
    old, new = edit
    assert old in reference_source
    return reference_source.replace(old, new, 1)


def _grade(
    path: Path,
    pipelined: bool,
    pick: Callable[[list[str]], list[str]] = list,
    told: Callable[[list[str]], list[str | None]] | None = None,
) -> Any:
    """The score JSON (without wall time) of grading ``path`` case by case in the order
    ``pick`` makes of the battery's; ``pipelined``: each call names the case asked next
    (``told``: what it names instead)."""
    grader = open_grader(GradingRequest(submission=path, seed=3, limits=_short()))
    ids = pick([case.id for case in grader.cases])
    following: list[str | None] = [*ids[1:], None]
    if told is not None:
        following = told(ids)
    if pipelined:
        grader.plan(ids)
    for case_id, after in zip(ids, following, strict=True):
        grader.run_case(case_id, after if pipelined else None)
    return _score_doc(grader)


def _score_doc(grader: Grader) -> Any:
    doc = json.loads(scorejson.render(grader.report(), RenderOptions()))
    doc.pop("elapsed_s", None)
    return doc


@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
@pytest.mark.slow
def test_pipelined_and_one_at_a_time_grade_alike(
    tmp_path: Path, reference_source: str, name: str
) -> None:
    path = tmp_path / "mine.py"
    path.write_text(_source(reference_source, name), encoding="utf-8")
    assert _grade(path, pipelined=True) == _grade(path, pipelined=False)


@pytest.mark.parametrize(
    "pick",
    [
        pytest.param(lambda ids: ids[::-1], id="reversed"),
        pytest.param(lambda ids: [i for i in ids if "hidden" in i][5:], id="subset"),
        pytest.param(lambda ids: ids[:40], id="prefix"),
    ],
)
def test_any_order_grades_alike_pipelined_or_not(
    tmp_path: Path, reference_source: str, pick: Callable[[list[str]], list[str]]
) -> None:
    path = tmp_path / "mine.py"
    path.write_text(reference_source + STATEFUL, encoding="utf-8")
    assert _grade(path, True, pick) == _grade(path, False, pick)


# Its first four calls take 0.4 s each, the last three sent at once (queued behind one
# another): each is timed from the answer before it, so none reaches a 1 s limit.
SLOW_START = """
import time as _time

_slow = [4]
_real_capacity = pipeline_capacity


def pipeline_capacity(*args, **kwargs):
    if _slow[0]:
        _slow[0] -= 1
        _time.sleep(0.4)
    return _real_capacity(*args, **kwargs)
"""


@pytest.mark.slow  # waits out call timeouts: 1.9 s
def test_calls_queued_behind_slow_ones_are_timed_from_their_turn(
    tmp_path: Path, reference_source: str
) -> None:
    path = tmp_path / "mine.py"
    path.write_text(reference_source + SLOW_START, encoding="utf-8")
    limits = dataclasses.replace(_short(), call_timeout_s=1.0)
    grader = open_grader(GradingRequest(submission=path, seed=3, limits=limits))
    grader.run_all()
    report = grader.report()
    assert [c.id for c in report.cases if c.status != "passed"] == []


def test_calls_that_find_the_pipe_full_keep_their_order(
    tmp_path: Path, reference_source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No limit on the cases begun ahead: the child's request pipe fills, a case is begun
    # with only some of its calls sent, and no later case's call may pass the rest.
    monkeypatch.setattr(grader_module, "AHEAD_CASES", 100_000)
    path = tmp_path / "mine.py"
    path.write_text(reference_source + STATEFUL, encoding="utf-8")
    assert _grade(path, pipelined=True) == _grade(path, pipelined=False)


@pytest.mark.slow
def test_a_case_begun_but_not_asked_next_is_run_afresh(
    tmp_path: Path, reference_source: str
) -> None:
    # Each call names a case two ahead (as a caller whose plan was wrong would): the
    # begun call's reply is skipped, and the case is sent again when it is asked for
    # (waiting for the skipped reply would time out).
    path = tmp_path / "mine.py"
    path.write_text(reference_source, encoding="utf-8")
    wrong = _grade(path, True, told=lambda ids: [*ids[2:], None, None])
    assert wrong == _grade(path, pipelined=False)
