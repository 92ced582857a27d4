"""TODO 3, ``evaluate_topology``: the chapter's assertions and the hidden cases."""

from __future__ import annotations

import random
from typing import Any, Literal

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import (
    expect_keys,
    expect_relation,
    expect_unchanged_inputs,
    expect_value_error,
    same_keys,
)
from pytest_rlsys.grading.battery.generators import (
    BAD_VALUES,
    declared_backwards,
    gen_pipeline,
    num,
    out_of_order,
)
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call, plain
from pytest_rlsys.messages import Msg

__all__ = ["RULES", "add_hidden", "add_visible"]

FUNC = "evaluate_topology"
KEYS = RESULT_KEYS[FUNC]

RULES: dict[str, Msg] = {
    "hard": Msg(
        "Hard failures: memory_limit (a pool uses more memory than its limit), "
        "version_sync (version_sync_ok is False), recovery_not_ready (recovery_ok is "
        "False)",
        "硬失败：memory_limit（某资源池显存超过其上限）、version_sync（version_sync_ok "
        "为 False）、recovery_not_ready（recovery_ok 为 False）",
    ),
    "no_limit": Msg(
        "A pool without a declared limit counts as over its limit; memory exactly "
        "at the limit is within it",
        "未声明上限的资源池按超限处理；显存恰好等于上限不算超限",
    ),
    "pressures": Msg(
        "Tuning pressures: unstable_queue (the capacity report has unstable "
        "stages), exposed_transfer (a fabric's exposure is above "
        "max_exposed_s_per_s; exactly at it is not above)",
        "调优压力：unstable_queue（容量报告中有积压阶段）、exposed_transfer（某个"
        "互连域的暴露高于 max_exposed_s_per_s；恰好相等不算高于）",
    ),
    "decision": Msg(
        "decision is reject when there is a hard failure, else tune when there is "
        "a pressure, else accept; reasons lists every hard failure in the order "
        "above, else every pressure in the order above, else nothing",
        "有硬失败时 decision 为 reject，否则有压力时为 tune，否则为 accept；reasons "
        "按上述顺序列出全部硬失败，否则按上述顺序列出全部压力，否则为空",
    ),
    "evidence": Msg(
        "over_limit_pools, unstable_stages and overloaded_fabrics are reported "
        "whatever the decision, each sorted by name",
        "无论 decision 为何，都报告 over_limit_pools、unstable_stages 与 "
        "overloaded_fabrics，各自按名称排序",
    ),
    "numbers": Msg(
        "max_exposed_s_per_s defaults to 0.1; it, memory, limits and exposures may "
        "be 0, and every number may be an int or a float",
        "max_exposed_s_per_s 默认为 0.1；它、显存、上限与暴露都可以为 0，每个数都可能是 "
        "int 或 float",
    ),
    "pure": Msg(
        "The arguments are never modified, and the order of dict entries does not "
        "change the result",
        "不得修改任何参数；字典条目的顺序不影响结果",
    ),
    "ledger": Msg(
        "a pool's memory, a memory limit, a fabric exposure or max_exposed_s_per_s "
        "is NaN, infinite or negative",
        "某资源池显存、显存上限、互连域暴露或 max_exposed_s_per_s 为 NaN、无穷或负数",
    ),
    "names": Msg(
        "Pool names are used exactly as given: a limit declared for 'gpu' is no limit for 'gpu '",
        "资源池名称按原样使用：为 'gpu' 声明的上限不是 'gpu ' 的上限",
    ),
}


def add_visible(b: BatteryBuilder) -> None:
    """The chapter's ``test_evaluate_topology``, one case per assertion."""
    mult = {"rollout": 1, "reward": 1}
    stable_rep = plain(b.ref.pipeline_capacity({"rollout": 120, "reward": 80}, 70, mult))
    unstable_rep = plain(b.ref.pipeline_capacity({"rollout": 120, "reward": 80}, 90, mult))
    low = {"fabric_exposed_seconds_per_s": {"pcie-0": 0.05}, "critical_exposed_seconds_per_s": 0.05}
    high = {
        "fabric_exposed_seconds_per_s": {"pcie-0": 0.20},
        "critical_exposed_seconds_per_s": 0.20,
    }
    accepted = Call(FUNC, (stable_rep, {"A": 30}, {"A": 40}, low, True, True))
    tuned = Call(FUNC, (unstable_rep, {"A": 30}, {"A": 40}, high, True, True))
    rejected = Call(FUNC, (stable_rep, {"A": 50}, {"A": 40}, high, False, False))
    b.visible(
        "accept",
        Msg("accepts with no reasons", "无原因时接受"),
        [accepted],
        expect_keys({"decision": "accept", "reasons": []}),
        claim="accepted['decision'] == 'accept' and accepted['reasons'] == []",
    )
    b.visible(
        "tune_decision",
        Msg("a tuning pressure gives tune", "调优压力给出 tune"),
        [tuned],
        expect_keys({"decision": "tune"}),
        claim="tuned['decision'] == 'tune'",
    )
    b.visible(
        "tune_reasons",
        Msg("keeps every tuning reason", "保留全部调优原因"),
        [tuned],
        expect_keys({"reasons": ["unstable_queue", "exposed_transfer"]}),
        claim="tuned['reasons'] == ['unstable_queue', 'exposed_transfer']",
    )
    b.visible(
        "tune_evidence",
        Msg("reports unstable stages and overloaded fabrics", "报告积压阶段与过载互连域"),
        [tuned],
        expect_keys({"unstable_stages": ["reward"], "overloaded_fabrics": ["pcie-0"]}),
        claim="tuned['unstable_stages'] == ['reward'] and "
        "tuned['overloaded_fabrics'] == ['pcie-0']",
    )
    b.visible(
        "reject_decision",
        Msg("a hard failure gives reject", "硬失败给出 reject"),
        [rejected],
        expect_keys({"decision": "reject"}),
        claim="rejected['decision'] == 'reject'",
    )
    b.visible(
        "reject_reasons",
        Msg("keeps every hard failure, in order", "按序保留全部硬失败"),
        [rejected],
        expect_keys({"reasons": ["memory_limit", "version_sync", "recovery_not_ready"]}),
        claim="rejected['reasons'] == ['memory_limit', 'version_sync', 'recovery_not_ready']",
    )
    b.visible(
        "nan_memory",
        Msg("refuses a NaN pool memory", "拒绝 NaN 显存账本"),
        [Call(FUNC, (stable_rep, {"A": float("nan")}, {"A": 40}, low, True, True))],
        expect_value_error,
        claim="raises ValueError: 非有限显存账本应失败",
    )


Overload = Literal["none", "some", "all"]
EXPOSURES = [0.03125, 0.0625, 0.125, 0.25, 0.5, 0.75]


def _capacity(b: BatteryBuilder, rng: random.Random, unstable: bool) -> Any:
    """A report made by the reference: two tied unstable stages, or none."""
    rates, arrival, mult = gen_pipeline(
        rng, 4, tie=True, arrival="between" if unstable else "at_capacity"
    )
    return plain(b.ref.pipeline_capacity(rates, arrival, mult))


def _memory(
    rng: random.Random, over: bool, missing: bool, ints: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two to four pools (declared out of order); two over their limit when ``over``
    (one exactly at it otherwise), one without a limit when ``missing``."""
    pools = rng.sample(["A", "B", "C", "D", "E"], 4)
    # The pools that can be over their limit are declared in reverse name order.
    pools = [pools[0], *sorted(pools[1:], reverse=True)]
    limits = {p: rng.choice([24, 40, 48, 80, 96]) for p in pools}
    used: dict[str, float] = {p: limits[p] - rng.choice([2, 8, 16]) for p in pools}
    used[pools[0]] = limits[pools[0]]
    if over:
        used[pools[1]] = limits[pools[1]] + 8
        used[pools[2]] = limits[pools[2]] + 0.5
    declared = {p: num(v, ints) for p, v in limits.items() if not (missing and p == pools[3])}
    return {p: num(v, ints) for p, v in used.items()}, declared


def _transfer(
    rng: random.Random, overload: Overload, default: bool
) -> tuple[dict[str, Any], float | None]:
    """A transfer report with three fabrics (names out of order) and a threshold that
    leaves none, some (one exactly at it) or all of them overloaded."""
    names = out_of_order(rng, rng.sample(["nvlink", "pcie-a", "pcie-b", "ib", "roce"], 3))
    if default:
        values = {
            "none": [0.03125, 0.0625, 0.09375],
            "some": [0.0625, 0.125, 0.25],
            "all": [0.125, 0.25, 0.5],
        }[overload]
        threshold = None
    else:
        values = sorted(rng.sample(EXPOSURES[1:], 3))
        threshold = {"none": values[-1], "some": values[0], "all": values[0] / 2}[overload]
    rng.shuffle(values)
    exposure = dict(zip(names, values, strict=True))
    # The overloaded fabrics are declared in reverse name order.
    exposure = {
        **{n: v for n, v in exposure.items() if v <= (threshold or 0.1)},
        **declared_backwards({n: v for n, v in exposure.items() if v > (threshold or 0.1)}),
    }
    return (
        {"fabric_exposed_seconds_per_s": exposure, "critical_exposed_seconds_per_s": max(values)},
        threshold,
    )


# (unstable, over limit, a pool without limit, version_sync_ok, recovery_ok, overloaded
# fabrics, default threshold, ints)
STRATA: tuple[tuple[bool, bool, bool, bool, bool, Overload, bool, bool], ...] = (
    (False, False, False, True, True, "none", True, True),
    (True, False, False, True, True, "some", False, False),
    (False, True, False, True, True, "all", True, True),
    (True, False, True, False, True, "none", False, False),
    (False, False, False, False, False, "some", True, True),
    (True, True, True, True, False, "all", False, False),
    (False, False, False, True, True, "some", False, True),
    (True, False, False, True, True, "none", True, False),
    (False, True, False, False, True, "some", False, True),
    (True, False, False, True, False, "all", True, False),
)


def add_hidden(b: BatteryBuilder, rng: random.Random) -> None:
    for i, (backlog, over_limit, missing, sync, recovery, overload, default, ints) in enumerate(
        STRATA
    ):
        used, limits = _memory(rng, over_limit, missing, ints)
        transfer, threshold = _transfer(rng, overload, default)
        kwargs = {} if threshold is None else {"max_exposed_s_per_s": threshold}
        b.diff(
            f"differential_{i}",
            Msg("matches the reference on random topologies", "随机拓扑上与参考实现一致"),
            "decision",
            Call(
                FUNC, (_capacity(b, rng, backlog), used, limits, transfer, sync, recovery), kwargs
            ),
            KEYS,
        )
    stable = _capacity(b, rng, False)
    # Two unstable stages, so that sorting (or mutating) the list can be observed.
    unstable = plain(
        b.ref.pipeline_capacity(
            {"rollout": 40, "reward": 30, "learner": 90},
            50,
            {"rollout": 1, "reward": 1, "learner": 1},
        )
    )
    at = {
        "fabric_exposed_seconds_per_s": {"nvlink": 0.25, "pcie": 0.125},
        "critical_exposed_seconds_per_s": 0.25,
    }
    over_fabrics = {"pcie-b": 0.5, "pcie-a": 0.75, "ib": 0.125}
    over = {"fabric_exposed_seconds_per_s": over_fabrics, "critical_exposed_seconds_per_s": 0.75}
    calm = {"fabric_exposed_seconds_per_s": {}, "critical_exposed_seconds_per_s": 0.0}
    zero = {
        "fabric_exposed_seconds_per_s": {"nvlink": 0.0, "pcie": 0},
        "critical_exposed_seconds_per_s": 0.0,
    }
    diffs: list[tuple[str, Msg, str, Call]] = [
        (
            "exposure_at_threshold",
            Msg("exposure exactly at the threshold is not overloaded", "暴露恰好等于阈值不算过载"),
            "pressures",
            Call(
                FUNC, (stable, {"A": 10}, {"A": 20}, at, True, True), {"max_exposed_s_per_s": 0.25}
            ),
        ),
        (
            "memory_at_limit",
            Msg("memory exactly at the limit is within it", "显存恰好等于上限不算超限"),
            "no_limit",
            Call(FUNC, (stable, {"A": 40, "B": 8}, {"A": 40, "B": 16}, calm, True, True)),
        ),
        (
            "pool_without_limit",
            Msg("a pool with no declared limit is over it", "未声明上限的资源池按超限处理"),
            "no_limit",
            Call(FUNC, (stable, {"B": 8, "A": 4}, {"A": 40}, calm, True, True)),
        ),
        (
            "several_over_limit",
            Msg("lists several over-limit pools, sorted", "多个超限资源池按名称排序"),
            "evidence",
            Call(
                FUNC,
                (
                    stable,
                    {"C": 90, "A": 50, "B": 10},
                    {"C": 80, "A": 40, "B": 40},
                    calm,
                    True,
                    True,
                ),
            ),
        ),
        (
            "several_overloaded",
            Msg("lists several overloaded fabrics, sorted", "多个过载互连域按名称排序"),
            "evidence",
            Call(FUNC, (stable, {"A": 1}, {"A": 2}, over, True, True)),
        ),
        (
            "reject_keeps_evidence",
            Msg(
                "a reject still reports stages and fabrics",
                "decision 为 reject 时仍报告积压阶段与过载互连域",
            ),
            "evidence",
            Call(FUNC, (unstable, {"A": 1}, {"A": 2}, over, False, True)),
        ),
        (
            "only_recovery",
            Msg("a recovery failure alone rejects", "仅恢复路径缺失也判为 reject"),
            "hard",
            Call(FUNC, (stable, {"A": 1}, {"A": 2}, calm, True, False)),
        ),
        (
            "only_version",
            Msg("a version sync failure alone rejects", "仅版本同步失败也判为 reject"),
            "hard",
            Call(FUNC, (stable, {"A": 1}, {"A": 2}, calm, False, True)),
        ),
        (
            "only_transfer",
            Msg("exposed transfer alone gives tune", "仅传输暴露过高即调优"),
            "pressures",
            Call(FUNC, (stable, {"A": 1}, {"A": 2}, over, True, True)),
        ),
        (
            "only_queue",
            Msg("an unstable queue alone gives tune", "仅队列积压即调优"),
            "pressures",
            Call(FUNC, (unstable, {"A": 1}, {"A": 2}, calm, True, True)),
        ),
        (
            "default_threshold",
            Msg("the default threshold is 0.1", "默认阈值为 0.1"),
            "numbers",
            Call(
                FUNC,
                (
                    stable,
                    {"A": 1},
                    {"A": 2},
                    {
                        "fabric_exposed_seconds_per_s": {"x": 0.125, "y": 0.0625},
                        "critical_exposed_seconds_per_s": 0.125,
                    },
                    True,
                    True,
                ),
            ),
        ),
        (
            "zero_memory",
            Msg("accepts zero memory and a zero limit", "接受为零的显存与上限"),
            "numbers",
            Call(FUNC, (stable, {"A": 0, "B": 0.0}, {"A": 0.0, "B": 0}, calm, True, True)),
        ),
        (
            "zero_threshold",
            Msg("accepts a threshold of 0", "接受为 0 的阈值"),
            "numbers",
            Call(
                FUNC,
                (
                    stable,
                    {"A": 1},
                    {"A": 2},
                    dict(over, fabric_exposed_seconds_per_s=dict(over_fabrics, quiet=0.0)),
                    True,
                    True,
                ),
                {"max_exposed_s_per_s": 0},
            ),
        ),
        (
            "zero_exposure",
            Msg("accepts fabrics with zero exposure", "接受暴露为零的互连域"),
            "numbers",
            Call(
                FUNC, (stable, {"A": 1}, {"A": 2}, zero, True, True), {"max_exposed_s_per_s": 0.0}
            ),
        ),
    ]
    for case_id, msg, rule, call in diffs:
        b.diff(case_id, msg, rule, call, KEYS)
    # No case sends a capacity report whose unstable_stages is unsorted: the template says
    # capacity_report is a result of pipeline_capacity, which lists them sorted, so copying
    # them unsorted is a correct reading (docs/battery-rules.md).
    # Fixed input with ints (memory, limits, an exposure of 0) that converting in place
    # changes in type only; the check compares types exactly.
    b.anchored(
        "immutability",
        Msg("leaves its inputs unchanged", "不修改输入参数"),
        "pure",
        [
            Call(
                FUNC,
                (
                    unstable,
                    {"C": 90, "A": 50, "B": 10.0},
                    {"C": 80, "A": 40},
                    {
                        "fabric_exposed_seconds_per_s": {"pcie-b": 0.5, "pcie-a": 1, "ib": 0},
                        "critical_exposed_seconds_per_s": 1,
                    },
                    False,
                    True,
                ),
            )
        ],
        expect_unchanged_inputs,
        ("decision",),
    )
    _fixed_probes(b, stable)
    b.anchored(
        "insertion_order",
        Msg("gives the same result whatever the dict order", "结果与字典顺序无关"),
        "pure",
        [
            Call(
                FUNC,
                (
                    stable,
                    {"C": 90, "A": 50, "B": 10},
                    {"C": 80, "A": 40, "B": 40},
                    over,
                    True,
                    True,
                ),
            ),
            Call(
                FUNC,
                (
                    stable,
                    {"B": 10, "A": 50, "C": 90},
                    {"B": 40, "C": 80, "A": 40},
                    dict(
                        over,
                        fabric_exposed_seconds_per_s=dict(reversed(list(over_fabrics.items()))),
                    ),
                    True,
                    True,
                ),
            ),
        ],
        expect_relation(same_keys(KEYS)),
        KEYS,
    )
    _refusals(b, stable, at)


def _exposures(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "fabric_exposed_seconds_per_s": values,
        "critical_exposed_seconds_per_s": max(values.values(), default=0.0),
    }


def _fixed_probes(b: BatteryBuilder, stable: Any) -> None:
    """Probes with fixed inputs: whether a misreading shows never depends on the seed."""
    calm = _exposures({})
    probes: list[tuple[str, Msg, str, Call]] = [
        (
            "zero_memory_without_limit",
            Msg(
                "a pool using 0 memory with no declared limit is over it",
                "显存为 0 但未声明上限的资源池也按超限处理",
            ),
            "no_limit",
            Call(FUNC, (stable, {"A": 0, "B": 4}, {"B": 8}, calm, True, True)),
        ),
        (
            "memory_over_zero_limit",
            Msg("memory above a limit of 0 is over it", "显存高于为 0 的上限即超限"),
            "numbers",
            Call(FUNC, (stable, {"A": 5, "B": 1}, {"A": 0, "B": 2}, calm, True, True)),
        ),
        (
            "limit_without_memory",
            Msg(
                "a limit of a pool with no memory entry is no violation",
                "只有上限、没有显存条目的资源池不算超限",
            ),
            "hard",
            Call(FUNC, (stable, {"A": 10}, {"A": 20, "Z": 5}, calm, True, True)),
        ),
        (
            "small_memory_just_above_limit",
            Msg(
                "a small memory 1e-6 (relative) above its limit is over it",
                "很小的显存比上限高 1e-6（相对）也超限",
            ),
            "hard",
            Call(FUNC, (stable, {"A": 0.002 * (1 + 1e-6)}, {"A": 0.002}, calm, True, True)),
        ),
        (
            "small_exposure_just_above_threshold",
            Msg(
                "a small exposure 1e-6 (relative) above a small threshold is overloaded",
                "很小的暴露比很小的阈值高 1e-6（相对）即过载",
            ),
            "pressures",
            Call(
                FUNC,
                (stable, {"A": 1}, {"A": 2}, _exposures({"pcie": 0.002 * (1 + 1e-6)}), True, True),
                {"max_exposed_s_per_s": 0.002},
            ),
        ),
        (
            "memory_just_above_limit",
            Msg(
                "memory 1e-6 (relative) above its limit is over it",
                "显存比上限高 1e-6（相对）即超限",
            ),
            "hard",
            Call(FUNC, (stable, {"A": 40 * (1 + 1e-6)}, {"A": 40}, calm, True, True)),
        ),
        (
            "zero_threshold_small_exposure",
            Msg(
                "a threshold of 0 overloads an exposure below 0.1",
                "阈值为 0 时低于 0.1 的暴露也算过载",
            ),
            "numbers",
            Call(
                FUNC,
                (stable, {"A": 1}, {"A": 2}, _exposures({"nvlink": 0.0, "ib": 0.05}), True, True),
                {"max_exposed_s_per_s": 0},
            ),
        ),
        (
            "exposure_just_above_threshold",
            Msg(
                "an exposure 1e-6 (relative) above the threshold is overloaded",
                "暴露比阈值高 1e-6（相对）即过载",
            ),
            "pressures",
            Call(
                FUNC,
                (
                    stable,
                    {"A": 1},
                    {"A": 2},
                    _exposures({"pcie": 0.25 * (1 + 1e-6), "ib": 0.125}),
                    True,
                    True,
                ),
                {"max_exposed_s_per_s": 0.25},
            ),
        ),
        (
            "exposure_just_below_threshold",
            Msg(
                "an exposure 1e-6 (relative) below the threshold is not overloaded",
                "暴露比阈值低 1e-6（相对）不算过载",
            ),
            "pressures",
            Call(
                FUNC,
                (stable, {"A": 1}, {"A": 2}, _exposures({"pcie": 0.25 * (1 - 1e-6)}), True, True),
                {"max_exposed_s_per_s": 0.25},
            ),
        ),
        (
            "default_threshold_exact",
            Msg(
                "the default threshold is exactly 0.1 (0.1 is not above it)",
                "默认阈值恰为 0.1（0.1 不算高于）",
            ),
            "numbers",
            Call(
                FUNC,
                (
                    stable,
                    {"A": 1},
                    {"A": 2},
                    _exposures({"x": 0.1, "y": 0.1 * (1 + 1e-6)}),
                    True,
                    True,
                ),
            ),
        ),
    ]
    probes += _boundary_probes(stable, calm)
    for case_id, msg, rule, call in probes:
        b.diff(case_id, msg, rule, call, KEYS)
    # Validation of what the computation skips: a limit of a pool with no memory entry,
    # and a threshold when there is no fabric to compare it with.
    good = (stable, {"A": 10}, {"A": 20}, calm, True, True)
    valid = Call(FUNC, good)
    nan, inf = float("nan"), float("inf")
    for case_id, msg, call in (
        (
            "nan_limit_of_unused_pool",
            Msg(
                "refuses a NaN limit of a pool that uses no memory",
                "拒绝未使用显存的资源池的 NaN 上限",
            ),
            Call(FUNC, (stable, {"A": 10}, {"A": 20, "Z": nan}, calm, True, True)),
        ),
        (
            "negative_limit_of_unused_pool",
            Msg(
                "refuses a negative limit of a pool that uses no memory",
                "拒绝未使用显存的资源池的负上限",
            ),
            Call(FUNC, (stable, {"A": 10}, {"Z": -4, "A": 20}, calm, True, True)),
        ),
        (
            "nan_memory_of_pool_without_limit",
            Msg(
                "refuses a NaN memory of a pool without a limit",
                "拒绝未声明上限的资源池的 NaN 显存",
            ),
            Call(FUNC, (stable, {"A": 10, "Q": nan}, {"A": 20}, calm, True, True)),
        ),
        (
            "nan_threshold_without_fabrics",
            Msg(
                "refuses a NaN threshold even with no fabric",
                "没有互连域时也拒绝 NaN 阈值",
            ),
            Call(FUNC, good, {"max_exposed_s_per_s": nan}),
        ),
        (
            "inf_threshold_without_fabrics",
            Msg(
                "refuses an infinite threshold even with no fabric",
                "没有互连域时也拒绝无穷阈值",
            ),
            Call(FUNC, good, {"max_exposed_s_per_s": inf}),
        ),
    ):
        b.refusal(case_id, msg, "ledger", valid, call)


def _refusals(b: BatteryBuilder, stable: Any, at: dict[str, Any]) -> None:
    """Each bad input breaks exactly one rule of a valid topology, sent next to it."""
    good = (stable, {"A": 10}, {"A": 20}, at, True, True)
    valid = Call(FUNC, good)

    def bad_args(index: int, value: Any) -> Call:
        args = list(good)
        args[index] = value
        return Call(FUNC, tuple(args))

    def exposed(nvlink: float, pcie: float = 0.125) -> Call:
        return bad_args(3, dict(at, fabric_exposed_seconds_per_s={"nvlink": nvlink, "pcie": pcie}))

    def threshold(value: float) -> Call:
        return Call(FUNC, good, {"max_exposed_s_per_s": value})

    nan, inf = float("nan"), float("inf")
    memory, limit = Msg("pool memory", "显存账本"), Msg("memory limit", "显存上限")
    exposure, ceiling = Msg("fabric exposure", "互连暴露"), Msg("exposure threshold", "暴露阈值")
    # (how the value is bad, what is bad, its words, the call): "refuses a NaN pool memory"
    for how, what, words, call in (
        ("nan", "memory", memory, bad_args(1, {"A": nan})),
        ("inf", "memory", memory, bad_args(1, {"A": inf})),
        ("negative", "memory", memory, bad_args(1, {"A": -1})),
        ("nan", "limit", limit, bad_args(2, {"A": nan})),
        ("inf", "limit", limit, bad_args(2, {"A": inf})),
        ("negative", "limit", limit, bad_args(2, {"A": -20})),
        ("nan", "exposure", exposure, exposed(nan)),
        ("negative", "exposure", exposure, exposed(0.25, -0.25)),
        ("inf", "exposure", exposure, exposed(inf)),
        ("negative", "threshold", ceiling, threshold(-0.1)),
        ("nan", "threshold", ceiling, threshold(nan)),
        ("inf", "threshold", ceiling, threshold(inf)),
    ):
        bad = BAD_VALUES[how][1]
        msg = Msg(f"refuses {bad.en} {words.en}", f"拒绝{bad.zh}{words.zh}")
        b.refusal(f"{how}_{what}", msg, "ledger", valid, call)


def _boundary_probes(stable: Any, calm: dict[str, Any]) -> list[tuple[str, Msg, str, Call]]:
    """The edges of the strict comparisons (issue 31): memory > limit and exposure >
    threshold are exact, at every magnitude, and names sort by code point."""
    probes: list[tuple[str, Msg, str, Call]] = []
    for case_id, en, zh, used, limit in (
        (
            "memory_1e_10_above_limit",
            "1e-10 (relative) above its limit",
            "比上限高 1e-10（相对）",
            40 * (1 + 1e-10),
            40,
        ),
        (
            "memory_1e_10_below_limit",
            "1e-10 (relative) below its limit",
            "比上限低 1e-10（相对）",
            40 * (1 - 1e-10),
            40,
        ),
        (
            "large_memory_1_above_limit",
            "1 above a limit of 1e12",
            "比 1e12 的上限高 1",
            10**12 + 1,
            10**12,
        ),
        (
            "tiny_memory_just_above_limit",
            "1e-15 above a limit of 0.002",
            "比 0.002 的上限高 1e-15",
            0.002 + 1e-15,
            0.002,
        ),
    ):
        over = "above" in en
        probes.append(
            (
                case_id,
                Msg(
                    f"memory {en} is {'over it' if over else 'within it'} (exact >)",
                    f"显存{zh}，{'即超限' if over else '不算超限'}（精确的 >）",
                ),
                "hard",
                Call(FUNC, (stable, {"A": used, "B": 1}, {"A": limit, "B": 2}, calm, True, True)),
            )
        )
    for case_id, en, zh, exposure, threshold in (
        (
            "exposure_1e_10_above_threshold",
            "1e-10 (relative) above the threshold",
            "比阈值高 1e-10（相对）",
            0.25 * (1 + 1e-10),
            0.25,
        ),
        (
            "exposure_1e_10_below_threshold",
            "1e-10 (relative) below the threshold",
            "比阈值低 1e-10（相对）",
            0.25 * (1 - 1e-10),
            0.25,
        ),
        (
            "large_exposure_1_above_threshold",
            "1 above a threshold of 1e12",
            "比 1e12 的阈值高 1",
            10**12 + 1,
            10**12,
        ),
        (
            "tiny_exposure_just_above_threshold",
            "1e-15 above a threshold of 0.002",
            "比 0.002 的阈值高 1e-15",
            0.002 + 1e-15,
            0.002,
        ),
    ):
        over = "above" in en
        probes.append(
            (
                case_id,
                Msg(
                    f"an exposure {en} is {'overloaded' if over else 'not overloaded'} (exact >)",
                    f"暴露{zh}，{'即过载' if over else '不算过载'}（精确的 >）",
                ),
                "pressures",
                Call(
                    FUNC,
                    (
                        stable,
                        {"A": 1},
                        {"A": 2},
                        _exposures({"pcie": exposure, "ib": 0}),
                        True,
                        True,
                    ),
                    {"max_exposed_s_per_s": threshold},
                ),
            )
        )
    probes.append(
        (
            "evidence_sorted_by_code_point",
            Msg(
                "pools and fabrics sorted as sorted() does ('Z' < 'a' < 'é')",
                "资源池与互连域按 sorted() 的方式排序（'Z' < 'a' < 'é'）",
            ),
            "evidence",
            Call(
                FUNC,
                (
                    stable,
                    {"éast": 3, "apool": 3, "Zpool": 3},
                    {},
                    _exposures({"élink": 1, "alink": 1, "Zlink": 1}),
                    True,
                    True,
                ),
            ),
        )
    )
    return probes
