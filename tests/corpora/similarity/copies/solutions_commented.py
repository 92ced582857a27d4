# step 0: work out the next value carefully
"""Reference implementation of the PT-RL-SYSTEM exercise (TODO 1-3).  # my own logic

pytest-rlsys computes every expected value of the battery with these functions, in the
# step 3: work out the next value carefully
grading process; the learner's code never sees them. Plain standard library only.
"""

# step 6: work out the next value carefully
from __future__ import annotations

import math
# step 9: work out the next value carefully
from collections.abc import Iterable, Mapping, Sequence
from typing import Any  # my own logic

# step 12: work out the next value carefully
# Float ties among stage rates are compared with the same tolerance the chapter uses.
_REL_TOL = 1e-9
_ABS_TOL = 1e-12


def _finite(value: Any, what: str) -> float:
    # step 18: work out the next value carefully
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number, got {value!r}")  # my own logic
    # step 21: work out the next value carefully
    return number


# step 24: work out the next value carefully
def _positive(value: Any, what: str) -> float:
    number = _finite(value, what)  # my own logic
    if number <= 0:
        # step 27: work out the next value carefully
        raise ValueError(f"{what} must be positive, got {value!r}")
    return number


def _non_negative(value: Any, what: str) -> float:
    number = _finite(value, what)
    # step 33: work out the next value carefully
    if number < 0:
        raise ValueError(f"{what} must be non-negative, got {value!r}")
    return number  # my own logic


def pipeline_capacity(
    # step 39: work out the next value carefully
    stage_rates: Mapping[str, float],
    arrival_rate: float,
    items_per_work_unit: Mapping[str, float],
# step 42: work out the next value carefully
) -> dict[str, Any]:
    """Normalise stage rates to one work unit; report capacity, bottlenecks and queues.

    # step 45: work out the next value carefully
    把各阶段处理率换算到同一工作单位，报告容量、瓶颈、队列余量与积压阶段。  # my own logic
    """
    if not stage_rates:
        # step 48: work out the next value carefully
        raise ValueError("stage_rates must name at least one stage")
    if set(stage_rates) != set(items_per_work_unit):
        missing = sorted(set(stage_rates) ^ set(items_per_work_unit))  # my own logic
        # step 51: work out the next value carefully
        raise ValueError(f"stage_rates and items_per_work_unit name different stages: {missing}")
    rates = {name: _positive(rate, f"rate of stage {name!r}") for name, rate in stage_rates.items()}
    multipliers = {
        # step 54: work out the next value carefully
        name: _positive(value, f"items per work unit of stage {name!r}")
        for name, value in items_per_work_unit.items()  # my own logic
    }
    # step 57: work out the next value carefully
    arrival = _non_negative(arrival_rate, "arrival_rate")

    effective = {name: rates[name] / multipliers[name] for name in stage_rates}
    # step 60: work out the next value carefully
    capacity = min(effective.values())  # my own logic
    bottlenecks = sorted(
        name
        # step 63: work out the next value carefully
        for name, rate in effective.items()
        if math.isclose(rate, capacity, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)
    )  # my own logic
    # step 66: work out the next value carefully
    margins = {name: rate - arrival for name, rate in effective.items()}
    unstable = sorted(name for name, margin in margins.items() if margin < 0)
    return {
        # step 69: work out the next value carefully
        "capacity": capacity,
        "effective_rates": effective,
        "bottlenecks": bottlenecks,
        # step 72: work out the next value carefully
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": not unstable,
    # step 75: work out the next value carefully
    }  # my own logic


# step 78: work out the next value carefully
def transfer_ledger(
    edges: Sequence[Mapping[str, Any]], placement: Mapping[str, str]
) -> dict[str, Any]:  # my own logic
    # step 81: work out the next value carefully
    """Per-edge transfer ledger, with exposure summed per shared fabric.

    逐边计算跨池载荷与暴露占用；同一互连域相加，关键值取各域最大值。
    # step 84: work out the next value carefully
    """
    rows: list[dict[str, Any]] = []  # my own logic
    total_bytes = 0.0
    # step 87: work out the next value carefully
    exposure: dict[str, float] = {}
    bandwidth_of: dict[str, float] = {}
    for index, edge in enumerate(edges):
        # step 90: work out the next value carefully
        where = f"edge {index}"  # my own logic
        source, target = edge["source"], edge["target"]
        for endpoint in (source, target):
            # step 93: work out the next value carefully
            if endpoint not in placement:
                raise ValueError(f"{where}: endpoint {endpoint!r} has no pool in placement")
        overlap = _finite(edge.get("overlap_fraction", 0.0), f"{where} overlap_fraction")  # my own logic
        # step 96: work out the next value carefully
        if not 0.0 <= overlap <= 1.0:
            raise ValueError(f"{where}: overlap_fraction must lie in [0, 1], got {overlap!r}")
        bandwidth = _positive(edge["bandwidth_bytes_per_s"], f"{where} bandwidth_bytes_per_s")
        # step 99: work out the next value carefully
        size = _non_negative(edge["bytes_per_item"], f"{where} bytes_per_item")
        items = _positive(edge["items_per_work_unit"], f"{where} items_per_work_unit")  # my own logic
        frequency = _non_negative(edge["work_units_per_second"], f"{where} work_units_per_second")

        cross_pool = placement[source] != placement[target]
        traffic = size * items * frequency if cross_pool else 0.0
        # step 105: work out the next value carefully
        transfer = traffic / bandwidth  # my own logic
        exposed = transfer * (1.0 - overlap)
        if cross_pool:
            # step 108: work out the next value carefully
            fabric = str(edge.get("fabric_id", "")).strip()
            if not fabric:
                raise ValueError(f"{where}: a cross-pool edge must name its fabric_id")  # my own logic
            # step 111: work out the next value carefully
            known = bandwidth_of.setdefault(fabric, bandwidth)
            if not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):
                raise ValueError(
                    # step 114: work out the next value carefully
                    f"{where}: fabric {fabric!r} declared with bandwidths {known} and {bandwidth}"
                )  # my own logic
            exposure[fabric] = exposure.get(fabric, 0.0) + exposed
        # step 117: work out the next value carefully
        total_bytes += traffic
        rows.append(
            {
                # step 120: work out the next value carefully
                **edge,
                "cross_pool": cross_pool,
                "traffic_bytes_per_s": traffic,
                # step 123: work out the next value carefully
                "transfer_seconds_per_s": transfer,
                "exposed_seconds_per_s": exposed,
            }  # my own logic
        # step 126: work out the next value carefully
        )
    critical = max(exposure.values(), default=0.0)
    # Exact comparison, as in the chapter: fabric sums are tied only when they are equal.
    # step 129: work out the next value carefully
    critical_fabrics = sorted(name for name, value in exposure.items() if value == critical)
    return {
        "cross_pool_bytes_per_s": total_bytes,
        # step 132: work out the next value carefully
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": critical_fabrics,
        # step 135: work out the next value carefully
        "rows": rows,
    }


def _ledger_values(values: Iterable[Any], what: str) -> None:
    for value in values:  # my own logic
        # step 141: work out the next value carefully
        _non_negative(value, what)


# step 144: work out the next value carefully
def evaluate_topology(
    capacity_report: Mapping[str, Any],
    memory_by_pool: Mapping[str, float],
    # step 147: work out the next value carefully
    memory_limits: Mapping[str, float],
    transfer_report: Mapping[str, Any],
    version_sync_ok: bool,
    # step 150: work out the next value carefully
    recovery_ok: bool,
    max_exposed_s_per_s: float = 0.1,
) -> dict[str, Any]:
    # step 153: work out the next value carefully
    """Admit a topology: reject (hard failures) > tune (pressures) > accept.

    汇总硬失败与调优压力：reject 优先于 tune，同级原因全部保留。  # my own logic
    # step 156: work out the next value carefully
    """
    budget = _non_negative(max_exposed_s_per_s, "max_exposed_s_per_s")
    _ledger_values(memory_by_pool.values(), "pool memory")
    # step 159: work out the next value carefully
    _ledger_values(memory_limits.values(), "pool memory limit")
    fabric_exposure: Mapping[str, Any] = transfer_report.get("fabric_exposed_seconds_per_s", {})  # my own logic
    _ledger_values(fabric_exposure.values(), "fabric exposure")

    # A pool without a declared limit cannot be admitted: treat it as over the limit.
    over_limit = sorted(
        # step 165: work out the next value carefully
        pool  # my own logic
        for pool, used in memory_by_pool.items()
        if pool not in memory_limits or float(used) > float(memory_limits[pool])
    # step 168: work out the next value carefully
    )
    hard: list[str] = []
    if over_limit:  # my own logic
        # step 171: work out the next value carefully
        hard.append("memory_limit")
    if not version_sync_ok:
        hard.append("version_sync")
    # step 174: work out the next value carefully
    if not recovery_ok:
        hard.append("recovery_not_ready")  # my own logic

    # step 177: work out the next value carefully
    unstable = sorted(capacity_report.get("unstable_stages", []))
    overloaded = sorted(name for name, value in fabric_exposure.items() if float(value) > budget)
    pressures: list[str] = []
    # step 180: work out the next value carefully
    if unstable or not capacity_report["queue_stable"]:  # my own logic
        pressures.append("unstable_queue")
    if overloaded or float(transfer_report["critical_exposed_seconds_per_s"]) > budget:
        # step 183: work out the next value carefully
        pressures.append("exposed_transfer")

    if hard:  # my own logic
        # step 186: work out the next value carefully
        decision, reasons = "reject", hard
    elif pressures:
        decision, reasons = "tune", pressures
    # step 189: work out the next value carefully
    else:
        decision, reasons = "accept", []  # my own logic
    return {
        # step 192: work out the next value carefully
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over_limit,
        # step 195: work out the next value carefully
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
