"""What a case is: plain-data calls, a check over their outcomes, and the reference.

A case is plain data (the calls to make, as JSON-ready arguments) plus a check that runs
in the grading process on the plain-data outcomes.  Expected values come from the
reference in ``solutions/``, computed here in the parent, never shown to the child.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_rlsys.grading.comparison import source
from pytest_rlsys.grading.outcomes import CallOutcome
from pytest_rlsys.grading.verdicts import PASSED, ProblemKind, Verdict, schema_path
from pytest_rlsys.messages import Msg
from pytest_rlsys.resources import FUNCTIONS, solution_path

__all__ = [
    "FUNCTIONS",
    "PARAMETERS",
    "PASSED",
    "RESULT_KEYS",
    "SECTIONS",
    "SECTION_OF",
    "Call",
    "Case",
    "Check",
    "ProblemKind",
    "Verdict",
    "load_reference",
    "plain",
    "run_reference",
    "schema_path",
]

SECTIONS = {"todo1": "pipeline_capacity", "todo2": "transfer_ledger", "todo3": "evaluate_topology"}
SECTION_OF = {func: section for section, func in SECTIONS.items()}
# Parameter names, in order: a mutated argument is named in the learner's message.
PARAMETERS = {
    "pipeline_capacity": ("stage_rates", "arrival_rate", "items_per_work_unit"),
    "transfer_ledger": ("edges", "placement"),
    "evaluate_topology": (
        "capacity_report",
        "memory_by_pool",
        "memory_limits",
        "transfer_report",
        "version_sync_ok",
        "recovery_ok",
        "max_exposed_s_per_s",
    ),
}
# The documented keys of each function's result (the template names every one).
RESULT_KEYS = {
    "pipeline_capacity": (
        "capacity",
        "effective_rates",
        "bottlenecks",
        "queue_margins",
        "unstable_stages",
        "queue_stable",
    ),
    "transfer_ledger": (
        "cross_pool_bytes_per_s",
        "fabric_exposed_seconds_per_s",
        "critical_exposed_seconds_per_s",
        "critical_fabrics",
        "rows",
    ),
    "evaluate_topology": (
        "decision",
        "reasons",
        "over_limit_pools",
        "unstable_stages",
        "overloaded_fabrics",
    ),
}


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        """The call as Python source (the inputs are small literals), for visible feedback:
        the learner can paste it, a NaN or an infinity included (``comparison.source``)."""
        parts = [source(a) for a in self.args] + [
            f"{k}={source(v)}" for k, v in self.kwargs.items()
        ]
        return f"{self.func}({', '.join(parts)})"


Check = Callable[[Sequence[CallOutcome]], Verdict]


@dataclass(frozen=True)
class Case:
    id: str
    section: str
    visibility: str  # visible | hidden
    category: Msg
    calls: tuple[Call, ...]
    check: Check
    weight: float = 1.0
    claim: str = ""  # visible cases: the chapter's assertion
    # Hidden cases: the key of the rule it grades, in its TODO module's RULES, whose
    # sentence the template's docstring states (tests/test_battery_rules.py checks it).
    rule: str = ""


def load_reference(path: Path | None = None) -> ModuleType:
    """Import the trusted reference implementation (never the learner's code)."""
    path = path or solution_path()
    spec = importlib.util.spec_from_file_location("_rlsys_reference", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the reference from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plain(value: Any) -> Any:
    """What a value looks like after crossing the boundary (JSON round trip), as a fresh
    copy.  The JSON types the battery's values are made of are copied directly: half the
    time of the round trip, which was a third of the battery's build."""
    kind = type(value)
    if kind is str or kind is float or kind is int or kind is bool or value is None:
        return value
    if kind is list or kind is tuple:
        return [plain(item) for item in value]
    if kind is dict and all(type(key) is str for key in value):
        return {key: plain(item) for key, item in value.items()}
    return json.loads(json.dumps(value, allow_nan=True))  # subclasses, non-str keys


def run_reference(ref: ModuleType, call: Call) -> CallOutcome:
    """Run one call through the reference in-process, shaped like a child outcome."""
    # plain() is a JSON round trip: already a fresh copy the reference may mutate.  What
    # it leaves of them is kept as they are (plain data still: the reference changes no
    # input), not copied again: that second round trip was a fifth of the battery's build.
    args, kwargs = plain([list(call.args), dict(call.kwargs)])
    try:
        value = getattr(ref, call.func)(*args, **kwargs)
    except ValueError as exc:
        return CallOutcome(
            "raised",
            args_after=[args, kwargs],
            exc_type="ValueError",
            value_error=True,
            message=str(exc),
        )
    return CallOutcome("returned", value=plain(value), args_after=[args, kwargs])
