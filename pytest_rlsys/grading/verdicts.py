"""How a case ended, as facts from the grader's own closed vocabulary (no prose).

A check returns a ``Verdict``; the grader turns it into a ``CaseResult``.  A visible
case may carry the detail (values, the exception's class and line, the call's own text);
a hidden case is described by ``HIDDEN_KIND[kind]`` and a schema path, words the grader
owns.  Neither holds a sentence: ``outputs.wording`` words them, in the language of the
output, when an output is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from pytest_rlsys.messages import Said

__all__ = [
    "HIDDEN_KIND",
    "HIDDEN_KINDS",
    "MISSING",
    "PASSED",
    "PATH_KINDS",
    "PROBLEM_KINDS",
    "HiddenKind",
    "ProblemKind",
    "ValueDiff",
    "Verdict",
    "schema_path",
]

# What went wrong in a case, from the grader's own closed vocabulary.  The kind and the
# schema path are all a hidden case's feedback is made of (``HIDDEN_KIND``); the prose
# (``Verdict``'s other fields: exception class, line, values, the call's own text) serve
# visible cases only.
ProblemKind = Literal[
    "passed",
    "wrong_value",  # a value differs (at ``Verdict.path``)
    "wrong_order",  # the right items in another order (at ``Verdict.path``)
    "not_a_dict",  # the result is not a plain dict
    "missing_key",  # a documented key is missing (at ``Verdict.path``)
    "unexpected_key",  # a dict has a key it must not have (at ``Verdict.path``)
    # A value of another type than the one due (at ``Verdict.path``): a tuple for a list,
    # a generator, a str for a number, a non-plain object (fractions.Fraction)...
    "wrong_type_list",
    "wrong_type_dict",
    "wrong_type_number",
    "wrong_type_str",
    "wrong_type_bool",
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
    "refused_valid",  # the valid twin of a bad input was refused (raised ValueError)
    "twin_raised",  # the valid twin of a bad input raised another exception
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
# The kinds of a value's problem at a path (all, with mutated_input, in PATH_KINDS).
_ValueKind = Literal[
    "wrong_value",
    "wrong_order",
    "missing_key",
    "unexpected_key",
    "wrong_type_list",
    "wrong_type_dict",
    "wrong_type_number",
    "wrong_type_str",
    "wrong_type_bool",
]
HiddenKind = Literal[
    "passed",
    _ValueKind,
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
    "twin_raised",
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
    "not_a_dict": "wrong_type_dict",
    "missing_key": "missing_key",
    "unexpected_key": "unexpected_key",
    "wrong_type_list": "wrong_type_list",
    "wrong_type_dict": "wrong_type_dict",
    "wrong_type_number": "wrong_type_number",
    "wrong_type_str": "wrong_type_str",
    "wrong_type_bool": "wrong_type_bool",
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
    "twin_raised": "twin_raised",
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
PATH_KINDS: frozenset[HiddenKind] = frozenset((*get_args(_ValueKind), "mutated_input"))
PROBLEM_KINDS: tuple[ProblemKind, ...] = get_args(ProblemKind)
HIDDEN_KINDS: tuple[HiddenKind, ...] = get_args(HiddenKind)


@dataclass(frozen=True)
class ValueDiff:
    """Where and how a returned value differs from the reference's (visible cases): the
    path from the expected value's own keys, how it differs, and the values as shown
    (``comparison.show``), never the values themselves."""

    path: str
    how: str  # comparison.MismatchHow
    want: str = ""  # the expected value, shown
    got: str = ""  # the returned value, shown
    want_type: str = ""
    got_type: str = ""
    missing: tuple[str, ...] = ()  # keys missing from a dict, sorted
    extra: tuple[str, ...] = ()  # keys a dict should not have, sorted
    # The next differences of the same value (at most two more), so that a learner sees
    # whether one element or several are wrong.
    also: tuple[ValueDiff, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """How a case ended, as facts: the status, the kind of problem, and its detail."""

    status: str  # passed | failed | error | timeout | not_run
    kind: ProblemKind = "passed"
    expected: str | None = None  # visible cases only
    got: str | None = None  # visible cases only
    path: str = ""  # the JSON path of a value problem (visible cases)
    schema_path: str = ""  # the nearest path of the battery's own schema (any case)
    exc_type: str = ""  # visible cases: the exception's class (grader_fault: the grader's)
    line: int | None = None  # visible cases: the submission's line it was raised at
    # Visible cases: text from the call, shown as it is in either language: the
    # exception's message, the grader's account of a timeout, crash or failed load, a
    # type's name, a related-inputs check's finding.
    note: str = ""
    said: Said | None = None  # visible cases: ``note`` as the grader's own fact, if it is one
    diff: ValueDiff | None = None  # wrong_value: where and how the value differs
    # The names the words need: the key missing (missing_key), the arguments modified
    # (mutated_input), the function that timed out too often (too_many_timeouts).
    names: tuple[str, ...] = ()
    todo: str = ""  # not_implemented: the section of the function that is not yet written
    limit: float | None = None  # over_budget: the budget (s); too_many_timeouts: the count
    # missing_key / unexpected_key: the template's names a hidden case may say too (the
    # key missing; the one a key the submission added misspells), never a key the
    # submission or a hidden input chose (``battery.checks.shown_names``).
    shown_names: tuple[str, ...] = ()
    # The schema paths of the other keys that differ too (a value problem): a hidden case
    # names them, so two slips in one function cost one attempt, not two.
    also_paths: tuple[str, ...] = ()


PASSED = Verdict("passed")
# What a missing key's ``got`` holds; worded in the output's language when shown.
MISSING = "(missing)"


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
