"""The scored battery: the chapter's assertions (visible) and generated cases (hidden).

A case is plain data (the calls to make, as JSON-ready arguments) plus a check that runs
in the grading process on the plain-data outcomes.  Expected values come from the
reference in ``solutions/``, computed here in the parent, never shown to the child.

Fairness: generated numbers are exact binary fractions, so every sum is exact whatever
the order, and values that are not tied differ by far more than any tolerance.  No case
probes where the chapter's reference and a stricter reading differ (exact vs tolerant
float ties, numeric strings, validation of same-pool edges).
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_rlsys.grading.comparison import NONPLAIN_MARK, mismatch, numbers_match, show, type_name
from pytest_rlsys.grading.isolation import CallOutcome
from pytest_rlsys.messages import Msg, outcome_problem
from pytest_rlsys.resources import solution_path

FUNCTIONS = ("pipeline_capacity", "transfer_ledger", "evaluate_topology")
SECTIONS = {"todo1": "pipeline_capacity", "todo2": "transfer_ledger", "todo3": "evaluate_topology"}


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        parts = [show_full(a) for a in self.args]
        parts += [f"{k}={show_full(v)}" for k, v in self.kwargs.items()]
        return f"{self.func}({', '.join(parts)})"


def show_full(value: Any) -> str:
    """Python-literal rendering of a (small) input, for visible feedback."""
    return repr(value)


@dataclass(frozen=True)
class Verdict:
    status: str  # passed | failed | error | timeout
    problem: Msg | None = None
    expected: str | None = None
    got: str | None = None


PASSED = Verdict("passed")
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


# -- reference ----------------------------------------------------------------------------


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
    """What a value looks like after crossing the boundary (JSON round trip)."""
    return json.loads(json.dumps(value, allow_nan=True))


def run_reference(ref: ModuleType, call: Call) -> CallOutcome:
    """Run one call through the reference in-process, shaped like a child outcome."""
    args, kwargs = copy.deepcopy(plain(list(call.args))), copy.deepcopy(plain(dict(call.kwargs)))
    try:
        value = getattr(ref, call.func)(*args, **kwargs)
    except ValueError as exc:
        return CallOutcome("raised", args_after=plain([args, kwargs]), exc_type="ValueError",
                           value_error=True, message=str(exc))
    return CallOutcome("returned", value=plain(value), args_after=plain([args, kwargs]))


# -- checks -------------------------------------------------------------------------------

_SECTION_OF = {func: section for section, func in SECTIONS.items()}


def _first_problem(outcomes: Sequence[CallOutcome], calls: Sequence[Call]) -> Verdict | None:
    for outcome, call in zip(outcomes, calls, strict=True):
        if outcome.kind != "returned":
            status, problem = outcome_problem(outcome, _SECTION_OF[call.func])
            return Verdict(status, problem, got=outcome.exc_type or outcome.kind)
    return None


def _value_at(value: Any, key: str | None) -> tuple[bool, Any]:
    if key is None:
        return True, value
    if type(value) is not dict or key not in value:
        return False, None
    return True, value[key]


def expect_keys(calls: tuple[Call, ...], expected: Mapping[str, Any]) -> Check:
    """The first call returns a dict whose listed keys equal the expected plain values."""

    def check(outcomes: Sequence[CallOutcome]) -> Verdict:
        early = _first_problem(outcomes[:1], calls[:1])
        if early:
            return early
        got = outcomes[0].value
        if type(got) is not dict or NONPLAIN_MARK in got:
            kind = type_name(got)
            return Verdict("failed", Msg(f"the result is a {kind}, not a plain dict",
                                         f"返回值是 {kind}，不是普通 dict"), "a dict", show(got))
        for key, want in expected.items():
            present, have = _value_at(got, key)
            if not present:
                return Verdict("failed", Msg(f"the result has no key {key!r}",
                                             f"返回值缺少键 {key!r}"), show(want), "(missing)")
            problem = mismatch(want, have, f"$.{key}")
            if problem:
                return Verdict("failed", Msg(problem, problem), show(want), show(have))
        return PASSED

    return check


def expect_value_error(calls: tuple[Call, ...]) -> Check:
    def check(outcomes: Sequence[CallOutcome]) -> Verdict:
        outcome = outcomes[0]
        if outcome.kind == "raised" and outcome.value_error:
            return PASSED
        if outcome.kind == "returned":
            return Verdict("failed", Msg("returned a result instead of raising ValueError",
                                         "应当抛出 ValueError，却返回了结果"),
                           "ValueError", show(outcome.value))
        if outcome.kind == "raised" and outcome.is_exception and not outcome.not_implemented:
            return Verdict("failed", Msg(f"raised {outcome.exc_type} instead of ValueError",
                                         f"抛出了 {outcome.exc_type}，应当是 ValueError"),
                           "ValueError", outcome.exc_type)
        early = _first_problem(outcomes, calls)
        assert early is not None
        return early

    return check


def expect_unchanged_inputs(calls: tuple[Call, ...]) -> Check:
    def check(outcomes: Sequence[CallOutcome]) -> Verdict:
        early = _first_problem(outcomes, calls)
        if early:
            return early
        sent = plain([list(calls[0].args), dict(calls[0].kwargs)])
        problem = mismatch(sent, outcomes[0].args_after, "$.args")
        if problem:
            return Verdict("failed", Msg("an input argument was modified in place",
                                         "输入参数被原地修改"), None, None)
        return PASSED

    return check


def expect_relation(
    calls: tuple[Call, ...],
    relation: Callable[[list[Any]], str | None],
) -> Check:
    """Every call returns; ``relation`` over the returned values finds no problem."""

    def check(outcomes: Sequence[CallOutcome]) -> Verdict:
        early = _first_problem(outcomes, calls)
        if early:
            return early
        values = [o.value for o in outcomes]
        try:
            problem = relation(values)
        except (KeyError, TypeError, IndexError, AttributeError, ValueError):
            problem = "the results do not have the documented keys"
        if problem:
            return Verdict("failed", Msg(problem, problem))
        return PASSED

    return check


def all_of(*checks: Check) -> Check:
    """The first failing verdict of ``checks``, in order; passed when none fails."""

    def check(outcomes: Sequence[CallOutcome]) -> Verdict:
        for one in checks:
            verdict = one(outcomes)
            if verdict.status != "passed":
                return verdict
        return PASSED

    return check


def _same_keys(keys: Sequence[str]) -> Callable[[list[Any]], str | None]:
    def relation(values: list[Any]) -> str | None:
        first = values[0]
        for other in values[1:]:
            for key in keys:
                problem = mismatch(first[key], other[key], f"$.{key}")
                if problem:
                    return f"results differ between equivalent inputs at {problem.split(':')[0]}"
        return None

    return relation


# -- the battery ----------------------------------------------------------------------------


@dataclass
class BatteryBuilder:
    ref: ModuleType
    seed: int
    cases: list[Case] = field(default_factory=list)

    def add(self, case_id: str, visibility: str, category: Msg, calls: Sequence[Call],
            check_factory: Callable[[tuple[Call, ...]], Check], weight: float = 1.0,
            claim: str = "") -> None:
        section = _SECTION_OF[calls[0].func]
        frozen = tuple(calls)
        self.cases.append(Case(f"{section}.{visibility}.{case_id}", section, visibility,
                               category, frozen, check_factory(frozen), weight, claim))

    def expected(self, call: Call, keys: Sequence[str]) -> dict[str, Any]:
        outcome = run_reference(self.ref, call)
        if outcome.kind != "returned":
            raise AssertionError(f"reference raised on a generated case: {call.render()}")
        return {k: outcome.value[k] for k in keys}

    def diff(self, case_id: str, category: Msg, call: Call, keys: Sequence[str],
             weight: float = 1.0) -> None:
        want = self.expected(call, keys)
        self.add(case_id, "hidden", category, [call], lambda c: expect_keys(c, want), weight)

    def anchored(self, case_id: str, category: Msg, calls: Sequence[Call],
                 check_factory: Callable[[tuple[Call, ...]], Check],
                 keys: Sequence[str]) -> None:
        """A property case that also needs a correct first result, so that a constant
        answer cannot satisfy a relation between several calls."""
        want = self.expected(calls[0], keys)
        self.add(case_id, "hidden", category, calls,
                 lambda c: all_of(expect_keys(c, want), check_factory(c)))

    def error(self, case_id: str, category: Msg, call: Call, weight: float = 0.5) -> None:
        self.add(case_id, "hidden", category, [call], expect_value_error, weight)


TODO1_KEYS = ("capacity", "effective_rates", "bottlenecks", "queue_margins",
              "unstable_stages", "queue_stable")
TODO2_KEYS = ("cross_pool_bytes_per_s", "fabric_exposed_seconds_per_s",
              "critical_exposed_seconds_per_s", "critical_fabrics")
TODO3_KEYS = ("decision", "reasons", "over_limit_pools", "unstable_stages",
              "overloaded_fabrics")


def _visible(b: BatteryBuilder) -> None:
    """Every assertion of the chapter's three tests, one case each."""
    cap = Call("pipeline_capacity", ({"rollout": 240, "reward": 160, "learner": 80},),
               {"arrival_rate": 70,
                "items_per_work_unit": {"rollout": 3, "reward": 2, "learner": 1}})
    unstable = Call("pipeline_capacity", ({"rollout": 120, "reward": 80}, 90,
                                          {"rollout": 1, "reward": 1}))
    v = "visible"

    def keys(expected: dict[str, Any]) -> Callable[[tuple[Call, ...]], Check]:
        return lambda c: expect_keys(c, expected)

    b.add("effective_rates", v, Msg("multipliers normalise rates", "倍率归一"), [cap],
          keys({"effective_rates": {"rollout": 80.0, "reward": 80.0, "learner": 80.0}}),
          claim="result['effective_rates'] == {'rollout': 80.0, 'reward': 80.0, 'learner': 80.0}")
    b.add("tied_bottlenecks", v, Msg("ties in bottlenecks", "并列瓶颈"), [cap],
          keys({"bottlenecks": ["learner", "reward", "rollout"]}),
          claim="result['bottlenecks'] == ['learner', 'reward', 'rollout']")
    b.add("stable_queue", v, Msg("stable pipeline", "稳定流水线"), [cap],
          keys({"unstable_stages": [], "queue_stable": True}),
          claim="result['unstable_stages'] == [] and result['queue_stable'] is True")
    b.add("unstable_stage", v, Msg("backlogged stage", "积压阶段"), [unstable],
          keys({"unstable_stages": ["reward"]}),
          claim="unstable['unstable_stages'] == ['reward']")
    b.add("mismatched_stages", v, Msg("mismatched stage sets accepted", "阶段集合不一致未报错"),
          [Call("pipeline_capacity", ({"rollout": 120}, 20, {"reward": 1}))],
          expect_value_error, claim="raises ValueError: 阶段集合不一致时应失败")
    b.add("nan_rate", v, Msg("NaN stage rate accepted", "NaN 阶段速率未报错"),
          [Call("pipeline_capacity", ({"rollout": float("nan")}, 20, {"rollout": 1}))],
          expect_value_error, claim="raises ValueError: 非有限阶段速率应失败")

    e0 = {"source": "rollout", "target": "reward", "bytes_per_item": 100,
          "items_per_work_unit": 2, "work_units_per_second": 5, "bandwidth_bytes_per_s": 1000,
          "overlap_fraction": 0.5, "fabric_id": "pcie-0"}
    e1 = {"source": "learner", "target": "rollout", "bytes_per_item": 1000,
          "items_per_work_unit": 1, "work_units_per_second": 1, "bandwidth_bytes_per_s": 2000,
          "overlap_fraction": 0.0, "fabric_id": "pcie-1"}
    e2 = {"source": "reward", "target": "learner", "bytes_per_item": 500,
          "items_per_work_unit": 1, "work_units_per_second": 1, "bandwidth_bytes_per_s": 2000,
          "overlap_fraction": 0.0, "fabric_id": "pcie-1"}
    e3 = {"source": "verifier", "target": "learner", "bytes_per_item": 1000,
          "items_per_work_unit": 1, "work_units_per_second": 1, "bandwidth_bytes_per_s": 2000,
          "overlap_fraction": 0.5, "fabric_id": "pcie-2"}
    placement = {"rollout": "A", "reward": "A", "learner": "B", "verifier": "C"}
    ledger = Call("transfer_ledger", ([e0, e1, e2, e3], placement))
    b.add("cross_pool_bytes", v, Msg("same-pool edges excluded", "同池边排除"), [ledger],
          keys({"cross_pool_bytes_per_s": 2500}),
          claim="report['cross_pool_bytes_per_s'] == 2500")
    b.add("fabric_sums", v, Msg("shared fabric sums exposure", "共享域累加"), [ledger],
          keys({"fabric_exposed_seconds_per_s": {"pcie-1": 0.75, "pcie-2": 0.25}}),
          claim="report['fabric_exposed_seconds_per_s'] == {'pcie-1': 0.75, 'pcie-2': 0.25}")
    b.add("critical_exposure", v, Msg("critical fabric is the maximum", "关键互连取最大值"),
          [ledger], keys({"critical_exposed_seconds_per_s": 0.75}),
          claim="report['critical_exposed_seconds_per_s'] == 0.75")
    b.add("critical_fabric", v, Msg("critical fabric", "关键互连域"), [ledger],
          keys({"critical_fabrics": ["pcie-1"]}), claim="report['critical_fabrics'] == ['pcie-1']")
    b.add("overlap_out_of_range", v, Msg("overlap above 1 accepted", "重叠比例越界未报错"),
          [Call("transfer_ledger", ([dict(e1, overlap_fraction=1.2)], placement))],
          expect_value_error, claim="raises ValueError: 非法重叠比例应失败")
    b.add("fabric_two_bandwidths", v,
          Msg("one fabric with two bandwidths accepted", "同一互连域两种带宽未报错"),
          [Call("transfer_ledger", ([e1, dict(e2, bandwidth_bytes_per_s=4000)], placement))],
          expect_value_error, claim="raises ValueError: 同一互连域使用不同带宽口径时应失败")
    b.add("tied_fabrics", v, Msg("ties among fabrics", "并列关键互连域"),
          [Call("transfer_ledger", ([e1, dict(e3, overlap_fraction=0.0)], placement))],
          keys({"critical_fabrics": ["pcie-1", "pcie-2"]}),
          claim="tied['critical_fabrics'] == ['pcie-1', 'pcie-2']")

    mult = {"rollout": 1, "reward": 1}
    stable_rep = plain(b.ref.pipeline_capacity({"rollout": 120, "reward": 80}, 70, mult))
    unstable_rep = plain(b.ref.pipeline_capacity({"rollout": 120, "reward": 80}, 90, mult))
    low = {"fabric_exposed_seconds_per_s": {"pcie-0": 0.05},
           "critical_exposed_seconds_per_s": 0.05}
    high = {"fabric_exposed_seconds_per_s": {"pcie-0": 0.20},
            "critical_exposed_seconds_per_s": 0.20}
    accepted = Call("evaluate_topology", (stable_rep, {"A": 30}, {"A": 40}, low, True, True))
    tuned = Call("evaluate_topology", (unstable_rep, {"A": 30}, {"A": 40}, high, True, True))
    rejected = Call("evaluate_topology", (stable_rep, {"A": 50}, {"A": 40}, high, False, False))
    b.add("accept", v, Msg("accept with no reasons", "无原因时接受"), [accepted],
          keys({"decision": "accept", "reasons": []}),
          claim="accepted['decision'] == 'accept' and accepted['reasons'] == []")
    b.add("tune_decision", v, Msg("tuning pressure gives tune", "调优压力给出 tune"), [tuned],
          keys({"decision": "tune"}), claim="tuned['decision'] == 'tune'")
    b.add("tune_reasons", v, Msg("every tuning reason kept", "保留全部调优原因"), [tuned],
          keys({"reasons": ["unstable_queue", "exposed_transfer"]}),
          claim="tuned['reasons'] == ['unstable_queue', 'exposed_transfer']")
    b.add("tune_evidence", v, Msg("stages and fabrics reported", "报告积压阶段与过载互连"),
          [tuned], keys({"unstable_stages": ["reward"], "overloaded_fabrics": ["pcie-0"]}),
          claim="tuned['unstable_stages'] == ['reward'] and "
                "tuned['overloaded_fabrics'] == ['pcie-0']")
    b.add("reject_decision", v, Msg("hard failure gives reject", "硬失败给出 reject"),
          [rejected], keys({"decision": "reject"}), claim="rejected['decision'] == 'reject'")
    b.add("reject_reasons", v, Msg("every hard failure kept, in order", "按序保留全部硬失败"),
          [rejected], keys({"reasons": ["memory_limit", "version_sync", "recovery_not_ready"]}),
          claim="rejected['reasons'] == ['memory_limit', 'version_sync', 'recovery_not_ready']")
    b.add("nan_memory", v, Msg("NaN pool memory accepted", "NaN 显存账本未报错"),
          [Call("evaluate_topology", (stable_rep, {"A": float("nan")}, {"A": 40}, low,
                                      True, True))],
          expect_value_error, claim="raises ValueError: 非有限显存账本应失败")


# -- generators (exact binary fractions only) ---------------------------------------------

STAGES = ["rollout", "reward", "reference", "learner", "verifier", "critic", "judge"]


def _num(rng: random.Random, value: float) -> int | float:
    """Integral values cross as int or float at random: both must be accepted."""
    if float(value).is_integer() and rng.random() < 0.5:
        return int(value)
    return float(value)


def _shuffled(rng: random.Random, mapping: Mapping[str, Any]) -> dict[str, Any]:
    items = list(mapping.items())
    rng.shuffle(items)
    return dict(items)


def gen_pipeline(rng: random.Random, stages: int | None = None,
                 tie: bool = False) -> tuple[dict[str, Any], float, dict[str, Any]]:
    names = rng.sample(STAGES, stages or rng.randint(1, 6))
    levels = [20, 30, 40, 60, 80, 120, 160]
    effective = {n: rng.choice(levels) for n in names}
    if tie and len(names) > 1:
        low = min(effective.values())
        for n in rng.sample(names, rng.randint(2, len(names))):
            effective[n] = low
    multipliers = {n: rng.choice([1, 2, 4, 8, 0.5, 0.25]) for n in names}
    rates = {n: _num(rng, effective[n] * multipliers[n]) for n in names}
    cap = min(effective.values())
    arrival = rng.choice([0, cap, cap - 5, cap + 10, cap / 2, max(effective.values()) + 1])
    return (_shuffled(rng, rates), _num(rng, arrival),
            _shuffled(rng, {n: _num(rng, m) for n, m in multipliers.items()}))


def gen_edges(rng: random.Random, count: int | None = None, tie: bool = False,
              ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    edges: list[dict[str, Any]]
    components = rng.sample(STAGES, rng.randint(3, 6))
    pools = ["A", "B", "C"][: rng.randint(2, 3)]
    placement = {c: rng.choice(pools) for c in components}
    placement[components[0]], placement[components[1]] = "A", "B"  # at least one cross pair
    fabrics = {f"fabric-{i}": rng.choice([1024, 2048, 4096]) for i in range(rng.randint(1, 3))}
    edges = []
    for _ in range(count if count is not None else rng.randint(1, 7)):
        source, target = rng.sample(components, 2)
        fabric = rng.choice(sorted(fabrics))
        edge = {
            "source": source, "target": target,
            "bytes_per_item": rng.choice([64, 100, 250, 500, 1000, 4096]),
            "items_per_work_unit": _num(rng, rng.choice([1, 2, 3, 4])),
            "work_units_per_second": _num(rng, rng.choice([0.5, 1, 2, 5])),
            "bandwidth_bytes_per_s": _num(rng, fabrics[fabric]),
            "overlap_fraction": _num(rng, rng.choice([0, 0.25, 0.5, 0.75])),
            "fabric_id": fabric,
        }
        edges.append(edge)
    edges.insert(0, dict(edges[0], source=components[0], target=components[1]))
    if tie:
        # A second fabric carrying exactly the same cross-pool edges ties with the first.
        # Its name sorts first but it is declared last, so insertion order is not sorted.
        first = edges[0]["fabric_id"]
        twin = [dict(e, fabric_id="aux-fabric") for e in edges
                if e["fabric_id"] == first and placement[e["source"]] != placement[e["target"]]]
        edges = [e for e in edges if e["fabric_id"] == first] + twin
    return edges, placement


def _cross(edge: Mapping[str, Any], placement: Mapping[str, str]) -> bool:
    return placement[edge["source"]] != placement[edge["target"]]


BAD_VALUES: dict[str, tuple[float, Msg]] = {
    "nan": (float("nan"), Msg("NaN", "NaN ")),
    "inf": (float("inf"), Msg("infinite", "无穷")),
    "zero": (0, Msg("zero", "零")),
    "negative": (-1.5, Msg("negative", "负")),
    "above_1": (1.5, Msg("above-1", "大于 1 的")),
}


def _todo1(b: BatteryBuilder, rng: random.Random) -> None:
    for i in range(8):
        rates, arrival, mult = gen_pipeline(rng, tie=i % 3 == 0)
        b.diff(f"differential_{i}", Msg("result differs from the reference on a random pipeline",
                                        "随机流水线上结果与参考实现不同"),
               Call("pipeline_capacity", (rates, arrival, mult)), TODO1_KEYS)
    names = rng.sample(STAGES, 4)
    tied = {names[0]: 160, names[1]: 40, names[2]: 40, names[3]: 40}
    b.diff("ties", Msg("ties in bottlenecks", "并列瓶颈"),
           Call("pipeline_capacity", (_shuffled(rng, tied), 10, {n: 1 for n in names})),
           ("bottlenecks", "capacity"))
    rates, _, mult = gen_pipeline(rng, stages=3)
    cap = min(float(rates[n]) / float(mult[n]) for n in rates)
    b.diff("arrival_equals_capacity", Msg("arrival exactly at capacity is stable",
                                          "到达率恰好等于容量时仍稳定"),
           Call("pipeline_capacity", (rates, _num(rng, cap), mult)),
           ("unstable_stages", "queue_stable", "queue_margins"))
    b.diff("zero_arrival", Msg("zero arrival rate", "零到达率"),
           Call("pipeline_capacity", (rates, 0, mult)), ("unstable_stages", "queue_stable"))
    # Declared in reverse alphabetical order, so an unsorted answer cannot pass.
    names = sorted(rng.sample(STAGES, 5), reverse=True)
    slow = {names[0]: 10, names[1]: 30, names[2]: 20, names[3]: 200, names[4]: 15}
    b.diff("several_unstable", Msg("several unstable stages, sorted", "多个积压阶段需排序"),
           Call("pipeline_capacity", (slow, 100, {n: 1 for n in names})),
           ("unstable_stages", "queue_stable"))
    b.diff("single_stage", Msg("single-stage pipeline", "单阶段流水线"),
           Call("pipeline_capacity", ({"learner": 12.5}, 3, {"learner": 0.5})), TODO1_KEYS)
    b.diff("fractional_multipliers", Msg("fractional multipliers", "小数倍率"),
           Call("pipeline_capacity", ({"rollout": 30, "reward": 40.0},
                                      7.5, {"rollout": 0.25, "reward": 0.5})), TODO1_KEYS)
    for k in (2, 0.5):
        rates, arrival, mult = gen_pipeline(rng, stages=4, tie=True)
        scaled = {n: _num(rng, float(r) * k) for n, r in rates.items()}

        def scale_relation(values: list[Any], k: float = k) -> str | None:
            a, s = values
            if mismatch(a["bottlenecks"], s["bottlenecks"]):
                return "scaling every rate and the arrival rate changed the bottlenecks"
            if not numbers_match(float(a["capacity"]) * k, float(s["capacity"])):
                return "scaling every rate by k did not scale the capacity by k"
            if mismatch(a["unstable_stages"], s["unstable_stages"]):
                return "scaling every rate and the arrival rate changed the unstable stages"
            return None

        b.anchored(f"scale_by_{k}", Msg("scaling rates and arrival by k", "速率与到达率同乘 k"),
                   [Call("pipeline_capacity", (rates, arrival, mult)),
                    Call("pipeline_capacity", (scaled, _num(rng, float(arrival) * k), mult))],
                   functools.partial(expect_relation, relation=scale_relation),
                   ("bottlenecks", "capacity"))
    rates, arrival, mult = gen_pipeline(rng, stages=5, tie=True)
    b.anchored("insertion_order", Msg("dict insertion order changed the result",
                                      "字典插入顺序改变了结果"),
               [Call("pipeline_capacity", (rates, arrival, mult)),
                Call("pipeline_capacity", (dict(reversed(list(rates.items()))), arrival,
                                           dict(reversed(list(mult.items())))))],
               lambda c: expect_relation(c, _same_keys(TODO1_KEYS)), TODO1_KEYS)
    rates, arrival, mult = gen_pipeline(rng, stages=4)
    b.anchored("immutability", Msg("input mutated", "输入被修改"),
               [Call("pipeline_capacity", (rates, arrival, mult))], expect_unchanged_inputs,
               TODO1_KEYS)

    base_rates, _, base_mult = gen_pipeline(rng, stages=3)
    first = next(iter(base_rates))
    bad: list[tuple[str, Msg, Call]] = []
    for label, value in (("nan", float("nan")), ("inf", float("inf")), ("zero", 0),
                         ("negative", -40)):
        bad.append((f"{label}_rate", Msg(f"{label} stage rate accepted", f"{label} 阶段速率未报错"),
                    Call("pipeline_capacity", (dict(base_rates, **{first: value}), 10, base_mult))))
        bad.append((f"{label}_multiplier", Msg(f"{label} multiplier accepted",
                                               f"{label} 工作单位倍率未报错"),
                    Call("pipeline_capacity", (base_rates, 10, dict(base_mult, **{first: value})))))
    for label, value in (("nan", float("nan")), ("inf", float("inf")), ("negative", -1)):
        bad.append((f"{label}_arrival", Msg(f"{label} arrival rate accepted",
                                            f"{label} 到达率未报错"),
                    Call("pipeline_capacity", (base_rates, value, base_mult))))
    extra = dict(base_mult, judge_extra=1)
    missing = dict(list(base_mult.items())[1:])
    bad.append(("extra_multiplier", Msg("multiplier for an unknown stage accepted",
                                        "多出阶段的倍率未报错"),
                Call("pipeline_capacity", (base_rates, 10, extra))))
    bad.append(("missing_multiplier", Msg("stage without a multiplier accepted",
                                          "缺少阶段倍率未报错"),
                Call("pipeline_capacity", (base_rates, 10, missing))))
    bad.append(("empty_pipeline", Msg("empty pipeline accepted", "空流水线未报错"),
                Call("pipeline_capacity", ({}, 10, {}))))
    for case_id, msg, call in bad:
        b.error(case_id, msg, call)


def _todo2(b: BatteryBuilder, rng: random.Random) -> None:
    for i in range(8):
        edges, placement = gen_edges(rng, tie=i % 3 == 1)
        b.diff(f"differential_{i}", Msg("result differs from the reference on random edges",
                                        "随机边集上结果与参考实现不同"),
               Call("transfer_ledger", (edges, placement)), TODO2_KEYS)
    edges, placement = gen_edges(rng, count=4)
    row_keys = ("cross_pool", "traffic_bytes_per_s", "transfer_seconds_per_s",
                "exposed_seconds_per_s")
    ref_rows = run_reference(b.ref, Call("transfer_ledger", (edges, placement))).value["rows"]
    want_rows = [{k: row[k] for k in row_keys} for row in ref_rows]

    def rows_relation(values: list[Any]) -> str | None:
        rows = values[0].get("rows")
        if type(rows) is not list or len(rows) != len(want_rows):
            return "'rows' must hold one entry per edge, in edge order"
        for index, (row, want) in enumerate(zip(rows, want_rows, strict=True)):
            if type(row) is not dict:
                return f"rows[{index}] is not a dict"
            for key in row_keys:
                if key not in row:
                    return f"rows[{index}] has no key {key!r}"
                if mismatch(want[key], row[key]):
                    return f"rows[{index}].{key} differs from the reference"
        return None

    b.add("rows", "hidden", Msg("per-edge rows", "逐边账本行"),
          [Call("transfer_ledger", (edges, placement))],
          lambda c: expect_relation(c, rows_relation))
    same = {"rollout": "A", "reward": "A", "learner": "A"}
    local = [{"source": "rollout", "target": "reward", "bytes_per_item": 100,
              "items_per_work_unit": 2, "work_units_per_second": 4,
              "bandwidth_bytes_per_s": 1024, "overlap_fraction": 0.5, "fabric_id": "nvlink"},
             {"source": "reward", "target": "learner", "bytes_per_item": 64,
              "items_per_work_unit": 1, "work_units_per_second": 2,
              "bandwidth_bytes_per_s": 2048, "overlap_fraction": 0}]
    b.diff("no_cross_pool_edges", Msg("no cross-pool edges", "没有跨池边"),
           Call("transfer_ledger", (local, same)), TODO2_KEYS)
    b.diff("empty_edges", Msg("no edges at all", "没有任何边"),
           Call("transfer_ledger", ([], same)), TODO2_KEYS)
    edges, placement = gen_edges(rng, tie=True)
    b.diff("tied_fabrics", Msg("ties among several fabrics", "多个互连域并列"),
           Call("transfer_ledger", (edges, placement)), ("critical_fabrics",
                                                         "critical_exposed_seconds_per_s"))
    edges, placement = gen_edges(rng, count=3)
    full_overlap = [dict(e, overlap_fraction=1) for e in edges]
    b.diff("full_overlap", Msg("overlap of exactly 1 hides the transfer", "重叠比例为 1"),
           Call("transfer_ledger", (full_overlap, placement)), TODO2_KEYS)
    edges, placement = gen_edges(rng, count=5)
    b.anchored("edge_order", Msg("edge order changed the result", "边的顺序改变了结果"),
               [Call("transfer_ledger", (edges, placement)),
                Call("transfer_ledger", (list(reversed(edges)), _shuffled(rng, placement)))],
               lambda c: expect_relation(c, _same_keys(TODO2_KEYS)), TODO2_KEYS)
    edges, placement = gen_edges(rng, count=4)
    pool_a = [c for c, p in placement.items() if p == "A"]
    extra_node = "colocated-extra"
    placement2 = dict(placement, **{extra_node: "A"})
    local_edge = {"source": pool_a[0], "target": extra_node, "bytes_per_item": 4096,
                  "items_per_work_unit": 4, "work_units_per_second": 5,
                  "bandwidth_bytes_per_s": 1024, "overlap_fraction": 0}
    b.anchored("same_pool_edge_added", Msg("an added same-pool edge changed the result",
                                           "新增同池边改变了结果"),
               [Call("transfer_ledger", (edges, placement2)),
                Call("transfer_ledger", ([*edges, local_edge], placement2))],
               lambda c: expect_relation(c, _same_keys(TODO2_KEYS)), TODO2_KEYS)
    edges, placement = gen_edges(rng, count=6)
    fabric = edges[0]["fabric_id"]
    mine = [e for e in edges if e["fabric_id"] == fabric and _cross(e, placement)]
    half = max(1, len(mine) // 2)

    def additive(values: list[Any], fabric: str = fabric) -> str | None:
        whole, part1, part2 = (v["fabric_exposed_seconds_per_s"].get(fabric, 0.0) for v in values)
        if not numbers_match(float(whole), float(part1) + float(part2)):
            return "a fabric's exposure is not the sum of its edges' exposures"
        return None

    b.anchored("fabric_additive", Msg("a fabric's exposure is the sum of its edges'",
                                      "互连域暴露应为其各边之和"),
               [Call("transfer_ledger", (mine, placement)),
                Call("transfer_ledger", (mine[:half], placement)),
                Call("transfer_ledger", (mine[half:], placement))],
               lambda c: expect_relation(c, additive), ("fabric_exposed_seconds_per_s",))
    edges, placement = gen_edges(rng, count=4)
    b.anchored("immutability", Msg("input mutated", "输入被修改"),
               [Call("transfer_ledger", (edges, placement))], expect_unchanged_inputs,
               TODO2_KEYS)

    edges, placement = gen_edges(rng, count=3)
    cross = next(e for e in edges if _cross(e, placement))
    rest = [e for e in edges if e is not cross]

    def with_bad(**change: Any) -> Call:
        return Call("transfer_ledger", ([*rest, dict(cross, **change)], placement))

    bad: list[tuple[str, Msg, Call]] = [
        ("unknown_source", Msg("edge endpoint without a pool accepted", "边端点缺少资源池未报错"),
         with_bad(source="nowhere")),
        ("unknown_target", Msg("edge endpoint without a pool accepted", "边端点缺少资源池未报错"),
         with_bad(target="nowhere")),
        ("empty_fabric", Msg("cross-pool edge with an empty fabric_id accepted",
                             "跨池边 fabric_id 为空未报错"), with_bad(fabric_id="")),
    ]
    # Every numeric field of an edge, with every kind of value the contract rejects.
    fields = {
        "overlap_fraction": (Msg("overlap", "重叠比例"), ("nan", "inf", "negative", "above_1")),
        "bandwidth_bytes_per_s": (Msg("bandwidth", "带宽"), ("nan", "inf", "zero", "negative")),
        "bytes_per_item": (Msg("bytes per item", "对象字节数"), ("nan", "inf", "negative")),
        "items_per_work_unit": (Msg("items per work unit", "工作单位倍率"),
                                ("nan", "inf", "zero", "negative")),
        "work_units_per_second": (Msg("work units per second", "工作单位频率"),
                                  ("nan", "inf", "negative")),
    }
    for name, (what, kinds) in fields.items():
        for kind in kinds:
            value, label = BAD_VALUES[kind]
            bad.append((f"{kind}_{name}", Msg(f"{label.en} {what.en} accepted",
                                              f"{label.zh}{what.zh}未报错"),
                        with_bad(**{name: value})))
    no_fabric = {k: v for k, v in cross.items() if k != "fabric_id"}
    bad.append(("missing_fabric", Msg("cross-pool edge without fabric_id accepted",
                                      "跨池边缺少 fabric_id 未报错"),
                Call("transfer_ledger", ([*rest, no_fabric], placement))))
    twin = dict(cross, bandwidth_bytes_per_s=float(cross["bandwidth_bytes_per_s"]) * 2)
    bad.append(("fabric_two_bandwidths", Msg("one fabric with two bandwidths accepted",
                                             "同一互连域两种带宽未报错"),
                Call("transfer_ledger", ([cross, twin], placement))))
    for case_id, msg, call in bad:
        b.error(case_id, msg, call)


def _todo3(b: BatteryBuilder, rng: random.Random) -> None:
    def capacity_report(unstable: bool) -> Any:
        for _ in range(100):
            rates, arrival, mult = gen_pipeline(rng)
            report = plain(b.ref.pipeline_capacity(rates, arrival, mult))
            if bool(report["unstable_stages"]) == unstable:
                return report
        raise AssertionError("generator could not make the requested pipeline")

    def transfer_report() -> Any:
        edges, placement = gen_edges(rng)
        return plain(b.ref.transfer_ledger(edges, placement))

    def memory() -> tuple[dict[str, Any], dict[str, Any]]:
        pools = rng.sample(["A", "B", "C", "D"], rng.randint(1, 4))
        used = {p: _num(rng, rng.choice([10, 24, 30, 40, 62.5, 80])) for p in pools}
        limits = {p: _num(rng, rng.choice([24, 40, 48, 80, 96])) for p in pools}
        if rng.random() < 0.3 and len(pools) > 1:
            limits.pop(pools[-1])
        return used, limits

    for i in range(10):
        used, limits = memory()
        args: tuple[Any, ...] = (capacity_report(rng.random() < 0.5), used, limits,
                                 transfer_report(), rng.random() < 0.7, rng.random() < 0.7)
        kwargs = {}
        if rng.random() < 0.6:
            kwargs["max_exposed_s_per_s"] = _num(rng, rng.choice([0.05, 0.25, 0.5, 1, 2]))
        b.diff(f"differential_{i}", Msg("decision differs from the reference on a random "
                                        "topology", "随机拓扑上的准入结论与参考实现不同"),
               Call("evaluate_topology", args, kwargs), TODO3_KEYS)
    stable = capacity_report(False)
    # Two unstable stages, so that sorting (or mutating) the list can be observed.
    unstable = plain(b.ref.pipeline_capacity({"rollout": 40, "reward": 30, "learner": 90}, 50,
                                             {"rollout": 1, "reward": 1, "learner": 1}))
    at = {"fabric_exposed_seconds_per_s": {"nvlink": 0.25, "pcie": 0.125},
          "critical_exposed_seconds_per_s": 0.25}
    over_fabrics = {"pcie-b": 0.5, "pcie-a": 0.75, "ib": 0.125}
    over = {"fabric_exposed_seconds_per_s": over_fabrics,
            "critical_exposed_seconds_per_s": 0.75}
    calm = {"fabric_exposed_seconds_per_s": {}, "critical_exposed_seconds_per_s": 0.0}
    topo = "evaluate_topology"
    b.diff("exposure_at_threshold", Msg("exposure exactly at the threshold is not overloaded",
                                        "暴露恰好等于阈值不算过载"),
           Call(topo, (stable, {"A": 10}, {"A": 20}, at, True, True),
                {"max_exposed_s_per_s": 0.25}), TODO3_KEYS)
    b.diff("memory_at_limit", Msg("memory exactly at the limit is within it",
                                  "显存恰好等于上限不算超限"),
           Call(topo, (stable, {"A": 40, "B": 8}, {"A": 40, "B": 16}, calm, True, True)),
           TODO3_KEYS)
    b.diff("pool_without_limit", Msg("a pool with no declared limit", "未声明上限的资源池"),
           Call(topo, (stable, {"B": 8, "A": 4}, {"A": 40}, calm, True, True)), TODO3_KEYS)
    b.diff("several_over_limit", Msg("several over-limit pools, sorted", "多个超限资源池需排序"),
           Call(topo, (stable, {"C": 90, "A": 50, "B": 10}, {"C": 80, "A": 40, "B": 40},
                       calm, True, True)), TODO3_KEYS)
    b.diff("several_overloaded", Msg("several overloaded fabrics, sorted", "多个过载互连域需排序"),
           Call(topo, (stable, {"A": 1}, {"A": 2}, over, True, True)), TODO3_KEYS)
    b.diff("reject_keeps_evidence", Msg("reject still reports stages and fabrics",
                                        "拒绝时仍报告积压阶段与过载互连"),
           Call(topo, (unstable, {"A": 1}, {"A": 2}, over, False, True)), TODO3_KEYS)
    b.diff("only_recovery", Msg("recovery failure alone rejects", "仅恢复路径缺失也应拒绝"),
           Call(topo, (stable, {"A": 1}, {"A": 2}, calm, True, False)), TODO3_KEYS)
    b.diff("only_transfer", Msg("exposed transfer alone gives tune", "仅传输暴露过高应调优"),
           Call(topo, (stable, {"A": 1}, {"A": 2}, over, True, True)), TODO3_KEYS)
    b.diff("only_queue", Msg("unstable queue alone gives tune", "仅队列积压应调优"),
           Call(topo, (unstable, {"A": 1}, {"A": 2}, calm, True, True)), TODO3_KEYS)
    b.diff("default_threshold", Msg("default threshold is 0.1", "默认阈值为 0.1"),
           Call(topo, (stable, {"A": 1}, {"A": 2},
                       {"fabric_exposed_seconds_per_s": {"x": 0.125, "y": 0.0625},
                        "critical_exposed_seconds_per_s": 0.125}, True, True)), TODO3_KEYS)
    shuffled = dict(unstable, unstable_stages=list(reversed(unstable["unstable_stages"])))
    b.diff("unsorted_unstable_input", Msg("unstable stages reported sorted",
                                          "积压阶段需排序输出"),
           Call(topo, (shuffled, {"A": 1}, {"A": 2}, calm, True, True)), TODO3_KEYS)
    used, limits = memory()
    b.anchored("immutability", Msg("input mutated", "输入被修改"),
               [Call(topo, (shuffled, used, limits, over, False, True))],
               expect_unchanged_inputs, TODO3_KEYS)
    b.anchored("insertion_order", Msg("dict insertion order changed the result",
                                      "字典插入顺序改变了结果"),
          [Call(topo, (stable, {"C": 90, "A": 50, "B": 10}, {"C": 80, "A": 40, "B": 40}, over,
                       True, True)),
           Call(topo, (stable, {"B": 10, "A": 50, "C": 90}, {"B": 40, "C": 80, "A": 40},
                       dict(over, fabric_exposed_seconds_per_s=dict(reversed(list(
                           over_fabrics.items())))), True, True))],
               lambda c: expect_relation(c, _same_keys(TODO3_KEYS)), TODO3_KEYS)

    good = (stable, {"A": 10}, {"A": 20}, at, True, True)

    def bad_args(index: int, value: Any) -> Call:
        args = list(good)
        args[index] = value
        return Call(topo, tuple(args))

    nan, inf = float("nan"), float("inf")
    bad: list[tuple[str, Msg, Call]] = [
        ("nan_memory", Msg("NaN pool memory accepted", "NaN 显存账本未报错"),
         bad_args(1, {"A": nan})),
        ("inf_memory", Msg("infinite pool memory accepted", "无穷显存账本未报错"),
         bad_args(1, {"A": inf})),
        ("negative_memory", Msg("negative pool memory accepted", "负显存账本未报错"),
         bad_args(1, {"A": -1})),
        ("nan_limit", Msg("NaN memory limit accepted", "NaN 显存上限未报错"),
         bad_args(2, {"A": nan})),
        ("inf_limit", Msg("infinite memory limit accepted", "无穷显存上限未报错"),
         bad_args(2, {"A": inf})),
        ("negative_limit", Msg("negative memory limit accepted", "负显存上限未报错"),
         bad_args(2, {"A": -20})),
        ("nan_exposure", Msg("NaN fabric exposure accepted", "NaN 互连暴露未报错"),
         bad_args(3, dict(at, fabric_exposed_seconds_per_s={"nvlink": nan}))),
        ("negative_exposure", Msg("negative fabric exposure accepted", "负互连暴露未报错"),
         bad_args(3, dict(at, fabric_exposed_seconds_per_s={"nvlink": -0.25}))),
        ("inf_exposure", Msg("infinite fabric exposure accepted", "无穷互连暴露未报错"),
         bad_args(3, dict(at, fabric_exposed_seconds_per_s={"nvlink": inf}))),
        ("negative_threshold", Msg("negative exposure threshold accepted", "负暴露阈值未报错"),
         Call(topo, good, {"max_exposed_s_per_s": -0.1})),
        ("nan_threshold", Msg("NaN exposure threshold accepted", "NaN 暴露阈值未报错"),
         Call(topo, good, {"max_exposed_s_per_s": nan})),
        ("inf_threshold", Msg("infinite exposure threshold accepted", "无穷暴露阈值未报错"),
         Call(topo, good, {"max_exposed_s_per_s": inf})),
    ]
    for case_id, msg, call in bad:
        b.error(case_id, msg, call)


def build_battery(seed: int, reference: ModuleType | None = None) -> list[Case]:
    """All cases, in a fixed order; the same seed always gives the same cases."""
    builder = BatteryBuilder(reference or load_reference(), seed)
    _visible(builder)
    for section, make in (("todo1", _todo1), ("todo2", _todo2), ("todo3", _todo3)):
        make(builder, random.Random(f"rlsys:{seed}:{section}"))
    return builder.cases


def self_check(cases: Sequence[Case], reference: ModuleType) -> set[str]:
    """Ids of cases the reference itself fails: those are reported as not graded."""
    failing = set()
    for case in cases:
        outcomes = [run_reference(reference, call) for call in case.calls]
        try:
            verdict = case.check(outcomes)
        except Exception:  # a broken check is the battery's bug, not the learner's
            failing.add(case.id)
            continue
        if verdict.status != "passed":
            failing.add(case.id)
    return failing
