"""TODO 1, ``pipeline_capacity``: the cases derived from its statements (``edges``)."""

from __future__ import annotations

import random
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
    pick_names,
)
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call
from pytest_rlsys.messages import Msg

__all__ = [
    "derive_arrival_sign",
    "derive_margins",
    "derive_rate_signs",
    "derive_stage_names",
    "derive_ties",
]

P1 = "pipeline_capacity"
K1 = RESULT_KEYS[P1]


def derive_ties(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """bottlenecks: effective rates k tolerances apart, the nearer one named first and
    then last (both orders of the pair)."""
    for label, base, other, k in band_gaps():
        for order in ("near_first", "near_last"):
            first, middle, last = sorted(pick_names(rng, 3))
            near, low, far = (
                (first, middle, last) if order == "near_first" else (last, first, middle)
            )
            rates = {near: other, low: base, far: base * 3}
            side = "tied" if k < 1 else "not tied"
            b.diff(
                edge_id("tie", label, order),
                Msg(
                    f"effective rates {k} tolerances apart are {side}",
                    f"相差 {k} 个容差的有效速率{'并列' if k < 1 else '不并列'}",
                ),
                s.rule,
                Call(P1, (rates, 0, dict.fromkeys(rates, 1))),
                ("bottlenecks", "capacity"),
                EDGE_WEIGHT,
            )


# exact_edges' labels, as a zh learner reads them (the en text spells the label out).
_ZH_EDGE = {
    "ulp_below": "比容量小一个 ulp",
    "at": "等于容量",
    "ulp_above": "比容量大一个 ulp",
    "half": "为容量的一半",
    "one_and_a_half": "为容量的 1.5 倍",
    "double": "为容量的 2 倍",
}


def derive_margins(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """unstable: the arrival rate at the capacity's exact edges (a margin below 0 is
    negative, exactly 0 is stable); the bottleneck's multiplier 2, the other's 0.5."""
    for magnitude in magnitudes():
        for label, arrival in exact_edges(magnitude):
            if magnitude != 1.0 and label in ("half", "one_and_a_half", "double"):
                continue
            slow, fast = pick_names(rng, 2)
            rates = {slow: magnitude * 2, fast: magnitude * 2}
            sign = "negative" if arrival > magnitude else "not negative"
            b.diff(
                edge_id("margin", number_tag(magnitude), label),
                Msg(
                    f"an arrival rate {label.replace('_', ' ')} the capacity {magnitude:g}: "
                    f"the margin is {sign}",
                    f"到达率{_ZH_EDGE[label]}（容量 {magnitude:g}）：余量"
                    + ("为负" if arrival > magnitude else "不为负"),
                ),
                s.rule,
                Call(P1, (rates, arrival, {slow: 2, fast: 0.5})),
                ("unstable_stages", "queue_stable", "queue_margins"),
                EDGE_WEIGHT,
            )


def derive_arrival_sign(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """arrival: -0.0 is not negative (accepted); the smallest negative number is."""
    stage = pick_names(rng, 1)[0]
    valid = Call(P1, ({stage: 8}, 0, {stage: 2}))
    b.diff(
        edge_id("arrival_minus_zero"),
        Msg("accepts an arrival rate of -0.0 (not below 0)", "接受 -0.0 的到达率（不低于 0）"),
        s.rule,
        Call(P1, ({stage: 8}, -0.0, {stage: 2})),
        K1,
        EDGE_WEIGHT,
    )
    b.refusal(
        edge_id("arrival_ulp_below_0"),
        Msg("refuses an arrival rate one ulp below 0", "拒绝比 0 低一个 ulp 的到达率"),
        s.rule,
        valid,
        Call(P1, ({stage: 8}, -TINY, {stage: 2})),
    )


def derive_rate_signs(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """positive: -0.0 is zero, one ulp below 0 is negative, and a negative rate with a
    negative multiplier (a positive ratio) is refused; the smallest positive is fine."""
    one, two = pick_names(rng, 2)
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
            edge_id(label),
            Msg(f"refuses {what.en}", f"拒绝{what.zh}"),
            s.rule,
            valid,
            Call(P1, ({**rates, **rate_fix}, 1, {**mult, **mult_fix})),
        )
    b.diff(
        edge_id("smallest_positive_rate"),
        Msg(
            "accepts the smallest positive rate and multiplier (5e-324)",
            "接受最小的正速率与倍率（5e-324）",
        ),
        s.rule,
        Call(P1, ({one: TINY, two: 3}, 0, {one: TINY, two: 1.5})),
        K1,
        EDGE_WEIGHT,
    )


def derive_stage_names(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """names: whitespace is part of a stage's name."""
    stage = pick_names(rng, 1)[0]
    rates = {stage: 10, f"{stage} ": 20, f"\t{stage}": 30}
    b.diff(
        edge_id("stage_names_with_whitespace"),
        Msg(
            "names differing only in whitespace are different stages",
            "只在空白上不同的名称是不同的阶段",
        ),
        s.rule,
        Call(P1, (rates, 25, {f"\t{stage}": 1, stage: 1, f"{stage} ": 1})),
        K1,
        EDGE_WEIGHT,
    )
