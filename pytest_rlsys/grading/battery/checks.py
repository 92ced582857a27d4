"""Checks: functions of the plain-data outcomes of a case's calls, returning a Verdict.

Every check here is total: whatever the submission returned, it gives a verdict and
never raises (``total`` turns a bug of the battery itself into an "error" verdict with
no inputs in it, so a harness failure can never print a hidden case's data).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from pytest_rlsys.grading.battery.model import (
    PARAMETERS,
    PASSED,
    RESULT_KEYS,
    SECTION_OF,
    Call,
    Check,
    ProblemKind,
    Verdict,
    plain,
    schema_path,
)
from pytest_rlsys.grading.comparison import (
    EXPECTED_TYPE,
    NONPLAIN_MARK,
    Mismatch,
    find_mismatch,
    find_mismatches,
    show,
    type_name,
)
from pytest_rlsys.grading.outcomes import CallOutcome
from pytest_rlsys.grading.verdicts import MISSING, ValueDiff

__all__ = [
    "CheckFactory",
    "all_of",
    "expect_keys",
    "expect_only_keys",
    "expect_refusal",
    "expect_relation",
    "expect_unchanged_inputs",
    "expect_value_error",
    "first_problem",
    "identical",
    "mismatch_kind",
    "same_keys",
    "total",
]

CheckFactory = Callable[[tuple[Call, ...]], Check]
Relation = Callable[[list[Any]], str | None]


# The kind of a call that neither returned nor raised; anything else is an answer that
# could not be read.
_NOT_RETURNED: dict[str, ProblemKind] = {
    "timeout": "timed_out",
    "crashed": "crashed",
    "missing": "missing_function",
    "grader_error": "grader_setting",
    "load_failed": "load_failed",
}


def outcome_problem(outcome: CallOutcome, section: str) -> Verdict:
    """The verdict for a call that did not return a value (no expected/got yet)."""
    kind = outcome.kind
    exc, line = outcome.exc_type, outcome.line
    if kind == "raised" and outcome.not_implemented:
        return Verdict("failed", "not_implemented", exc_type=exc, todo=section)
    if kind == "raised" and outcome.is_exception:
        note, told = outcome.message, outcome.said  # the exception's text; the child's, worded
        return Verdict("failed", "raised", exc_type=exc, line=line, note=note, said=told)
    if kind == "raised":
        return Verdict("error", "not_exception", exc_type=exc)
    status = "timeout" if kind == "timeout" else "error"
    return Verdict(
        status, _NOT_RETURNED.get(kind, "garbled"), note=outcome.message, said=outcome.said
    )


def total(check: Check) -> Check:
    """``check``, made total: an exception inside it is the battery's fault."""

    def safe(outcomes: Sequence[CallOutcome]) -> Verdict:
        try:
            return check(outcomes)
        except Exception:  # any bug of ours: no traceback, no inputs shown
            return Verdict("error", "battery_bug")

    return safe


def first_problem(outcomes: Sequence[CallOutcome], calls: Sequence[Call]) -> Verdict | None:
    """The verdict for the first call that did not return a value; None when all did."""
    for outcome, call in zip(outcomes, calls, strict=True):
        if outcome.kind != "returned":
            verdict = outcome_problem(outcome, SECTION_OF[call.func])
            # The exception's class where one was raised; else nothing: the headline
            # already says it in words (a token such as load_failed is not for learners).
            return dataclasses.replace(verdict, got=outcome.exc_type)
    return None


def mismatch_kind(found: Mismatch) -> ProblemKind:
    """What failed in ``found``, from the grader's closed vocabulary: the type due (named
    by the expected value), a key, the order, or else the value."""
    if found.how == "wrong_order":
        return "wrong_order"
    if found.how == "keys":
        return "missing_key" if found.missing else "unexpected_key"
    due = EXPECTED_TYPE.get(type(found.expected))
    if due is not None and (found.how == "nonplain" or found.how.startswith("not_a_")):
        return cast(ProblemKind, f"wrong_type_{due}")
    return "wrong_value"


# How many differences of one value a visible case names.
MAX_DIFFERENCES = 3


def input_strings(calls: Sequence[Call]) -> frozenset[str]:
    """Every str an input of ``calls`` holds, as a key or a value, at any depth."""
    found: set[str] = set()
    stack: list[Any] = [[list(c.args), dict(c.kwargs)] for c in calls]
    while stack:
        value = stack.pop()
        if type(value) is str:
            found.add(value)
        elif type(value) is dict:
            stack += [*value.keys(), *value.values()]
        elif type(value) in (list, tuple):
            stack += list(value)
    return frozenset(found)


# The field names the template itself chose (result keys, an edge's fields, a row's
# added fields): naming one never shows what a hidden input chose.
TEMPLATE_NAMES = frozenset(
    {key for keys in RESULT_KEYS.values() for key in keys}
    | {
        "source",
        "target",
        "bytes_per_item",
        "items_per_work_unit",
        "work_units_per_second",
        "bandwidth_bytes_per_s",
        "overlap_fraction",
        "fabric_id",
        "cross_pool",
        "traffic_bytes_per_s",
        "transfer_seconds_per_s",
        "exposed_seconds_per_s",
    }
)


def shown_names(
    names: Sequence[str], inputs: frozenset[str], *, extra: bool = False
) -> tuple[str, ...]:
    """The keys of a key problem a hidden case may name, from the template's own names
    only (a closed vocabulary, like the words): the missing keys when every one is a
    template name no input chose; for keys the submission added (``extra``), the
    template names they misspell, never the keys themselves (a submission can build a
    key from a hidden input)."""
    if extra:
        close = (
            difflib.get_close_matches(name, TEMPLATE_NAMES, n=1, cutoff=0.75) for name in names
        )
        return tuple(dict.fromkeys(match[0] for match in close if match))
    chosen = inputs - TEMPLATE_NAMES
    if all(name in TEMPLATE_NAMES and name not in chosen for name in names):
        return tuple(names)
    return ()


def _value_problem(
    found: Mismatch, func: str, want: Any, got: Any, key: str, inputs: frozenset[str]
) -> Verdict:
    """The verdict for a value that differs from the reference's, from the record: the
    first difference, and the next ones (``ValueDiff.also``)."""
    more = find_mismatches(want, got, f"$.{key}", MAX_DIFFERENCES)[1:]
    return Verdict(
        "failed",
        mismatch_kind(found),
        show(want),
        show(got),
        path=found.path,
        schema_path=schema_path(RESULT_KEYS.get(func, ()), found.path),
        diff=dataclasses.replace(found.diff(), also=tuple(m.diff() for m in more)),
        names=found.missing or found.extra,
        shown_names=shown_names(found.missing or found.extra, inputs, extra=not found.missing),
    )


def expect_only_keys(keys: Sequence[str]) -> CheckFactory:
    """The first call returns a dict with no key outside ``keys``."""

    def factory(calls: tuple[Call, ...]) -> Check:
        inputs = input_strings(calls)

        def check(outcomes: Sequence[CallOutcome]) -> Verdict:
            got, early = _returned_dict(outcomes, calls)
            if early:
                return early
            extra = tuple(sorted(str(k) for k in got if k not in keys))
            if not extra:
                return PASSED
            return Verdict(
                "failed",
                "unexpected_key",
                path="$",
                schema_path="$",
                diff=ValueDiff("$", "keys", extra=extra),
                names=extra,
                shown_names=shown_names(extra, inputs, extra=True),
            )

        return check

    return factory


def _returned_dict(
    outcomes: Sequence[CallOutcome], calls: Sequence[Call]
) -> tuple[Any, Verdict | None]:
    """The first call's value, and the verdict when it did not return a plain dict."""
    early = first_problem(outcomes[:1], calls[:1])
    got = outcomes[0].value
    if early is None and (type(got) is not dict or NONPLAIN_MARK in got):
        note = type_name(got)
        early = Verdict(
            "failed", "not_a_dict", "a dict", show(got), path="$", schema_path="$", note=note
        )
    return got, early


def expect_keys(expected: Mapping[str, Any]) -> CheckFactory:
    """The first call returns a dict whose listed keys equal the expected plain values."""

    def factory(calls: tuple[Call, ...]) -> Check:
        func = calls[0].func
        inputs = input_strings(calls)

        def check(outcomes: Sequence[CallOutcome]) -> Verdict:
            got, early = _returned_dict(outcomes, calls)
            if early:
                return early
            first: Verdict | None = None
            also: list[str] = []  # the other keys that differ: a hidden case says them too
            for key, want in expected.items():
                verdict: Verdict | None = None
                if key not in got:
                    verdict = Verdict(
                        "failed",
                        "missing_key",
                        show(want),
                        MISSING,
                        path=f"$.{key}",
                        schema_path=schema_path(RESULT_KEYS.get(func, ()), f"$.{key}"),
                        names=(key,),
                    )
                elif (found := find_mismatch(want, got[key], f"$.{key}")) is not None:
                    verdict = _value_problem(found, func, want, got[key], key, inputs)
                if verdict is not None and first is None:
                    first = verdict
                elif verdict is not None and verdict.schema_path not in also:
                    also.append(verdict.schema_path)
            if first is None:
                return PASSED
            return dataclasses.replace(first, also_paths=tuple(also))

        return check

    return factory


def _refused(outcome: CallOutcome, call: Call) -> Verdict:
    if outcome.kind == "raised" and outcome.value_error:
        return PASSED
    if outcome.kind == "returned":
        return Verdict("failed", "returned", "ValueError", show(outcome.value))
    if outcome.kind == "raised" and not outcome.not_implemented:
        # Any other exception, a BaseException too, was raised where ValueError was due:
        # "raised" would say a result was due, against the case's own category.
        exc = outcome.exc_type
        status = "failed" if outcome.is_exception else "error"
        return Verdict(status, "raised_other", "ValueError", exc, exc_type=exc, line=outcome.line)
    early = first_problem([outcome], [call])
    return early if early is not None else Verdict("error", "battery_bug")


def expect_value_error(calls: tuple[Call, ...]) -> Check:
    """The single call raises ValueError (the chapter's own error assertions)."""

    def check(outcomes: Sequence[CallOutcome]) -> Verdict:
        return _refused(outcomes[0], calls[0])

    return check


def expect_refusal(calls: tuple[Call, ...]) -> Check:
    """calls = (valid, bad): the valid input is answered (the call returns, whatever its
    value: wrong values are graded by the value cases, so one output bug never takes the
    refusal points too), then the bad one, the same input with exactly one field broken,
    raises ValueError.  Refusing everything therefore earns nothing here."""

    def check(outcomes: Sequence[CallOutcome]) -> Verdict:
        control = outcomes[0]
        if control.kind != "returned":
            if control.kind == "raised" and control.value_error:
                return Verdict("failed", "refused_valid")
            if control.kind == "raised" and not control.not_implemented:
                # Said as raised on the valid half: a plain "raised where a result was
                # due" under a category that says "refuses ..." reads as a contradiction.
                exc = control.exc_type
                return Verdict(
                    "failed" if control.is_exception else "error",
                    "twin_raised",
                    "a result",
                    exc,
                    exc_type=exc,
                    line=control.line,
                    note=control.message,
                )
            early = first_problem(outcomes[:1], calls[:1])
            return early if early is not None else Verdict("error", "battery_bug")
        return _refused(outcomes[1], calls[1])

    return check


def identical(sent: Any, after: Any) -> bool:
    """``after`` is ``sent`` exactly: the same plain types all the way down (an int that
    became a float, or 2 that became 2.0, was modified) and equal values (NaN equals NaN).
    Iterative, so a deep structure from the child cannot exhaust the stack."""
    stack = [(sent, after)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        if type(a) is dict:
            if a.keys() != b.keys():
                return False
            stack.extend((a[k], b[k]) for k in a)
        elif type(a) is list:
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif type(a) is float and a != a:
            if b == b:
                return False
        elif a != b:
            return False
    return True


def expect_unchanged_inputs(calls: tuple[Call, ...]) -> Check:
    """The first call leaves every argument exactly as it was (types included); the
    message names the argument."""

    def check(outcomes: Sequence[CallOutcome]) -> Verdict:
        early = first_problem(outcomes, calls)
        if early:
            return early
        call = calls[0]
        after = outcomes[0].args_after
        if (
            type(after) is not list
            or len(after) != 2
            or type(after[0]) is not list
            or type(after[1]) is not dict
        ):
            return Verdict("failed", "unreadable_args")
        names = PARAMETERS[call.func]
        sent_args, sent_kwargs = plain(list(call.args)), plain(dict(call.kwargs))
        changed = [
            names[i]
            for i, value in enumerate(sent_args)
            if i >= len(after[0]) or not identical(value, after[0][i])
        ]
        changed += [
            k
            for k, value in sent_kwargs.items()
            if k not in after[1] or not identical(value, after[1][k])
        ]
        if changed:
            return Verdict("failed", "mutated_input", schema_path=changed[0], names=tuple(changed))
        return PASSED

    return check


def expect_relation(relation: Relation) -> CheckFactory:
    """Every call returns; ``relation`` over the returned values finds no problem."""

    def factory(calls: tuple[Call, ...]) -> Check:
        def check(outcomes: Sequence[CallOutcome]) -> Verdict:
            early = first_problem(outcomes, calls)
            if early:
                return early
            values = [o.value for o in outcomes]
            try:
                problem = relation(values)
            except (LookupError, TypeError, AttributeError, ValueError, ArithmeticError):
                problem = "the results do not have the documented keys"
            if problem:
                return Verdict("failed", "inconsistent", note=problem)
            return PASSED

        return check

    return factory


def all_of(*factories: CheckFactory) -> CheckFactory:
    """The first failing verdict of the checks, in order; passed when none fails."""

    def factory(calls: tuple[Call, ...]) -> Check:
        checks = [make(calls) for make in factories]

        def check(outcomes: Sequence[CallOutcome]) -> Verdict:
            for one in checks:
                verdict = one(outcomes)
                if verdict.status != "passed":
                    return verdict
            return PASSED

        return check

    return factory


def same_keys(keys: Sequence[str]) -> Relation:
    """Every result equals the first one at ``keys``."""

    def relation(values: list[Any]) -> str | None:
        first = values[0]
        for other in values[1:]:
            for key in keys:
                found = find_mismatch(first[key], other[key], f"$.{key}")
                if found is not None:
                    return f"results differ between equivalent inputs at {found.path}"
        return None

    return relation
