"""TODO 3, ``evaluate_topology``: the hidden cases (random differential strata, properties,
refusals), in their fixed order; the fixed-input probes are in ``todo3_probes``."""

from __future__ import annotations

import random
from typing import Any, Literal

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import expect_relation, expect_unchanged_inputs, same_keys
from pytest_rlsys.grading.battery.generators import (
    BAD_VALUES,
    declared_backwards,
    gen_pipeline,
    num,
    out_of_order,
)
from pytest_rlsys.grading.battery.model import Call, plain
from pytest_rlsys.grading.battery.todo3 import FUNC, KEYS, topology
from pytest_rlsys.grading.battery.todo3_probes import fixed_probes
from pytest_rlsys.messages import Msg

__all__ = ["add_hidden"]


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
            topology(_capacity(b, rng, backlog), used, limits, transfer, sync, recovery, **kwargs),
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
            topology(stable, {"A": 10}, {"A": 20}, at, max_exposed_s_per_s=0.25),
        ),
        (
            "memory_at_limit",
            Msg("memory exactly at the limit is within it", "显存恰好等于上限不算超限"),
            "no_limit",
            topology(stable, {"A": 40, "B": 8}, {"A": 40, "B": 16}, calm),
        ),
        (
            "pool_without_limit",
            Msg("a pool with no declared limit is over it", "未声明上限的资源池按超限处理"),
            "no_limit",
            topology(stable, {"B": 8, "A": 4}, {"A": 40}, calm),
        ),
        (
            "several_over_limit",
            Msg("lists several over-limit pools, sorted", "多个超限资源池按名称排序"),
            "evidence",
            topology(stable, {"C": 90, "A": 50, "B": 10}, {"C": 80, "A": 40, "B": 40}, calm),
        ),
        (
            "several_overloaded",
            Msg("lists several overloaded fabrics, sorted", "多个过载互连域按名称排序"),
            "evidence",
            topology(stable, {"A": 1}, {"A": 2}, over),
        ),
        (
            "reject_keeps_evidence",
            Msg(
                "a reject still reports stages and fabrics",
                "decision 为 reject 时仍报告积压阶段与过载互连域",
            ),
            "evidence",
            topology(unstable, {"A": 1}, {"A": 2}, over, False),
        ),
        (
            "only_recovery",
            Msg("a recovery failure alone rejects", "仅恢复路径缺失也判为 reject"),
            "hard",
            topology(stable, {"A": 1}, {"A": 2}, calm, True, False),
        ),
        (
            "only_version",
            Msg("a version sync failure alone rejects", "仅版本同步失败也判为 reject"),
            "hard",
            topology(stable, {"A": 1}, {"A": 2}, calm, False),
        ),
        (
            "only_transfer",
            Msg("exposed transfer alone gives tune", "仅传输暴露过高即调优"),
            "pressures",
            topology(stable, {"A": 1}, {"A": 2}, over),
        ),
        (
            "only_queue",
            Msg("an unstable queue alone gives tune", "仅队列积压即调优"),
            "pressures",
            topology(unstable, {"A": 1}, {"A": 2}, calm),
        ),
        (
            "default_threshold",
            Msg("the default threshold is 0.1", "默认阈值为 0.1"),
            "numbers",
            topology(
                stable,
                {"A": 1},
                {"A": 2},
                {
                    "fabric_exposed_seconds_per_s": {"x": 0.125, "y": 0.0625},
                    "critical_exposed_seconds_per_s": 0.125,
                },
            ),
        ),
        (
            "zero_memory",
            Msg("accepts zero memory and a zero limit", "接受为零的显存与上限"),
            "numbers",
            topology(stable, {"A": 0, "B": 0.0}, {"A": 0.0, "B": 0}, calm),
        ),
        (
            "zero_threshold",
            Msg("accepts a threshold of 0", "接受为 0 的阈值"),
            "numbers",
            topology(
                stable,
                {"A": 1},
                {"A": 2},
                dict(over, fabric_exposed_seconds_per_s=dict(over_fabrics, quiet=0.0)),
                max_exposed_s_per_s=0,
            ),
        ),
        (
            "zero_exposure",
            Msg("accepts fabrics with zero exposure", "接受暴露为零的互连域"),
            "numbers",
            topology(stable, {"A": 1}, {"A": 2}, zero, max_exposed_s_per_s=0.0),
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
            topology(
                unstable,
                {"C": 90, "A": 50, "B": 10.0},
                {"C": 80, "A": 40},
                {
                    "fabric_exposed_seconds_per_s": {"pcie-b": 0.5, "pcie-a": 1, "ib": 0},
                    "critical_exposed_seconds_per_s": 1,
                },
                False,
            )
        ],
        expect_unchanged_inputs,
        ("decision",),
    )
    fixed_probes(b, stable)
    b.anchored(
        "insertion_order",
        Msg("gives the same result whatever the dict order", "结果与字典顺序无关"),
        "pure",
        [
            topology(stable, {"C": 90, "A": 50, "B": 10}, {"C": 80, "A": 40, "B": 40}, over),
            topology(
                stable,
                {"B": 10, "A": 50, "C": 90},
                {"B": 40, "C": 80, "A": 40},
                dict(over, fabric_exposed_seconds_per_s=dict(reversed(list(over_fabrics.items())))),
            ),
        ],
        expect_relation(same_keys(KEYS)),
        KEYS,
    )
    _refusals(b, stable, at)


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
