"""TODO 1, ``pipeline_capacity``: the hidden cases (random differential strata, properties,
refusals), in their fixed order; the fixed-input probes are in ``todo1_probes``."""

from __future__ import annotations

import random
from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import expect_relation, expect_unchanged_inputs, same_keys
from pytest_rlsys.grading.battery.generators import STAGES, Arrival, gen_pipeline, num, out_of_order
from pytest_rlsys.grading.battery.model import Call
from pytest_rlsys.grading.battery.todo1 import FUNC, KEYS
from pytest_rlsys.grading.battery.todo1_probes import fixed_probes
from pytest_rlsys.grading.comparison import find_mismatch, numbers_match
from pytest_rlsys.messages import Msg

__all__ = ["add_hidden"]


# (stages, tie, arrival, ints): one random pipeline of each shape.
STRATA: tuple[tuple[int, bool, Arrival, bool], ...] = (
    (3, False, "below", True),
    (4, True, "at_capacity", False),
    (5, False, "between", True),
    (2, True, "above_all", False),
    (1, False, "zero", True),
    (6, True, "between", False),
    (4, False, "at_capacity", True),
    (3, True, "zero", False),
    (5, True, "below", True),
    (2, False, "between", False),
)


def add_hidden(b: BatteryBuilder, rng: random.Random) -> None:
    for i, (stages, tie, arrival, ints) in enumerate(STRATA):
        rates, arrival_rate, mult = gen_pipeline(rng, stages, tie=tie, arrival=arrival, ints=ints)
        # Every key is compared; the rule named is the one this shape stresses most.
        rule = (
            "bottlenecks"
            if tie
            else "unstable"
            if arrival == "at_capacity"
            else "queue_stable"
            if arrival in ("between", "above_all")
            else "margins"
        )
        b.diff(
            f"differential_{i}",
            Msg("matches the reference on random pipelines", "随机流水线上与参考实现一致"),
            rule,
            Call(FUNC, (rates, arrival_rate, mult)),
            KEYS,
        )
    names = sorted(rng.sample(STAGES, 4), reverse=True)  # the tied three out of order
    tied = {names[0]: 160, names[1]: 40, names[2]: 40, names[3]: 40}
    b.diff(
        "ties",
        Msg("lists every tied bottleneck", "列出全部并列瓶颈"),
        "bottlenecks",
        Call(FUNC, (tied, 10, {n: 1 for n in names})),
        ("bottlenecks", "capacity"),
    )
    names = out_of_order(rng, rng.sample(STAGES, 3))
    near = {names[0]: 20.5, names[1]: 20, names[2]: 41}
    b.diff(
        "near_tie",
        Msg("a near-tie (20 and 20.5) is not a tie", "接近但不相等的速率不算并列（20 与 20.5）"),
        "bottlenecks",
        Call(FUNC, (near, 10, {n: 1 for n in names})),
        KEYS,
    )
    rates, _, mult = gen_pipeline(rng, 3, tie=True, arrival="at_capacity")
    cap = min(float(rates[n]) / float(mult[n]) for n in rates)
    b.diff(
        "arrival_equals_capacity",
        Msg("arrival exactly at capacity is stable", "到达率恰好等于容量时仍稳定"),
        "unstable",
        Call(FUNC, (rates, num(cap, True), mult)),
        KEYS,
    )
    b.diff(
        "zero_arrival",
        Msg("accepts a zero arrival rate", "接受零到达率"),
        "numbers",
        Call(FUNC, (rates, 0, mult)),
        KEYS,
    )
    # Declared in reverse alphabetical order, so an unsorted answer cannot pass.
    names = sorted(rng.sample(STAGES, 5), reverse=True)
    slow = {names[0]: 10, names[1]: 30, names[2]: 20, names[3]: 200, names[4]: 15}
    b.diff(
        "several_unstable",
        Msg("lists several unstable stages, sorted", "多个积压阶段按名称排序"),
        "unstable",
        Call(FUNC, (slow, 100, {n: 1 for n in names})),
        KEYS,
    )
    b.diff(
        "single_stage",
        Msg("handles a single-stage pipeline", "处理单阶段流水线"),
        "capacity",
        Call(FUNC, ({"learner": 12.5}, 3, {"learner": 0.5})),
        KEYS,
    )
    b.diff(
        "fractional_multipliers",
        Msg("divides by fractional multipliers", "除以小数倍率"),
        "effective",
        Call(FUNC, ({"rollout": 30, "reward": 40.0}, 7.5, {"rollout": 0.25, "reward": 0.5})),
        KEYS,
    )
    names = out_of_order(rng, rng.sample(STAGES, 3))
    small = {names[0]: 0.5, names[1]: 0.75, names[2]: 3}
    b.diff(
        "rates_below_one",
        Msg("accepts rates between 0 and 1", "接受 0 与 1 之间的速率"),
        "numbers",
        Call(FUNC, (small, 0.25, {names[0]: 1, names[1]: 0.5, names[2]: 4})),
        KEYS,
    )
    for k in (2, 0.5):
        rates, arrival_rate, mult = gen_pipeline(rng, 4, tie=True, arrival="between")
        scaled = {n: num(float(r) * k, True) for n, r in rates.items()}

        def scale_relation(values: list[Any], k: float = k) -> str | None:
            a, s = values
            if find_mismatch(a["bottlenecks"], s["bottlenecks"]):
                return "scaling every rate and the arrival rate changed the bottlenecks"
            if not numbers_match(float(a["capacity"]) * k, float(s["capacity"])):
                return "scaling every rate by k did not scale the capacity by k"
            if find_mismatch(a["unstable_stages"], s["unstable_stages"]):
                return "scaling every rate and the arrival rate changed the unstable stages"
            return None

        b.anchored(
            f"scale_by_{k}",
            Msg(
                "scaling rates and arrival by k keeps the bottlenecks",
                "速率与到达率同乘 k 不改变瓶颈",
            ),
            "capacity",
            [
                Call(FUNC, (rates, arrival_rate, mult)),
                Call(FUNC, (scaled, num(float(arrival_rate) * k, True), mult)),
            ],
            expect_relation(scale_relation),
            KEYS,
        )
    rates, arrival_rate, mult = gen_pipeline(rng, 5, tie=True, arrival="between")
    b.anchored(
        "insertion_order",
        Msg("gives the same result whatever the dict order", "结果与字典顺序无关"),
        "pure",
        [
            Call(FUNC, (rates, arrival_rate, mult)),
            Call(
                FUNC,
                (
                    dict(reversed(list(rates.items()))),
                    arrival_rate,
                    dict(reversed(list(mult.items()))),
                ),
            ),
        ],
        expect_relation(same_keys(KEYS)),
        KEYS,
    )
    # Fixed input: ints, and floats with an integral value, that converting in place
    # (float(v) or v / 1) changes in type only; the check compares types exactly.
    b.anchored(
        "immutability",
        Msg("leaves its inputs unchanged", "不修改输入参数"),
        "pure",
        [
            Call(
                FUNC,
                (
                    {"rollout": 240, "reward": 160.0, "learner": 80, "critic": 90},
                    70,
                    {"rollout": 3, "reward": 2.0, "learner": 1, "critic": 0.5},
                ),
            )
        ],
        expect_unchanged_inputs,
        ("capacity",),
    )
    fixed_probes(b)
    _refusals(b, rng)


def _refusals(b: BatteryBuilder, rng: random.Random) -> None:
    """Each bad input breaks exactly one rule of a valid pipeline, sent next to it."""
    rates, arrival, mult = gen_pipeline(rng, 3, arrival="below")
    valid = Call(FUNC, (rates, arrival, mult))
    first = next(iter(rates))
    for label, en, zh, value in (
        ("nan", "a NaN", " NaN ", float("nan")),
        ("inf", "an infinite", "无穷", float("inf")),
        ("zero", "a zero", "零", 0),
        ("negative", "a negative", "负", -40),
    ):
        b.refusal(
            f"{label}_rate",
            Msg(f"refuses {en} stage rate", f"拒绝{zh}阶段速率"),
            "positive",
            valid,
            Call(FUNC, (dict(rates, **{first: value}), arrival, mult)),
        )
        b.refusal(
            f"{label}_multiplier",
            Msg(f"refuses {en} multiplier", f"拒绝{zh}工作单位倍率"),
            "positive",
            valid,
            Call(FUNC, (rates, arrival, dict(mult, **{first: value}))),
        )
    for label, en, zh, value in (
        ("nan", "a NaN", " NaN ", float("nan")),
        ("inf", "an infinite", "无穷", float("inf")),
        ("negative", "a negative", "负", -1),
    ):
        b.refusal(
            f"{label}_arrival",
            Msg(f"refuses {en} arrival rate", f"拒绝{zh}到达率"),
            "arrival",
            valid,
            Call(FUNC, (rates, value, mult)),
        )
    b.refusal(
        "extra_multiplier",
        Msg("refuses a multiplier for an unknown stage", "拒绝多出阶段的倍率"),
        "stage_sets",
        valid,
        Call(FUNC, (rates, arrival, dict(mult, judge_extra=1))),
    )
    b.refusal(
        "missing_multiplier",
        Msg("refuses a stage without a multiplier", "拒绝缺少倍率的阶段"),
        "stage_sets",
        valid,
        Call(FUNC, (rates, arrival, {k: v for k, v in mult.items() if k != first})),
    )
    renamed = {("judge_extra" if k == first else k): v for k, v in mult.items()}
    b.refusal(
        "renamed_multiplier",
        Msg(
            "refuses multipliers for as many stages but another one",
            "拒绝阶段数相同但名称不同的倍率",
        ),
        "stage_sets",
        valid,
        Call(FUNC, (rates, arrival, renamed)),
    )
    single = Call(FUNC, ({first: rates[first]}, arrival, {first: mult[first]}))
    b.refusal(
        "empty_pipeline",
        Msg("refuses an empty pipeline", "拒绝空流水线"),
        "stage_sets",
        single,
        Call(FUNC, ({}, arrival, {})),
    )
