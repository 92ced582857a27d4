"""The scored battery: the chapter's assertions (visible) and generated cases (hidden).

Arranged by subject: ``todo1``/``todo2``/``todo3`` hold each TODO's rules (``RULES``, as the
template states them) and visible cases, ``todoN_hidden`` its hidden cases and
``todoN_probes`` the fixed-input ones among them; ``model`` says what a case
is, ``checks`` judges outcomes, ``generators`` makes inputs, ``builder`` collects cases.
The battery hash (``grader.prepare_battery``) covers every file of this package.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from pytest_rlsys.grading.battery import (
    todo1,
    todo1_hidden,
    todo2,
    todo2_hidden,
    todo3,
    todo3_hidden,
)
from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.model import Call, Case, load_reference, run_reference
from pytest_rlsys.grading.battery.statements import add_edges
from pytest_rlsys.grading.outcomes import CallOutcome
from pytest_rlsys.messages import Msg

__all__ = [
    "BATTERY_VERSION",
    "RULES",
    "Call",
    "Case",
    "build_battery",
    "default_seed",
    "load_reference",
    "package_files",
    "rule_of",
    "run_reference",
    "self_check",
]

# Bump when the cases change: the default seed (and so every default score) follows it.
BATTERY_VERSION = "4"
TODOS = {"todo1": todo1, "todo2": todo2, "todo3": todo3}
HIDDEN = {"todo1": todo1_hidden, "todo2": todo2_hidden, "todo3": todo3_hidden}
RULES: dict[str, dict[str, Msg]] = {section: module.RULES for section, module in TODOS.items()}


# Where a value problem lies names the rule better than the case's own (a differential
# case grades every key): each documented key of TODO 1 and 2 is defined by one rule.
KEY_RULES: dict[str, dict[str, str]] = {
    "todo1": {
        "effective_rates": "effective",
        "capacity": "capacity",
        "bottlenecks": "bottlenecks",
        "queue_margins": "margins",
        "unstable_stages": "unstable",
        "queue_stable": "queue_stable",
    },
    "todo2": {
        "rows": "rows",
        "cross_pool_bytes_per_s": "totals",
        "fabric_exposed_seconds_per_s": "totals",
        "critical_exposed_seconds_per_s": "critical",
        "critical_fabrics": "critical",
    },
}


def rule_of(case: Case, path: str) -> Msg:
    """The template's sentence of the rule a failure of ``case`` at schema path ``path``
    breaks: the key's own rule where one defines it and the case's rule does not name
    the key, else the case's rule."""
    rules = RULES.get(case.section, {})
    own = rules.get(case.rule, Msg("", ""))
    key = path[2:] if path.startswith("$.") else ""
    by_key = KEY_RULES.get(case.section, {}).get(key)
    if by_key is not None and key not in own.en:
        return rules[by_key]
    return own


def default_seed() -> int:
    """The seed used when none is given: fixed for a battery version, so the same code
    gets the same score; instructors set their own per assignment."""
    digest = hashlib.sha256(f"rlsys-battery-{BATTERY_VERSION}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 2**31


def package_files() -> list[Path]:
    """Every source file of the battery package, in a stable order (for its hash)."""
    return sorted(Path(__file__).parent.rglob("*.py"))


def build_battery(
    seed: int,
    reference: ModuleType | None = None,
    outcomes: dict[int, tuple[Call, CallOutcome]] | None = None,
) -> list[Case]:
    """All cases, in a fixed order; the same seed always gives the same cases.
    ``outcomes`` collects the reference's outcome of each call (for ``self_check``)."""
    builder = BatteryBuilder(reference or load_reference(), seed)
    if outcomes is not None:
        builder.outcomes = outcomes
    for module in TODOS.values():
        module.add_visible(builder)
    for section, module in HIDDEN.items():
        module.add_hidden(builder, random.Random(f"rlsys:{seed}:{section}"))
        # The edges derived from the template's statements (issue 42), names seeded apart
        # so that the listed cases keep their inputs.
        add_edges(builder, section, random.Random(f"rlsys:{seed}:{section}:edges"))
    return builder.cases


def self_check(
    cases: Sequence[Case],
    reference: ModuleType,
    known: dict[int, tuple[Call, CallOutcome]] | None = None,
) -> set[str]:
    """Ids of cases the reference itself fails: those are reported as not graded.
    ``known``: outcomes ``build_battery`` already got from this reference, reused."""
    known = {} if known is None else known
    failing = set()
    for case in cases:
        outcomes = [
            known[id(call)][1] if id(call) in known else run_reference(reference, call)
            for call in case.calls
        ]
        if case.check(outcomes).status != "passed":
            failing.add(case.id)
    return failing
