"""The edges derived from the template's statements (issue 42): each class of mutant the
derivation aims at is killed, in its own TODO only, and the derivation is what the docs say.

Mutants are run in-process through the battery's own checks (``self_check`` with the
mutant as the "reference"): they are our own code, and the plain loop stays fast.  One
class per row of the issue: -0.0 read as negative, a tolerance band off by a factor, a
float() conversion of ints past 2**53, one order of a pairwise rule, lazy validation of
two negatives, fractional items refused, whitespace stripped from names, an epsilon
guard on an exact comparison, empty inputs refused.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_rlsys.grading.battery import BATTERY_VERSION, RULES, build_battery, self_check
from pytest_rlsys.grading.battery import edges as edges_module
from pytest_rlsys.grading.battery.checks import TEMPLATE_NAMES
from pytest_rlsys.grading.battery.edges import band_gaps, exact_edges
from pytest_rlsys.grading.battery.model import Call, Case, load_reference, run_reference
from pytest_rlsys.grading.battery.statements import STATEMENTS
from pytest_rlsys.grading.grader import grade_file
from pytest_rlsys.grading.outcomes import CallOutcome
from pytest_rlsys.grading.scoring import CaseResult
from pytest_rlsys.outputs.wording import category, message
from pytest_rlsys.resources import solution_path

REFERENCE = solution_path().read_text(encoding="utf-8")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "battery-rules.md"

# (class, name, section, old, new): one learner-style slip each, on the reference's text.
MUTANTS: list[tuple[str, str, str, str, str]] = [
    # -- -0.0 is zero, not negative ("negative" is Python's < 0)
    (
        "minus_zero",
        "arrival_sign_bit",
        "todo1",
        '    arrival = _non_negative(arrival_rate, "arrival_rate")\n',
        '    arrival = _non_negative(arrival_rate, "arrival_rate")\n'
        "    if math.copysign(1.0, arrival) < 0:\n"
        '        raise ValueError("negative arrival")\n',
    ),
    (
        "minus_zero",
        "overlap_sign_bit",
        "todo2",
        "if not 0.0 <= overlap <= 1.0:",
        "if not 0.0 <= overlap <= 1.0 or math.copysign(1.0, overlap) < 0:",
    ),
    (
        "minus_zero",
        "bytes_sign_bit",
        "todo2",
        '        size = _non_negative(edge["bytes_per_item"], f"{where} bytes_per_item")\n',
        '        size = _non_negative(edge["bytes_per_item"], f"{where} bytes_per_item")\n'
        '        if str(size).startswith("-"):\n'
        '            raise ValueError("negative size")\n',
    ),
    (
        "minus_zero",
        "limit_sign_bit",
        "todo3",
        '    _ledger_values(memory_limits.values(), "pool memory limit")\n',
        '    _ledger_values(memory_limits.values(), "pool memory limit")\n'
        "    if any(math.copysign(1.0, v) < 0 for v in memory_limits.values()):\n"
        '        raise ValueError("negative limit")\n',
    ),
    # -- a tolerance band off by a factor (inside the band, not at a listed point)
    (
        "band",
        "tie_rel_2e_9",
        "todo1",
        "if math.isclose(rate, capacity, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)",
        "if math.isclose(rate, capacity, rel_tol=2e-9, abs_tol=_ABS_TOL)",
    ),
    (
        "band",
        "tie_rel_5e_10",
        "todo1",
        "if math.isclose(rate, capacity, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)",
        "if math.isclose(rate, capacity, rel_tol=5e-10, abs_tol=_ABS_TOL)",
    ),
    (
        "band",
        "tie_abs_2e_12",
        "todo1",
        "if math.isclose(rate, capacity, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)",
        "if math.isclose(rate, capacity, rel_tol=_REL_TOL, abs_tol=2e-12)",
    ),
    (
        "band",
        "bandwidth_rel_1_6e_9",
        "todo2",
        "if not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):",
        "if not math.isclose(known, bandwidth, rel_tol=1.6e-9, abs_tol=_ABS_TOL):",
    ),
    (
        "band",
        "bandwidth_abs_1_6e_12",
        "todo2",
        "if not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):",
        "if not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=1.6e-12):",
    ),
    # -- an epsilon guard on an exact comparison
    (
        "epsilon",
        "margin_below_minus_tiny",
        "todo1",
        "if margin < 0)",
        "if margin < -5e-324)",
    ),
    (
        "epsilon",
        "margin_below_minus_1e_300",
        "todo1",
        "if margin < 0)",
        "if margin < -1e-300)",
    ),
    (
        "epsilon",
        "memory_over_by_a_relative_epsilon",
        "todo3",
        "or used > memory_limits[pool]",
        "or used > memory_limits[pool] * (1 + sys.float_info.epsilon)",
    ),
    (
        "epsilon",
        "critical_within_an_ulp",
        "todo2",
        "if value == critical)",
        "if value >= math.nextafter(critical, 0))",
    ),
    (
        "epsilon",
        "default_threshold_an_ulp_high",
        "todo3",
        "max_exposed_s_per_s: float = 0.1,",
        "max_exposed_s_per_s: float = 0.10000000000000002,",
    ),
    # -- ints past 2**53 converted with float() before an exact comparison
    (
        "big_int",
        "memory_as_float",
        "todo3",
        "or used > memory_limits[pool]",
        "or float(used) > float(memory_limits[pool])",
    ),
    (
        "big_int",
        "exposure_as_float",
        "todo3",
        "if value > budget)",
        "if float(value) > budget)",
    ),
    # -- one order of a pairwise rule
    (
        "one_order",
        "bandwidth_only_when_later_is_larger",
        "todo2",
        "if not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):",
        "if bandwidth > known and not math.isclose(\n"
        "                known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL\n"
        "            ):",
    ),
    (
        "one_order",
        "bandwidth_relative_to_later_only",
        "todo2",
        "if not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):",
        "if abs(known - bandwidth) > _REL_TOL * bandwidth + _ABS_TOL and bandwidth > known:",
    ),
    (
        "one_order",
        "bandwidth_skipped_without_traffic",
        "todo2",
        "if not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):",
        "if traffic and not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):",
    ),
    (
        "one_order",
        "idle_edge_sets_no_bandwidth",
        "todo2",
        "known = bandwidth_of.setdefault(fabric, bandwidth)",
        "known = bandwidth_of.setdefault(fabric, bandwidth) if traffic else bandwidth",
    ),
    # -- lazy validation: two negatives whose ratio or product is positive
    (
        "two_negatives",
        "effective_rate_validated",
        "todo1",
        '    rates = {name: _positive(rate, f"rate of stage {name!r}") for name, rate in '
        "stage_rates.items()}\n",
        '    rates = {name: _finite(rate, f"rate of stage {name!r}") for name, rate in '
        "stage_rates.items()}\n"
        "    for name in rates:\n"
        "        if rates[name] / float(items_per_work_unit[name]) <= 0:\n"
        '            raise ValueError("not positive")\n',
    ),
    (
        "two_negatives",
        "traffic_validated",
        "todo2",
        '        size = _non_negative(edge["bytes_per_item"], f"{where} bytes_per_item")\n'
        '        items = _positive(edge["items_per_work_unit"], f"{where} items_per_work_unit")\n'
        '        frequency = _non_negative(edge["work_units_per_second"], '
        'f"{where} work_units_per_second")\n',
        '        size = _finite(edge["bytes_per_item"], "size")\n'
        '        items = _positive(edge["items_per_work_unit"], "items")\n'
        '        frequency = _finite(edge["work_units_per_second"], "frequency")\n'
        "        if size * frequency < 0:\n"
        '            raise ValueError("negative traffic")\n',
    ),
    # -- fractional items per work unit refused
    (
        "fraction",
        "items_must_be_whole",
        "todo2",
        '        items = _positive(edge["items_per_work_unit"], f"{where} items_per_work_unit")\n',
        '        items = _positive(edge["items_per_work_unit"], f"{where} items_per_work_unit")\n'
        "        if items != int(items):\n"
        '            raise ValueError("items must be whole")\n',
    ),
    # -- whitespace stripped from names the template says are used as given
    (
        "names",
        "stage_names_stripped",
        "todo1",
        "    if not stage_rates:\n",
        "    stage_rates = {k.strip(): v for k, v in stage_rates.items()}\n"
        "    items_per_work_unit = {k.strip(): v for k, v in items_per_work_unit.items()}\n"
        "    if not stage_rates:\n",
    ),
    (
        "names",
        "pools_stripped",
        "todo2",
        "cross_pool = placement[source] != placement[target]",
        "cross_pool = placement[source].strip() != placement[target].strip()",
    ),
    (
        "names",
        "limit_names_stripped",
        "todo3",
        "if pool not in memory_limits or used > memory_limits[pool]",
        "if pool.strip() not in memory_limits or used > memory_limits[pool.strip()]",
    ),
    # -- empty and one-element inputs, zero traffic
    (
        "empty",
        "no_edges_refused",
        "todo2",
        "    rows: list[dict[str, Any]] = []\n",
        "    if not edges:\n"
        '        raise ValueError("no edges")\n'
        "    rows: list[dict[str, Any]] = []\n",
    ),
    (
        "empty",
        "idle_fabric_has_no_entry",
        "todo2",
        "            exposure[fabric] = exposure.get(fabric, 0.0) + exposed\n",
        "            if traffic:\n"
        "                exposure[fabric] = exposure.get(fabric, 0.0) + exposed\n",
    ),
    (
        "empty",
        "no_pool_refused",
        "todo3",
        '    _ledger_values(memory_by_pool.values(), "pool memory")\n',
        '    _ledger_values(memory_by_pool.values(), "pool memory")\n'
        "    if not memory_by_pool:\n"
        '        raise ValueError("no pool")\n',
    ),
]


def _module(source: str, name: str) -> ModuleType:
    """``source`` imported as a module, ``sys`` available to it as learners import it."""
    spec = importlib.util.spec_from_loader(f"_mutant_{name}", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__["sys"] = sys
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # our own mutants
    return module


def _outcome(module: ModuleType, call: Call) -> CallOutcome:
    """``run_reference``'s outcome, any exception recorded (a mutant may raise others)."""
    try:
        return run_reference(module, call)
    except Exception as exc:
        return CallOutcome("raised", exc_type=type(exc).__name__, message=str(exc))


def _lost(cases: list[Case], module: ModuleType) -> dict[str, float]:
    """The weight of the cases ``module`` fails, per section."""
    lost: dict[str, float] = {}
    for case in cases:
        if case.check([_outcome(module, call) for call in case.calls]).status != "passed":
            lost[case.section] = lost.get(case.section, 0.0) + case.weight
    return lost


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return build_battery(5, load_reference())


@pytest.mark.parametrize(
    ("kind", "name", "section", "old", "new"), MUTANTS, ids=[m[1] for m in MUTANTS]
)
def test_each_edge_mutant_loses_points_in_its_own_todo_only(
    cases: list[Case], kind: str, name: str, section: str, old: str, new: str
) -> None:
    assert REFERENCE.count(old) == 1, f"mutant {name} no longer applies to the reference"
    lost = _lost(cases, _module(REFERENCE.replace(old, new), name))
    assert set(lost) == {section}, (kind, name, lost)


def test_every_mutant_class_has_several_mutants() -> None:
    kinds = [m[0] for m in MUTANTS]
    assert all(kinds.count(k) >= 1 for k in set(kinds)) and len(set(kinds)) >= 8


def test_the_reference_passes_every_derived_edge(cases: list[Case]) -> None:
    derived = [c for c in cases if c.id.rsplit(".", 1)[-1].startswith("derived_")]
    assert len(derived) > 150
    assert not self_check(derived, load_reference())


def test_the_derivation_is_the_stated_one() -> None:
    """Exact edges: the constant, one ulp either side, 0.5x/1.5x/2x; at 0: -0.0 and the
    smallest subnormal; tolerances: 0.5x inside, 1.5x and 2x outside, never 1x."""
    points = dict(exact_edges(3.0))
    assert points["ulp_below"] < 3.0 < points["ulp_above"]
    assert math.nextafter(points["ulp_below"], math.inf) == 3.0
    assert [points[k] for k in ("half", "one_and_a_half", "double")] == [1.5, 4.5, 6.0]
    zero = dict(exact_edges(0.0))
    assert math.copysign(1.0, zero["minus_zero"]) < 0 and zero["ulp_above_0"] == 5e-324
    for _label, base, other, k in band_gaps():
        close = math.isclose(base, other, rel_tol=1e-9, abs_tol=1e-12)
        assert close == (k < 1) and k != 1


def test_every_statement_grades_a_stated_rule_and_is_documented() -> None:
    doc = DOCS.read_text(encoding="utf-8")
    for statement in STATEMENTS:
        assert statement.rule in RULES[statement.section], statement
        assert f"`{statement.derive.__name__}`" in doc, statement.derive.__name__


def test_the_derived_edges_changed_the_battery_version() -> None:
    assert BATTERY_VERSION == "4" and edges_module.EDGE_WEIGHT > 0


@pytest.mark.parametrize("seed", [0, 1, 12])
def test_seed_picks_names_only(seed: int) -> None:
    """The same derived values at every seed: whether a mutant shows never depends on it."""

    def values(seed: int) -> list[str]:
        return sorted(
            repr(sorted(str(v) for v in _numbers(c.calls[-1].args)))
            for c in build_battery(seed, load_reference())
            if c.id.rsplit(".", 1)[-1].startswith("derived_")
        )

    assert values(seed) == values(seed + 100)


def _numbers(value: object) -> list[object]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list | tuple):
        return [n for v in value for n in _numbers(v)]
    return [value] if type(value) in (int, float) else []


# -- feedback: names chosen by the template are said, the rule is named ----------------


def _hidden_failures(tmp_path: Path, source: str) -> list[CaseResult]:
    path = tmp_path / "submission.py"
    path.write_text(source, encoding="utf-8")
    report = grade_file(path, seed=3)
    return [c for c in report.cases if c.visibility == "hidden" and c.status != "passed"]


def test_a_misspelled_key_is_named_in_hidden_feedback(tmp_path: Path) -> None:
    source = REFERENCE.replace('"cross_pool": cross_pool,', '"crosspool": cross_pool,').replace(
        '"queue_stable": not unstable,', '"queue_stable": not unstable, "bottleneck": 1,'
    )
    said = {message(c) for c in _hidden_failures(tmp_path, source)}
    assert "missing key 'cross_pool' at $.rows" in said
    assert "unexpected key at $ (a misplaced or misspelled 'bottlenecks'?)" in said
    assert "missing key at $.rows" not in said and "unexpected key at $" not in said


def test_a_template_key_added_where_it_does_not_belong_is_not_called_a_misspelling(
    tmp_path: Path,
) -> None:
    # A row given the overlap_fraction its edge lacks (setdefault on the input edge): the
    # key is the template's own name, added where the reference has none, not misspelled.
    source = REFERENCE.replace(
        "    rows: list[dict[str, Any]] = []\n",
        "    edges = [dict(e, overlap_fraction=e.get('overlap_fraction', 0.0)) for e in edges]\n"
        "    rows: list[dict[str, Any]] = []\n",
        1,
    )
    said = {message(c) for c in _hidden_failures(tmp_path, source)}
    assert "unexpected key at $.rows (a misplaced or misspelled 'overlap_fraction'?)" in said
    assert not any("misspelling of" in s for s in said)


def test_a_key_the_hidden_input_chose_is_never_named(tmp_path: Path) -> None:
    # The result echoes a stage name (a hidden input) as a key: the key stays unnamed.
    source = REFERENCE.replace(
        '"queue_stable": not unstable,', '"queue_stable": not unstable, **stage_rates,'
    )
    failed = [c for c in _hidden_failures(tmp_path, source) if c.kind == "unexpected_key"]
    assert failed and all(not c.names and message(c) == "unexpected key at $" for c in failed)


def test_a_key_built_from_a_hidden_input_is_never_shown(tmp_path: Path) -> None:
    # A key the submission made from its input: only template names are ever said.
    source = REFERENCE.replace(
        '"queue_stable": not unstable,',
        '"queue_stable": not unstable, "bottleneck" + repr(arrival_rate): 1,',
    )
    failed = [c for c in _hidden_failures(tmp_path, source) if c.kind == "unexpected_key"]
    assert failed
    assert all(set(c.names) <= TEMPLATE_NAMES for c in failed)
    assert not any(repr(c.names).count("bottleneck") > 1 for c in failed)


def test_a_hidden_failure_names_the_rule_of_the_key_it_failed_at(tmp_path: Path) -> None:
    source = REFERENCE.replace(
        "margins = {name: rate - arrival", "margins = {name: (rate - arrival) * 2"
    )
    failed = _hidden_failures(tmp_path, source)
    assert failed
    margins = RULES["todo1"]["margins"]
    for case in failed:
        assert case.rule == margins, (case.id, case.rule)
        assert margins.en in category(case, "en") and margins.zh in category(case, "zh")


def test_two_slips_in_one_function_are_named_at_once(tmp_path: Path) -> None:
    source = REFERENCE.replace('"capacity": capacity,', '"capacity": capacity + 1,').replace(
        '"queue_stable": not unstable,', '"queue_stable": bool(unstable),'
    )
    failed = _hidden_failures(tmp_path, source)
    said = {message(c) for c in failed}
    assert "wrong value at $.capacity; also at $.queue_stable" in said, said
    zh = {message(c, "zh") for c in failed}
    assert "$.capacity 处的值错误；另外 $.queue_stable 处也不同" in zh, zh
