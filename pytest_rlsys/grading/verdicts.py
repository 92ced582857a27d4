"""How a case ended, as facts from the grader's own closed vocabulary (no prose).

A check returns a ``Verdict``; the grader turns it into a ``CaseResult``.  A visible
case may carry the detail (values, the exception's class and line); a hidden case is
described by ``HIDDEN_KIND[kind]`` and a schema path, words the grader owns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from pytest_rlsys.messages import Msg

__all__ = [
    "HIDDEN_KIND",
    "HIDDEN_KINDS",
    "PASSED",
    "PATH_KINDS",
    "PROBLEM_KINDS",
    "HiddenKind",
    "ProblemKind",
    "Verdict",
    "schema_path",
]

# What went wrong in a case, from the grader's own closed vocabulary.  The kind and the
# schema path are all a hidden case's feedback is made of (``HIDDEN_KIND``); the prose
# (``Verdict.problem``), exception class, line and values serve visible cases only.
ProblemKind = Literal[
    "passed",
    "wrong_value",  # a value differs (at ``Verdict.path``)
    "wrong_order",  # the right items in another order (at ``Verdict.path``)
    "not_a_dict",  # the result is not a plain dict
    "missing_key",  # a documented key is missing (at ``Verdict.path``)
    "raised",  # raised where a result was due
    "not_exception",  # a BaseException that is not an Exception escaped
    "raised_other",  # raised another exception where ValueError was due
    "returned",  # returned where ValueError was due
    "not_implemented",  # raised NotImplementedError (the template)
    "timed_out",
    "crashed",  # the process ended during the call
    "garbled",  # the answer could not be read
    "load_failed",
    "missing_function",
    "grader_setting",  # the instructor's settings stopped the call
    "mutated_input",
    "refused_valid",  # the valid twin of a bad input was refused or answered wrongly
    "inconsistent",  # related calls disagree (a metamorphic relation fails)
    "unreadable_args",  # the arguments could not be read back after the call
    "battery_bug",  # the check itself failed
    "grader_fault",  # the grader failed around the case
    "over_budget",  # not run: the submission's time budget is used up
    "too_many_timeouts",  # not run: the function already timed out too often
    "self_check",  # not graded: the reference fails the case
    "not_reached",  # not run: deselected or stopped early
]
# The words a hidden case may say: each kind folds into one of these, and a value's
# path into the nearest path of the battery's own result schema (``schema_path``; for
# ``mutated_input`` the name of the first parameter changed, from the battery's list).
HiddenKind = Literal[
    "passed",
    "wrong_value",
    "wrong_order",
    "raised",
    "returned",
    "wrong_exception",
    "not_implemented",
    "timed_out",
    "crashed",
    "load_failed",
    "missing_function",
    "mutated_input",
    "refused_valid",
    "inconsistent",
    "grader_fault",
    "not_graded",
    "over_budget",
    "too_many_timeouts",
    "not_run",
]
HIDDEN_KIND: dict[ProblemKind, HiddenKind] = {
    "passed": "passed",
    "wrong_value": "wrong_value",
    "wrong_order": "wrong_order",
    "not_a_dict": "wrong_value",
    "missing_key": "wrong_value",
    "raised": "raised",
    "not_exception": "raised",
    "raised_other": "wrong_exception",
    "returned": "returned",
    "not_implemented": "not_implemented",
    "timed_out": "timed_out",
    "crashed": "crashed",
    "garbled": "crashed",
    "load_failed": "load_failed",
    "missing_function": "missing_function",
    "grader_setting": "grader_fault",
    "mutated_input": "mutated_input",
    "refused_valid": "refused_valid",
    "inconsistent": "inconsistent",
    "unreadable_args": "mutated_input",
    "battery_bug": "grader_fault",
    "grader_fault": "grader_fault",
    "over_budget": "over_budget",
    "too_many_timeouts": "too_many_timeouts",
    "self_check": "not_graded",
    "not_reached": "not_run",
}
# Hidden kinds whose words name a schema path.
PATH_KINDS: frozenset[HiddenKind] = frozenset({"wrong_value", "wrong_order", "mutated_input"})
PROBLEM_KINDS: tuple[ProblemKind, ...] = get_args(ProblemKind)
HIDDEN_KINDS: tuple[HiddenKind, ...] = get_args(HiddenKind)


@dataclass(frozen=True)
class Verdict:
    """How a case ended, as facts: the status, the kind of problem, and where."""

    status: str  # passed | failed | error | timeout | not_run
    kind: ProblemKind = "passed"
    problem: Msg | None = None  # visible cases: the detail, in both languages
    expected: str | None = None  # visible cases only
    got: str | None = None  # visible cases only
    path: str = ""  # the JSON path of a value problem (visible cases)
    schema_path: str = ""  # the nearest path of the battery's own schema (any case)
    exc_type: str = ""  # visible cases: the exception's class
    line: int | None = None  # visible cases: the submission's line it was raised at


PASSED = Verdict("passed")


def schema_path(keys: Sequence[str], path: str) -> str:
    """The nearest path of a documented result schema (its top-level ``keys``) to ``path``:
    ``$.key`` when the path starts at a documented key, else ``$``.  Everything below a key (list
    indices, dict keys the input or the submission chose) is cut: where inside a value a
    mismatch lies is the submission's choice, and the schema's own keys are the battery's."""
    if path.startswith("$."):
        head = path[2:]
        for stop in (".", "["):
            head = head.split(stop, 1)[0]
        if head in keys:
            return f"$.{head}"
    return "$"
