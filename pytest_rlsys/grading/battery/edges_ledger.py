"""TODO 2, ``transfer_ledger``: the cases derived from its statements (``edges``)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.edges import (
    EDGE_WEIGHT,
    TINY,
    Statement,
    band_gaps,
    edge_id,
    exact_edges,
    magnitudes,
    number_tag,
)
from pytest_rlsys.grading.battery.generators import edge
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call
from pytest_rlsys.messages import Msg

__all__ = [
    "derive_bandwidth_pairs",
    "derive_critical_ties",
    "derive_edge_signs",
    "derive_ledger_containers",
    "derive_overlap_edges",
    "derive_pool_names",
    "derive_same_pool_bandwidth",
]

P2 = "transfer_ledger"
K2 = RESULT_KEYS[P2]
PLACEMENT = {"rollout": "pool-a", "learner": "pool-b", "reward": "pool-a", "critic": "pool-b"}


def _edge(source: str = "rollout", target: str = "learner", **fields: Any) -> dict[str, Any]:
    return edge(
        source, target, "fabric-a", **{"bytes_per_item": 8, "bandwidth_bytes_per_s": 1024, **fields}
    )


# The words of the pair orders and exact edges in Chinese: each English title has its own
# (two categories sharing one zh title would be counted as one under zh).
ORDER_ZH = {"first_smaller": "先小后大", "first_larger": "先大后小"}
ULP_ZH = {"ulp_below": "一个比另一个低一个 ulp", "ulp_above": "一个比另一个高一个 ulp"}


def _pair_orders(first: float, later: float) -> Iterator[tuple[str, float, float]]:
    yield "first_smaller" if first < later else "first_larger", first, later
    yield "first_larger" if first < later else "first_smaller", later, first


def derive_bandwidth_pairs(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
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
                case = edge_id("bandwidths", label, order, idle)
                traffic = " (one edge carrying no traffic)" if idle else ""
                traffic_zh = "（其中一条边没有流量）" if idle else ""
                if k < 1:
                    b.diff(
                        case,
                        Msg(
                            f"bandwidths {k} tolerances apart are the same{traffic}",
                            f"相差 {k} 个容差的带宽相同{traffic_zh}",
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
                        f"拒绝同一互连域相差 {k} 个容差的带宽（{ORDER_ZH[order]}）{traffic_zh}",
                    ),
                    s.rule,
                    valid,
                    call,
                )


def derive_same_pool_bandwidth(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """bandwidths: a same-pool edge of the fabric is not compared, before or after."""
    for order in ("before", "after"):
        local = _edge("rollout", "reward", bandwidth_bytes_per_s=4096)
        cross = [_edge(), _edge("critic", "reward")]
        edges = [local, *cross] if order == "before" else [*cross, local]
        b.diff(
            edge_id("same_pool_bandwidth", order),
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


def derive_overlap_edges(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """overlap: [0, 1] at both ends, -0.0 inside, one ulp outside either end refused."""
    valid = Call(P2, ([_edge(overlap_fraction=0.5)], PLACEMENT))
    for label, value in (("minus_zero", -0.0), ("one", 1), ("ulp_above_0", TINY)):
        b.diff(
            edge_id("overlap", label),
            Msg(f"accepts an overlap_fraction of {value!r}", f"接受 {value!r} 的 overlap_fraction"),
            s.rule,
            Call(P2, ([_edge(overlap_fraction=value), _edge("reward", "critic")], PLACEMENT)),
            K2,
            EDGE_WEIGHT,
        )
    for label, value in (("ulp_below_0", -TINY), ("ulp_above_1", math.nextafter(1.0, 2.0))):
        b.refusal(
            edge_id("overlap", label),
            Msg(
                f"refuses an overlap_fraction one ulp {'below 0' if value < 0 else 'above 1'}",
                f"拒绝{'比 0 低' if value < 0 else '比 1 高'}一个 ulp 的 overlap_fraction",
            ),
            s.rule,
            valid,
            Call(P2, ([_edge(overlap_fraction=value)], PLACEMENT)),
        )


def derive_edge_signs(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """positive / non_negative: -0.0 and one ulp below 0 for each field, negative pairs
    whose product or quotient is positive, fractional items per work unit."""
    valid = Call(P2, ([_edge()], PLACEMENT))
    positive = ("bandwidth_bytes_per_s", "items_per_work_unit")
    for field in (*positive, "bytes_per_item", "work_units_per_second"):
        rule = "positive" if field in positive else "non_negative"
        b.refusal(
            edge_id(field, "ulp_below_0"),
            Msg(f"refuses a {field} one ulp below 0", f"拒绝比 0 低一个 ulp 的 {field}"),
            rule,
            valid,
            Call(P2, ([_edge() | {field: -TINY}], PLACEMENT)),
        )
        if field in positive:
            b.refusal(
                edge_id(field, "minus_zero"),
                Msg(f"refuses a {field} of -0.0 (zero)", f"拒绝 -0.0（即零）的 {field}"),
                rule,
                valid,
                Call(P2, ([_edge() | {field: -0.0}], PLACEMENT)),
            )
        else:
            b.diff(
                edge_id(field, "minus_zero"),
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
            edge_id("negative", one, "and", two),
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
            edge_id("fractional_items", str(value).replace(".", "_")),
            Msg(
                f"accepts a fractional items_per_work_unit ({value})",
                f"接受小数的 items_per_work_unit（{value}）",
            ),
            "positive",
            Call(P2, ([_edge(items_per_work_unit=value), _edge("critic", "reward")], PLACEMENT)),
            K2,
            EDGE_WEIGHT,
        )


def derive_critical_ties(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """critical: two fabrics' exposures at exact edges of each other (== is exact), the
    larger named first and then last; and fabrics that carry no traffic at all."""
    for magnitude in magnitudes():
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
                    edge_id("critical", number_tag(magnitude), label, order),
                    Msg(
                        f"fabric exposures {label.replace('_', ' ')} each other: "
                        + ("both are critical" if label == "at" else "only the larger is critical"),
                        "互连域暴露"
                        + (
                            "相等：两者都是关键域"
                            if label == "at"
                            else f"{ULP_ZH[label]}：只有较大者是关键域"
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
        edge_id("critical_zero_traffic"),
        Msg(
            "fabrics whose edges carry no traffic have entries of 0.0, all critical",
            "边上没有流量的互连域条目为 0.0，全部是关键域",
        ),
        s.rule,
        Call(P2, (idle, PLACEMENT)),
        K2,
        EDGE_WEIGHT,
    )


def derive_ledger_containers(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """totals: no edge, one edge, only same-pool edges."""
    for label, edges in (
        ("no_edges", []),
        ("one_edge", [_edge()]),
        ("only_same_pool", [_edge("rollout", "reward"), _edge("learner", "critic")]),
    ):
        b.diff(
            edge_id("ledger", label),
            Msg(f"totals of {label.replace('_', ' ')}", f"汇总：{label}"),
            s.rule,
            Call(P2, (edges, PLACEMENT)),
            K2,
            EDGE_WEIGHT,
        )


def derive_pool_names(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """names: whitespace is part of a pool's and an endpoint's name."""
    pool = rng.choice(["pool-a", "gpu", "A"])
    placement = {"rollout": pool, "learner": f"{pool} ", "rollout ": pool}
    edges = [_edge("rollout", "learner"), _edge("rollout ", "rollout")]
    b.diff(
        edge_id("pool_names_with_whitespace"),
        Msg(
            "pools and endpoints differing only in whitespace are different",
            "只在空白上不同的资源池与端点是不同的",
        ),
        s.rule,
        Call(P2, (edges, placement)),
        K2,
        EDGE_WEIGHT,
    )
