"""TODO 3, ``evaluate_topology``: probes with fixed inputs (issues 23 and 31), so that whether a
misreading shows never depends on the seed."""

from __future__ import annotations

from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.model import Call
from pytest_rlsys.grading.battery.todo3 import FUNC, KEYS, topology
from pytest_rlsys.messages import Msg

__all__ = ["fixed_probes"]


def _exposures(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "fabric_exposed_seconds_per_s": values,
        "critical_exposed_seconds_per_s": max(values.values(), default=0.0),
    }


def _exposed(stable: Any, fabrics: dict[str, Any], **kwargs: Any) -> Call:
    """A call whose memory is within its limit and whose fabrics expose ``fabrics``."""
    return topology(stable, {"A": 1}, {"A": 2}, _exposures(fabrics), **kwargs)


def fixed_probes(b: BatteryBuilder, stable: Any) -> None:
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
            topology(stable, {"A": 0, "B": 4}, {"B": 8}, calm),
        ),
        (
            "memory_over_zero_limit",
            Msg("memory above a limit of 0 is over it", "显存高于为 0 的上限即超限"),
            "numbers",
            topology(stable, {"A": 5, "B": 1}, {"A": 0, "B": 2}, calm),
        ),
        (
            "limit_without_memory",
            Msg(
                "a limit of a pool with no memory entry is no violation",
                "只有上限、没有显存条目的资源池不算超限",
            ),
            "hard",
            topology(stable, {"A": 10}, {"A": 20, "Z": 5}, calm),
        ),
        (
            "small_memory_just_above_limit",
            Msg(
                "a small memory 1e-6 (relative) above its limit is over it",
                "很小的显存比上限高 1e-6（相对）也超限",
            ),
            "hard",
            topology(stable, {"A": 0.002 * (1 + 1e-6)}, {"A": 0.002}, calm),
        ),
        (
            "small_exposure_just_above_threshold",
            Msg(
                "a small exposure 1e-6 (relative) above a small threshold is overloaded",
                "很小的暴露比很小的阈值高 1e-6（相对）即过载",
            ),
            "pressures",
            _exposed(stable, {"pcie": 0.002 * (1 + 1e-6)}, max_exposed_s_per_s=0.002),
        ),
        (
            "memory_just_above_limit",
            Msg(
                "memory 1e-6 (relative) above its limit is over it",
                "显存比上限高 1e-6（相对）即超限",
            ),
            "hard",
            topology(stable, {"A": 40 * (1 + 1e-6)}, {"A": 40}, calm),
        ),
        (
            "zero_threshold_small_exposure",
            Msg(
                "a threshold of 0 overloads an exposure below 0.1",
                "阈值为 0 时低于 0.1 的暴露也算过载",
            ),
            "numbers",
            _exposed(stable, {"nvlink": 0.0, "ib": 0.05}, max_exposed_s_per_s=0),
        ),
        (
            "exposure_just_above_threshold",
            Msg(
                "an exposure 1e-6 (relative) above the threshold is overloaded",
                "暴露比阈值高 1e-6（相对）即过载",
            ),
            "pressures",
            _exposed(stable, {"pcie": 0.25 * (1 + 1e-6), "ib": 0.125}, max_exposed_s_per_s=0.25),
        ),
        (
            "exposure_just_below_threshold",
            Msg(
                "an exposure 1e-6 (relative) below the threshold is not overloaded",
                "暴露比阈值低 1e-6（相对）不算过载",
            ),
            "pressures",
            _exposed(stable, {"pcie": 0.25 * (1 - 1e-6)}, max_exposed_s_per_s=0.25),
        ),
        (
            "default_threshold_exact",
            Msg(
                "the default threshold is exactly 0.1 (0.1 is not above it)",
                "默认阈值恰为 0.1（0.1 不算高于）",
            ),
            "numbers",
            _exposed(stable, {"x": 0.1, "y": 0.1 * (1 + 1e-6)}),
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
            topology(stable, {"A": 10}, {"A": 20, "Z": nan}, calm),
        ),
        (
            "negative_limit_of_unused_pool",
            Msg(
                "refuses a negative limit of a pool that uses no memory",
                "拒绝未使用显存的资源池的负上限",
            ),
            topology(stable, {"A": 10}, {"Z": -4, "A": 20}, calm),
        ),
        (
            "nan_memory_of_pool_without_limit",
            Msg(
                "refuses a NaN memory of a pool without a limit",
                "拒绝未声明上限的资源池的 NaN 显存",
            ),
            topology(stable, {"A": 10, "Q": nan}, {"A": 20}, calm),
        ),
        (
            "nan_threshold_without_fabrics",
            Msg("refuses a NaN threshold even with no fabric", "没有互连域时也拒绝 NaN 阈值"),
            Call(FUNC, good, {"max_exposed_s_per_s": nan}),
        ),
        (
            "inf_threshold_without_fabrics",
            Msg("refuses an infinite threshold even with no fabric", "没有互连域时也拒绝无穷阈值"),
            Call(FUNC, good, {"max_exposed_s_per_s": inf}),
        ),
    ):
        b.refusal(case_id, msg, "ledger", valid, call)


def _strict_edges(
    what: str, bound: str, the_bound: str, zh: str, base: float
) -> list[tuple[str, str, str, float, float]]:
    """(case id, en, zh, value, bound) at the edges of one exact ``value > bound``:
    1e-10 (relative) either side of ``base``, 1 above 1e12, 1e-15 above 0.002."""
    return [
        (
            f"{what}_1e_10_above_{bound}",
            f"1e-10 (relative) above {the_bound}",
            f"比{zh}高 1e-10（相对）",
            base * (1 + 1e-10),
            base,
        ),
        (
            f"{what}_1e_10_below_{bound}",
            f"1e-10 (relative) below {the_bound}",
            f"比{zh}低 1e-10（相对）",
            base * (1 - 1e-10),
            base,
        ),
        (
            f"large_{what}_1_above_{bound}",
            f"1 above a {bound} of 1e12",
            f"比 1e12 的{zh}高 1",
            10**12 + 1,
            10**12,
        ),
        (
            f"tiny_{what}_just_above_{bound}",
            f"1e-15 above a {bound} of 0.002",
            f"比 0.002 的{zh}高 1e-15",
            0.002 + 1e-15,
            0.002,
        ),
    ]


def _boundary_probes(stable: Any, calm: dict[str, Any]) -> list[tuple[str, Msg, str, Call]]:
    """The edges of the strict comparisons (issue 31): memory > limit and exposure >
    threshold are exact, at every magnitude, and names sort by code point."""
    probes: list[tuple[str, Msg, str, Call]] = []
    for case_id, en, zh, used, limit in _strict_edges("memory", "limit", "its limit", "上限", 40):
        over = "above" in en
        probes.append(
            (
                case_id,
                Msg(
                    f"memory {en} is {'over it' if over else 'within it'} (exact >)",
                    f"显存{zh}，{'即超限' if over else '不算超限'}（精确的 >）",
                ),
                "hard",
                topology(stable, {"A": used, "B": 1}, {"A": limit, "B": 2}, calm),
            )
        )
    for case_id, en, zh, exposure, threshold in _strict_edges(
        "exposure", "threshold", "the threshold", "阈值", 0.25
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
                _exposed(stable, {"pcie": exposure, "ib": 0}, max_exposed_s_per_s=threshold),
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
            topology(
                stable,
                {"éast": 3, "apool": 3, "Zpool": 3},
                {},
                _exposures({"élink": 1, "alink": 1, "Zlink": 1}),
            ),
        )
    )
    return probes
