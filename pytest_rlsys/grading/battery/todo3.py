"""TODO 3, ``evaluate_topology``: the rules its template states (``RULES``) and the chapter's
assertions (the visible cases).  The hidden cases: ``todo3_hidden``, ``todo3_probes``."""

from __future__ import annotations

from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import expect_keys, expect_value_error
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call, plain
from pytest_rlsys.messages import Msg

__all__ = ["FUNC", "KEYS", "RULES", "add_visible", "topology"]


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


def topology(
    capacity: Any,
    used: Any,
    limits: Any,
    transfer: Any,
    sync: Any = True,
    recovery: Any = True,
    **kwargs: Any,
) -> Call:
    """A call of ``evaluate_topology``: version sync and recovery ok unless said."""
    return Call(FUNC, (capacity, used, limits, transfer, sync, recovery), kwargs)


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
    accepted = topology(stable_rep, {"A": 30}, {"A": 40}, low)
    tuned = topology(unstable_rep, {"A": 30}, {"A": 40}, high)
    rejected = topology(stable_rep, {"A": 50}, {"A": 40}, high, False, False)
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
        [topology(stable_rep, {"A": float("nan")}, {"A": 40}, low)],
        expect_value_error,
        claim="raises ValueError: 非有限显存账本应失败",
    )
