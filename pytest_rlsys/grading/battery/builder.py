"""The builder the TODO modules add their cases to.

Each case is checked here against the reference while it is built (a generated input the
reference refuses, or a refusal case whose valid half the reference refuses, is a bug of
the battery and stops the build), and every check is made total.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pytest_rlsys.grading.battery.checks import (
    CheckFactory,
    all_of,
    expect_keys,
    expect_refusal,
    total,
)
from pytest_rlsys.grading.battery.model import SECTION_OF, Call, Case, run_reference
from pytest_rlsys.grading.outcomes import CallOutcome
from pytest_rlsys.messages import Msg

__all__ = ["REFUSAL_WEIGHT", "BatteryBuilder"]

# What the score JSON schema allows in a case id (after "todoN.visible." / ".hidden.").
CASE_ID = re.compile(r"[A-Za-z0-9_.]+")
# An error-path case is worth half a value case: it tests one branch, not a computation.
REFUSAL_WEIGHT = 0.5


@dataclass
class BatteryBuilder:
    ref: ModuleType
    seed: int
    cases: list[Case] = field(default_factory=list)
    # The reference's outcome of every call it ran, by the call's identity (the call is
    # kept with it, so no other call can take its id): the self-check reuses them.
    outcomes: dict[int, tuple[Call, CallOutcome]] = field(default_factory=dict)

    def run(self, call: Call) -> CallOutcome:
        """The reference's outcome of ``call``, run once per call object."""
        known = self.outcomes.get(id(call))
        if known is None:
            known = self.outcomes[id(call)] = (call, run_reference(self.ref, call))
        return known[1]

    def add(
        self,
        case_id: str,
        visibility: str,
        category: Msg,
        calls: Sequence[Call],
        factory: CheckFactory,
        *,
        weight: float = 1.0,
        claim: str = "",
        rule: str = "",
    ) -> None:
        if not CASE_ID.fullmatch(case_id):
            raise AssertionError(f"case id {case_id!r} is not in the score schema's alphabet")
        section = SECTION_OF[calls[0].func]
        frozen, full_id = tuple(calls), f"{section}.{visibility}.{case_id}"
        check = total(factory(frozen))
        self.cases.append(
            Case(full_id, section, visibility, category, frozen, check, weight, claim, rule)
        )

    def expected(self, call: Call, keys: Sequence[str]) -> dict[str, Any]:
        outcome = self.run(call)
        if outcome.kind != "returned":
            raise AssertionError(f"reference raised on a generated case: {call.render()}")
        return {k: outcome.value[k] for k in keys}

    def visible(
        self, case_id: str, category: Msg, calls: Sequence[Call], factory: CheckFactory, claim: str
    ) -> None:
        """One assertion of the chapter's tests."""
        self.add(case_id, "visible", category, calls, factory, claim=claim)

    def diff(
        self,
        case_id: str,
        category: Msg,
        rule: str,
        call: Call,
        keys: Sequence[str],
        weight: float = 1.0,
    ) -> None:
        """The result equals the reference's at ``keys``."""
        check = expect_keys(self.expected(call, keys))
        self.add(case_id, "hidden", category, [call], check, weight=weight, rule=rule)

    def anchored(
        self,
        case_id: str,
        category: Msg,
        rule: str,
        calls: Sequence[Call],
        factory: CheckFactory,
        keys: Sequence[str],
    ) -> None:
        """A property case that also needs a correct first result, so that a constant
        answer cannot satisfy a relation between several calls."""
        check = all_of(expect_keys(self.expected(calls[0], keys)), factory)
        self.add(case_id, "hidden", category, calls, check, rule=rule)

    def refusal(self, case_id: str, category: Msg, rule: str, valid: Call, bad: Call) -> None:
        """``bad`` is ``valid`` with exactly one rule broken: it must raise ValueError,
        and pays only when ``valid`` is answered (returns; its value is graded by the
        value cases alone, so an output bug never takes the refusal points with it)."""
        if self.run(valid).kind != "returned":
            raise AssertionError(f"reference refuses the valid half of {case_id}")
        refused = self.run(bad)
        if not (refused.kind == "raised" and refused.value_error):
            raise AssertionError(f"reference accepts the bad half of {case_id}")
        weight = REFUSAL_WEIGHT
        self.add(
            case_id, "hidden", category, [valid, bad], expect_refusal, weight=weight, rule=rule
        )
