"""TODO 1, ``pipeline_capacity``: the chapter's assertions and the hidden cases."""

from __future__ import annotations

import random
from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import (
    expect_keys,
    expect_only_keys,
    expect_relation,
    expect_unchanged_inputs,
    expect_value_error,
    same_keys,
)
from pytest_rlsys.grading.battery.generators import (
    STAGES,
    Arrival,
    gen_pipeline,
    num,
    out_of_order,
)
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call
from pytest_rlsys.grading.comparison import find_mismatch, numbers_match
from pytest_rlsys.messages import Msg

__all__ = ["RULES", "add_hidden", "add_visible"]

FUNC = "pipeline_capacity"
KEYS = RESULT_KEYS[FUNC]

# Every rule a hidden case grades, as the words the template's docstring says it in.
RULES: dict[str, Msg] = {
    "effective": Msg(
        "effective_rates maps each stage to its rate divided by its items per work unit",
        "effective_rates：各阶段速率除以该阶段每工作单位的条目数",
    ),
    "capacity": Msg("capacity is the smallest effective rate", "capacity 是最小的有效速率"),
    "bottlenecks": Msg(
        "bottlenecks lists every stage whose effective rate equals the capacity, sorted by name",
        "bottlenecks 列出有效速率等于 capacity 的全部阶段，按名称排序",
    ),
    "margins": Msg(
        "queue_margins maps each stage to its effective rate minus the arrival rate",
        "queue_margins：各阶段有效速率减去到达率",
    ),
    "unstable": Msg(
        "unstable_stages lists the stages with a negative margin, sorted by name; "
        "a margin of exactly 0 is stable",
        "unstable_stages 列出余量为负的阶段，按名称排序；余量恰好为 0 仍是稳定的",
    ),
    "queue_stable": Msg(
        "queue_stable is True exactly when no stage is unstable",
        "当且仅当没有积压阶段时 queue_stable 为 True",
    ),
    "keys": Msg("Returns a dict with six keys", "返回含六个键的 dict"),
    "numbers": Msg(
        "Every number may be an int or a float, including values between 0 and 1; "
        "the arrival rate may be 0",
        "每个数都可能是 int 或 float，包括 0 与 1 之间的值；到达率可以为 0",
    ),
    "pure": Msg(
        "The arguments are never modified, and the order of dict entries does not "
        "change the result",
        "不得修改任何参数；字典条目的顺序不影响结果",
    ),
    "stage_sets": Msg(
        "stage_rates and items_per_work_unit name different stages, or no stage at all",
        "stage_rates 与 items_per_work_unit 的阶段不一致，或没有任何阶段",
    ),
    "positive": Msg(
        "a rate or a multiplier is NaN, infinite, zero or negative",
        "某个速率或倍率为 NaN、无穷、零或负数",
    ),
    "arrival": Msg("the arrival rate is NaN, infinite or negative", "到达率为 NaN、无穷或负数"),
    "names": Msg(
        "Stage names are used exactly as given: 'rollout' and 'rollout ' are two stages",
        "阶段名称按原样使用：'rollout' 与 'rollout ' 是两个阶段",
    ),
}


def add_visible(b: BatteryBuilder) -> None:
    """The chapter's ``test_pipeline_capacity``, one case per assertion."""
    cap = Call(
        FUNC,
        ({"rollout": 240, "reward": 160, "learner": 80},),
        {"arrival_rate": 70, "items_per_work_unit": {"rollout": 3, "reward": 2, "learner": 1}},
    )
    unstable = Call(FUNC, ({"rollout": 120, "reward": 80}, 90, {"rollout": 1, "reward": 1}))
    b.visible(
        "effective_rates",
        Msg("normalises rates by their multipliers", "按倍率归一速率"),
        [cap],
        expect_keys({"effective_rates": {"rollout": 80.0, "reward": 80.0, "learner": 80.0}}),
        claim="result['effective_rates'] == {'rollout': 80.0, 'reward': 80.0, 'learner': 80.0}",
    )
    b.visible(
        "tied_bottlenecks",
        Msg("lists every tied bottleneck", "列出全部并列瓶颈"),
        [cap],
        expect_keys({"bottlenecks": ["learner", "reward", "rollout"]}),
        claim="result['bottlenecks'] == ['learner', 'reward', 'rollout']",
    )
    b.visible(
        "stable_queue",
        Msg("reports a stable pipeline", "报告稳定的流水线"),
        [cap],
        expect_keys({"unstable_stages": [], "queue_stable": True}),
        claim="result['unstable_stages'] == [] and result['queue_stable'] is True",
    )
    b.visible(
        "unstable_stage",
        Msg("reports a backlogged stage", "报告积压阶段"),
        [unstable],
        expect_keys({"unstable_stages": ["reward"]}),
        claim="unstable['unstable_stages'] == ['reward']",
    )
    b.visible(
        "mismatched_stages",
        Msg("refuses mismatched stage sets", "拒绝不一致的阶段集合"),
        [Call(FUNC, ({"rollout": 120}, 20, {"reward": 1}))],
        expect_value_error,
        claim="raises ValueError: 阶段集合不一致时应失败",
    )
    b.visible(
        "nan_rate",
        Msg("refuses a NaN stage rate", "拒绝 NaN 阶段速率"),
        [Call(FUNC, ({"rollout": float("nan")}, 20, {"rollout": 1}))],
        expect_value_error,
        claim="raises ValueError: 非有限阶段速率应失败",
    )


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
    _fixed_probes(b)
    _refusals(b, rng)


# Relative gaps of a near-tie (and of an arrival just above capacity): a tie tolerance,
# a rounding or an isclose looser than the reference's 1e-9 merges the two stages.
NEAR = (
    ("1e-3", 1e-3),
    ("1e-4", 1e-4),
    ("1e-5", 1e-5),
    ("1e-6", 1e-6),
    # Just outside the reference's 1e-9: a 1e-7 or 1e-8 tolerance merges these.
    ("1e-8", 1e-8),
)


def _fixed_probes(b: BatteryBuilder) -> None:
    """Probes with fixed inputs: whether a misreading shows never depends on the seed."""
    for label, gap in NEAR:
        # "critic" sorts first and is only near the minimum: a tolerant tie lists it too.
        b.diff(
            f"near_tie_{label.replace('-', '_')}",
            Msg(
                f"a stage {label} (relative) above the minimum is not a bottleneck",
                f"比最小有效速率高 {label}（相对）的阶段不是瓶颈",
            ),
            "bottlenecks",
            Call(
                FUNC,
                (
                    {"rollout": 4.5, "critic": 1.0 * (1 + gap), "reward": 1.0},
                    0.5,
                    {"rollout": 1, "critic": 0.5, "reward": 0.5},
                ),
            ),
            ("bottlenecks", "capacity"),
        )
    # The same near-tie around 0.002: an absolute tolerance or a rounding to 6 decimals
    # merges stages 2e-9 apart, which a relative one at 1e-6 would not.
    b.diff(
        "near_tie_small_rates",
        Msg(
            "a small stage rate 1e-6 (relative) above the minimum is not a bottleneck",
            "很小的速率比最小值高 1e-6（相对）时也不是瓶颈",
        ),
        "bottlenecks",
        Call(
            FUNC,
            (
                {"rollout": 0.5, "critic": 0.001 * (1 + 1e-6), "reward": 0.001},
                0.0005,
                {"rollout": 1, "critic": 0.5, "reward": 0.5},
            ),
        ),
        ("bottlenecks", "capacity"),
    )
    b.diff(
        "arrival_just_above_capacity",
        Msg(
            "an arrival 1e-6 (relative) above capacity is unstable",
            "到达率比容量高 1e-6（相对）时为积压",
        ),
        "unstable",
        Call(FUNC, ({"rollout": 80, "reward": 50}, 50 * (1 + 1e-6), {"rollout": 1, "reward": 1})),
        ("unstable_stages", "queue_stable"),
    )
    _boundary_probes(b)
    b.anchored(
        "six_keys",
        Msg("returns exactly the six documented keys", "只返回文档中的六个键"),
        "keys",
        [Call(FUNC, ({"rollout": 90, "learner": 60}, 30, {"rollout": 1, "learner": 2}))],
        expect_only_keys(KEYS),
        ("capacity",),
    )
    # Effective rates and margins that are not round (x/3, x/7...): rounding shows.
    odd = Call(
        FUNC,
        (
            {"rollout": 100, "reward": 50, "learner": 97.0},
            10.1,
            {"rollout": 3, "reward": 7, "learner": 6},
        ),
    )
    b.diff(
        "non_round_effective_rates",
        Msg("keeps effective rates unrounded (100 / 3)", "有效速率不取整（100 / 3）"),
        "effective",
        odd,
        ("effective_rates", "capacity"),
    )
    b.diff(
        "non_round_margins",
        Msg("keeps queue margins unrounded", "队列余量不取整"),
        "margins",
        odd,
        ("queue_margins",),
    )


def _refusals(b: BatteryBuilder, rng: random.Random) -> None:
    """Each bad input breaks exactly one rule of a valid pipeline, sent next to it."""
    rates, arrival, mult = gen_pipeline(rng, 3, arrival="below")
    valid = Call(FUNC, (rates, arrival, mult))
    first = next(iter(rates))
    bad: list[tuple[str, Msg, str, Call]] = []
    for label, en, zh, value in (
        ("nan", "a NaN", " NaN ", float("nan")),
        ("inf", "an infinite", "无穷", float("inf")),
        ("zero", "a zero", "零", 0),
        ("negative", "a negative", "负", -40),
    ):
        bad.append(
            (
                f"{label}_rate",
                Msg(f"refuses {en} stage rate", f"拒绝{zh}阶段速率"),
                "positive",
                Call(FUNC, (dict(rates, **{first: value}), arrival, mult)),
            )
        )
        bad.append(
            (
                f"{label}_multiplier",
                Msg(f"refuses {en} multiplier", f"拒绝{zh}工作单位倍率"),
                "positive",
                Call(FUNC, (rates, arrival, dict(mult, **{first: value}))),
            )
        )
    for label, en, zh, value in (
        ("nan", "a NaN", " NaN ", float("nan")),
        ("inf", "an infinite", "无穷", float("inf")),
        ("negative", "a negative", "负", -1),
    ):
        bad.append(
            (
                f"{label}_arrival",
                Msg(f"refuses {en} arrival rate", f"拒绝{zh}到达率"),
                "arrival",
                Call(FUNC, (rates, value, mult)),
            )
        )
    bad.append(
        (
            "extra_multiplier",
            Msg("refuses a multiplier for an unknown stage", "拒绝多出阶段的倍率"),
            "stage_sets",
            Call(FUNC, (rates, arrival, dict(mult, judge_extra=1))),
        )
    )
    bad.append(
        (
            "missing_multiplier",
            Msg("refuses a stage without a multiplier", "拒绝缺少倍率的阶段"),
            "stage_sets",
            Call(FUNC, (rates, arrival, {k: v for k, v in mult.items() if k != first})),
        )
    )
    renamed = {("judge_extra" if k == first else k): v for k, v in mult.items()}
    bad.append(
        (
            "renamed_multiplier",
            Msg(
                "refuses multipliers for as many stages but another one",
                "拒绝阶段数相同但名称不同的倍率",
            ),
            "stage_sets",
            Call(FUNC, (rates, arrival, renamed)),
        )
    )
    for case_id, msg, rule, call in bad:
        b.refusal(case_id, msg, rule, valid, call)
    single = Call(FUNC, ({first: rates[first]}, arrival, {first: mult[first]}))
    b.refusal(
        "empty_pipeline",
        Msg("refuses an empty pipeline", "拒绝空流水线"),
        "stage_sets",
        single,
        Call(FUNC, ({}, arrival, {})),
    )


def _boundary_probes(b: BatteryBuilder) -> None:
    """The edges of the stated tolerances (issue 31): isclose(rel 1e-9, abs 1e-12) for a
    tie, an exact ``< 0`` for a margin, sorted() for names; fixed inputs."""
    one = {"rollout": 1, "critic": 1, "reward": 1}
    ties: list[tuple[str, Msg, dict[str, Any], float]] = [
        (
            "tie_within_1e_10",
            Msg(
                "a stage 1e-10 (relative) above the minimum is a bottleneck (tied within 1e-9)",
                "比最小有效速率高 1e-10（相对）的阶段也是瓶颈（1e-9 以内为并列）",
            ),
            {"rollout": 4.5, "critic": 2.0 * (1 + 1e-10), "reward": 2.0},
            0.5,
        ),
        (
            "tie_large_rates",
            Msg(
                "rates 1e12 and 1e12 + 1 are tied (relative, not absolute, tolerance)",
                "速率 1e12 与 1e12 + 1 并列（相对容差，而非绝对容差）",
            ),
            {"rollout": 3e12, "critic": 1e12 + 1, "reward": 1e12},
            5e11,
        ),
        (
            "near_tie_large_rates",
            Msg(
                "rates 1e12 and 1e12 * (1 + 1e-8) are not tied",
                "速率 1e12 与 1e12 * (1 + 1e-8) 不并列",
            ),
            {"rollout": 3e12, "critic": 1e12 * (1 + 1e-8), "reward": 1e12},
            5e11,
        ),
        (
            "tie_tiny_rates",
            Msg(
                "rates 2e-12 and 2.5e-12 are tied (absolute tolerance 1e-12)",
                "速率 2e-12 与 2.5e-12 并列（绝对容差 1e-12）",
            ),
            {"rollout": 1.0, "critic": 2.5e-12, "reward": 2e-12},
            0,
        ),
        (
            "near_tie_tiny_rates",
            Msg(
                "rates 2e-12 and 4e-12 are not tied (more than 1e-12 apart)",
                "速率 2e-12 与 4e-12 不并列（相差超过 1e-12）",
            ),
            {"rollout": 1.0, "critic": 4e-12, "reward": 2e-12},
            0,
        ),
    ]
    for case_id, msg, rates, arrival in ties:
        b.diff(case_id, msg, "bottlenecks", Call(FUNC, (rates, arrival, one)), ("bottlenecks",))
    # Code-point order: 'Z' < 'a' < 'é'; a case-insensitive or locale sort differs.
    names = {"éclair": 5, "alpha": 5, "Zeta": 5, "Beta": 9}
    b.diff(
        "ties_sorted_by_code_point",
        Msg(
            "tied bottlenecks sorted as sorted() does ('Z' < 'a' < 'é')",
            "并列瓶颈按 sorted() 的方式排序（'Z' < 'a' < 'é'）",
        ),
        "bottlenecks",
        Call(FUNC, (names, 1, {n: 1 for n in names})),
        ("bottlenecks",),
    )
    b.diff(
        "unstable_sorted_by_code_point",
        Msg(
            "unstable stages sorted as sorted() does ('Z' < 'a' < 'é')",
            "积压阶段按 sorted() 的方式排序（'Z' < 'a' < 'é'）",
        ),
        "unstable",
        Call(FUNC, (names, 7, {n: 1 for n in names})),
        ("unstable_stages",),
    )
    margins: list[tuple[str, Msg, float, float]] = [
        (
            "arrival_1e_10_above_capacity",
            Msg(
                "an arrival 1e-10 (relative) above capacity is unstable (margins are exact)",
                "到达率比容量高 1e-10（相对）即积压（余量精确比较）",
            ),
            50.0,
            50 * (1 + 1e-10),
        ),
        (
            "arrival_1e_10_below_capacity",
            Msg(
                "an arrival 1e-10 (relative) below capacity is stable",
                "到达率比容量低 1e-10（相对）仍稳定",
            ),
            50.0,
            50 * (1 - 1e-10),
        ),
        (
            "arrival_1_above_large_capacity",
            Msg(
                "an arrival of 1e12 + 1 above a capacity of 1e12 is unstable",
                "容量 1e12、到达率 1e12 + 1 时为积压",
            ),
            1e12,
            1e12 + 1,
        ),
        (
            "arrival_just_above_tiny_capacity",
            Msg(
                "a margin of about -1e-15 is negative (no absolute tolerance)",
                "约为 -1e-15 的余量也是负的（没有绝对容差）",
            ),
            0.002,
            0.002 + 1e-15,
        ),
    ]
    for case_id, msg, rate, arrival in margins:
        b.diff(
            case_id,
            msg,
            "unstable",
            Call(
                FUNC, ({"rollout": 3 * rate, "reward": rate}, arrival, {"rollout": 1, "reward": 1})
            ),
            ("unstable_stages", "queue_stable"),
        )
