"""Whether a failure comes from state the submission keeps between calls (issue 42).

A function that keeps state (a module-level cache, a counter, a default list it appends
to) fails cases scattered among passing ones, and each failure reads as a wrong value.
After the run, a few failed cases are run again, in turn, in one fresh child; one that
passes there (after none or a few of the other reruns, not the battery's hundreds of
calls) answered the same input differently after a different history, which is what
keeping state is, and is said as a fact about the function (its name is the template's,
so the note says nothing a hidden input chose).  One child serves them all: a child per
rerun cost an interpreter's start each, most often for a plain bug, where none passes
(benchmarks/bench_class.py).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Protocol

from pytest_rlsys.grading.battery.model import Case
from pytest_rlsys.grading.isolation import ChildProcess
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.grading.scoring import CaseResult
from pytest_rlsys.messages import Said, said
from pytest_rlsys.resources import FUNCTIONS


class Graded(Protocol):
    """What this step reads of a grading that has run (the grader, which calls it)."""

    @property
    def decode_error(self) -> Said | None: ...
    @property
    def started(self) -> float | None: ...
    @property
    def results(self) -> Mapping[str, CaseResult]: ...
    @property
    def by_id(self) -> Mapping[str, Case]: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def source(self) -> str: ...
    @property
    def path(self) -> object: ...


__all__ = ["MAX_ALONE", "keeps_state"]

MAX_ALONE = 3  # failed cases run again, at most


def _candidates(grader: Graded) -> list[str]:
    """Failed cases (a value, not an error, a timeout or template code) of a function
    that passed other cases: the pattern state leaves."""
    passed = {
        grader.by_id[i].calls[0].func for i, r in grader.results.items() if r.status == "passed"
    }
    return [
        case_id
        for case_id, result in grader.results.items()
        if result.status == "failed"
        and not result.not_implemented
        and grader.by_id[case_id].calls[0].func in passed
    ][:MAX_ALONE]


def keeps_state(grader: Graded) -> Said | None:
    """The note that a function seems to keep state, when a failed case passes when run
    again in a fresh child; None otherwise (or when the budget is spent or the run was
    stopped).  A call that kills the child gets the next one a fresh child of its own."""
    candidates = _candidates(grader)
    if grader.decode_error is not None or grader.started is None or not candidates:
        return None
    child = ChildProcess(grader.source, str(grader.path), list(FUNCTIONS), grader.limits)
    child.ends_by = grader.started + grader.limits.budget_s  # reruns count in the budget
    try:
        if not child.ensure_loaded().ok:
            return None
        child.seal_output()  # its output is never shown: hidden inputs reach it
        for case_id in candidates:
            if time.monotonic() - grader.started > grader.limits.budget_s:
                return None
            case = grader.by_id[case_id]
            outcomes = [child.call(c.func, list(c.args), dict(c.kwargs)) for c in case.calls]
            if case.check(outcomes).status == "passed":
                return said("keeps_state", func=case.calls[0].func)
    finally:
        child.close()
    return None
