"""A case's words never contradict what its input is due (P25).

A refusal case ("refuses a NaN arrival rate") sends a valid input and its broken twin; a
value case sends valid inputs only.  Whatever a submission does on any one call of any
case, the hidden word it gets must agree with what that call was due: "where a result was
due" only for a call whose input is valid and not the valid half of a refusal, "where
ValueError was due" only for the bad input, and a failure on the valid half of a refusal
says so.  What is due is read from the reference (its outcome of each call), not from how
the battery labels its cases, so a new category or check cannot slip past.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from pytest_rlsys.grading.battery import (
    build_battery,
    default_seed,
    load_reference,
    run_reference,
)
from pytest_rlsys.grading.battery.model import Call, Case
from pytest_rlsys.grading.outcomes import CallOutcome
from pytest_rlsys.grading.verdicts import HIDDEN_KIND, HIDDEN_KINDS, PATH_KINDS, HiddenKind
from pytest_rlsys.messages import HIDDEN_WORDS

# The words that say a result was due, those that say ValueError was due, and those that
# name the valid half of a refusal case; the rest (timeouts, crashes, not implemented...)
# say nothing of what was due.
RESULT_DUE: frozenset[HiddenKind] = frozenset({"raised", "inconsistent", *PATH_KINDS})
VALUE_ERROR_DUE: frozenset[HiddenKind] = frozenset({"returned", "wrong_exception"})
VALID_TWIN: frozenset[HiddenKind] = frozenset({"refused_valid", "twin_raised"})

# What a learner's function may do on one call (the grader's outcome records).
INJECTED: dict[str, CallOutcome] = {
    "TypeError": CallOutcome("raised", exc_type="TypeError", line=3, message="no"),
    "KeyError": CallOutcome("raised", exc_type="KeyError", line=3, message="'x'"),
    "ZeroDivisionError": CallOutcome("raised", exc_type="ZeroDivisionError", line=3),
    "AssertionError": CallOutcome("raised", exc_type="AssertionError", line=3),
    "ValueError": CallOutcome("raised", exc_type="ValueError", value_error=True, line=3),
    "SystemExit": CallOutcome("raised", exc_type="SystemExit", is_exception=False),
    "NotImplementedError": CallOutcome(
        "raised", exc_type="NotImplementedError", not_implemented=True
    ),
    "returned None": CallOutcome("returned", value=None),
    "timeout": CallOutcome("timeout", message="timed out"),
    "crashed": CallOutcome("crashed", message="SIGSEGV"),
}
SEEDS = (0, 1, 2, default_seed())


_REFERENCE = load_reference()


def _reference(known: dict[int, tuple[Call, CallOutcome]], call: Call) -> CallOutcome:
    """The reference's outcome of ``call``: the one the battery's build ran, else run now."""
    if id(call) not in known:
        known[id(call)] = (call, run_reference(_REFERENCE, call))
    return known[id(call)][1]


def _outcomes(
    case: Case, known: dict[int, tuple[Call, CallOutcome]], at: int, injected: CallOutcome
) -> list[CallOutcome]:
    """The reference's outcomes with call ``at`` replaced by ``injected``; after a call that
    neither returned nor raised the grader makes no more calls (``Grader._collect``)."""
    outcomes = [_reference(known, call) for call in case.calls]
    if injected.kind == "returned":
        injected = dataclasses.replace(injected, args_after=outcomes[at].args_after)
    outcomes[at] = injected
    if injected.kind not in ("returned", "raised"):
        outcomes[at:] = [injected] * (len(outcomes) - at)
    return outcomes


def _every_failure() -> Iterator[tuple[str, str, str, HiddenKind]]:
    """(where, the call's role, what was injected, the hidden kind said) for every call of
    every case at every seed.  A call's role, from the reference: ``bad`` (it raises
    ValueError), ``twin`` (it returns, and another call of its case is a bad one: the valid
    half of a refusal) or ``value`` (it returns, in a case of valid inputs only)."""
    for seed in SEEDS:
        known: dict[int, tuple[Call, CallOutcome]] = {}
        for case in build_battery(seed, _REFERENCE, known):
            refused = [_reference(known, call).value_error for call in case.calls]
            for at in range(len(case.calls)):
                role = "bad" if refused[at] else "twin" if any(refused) else "value"
                for name, injected in INJECTED.items():
                    verdict = case.check(_outcomes(case, known, at, injected))
                    where = f"seed {seed} {case.id} ({case.category.en}) call {at} {name}"
                    yield where, role, name, HIDDEN_KIND[verdict.kind]


def test_the_word_classes_match_their_words() -> None:
    # The classes above are what the words say, so the rule below is about the words.
    for kind in HIDDEN_KINDS:
        words = HIDDEN_WORDS[kind].en
        assert ("a result was due" in words) == (kind in {"raised"} | VALID_TWIN), kind
        assert ("ValueError was due" in words) == (kind in VALUE_ERROR_DUE), kind
        assert ("valid input next to the bad one" in words) == (kind in VALID_TWIN), kind


# What each role may be told, and what an exception on it must be told.
_FORBIDDEN = {
    "bad": RESULT_DUE | VALID_TWIN,
    "twin": RESULT_DUE | VALUE_ERROR_DUE,
    "value": VALUE_ERROR_DUE | VALID_TWIN,
}
_RAISED_WORD = {"bad": "wrong_exception", "twin": "twin_raised", "value": "raised"}
_NEUTRAL = ("NotImplementedError", "timeout", "crashed")


def _due_word(role: str, injected: str) -> str:
    """The one word an injected outcome must get on a call of ``role`` ("" where the
    outcome says nothing of what was due, or passes a value case's other checks)."""
    if injected in _NEUTRAL:
        return ""
    if injected == "returned None":
        return {"bad": "returned", "twin": "passed"}.get(role, "")
    if injected == "ValueError":
        return {"bad": "passed", "twin": "refused_valid", "value": "raised"}[role]
    return _RAISED_WORD[role]


def test_every_case_says_what_each_of_its_calls_was_due() -> None:
    wrong: list[str] = []
    roles: set[str] = set()
    for where, role, injected, kind in _every_failure():
        roles.add(role)
        due = _due_word(role, injected)
        if kind in _FORBIDDEN[role] or (due and kind != due):
            wrong.append(f"{where} [{role}]: {kind}, due {due or 'any other word'}")
    assert not wrong, "\n".join(wrong[:20]) + f"\n... {len(wrong)} in all"
    assert roles == {"bad", "twin", "value"}
