"""Edge cases derived from the template's statements, not listed (issue 42).

Each statement of the template that compares, tolerates, refuses or pairs values is one
row of ``STATEMENTS``: the rule it grades and the *kind* of comparison it states.  The
values sent are derived from that kind alone, as a property-testing library's
edge-biased strategies derive them (Hypothesis favours the same points):

- a stated constant ``c`` of an exact comparison (``<``, ``>``, ``==``, "negative" as
  ``< 0``): ``c`` itself, one ulp either side (``math.nextafter``), and 0.5x, 1.5x, 2x;
  at ``c == 0``: ``-0.0`` (not negative: ``-0.0 < 0`` is False) and the smallest
  subnormal either side;
- a stated tolerance (``math.isclose(rel_tol=1e-9, abs_tol=1e-12)``): gaps of 0.5x,
  1.5x and 2x the tolerance, relative (at 1 and 1e12) and absolute (near 0).  The edge
  itself (1x) is not sent: there a formula's own rounding decides, and two correct
  spellings of the same tolerance may round apart;
- an exact comparison of values the learner's code receives as they are (TODO 3's
  memory, limits, exposures): ints past 2**53, where ``float()`` loses the difference;
- a pairwise rule: both orders of the pair (the larger value first, then last);
- a validation: the forbidden value alone, and two forbidden values whose ratio or
  product is allowed (a negative rate with a negative multiplier);
- a container: empty and one-element inputs; "may be 0": the zero-traffic edge.

Every value is exact in binary where a sum or a quotient is formed, so an exact-arithmetic
reading (``fractions``) and a float reading agree on every graded bit.  The seed picks
names only; whether a misreading shows never depends on it.  Which statement produced
which cases: docs/battery-rules.md, "Derived edges".
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.generators import STAGES
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call
from pytest_rlsys.messages import Msg

__all__ = ["STATEMENTS", "Statement", "add_edges", "band_gaps", "exact_edges"]

# A derived value case weighs less than a listed one: they are many, one per point (and
# apart from REFUSAL_WEIGHT, which the fairness tests read as "a refusal case").
EDGE_WEIGHT = 0.4
REL_TOL, ABS_TOL = 1e-9, 1e-12
TINY = math.nextafter(0.0, math.inf)  # the smallest subnormal, 5e-324
BIG_INTS = (2**53, 10**20)  # where float() first, and then far, loses an int's last unit


def exact_edges(c: float) -> list[tuple[str, float]]:
    """The points of an exact comparison with the stated constant ``c``."""
    if c == 0:
        return [("minus_zero", -0.0), ("zero", 0.0), ("ulp_above_0", TINY)]
    return [
        ("ulp_below", math.nextafter(c, -math.inf)),
        ("at", c),
        ("ulp_above", math.nextafter(c, math.inf)),
        ("half", c * 0.5),
        ("one_and_a_half", c * 1.5),
        ("double", c * 2),
    ]


def band_gaps() -> list[tuple[str, float, float, float]]:
    """(label, base, other, k): ``other`` lies k tolerances from ``base``, relative at 1
    and at 1e12, absolute near 0; k in 0.5 (inside), 1.5 and 2 (outside)."""
    out = []
    for k in (0.5, 1.5, 2.0):
        tag = str(k).replace(".", "_")
        out.append((f"rel_{tag}x", 1.0, 1.0 * (1 + k * REL_TOL), k))
        out.append((f"rel_large_{tag}x", 1e12, 1e12 * (1 + k * REL_TOL), k))
        out.append((f"abs_{tag}x", 1e-13, 1e-13 + k * ABS_TOL, k))
    return out


def _magnitudes() -> tuple[float, ...]:
    """Where an exact comparison with a non-zero constant is probed: a subnormal (its ulp
    is the smallest float, so no epsilon guard survives),
    plain numbers, and numbers whose ulp is more than 1."""
    return (1e-320, 1.0, 1e17)


@dataclass(frozen=True)
class Statement:
    """One statement of the template: its TODO, the rule it grades (a key of that TODO's
    ``RULES``), the kind of comparison it states, and the derivation of its cases."""

    section: str
    rule: str
    kind: str  # exact | tolerance | negative | positive | pairwise | container | names
    derive: Callable[[BatteryBuilder, random.Random, Statement], None]


def _label(*parts: object) -> str:
    return "derived_" + "_".join(str(p) for p in parts if p != "")


def _tag(value: float) -> str:
    """A number as a case id may spell it: 1e-300 -> 1em300, 1e+17 -> 1e17."""
    return f"{value:g}".replace("-", "m").replace("+", "").replace(".", "_")


def _names(rng: random.Random, count: int) -> list[str]:
    return rng.sample(STAGES, count)


# -- TODO 1 -----------------------------------------------------------------------------

P1 = "pipeline_capacity"
K1 = RESULT_KEYS[P1]


def _ties(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """bottlenecks: effective rates k tolerances apart, the nearer one named first and
    then last (both orders of the pair)."""
    for label, base, other, k in band_gaps():
        for order in ("near_first", "near_last"):
            first, middle, last = sorted(_names(rng, 3))
            near, low, far = (
                (first, middle, last) if order == "near_first" else (last, first, middle)
            )
            rates = {near: other, low: base, far: base * 3}
            side = "tied" if k < 1 else "not tied"
            b.diff(
                _label("tie", label, order),
                Msg(
                    f"effective rates {k} tolerances apart are {side}",
                    f"相差 {k} 个容差的有效速率{'并列' if k < 1 else '不并列'}",
                ),
                s.rule,
                Call(P1, (rates, 0, dict.fromkeys(rates, 1))),
                ("bottlenecks", "capacity"),
                EDGE_WEIGHT,
            )


def _margins(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """unstable: the arrival rate at the capacity's exact edges (a margin below 0 is
    negative, exactly 0 is stable); the bottleneck's multiplier 2, the other's 0.5."""
    for magnitude in _magnitudes():
        for label, arrival in exact_edges(magnitude):
            if magnitude != 1.0 and label in ("half", "one_and_a_half", "double"):
                continue
            slow, fast = _names(rng, 2)
            rates = {slow: magnitude * 2, fast: magnitude * 2}
            sign = "negative" if arrival > magnitude else "not negative"
            b.diff(
                _label("margin", _tag(magnitude), label),
                Msg(
                    f"an arrival rate {label.replace('_', ' ')} the capacity {magnitude:g}: "
                    f"the margin is {sign}",
                    f"到达率与容量 {magnitude:g} 的关系为 {label}：余量"
                    + ("为负" if arrival > magnitude else "不为负"),
                ),
                s.rule,
                Call(P1, (rates, arrival, {slow: 2, fast: 0.5})),
                ("unstable_stages", "queue_stable", "queue_margins"),
                EDGE_WEIGHT,
            )


def _arrival_sign(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """arrival: -0.0 is not negative (accepted); the smallest negative number is."""
    stage = _names(rng, 1)[0]
    valid = Call(P1, ({stage: 8}, 0, {stage: 2}))
    b.diff(
        _label("arrival_minus_zero"),
        Msg("accepts an arrival rate of -0.0 (not below 0)", "接受 -0.0 的到达率（不低于 0）"),
        s.rule,
        Call(P1, ({stage: 8}, -0.0, {stage: 2})),
        K1,
        EDGE_WEIGHT,
    )
    b.refusal(
        _label("arrival_ulp_below_0"),
        Msg("refuses an arrival rate one ulp below 0", "拒绝比 0 低一个 ulp 的到达率"),
        s.rule,
        valid,
        Call(P1, ({stage: 8}, -TINY, {stage: 2})),
    )


def _rate_signs(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """positive: -0.0 is zero, one ulp below 0 is negative, and a negative rate with a
    negative multiplier (a positive ratio) is refused; the smallest positive is fine."""
    one, two = _names(rng, 2)
    rates, mult = {one: 6, two: 8}, {one: 2, two: 0.5}
    valid = Call(P1, (rates, 1, mult))
    bad: list[tuple[str, Msg, dict[str, Any], dict[str, Any]]] = [
        ("rate_minus_zero", Msg("a stage rate of -0.0", "-0.0 的阶段速率"), {one: -0.0}, {}),
        ("multiplier_minus_zero", Msg("a multiplier of -0.0", "-0.0 的倍率"), {}, {one: -0.0}),
        (
            "rate_ulp_below_0",
            Msg("a rate one ulp below 0", "比 0 低一个 ulp 的速率"),
            {one: -TINY},
            {},
        ),
        (
            "negative_rate_and_multiplier",
            Msg(
                "a negative rate with a negative multiplier (their ratio is positive)",
                "负速率配负倍率（两者之比为正）",
            ),
            {one: -6},
            {one: -2},
        ),
        (
            "negative_fractional_multiplier",
            Msg("a multiplier of -0.5", "-0.5 的倍率"),
            {},
            {one: -0.5},
        ),
    ]
    for label, what, rate_fix, mult_fix in bad:
        b.refusal(
            _label(label),
            Msg(f"refuses {what.en}", f"拒绝{what.zh}"),
            s.rule,
            valid,
            Call(P1, ({**rates, **rate_fix}, 1, {**mult, **mult_fix})),
        )
    b.diff(
        _label("smallest_positive_rate"),
        Msg(
            "accepts the smallest positive rate and multiplier (5e-324)",
            "接受最小的正速率与倍率（5e-324）",
        ),
        s.rule,
        Call(P1, ({one: TINY, two: 3}, 0, {one: TINY, two: 1.5})),
        K1,
        EDGE_WEIGHT,
    )


def _stage_names(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """names: whitespace is part of a stage's name."""
    stage = _names(rng, 1)[0]
    rates = {stage: 10, f"{stage} ": 20, f"\t{stage}": 30}
    b.diff(
        _label("stage_names_with_whitespace"),
        Msg(
            "names differing only in whitespace are different stages",
            "只在空白上不同的名称是不同的阶段",
        ),
        s.rule,
        Call(P1, (rates, 25, {f"\t{stage}": 1, stage: 1, f"{stage} ": 1})),
        K1,
        EDGE_WEIGHT,
    )


# -- TODO 2 -----------------------------------------------------------------------------

P2 = "transfer_ledger"
K2 = RESULT_KEYS[P2]
PLACEMENT = {"rollout": "pool-a", "learner": "pool-b", "reward": "pool-a", "critic": "pool-b"}


def _edge(source: str = "rollout", target: str = "learner", **fields: Any) -> dict[str, Any]:
    edge: dict[str, Any] = {
        "source": source,
        "target": target,
        "bytes_per_item": 8,
        "items_per_work_unit": 1,
        "work_units_per_second": 1,
        "bandwidth_bytes_per_s": 1024,
        "overlap_fraction": 0,
        "fabric_id": "fabric-a",
    }
    edge.update(fields)
    return edge


def _pair_orders(first: float, later: float) -> Iterator[tuple[str, float, float]]:
    yield "first_smaller" if first < later else "first_larger", first, later
    yield "first_larger" if first < later else "first_smaller", later, first


def _bandwidth_pairs(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """bandwidths: two cross-pool edges of one fabric k tolerances apart, in both orders,
    and again when either edge carries no traffic; the stated pair (1000, 1000.5) too."""
    fabric = f"fabric-{rng.choice('abcdefgh')}"
    pairs = [(label, base, other, k) for label, base, other, k in band_gaps()]
    pairs.append(("stated_1000_1000_5", 1000.0, 1000.5, 2.0))
    for label, base, other, k in pairs:
        for order, first, later in _pair_orders(base, other):
            for idle in ("", "idle_first", "idle_later"):
                if idle and label.startswith("abs"):
                    continue
                one = _edge(bandwidth_bytes_per_s=first, fabric_id=fabric)
                two = _edge("reward", "critic", bandwidth_bytes_per_s=later, fabric_id=fabric)
                if idle == "idle_first":
                    one["bytes_per_item"] = 0
                if idle == "idle_later":
                    two["work_units_per_second"] = 0
                call = Call(P2, ([one, two], PLACEMENT))
                case = _label("bandwidths", label, order, idle)
                traffic = " (one edge carrying no traffic)" if idle else ""
                if k < 1:
                    b.diff(
                        case,
                        Msg(
                            f"bandwidths {k} tolerances apart are the same{traffic}",
                            f"相差 {k} 个容差的带宽相同",
                        ),
                        s.rule,
                        call,
                        K2,
                        EDGE_WEIGHT,
                    )
                    continue
                valid = Call(P2, ([one, dict(two, bandwidth_bytes_per_s=first)], PLACEMENT))
                b.refusal(
                    case,
                    Msg(
                        f"refuses bandwidths {k} tolerances apart, the {order.replace('_', ' ')}"
                        f"{traffic}",
                        f"拒绝同一互连域相差 {k} 个容差的带宽（{order}）"
                        + ("（其中一条边没有流量）" if idle else ""),
                    ),
                    s.rule,
                    valid,
                    call,
                )


def _same_pool_bandwidth(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """bandwidths: a same-pool edge of the fabric is not compared, before or after."""
    for order in ("before", "after"):
        local = _edge("rollout", "reward", bandwidth_bytes_per_s=4096)
        cross = [_edge(), _edge("critic", "reward")]
        edges = [local, *cross] if order == "before" else [*cross, local]
        b.diff(
            _label("same_pool_bandwidth", order),
            Msg(
                f"a same-pool edge {order} the cross-pool ones may declare another bandwidth",
                "同池边可以声明不同的带宽（"
                + ("在跨池边之前" if order == "before" else "在跨池边之后")
                + "）",
            ),
            s.rule,
            Call(P2, (edges, PLACEMENT)),
            K2,
            EDGE_WEIGHT,
        )


def _overlap_edges(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """overlap: [0, 1] at both ends, -0.0 inside, one ulp outside either end refused."""
    valid = Call(P2, ([_edge(overlap_fraction=0.5)], PLACEMENT))
    for label, value in (("minus_zero", -0.0), ("one", 1), ("ulp_above_0", TINY)):
        b.diff(
            _label("overlap", label),
            Msg(f"accepts an overlap_fraction of {value!r}", f"接受 {value!r} 的 overlap_fraction"),
            s.rule,
            Call(P2, ([_edge(overlap_fraction=value), _edge("reward", "critic")], PLACEMENT)),
            K2,
            EDGE_WEIGHT,
        )
    for label, value in (("ulp_below_0", -TINY), ("ulp_above_1", math.nextafter(1.0, 2.0))):
        b.refusal(
            _label("overlap", label),
            Msg(
                f"refuses an overlap_fraction one ulp {'below 0' if value < 0 else 'above 1'}",
                f"拒绝{'比 0 低' if value < 0 else '比 1 高'}一个 ulp 的 overlap_fraction",
            ),
            s.rule,
            valid,
            Call(P2, ([_edge(overlap_fraction=value)], PLACEMENT)),
        )


def _edge_signs(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """positive / non_negative: -0.0 and one ulp below 0 for each field, negative pairs
    whose product or quotient is positive, fractional items per work unit."""
    valid = Call(P2, ([_edge()], PLACEMENT))
    positive = ("bandwidth_bytes_per_s", "items_per_work_unit")
    for field in (*positive, "bytes_per_item", "work_units_per_second"):
        rule = "positive" if field in positive else "non_negative"
        b.refusal(
            _label(field, "ulp_below_0"),
            Msg(f"refuses a {field} one ulp below 0", f"拒绝比 0 低一个 ulp 的 {field}"),
            rule,
            valid,
            Call(P2, ([_edge() | {field: -TINY}], PLACEMENT)),
        )
        if field in positive:
            b.refusal(
                _label(field, "minus_zero"),
                Msg(f"refuses a {field} of -0.0 (zero)", f"拒绝 -0.0（即零）的 {field}"),
                rule,
                valid,
                Call(P2, ([_edge() | {field: -0.0}], PLACEMENT)),
            )
        else:
            b.diff(
                _label(field, "minus_zero"),
                Msg(
                    f"accepts a {field} of -0.0 (not below 0)", f"接受 -0.0 的 {field}（不低于 0）"
                ),
                rule,
                Call(P2, ([_edge() | {field: -0.0}, _edge("reward", "critic")], PLACEMENT)),
                K2,
                EDGE_WEIGHT,
            )
    for one, two, rule in (
        ("bytes_per_item", "work_units_per_second", "non_negative"),
        ("items_per_work_unit", "work_units_per_second", "positive"),
        ("bandwidth_bytes_per_s", "bytes_per_item", "positive"),
    ):
        b.refusal(
            _label("negative", one, "and", two),
            Msg(
                f"refuses a negative {one} with a negative {two} (their product is positive)",
                f"拒绝负的 {one} 配负的 {two}（乘积为正）",
            ),
            rule,
            valid,
            Call(P2, ([_edge() | {one: -2, two: -4}], PLACEMENT)),
        )
    for value in (0.5, 1.5):
        b.diff(
            _label("fractional_items", str(value).replace(".", "_")),
            Msg(
                f"accepts a fractional items_per_work_unit ({value})",
                f"接受小数的 items_per_work_unit（{value}）",
            ),
            "positive",
            Call(P2, ([_edge(items_per_work_unit=value), _edge("critic", "reward")], PLACEMENT)),
            K2,
            EDGE_WEIGHT,
        )


def _critical_ties(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """critical: two fabrics' exposures at exact edges of each other (== is exact), the
    larger named first and then last; and fabrics that carry no traffic at all."""
    for magnitude in _magnitudes():
        for label, value in exact_edges(magnitude)[:3]:
            for order in ("a_first", "b_first"):
                x, y = (magnitude, value) if order == "a_first" else (value, magnitude)
                edges = [
                    _edge(bytes_per_item=x, bandwidth_bytes_per_s=1, fabric_id="fabric-a"),
                    _edge(
                        "reward",
                        "critic",
                        bytes_per_item=y,
                        bandwidth_bytes_per_s=1,
                        fabric_id="fabric-b",
                    ),
                ]
                b.diff(
                    _label("critical", _tag(magnitude), label, order),
                    Msg(
                        f"fabric exposures {label.replace('_', ' ')} each other: "
                        + ("both are critical" if label == "at" else "only the larger is critical"),
                        "互连域暴露"
                        + (
                            "相等：两者都是关键域"
                            if label == "at"
                            else "相差一个 ulp：只有较大者是关键域"
                        ),
                    ),
                    s.rule,
                    Call(P2, (edges, PLACEMENT)),
                    K2,
                    EDGE_WEIGHT,
                )
    idle = [
        _edge(bytes_per_item=0),
        _edge("reward", "critic", work_units_per_second=0, fabric_id="fabric-b"),
    ]
    b.diff(
        _label("critical_zero_traffic"),
        Msg(
            "fabrics whose edges carry no traffic have entries of 0.0, all critical",
            "边上没有流量的互连域条目为 0.0，全部是关键域",
        ),
        s.rule,
        Call(P2, (idle, PLACEMENT)),
        K2,
        EDGE_WEIGHT,
    )


def _ledger_containers(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """totals: no edge, one edge, only same-pool edges."""
    for label, edges in (
        ("no_edges", []),
        ("one_edge", [_edge()]),
        ("only_same_pool", [_edge("rollout", "reward"), _edge("learner", "critic")]),
    ):
        b.diff(
            _label("ledger", label),
            Msg(f"totals of {label.replace('_', ' ')}", f"汇总：{label}"),
            s.rule,
            Call(P2, (edges, PLACEMENT)),
            K2,
            EDGE_WEIGHT,
        )


def _pool_names(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """names: whitespace is part of a pool's and an endpoint's name."""
    pool = rng.choice(["pool-a", "gpu", "A"])
    placement = {"rollout": pool, "learner": f"{pool} ", "rollout ": pool}
    edges = [_edge("rollout", "learner"), _edge("rollout ", "rollout")]
    b.diff(
        _label("pool_names_with_whitespace"),
        Msg(
            "pools and endpoints differing only in whitespace are different",
            "只在空白上不同的资源池与端点是不同的",
        ),
        s.rule,
        Call(P2, (edges, placement)),
        K2,
        EDGE_WEIGHT,
    )


# -- TODO 3 -----------------------------------------------------------------------------

P3 = "evaluate_topology"
K3 = RESULT_KEYS[P3]
STABLE = {
    "capacity": 8.0,
    "effective_rates": {"rollout": 8.0},
    "bottlenecks": ["rollout"],
    "queue_margins": {"rollout": 8.0},
    "unstable_stages": [],
    "queue_stable": True,
}


def _transfer(exposures: dict[str, Any]) -> dict[str, Any]:
    critical = max(exposures.values(), default=0.0)
    return {
        "cross_pool_bytes_per_s": 0.0,
        "fabric_exposed_seconds_per_s": exposures,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": sorted(k for k, v in exposures.items() if v == critical),
        "rows": [],
    }


def _topology(
    memory: dict[str, Any], limits: dict[str, Any], exposures: dict[str, Any], *threshold: Any
) -> Call:
    return Call(P3, (STABLE, memory, limits, _transfer(exposures), True, True, *threshold))


def _exact_points(c: float) -> list[tuple[str, Any, Any]]:
    """(label, value, constant): the exact edges of ``c``, and ints past 2**53."""
    points: list[tuple[str, Any, Any]] = [(label, v, c) for label, v in exact_edges(c)]
    if c == 1.0:
        for big in BIG_INTS:
            tag = "2_53" if big == 2**53 else "1e20"
            points += [
                (f"int_{tag}_plus_1_over", big + 1, big),
                (f"int_{tag}_at", big + 1, big + 1),
                (f"int_{tag}_under", big, big + 1),
            ]
    return points


def _memory_limits(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """no_limit / hard: memory at the exact edges of its limit ("more than" is >)."""
    for magnitude in (0.0, *_magnitudes()):
        for label, used, limit in _exact_points(magnitude):
            if magnitude not in (0.0, 1.0) and label in ("half", "one_and_a_half", "double"):
                continue
            pool, other = rng.sample(["pool-a", "pool-b", "gpu-0", "gpu-1"], 2)
            over = used > limit
            b.diff(
                _label("memory", _tag(magnitude), label),
                Msg(
                    f"memory {used!r} against a limit of {limit!r}: "
                    + ("over it" if over else "within it"),
                    f"显存 {used!r}、上限 {limit!r}：" + ("超限" if over else "未超限"),
                ),
                s.rule,
                _topology({pool: used, other: 1}, {other: 2, pool: limit}, {}),
                K3,
                EDGE_WEIGHT,
            )
    b.diff(
        _label("memory", "limit_minus_zero"),
        Msg("memory 0 against a limit of -0.0 is within it", "显存 0、上限 -0.0：未超限"),
        s.rule,
        _topology({"gpu-0": 0}, {"gpu-0": -0.0}, {}),
        K3,
        EDGE_WEIGHT,
    )


def _exposures(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """pressures: a fabric's exposure at the exact edges of the threshold (> is strict),
    the default 0.1 included (the threshold then not passed)."""
    for threshold in (0.1, 0.0, *_magnitudes()):
        for label, exposed, limit in _exact_points(threshold):
            if threshold not in (0.0, 0.1, 1.0) and label in ("half", "one_and_a_half", "double"):
                continue
            if type(limit) is int and float(limit) != limit:
                continue  # the chapter converts the threshold with float(): not graded
            fabric, quiet = rng.sample(["fabric-a", "fabric-b", "nvlink", "pcie"], 2)
            default = threshold == 0.1 and type(limit) is float
            call = _topology({}, {}, {fabric: exposed, quiet: 0}, *(() if default else (limit,)))
            above = exposed > limit
            b.diff(
                _label("exposure", "default" if default else _tag(threshold), label),
                Msg(
                    f"an exposure of {exposed!r} against a threshold of {limit!r}"
                    + (" (the default)" if default else "")
                    + (": above it" if above else ": not above it"),
                    f"暴露 {exposed!r}、阈值 {limit!r}"
                    + ("（默认值）" if default else "")
                    + ("：高于阈值" if above else "：不高于阈值"),
                ),
                s.rule,
                call,
                K3,
                EDGE_WEIGHT,
            )


def _ledger_signs(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """ledger: -0.0 accepted, one ulp below 0 refused, for each ledger number."""
    valid = _topology({"gpu-0": 1}, {"gpu-0": 2}, {"nvlink": 0.05}, 0.1)
    fields: dict[str, Callable[[float], Call]] = {
        "memory": lambda v: _topology({"gpu-0": v}, {"gpu-0": 2}, {"nvlink": 0.05}, 0.1),
        "limit": lambda v: _topology({"gpu-0": 1}, {"gpu-0": v}, {"nvlink": 0.05}, 0.1),
        "exposure": lambda v: _topology({"gpu-0": 1}, {"gpu-0": 2}, {"nvlink": v}, 0.1),
        "threshold": lambda v: _topology({"gpu-0": 1}, {"gpu-0": 2}, {"nvlink": 0.05}, v),
    }
    for name, make in fields.items():
        b.refusal(
            _label(name, "ulp_below_0"),
            Msg(f"refuses a {name} one ulp below 0", f"拒绝比 0 低一个 ulp 的{name}"),
            s.rule,
            valid,
            make(-TINY),
        )
        b.diff(
            _label(name, "minus_zero"),
            Msg(f"accepts a {name} of -0.0 (not below 0)", f"接受 -0.0 的{name}（不低于 0）"),
            s.rule,
            make(-0.0),
            K3,
            EDGE_WEIGHT,
        )


def _topology_containers(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """decision: no pool, no limit, no fabric; one pool without a limit."""
    for label, call in (
        ("nothing", _topology({}, {}, {})),
        ("limits_only", _topology({}, {"gpu-0": 1}, {})),
        ("one_pool_no_limit", _topology({"gpu-0": 0}, {}, {})),
    ):
        b.diff(
            _label("topology", label),
            Msg(f"decides on {label.replace('_', ' ')}", f"在 {label} 上作出决定"),
            s.rule,
            call,
            K3,
            EDGE_WEIGHT,
        )


def _limit_names(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """names: a limit for 'gpu' is no limit for 'gpu '."""
    pool = rng.choice(["gpu", "pool-a", "A"])
    b.diff(
        _label("limit_names_with_whitespace"),
        Msg(
            "a limit declared for a name differing in whitespace is no limit",
            "为只在空白上不同的名称声明的上限不算该资源池的上限",
        ),
        s.rule,
        _topology({f"{pool} ": 1, pool: 1}, {pool: 2}, {}),
        K3,
        EDGE_WEIGHT,
    )


STATEMENTS: tuple[Statement, ...] = (
    Statement("todo1", "bottlenecks", "tolerance", _ties),
    Statement("todo1", "unstable", "exact", _margins),
    Statement("todo1", "arrival", "negative", _arrival_sign),
    Statement("todo1", "positive", "positive", _rate_signs),
    Statement("todo1", "names", "names", _stage_names),
    Statement("todo2", "bandwidths", "tolerance+pairwise", _bandwidth_pairs),
    Statement("todo2", "bandwidths", "pairwise", _same_pool_bandwidth),
    Statement("todo2", "overlap", "exact", _overlap_edges),
    Statement("todo2", "positive", "positive+negative", _edge_signs),
    Statement("todo2", "critical", "exact+pairwise", _critical_ties),
    Statement("todo2", "totals", "container", _ledger_containers),
    Statement("todo2", "names", "names", _pool_names),
    Statement("todo3", "no_limit", "exact", _memory_limits),
    Statement("todo3", "pressures", "exact", _exposures),
    Statement("todo3", "ledger", "negative", _ledger_signs),
    Statement("todo3", "decision", "container", _topology_containers),
    Statement("todo3", "names", "names", _limit_names),
)


def add_edges(b: BatteryBuilder, section: str, rng: random.Random) -> None:
    """Every case derived from ``section``'s statements, in the table's order."""
    for statement in STATEMENTS:
        if statement.section == section:
            statement.derive(b, rng, statement)
