"""TODO 1, ``pipeline_capacity``: the rules its template states (``RULES``) and the chapter's
assertions (the visible cases).  The hidden cases: ``todo1_hidden``, ``todo1_probes``."""

from __future__ import annotations

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import expect_keys, expect_value_error
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call
from pytest_rlsys.messages import Msg

__all__ = ["FUNC", "KEYS", "RULES", "add_visible"]


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
