"""Reference implementation of the PT-RL-SYSTEM exercise (TODO 1-3).

pytest-rlsys computes every expected value of the battery with these functions, in the
grading process; the learner's code never sees them. Plain standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Float ties among stage rates are compared with the same tolerance the chapter uses.
_REL_TOL = 1e-9
_ABS_TOL = 1e-12


def _finite(value: Any, what: str) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return number


def _positive(value: Any, what: str) -> float:
    number = _finite(value, what)
    if number <= 0:
        raise ValueError(f"{what} must be positive, got {value!r}")
    return number


def _as_sent(value: Any) -> Any:
    """A number as sent (an int stays an int: Python compares it exactly), anything else
    as float() reads it."""
    return value if isinstance(value, (int, float)) else float(value)


def _non_negative(value: Any, what: str) -> float:
    number = _finite(value, what)
    if number < 0:
        raise ValueError(f"{what} must be non-negative, got {value!r}")
    return number


def pipeline_capacity(
    stage_rates: Mapping[str, float],
    arrival_rate: float,
    items_per_work_unit: Mapping[str, float],
) -> dict[str, Any]:
    """Normalise stage rates to one work unit; report capacity, bottlenecks and queues.

    把各阶段处理率换算到同一工作单位，报告容量、瓶颈、队列余量与积压阶段。
    """
    if not stage_rates:
        raise ValueError("stage_rates must name at least one stage")
    if set(stage_rates) != set(items_per_work_unit):
        missing = sorted(set(stage_rates) ^ set(items_per_work_unit))
        raise ValueError(f"stage_rates and items_per_work_unit name different stages: {missing}")
    rates = {name: _positive(rate, f"rate of stage {name!r}") for name, rate in stage_rates.items()}
    multipliers = {
        name: _positive(value, f"items per work unit of stage {name!r}")
        for name, value in items_per_work_unit.items()
    }
    arrival = _non_negative(arrival_rate, "arrival_rate")

    effective = {name: rates[name] / multipliers[name] for name in stage_rates}
    capacity = min(effective.values())
    bottlenecks = sorted(
        name
        for name, rate in effective.items()
        if math.isclose(rate, capacity, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)
    )
    margins = {name: rate - arrival for name, rate in effective.items()}
    unstable = sorted(name for name, margin in margins.items() if margin < 0)
    return {
        "capacity": capacity,
        "effective_rates": effective,
        "bottlenecks": bottlenecks,
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": not unstable,
    }


def transfer_ledger(
    edges: Sequence[Mapping[str, Any]], placement: Mapping[str, str]
) -> dict[str, Any]:
    """Per-edge transfer ledger, with exposure summed per shared fabric.

    逐边计算跨池载荷与暴露占用；同一互连域相加，关键值取各域最大值。
    """
    rows: list[dict[str, Any]] = []
    total_bytes = 0.0
    exposure: dict[str, float] = {}
    bandwidth_of: dict[str, float] = {}
    for index, edge in enumerate(edges):
        where = f"edge {index}"
        source, target = edge["source"], edge["target"]
        for endpoint in (source, target):
            if endpoint not in placement:
                raise ValueError(f"{where}: endpoint {endpoint!r} has no pool in placement")
        overlap = _finite(edge.get("overlap_fraction", 0.0), f"{where} overlap_fraction")
        if not 0.0 <= overlap <= 1.0:
            raise ValueError(f"{where}: overlap_fraction must lie in [0, 1], got {overlap!r}")
        bandwidth = _positive(edge["bandwidth_bytes_per_s"], f"{where} bandwidth_bytes_per_s")
        size = _non_negative(edge["bytes_per_item"], f"{where} bytes_per_item")
        items = _positive(edge["items_per_work_unit"], f"{where} items_per_work_unit")
        frequency = _non_negative(edge["work_units_per_second"], f"{where} work_units_per_second")

        cross_pool = placement[source] != placement[target]
        traffic = size * items * frequency if cross_pool else 0.0
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        if cross_pool:
            fabric = str(edge.get("fabric_id", "")).strip()
            if not fabric:
                raise ValueError(f"{where}: a cross-pool edge must name its fabric_id")
            known = bandwidth_of.setdefault(fabric, bandwidth)
            if not math.isclose(known, bandwidth, rel_tol=_REL_TOL, abs_tol=_ABS_TOL):
                raise ValueError(
                    f"{where}: fabric {fabric!r} declared with bandwidths {known} and {bandwidth}"
                )
            exposure[fabric] = exposure.get(fabric, 0.0) + exposed
        total_bytes += traffic
        rows.append(
            {
                **edge,
                "cross_pool": cross_pool,
                "traffic_bytes_per_s": traffic,
                "transfer_seconds_per_s": transfer,
                "exposed_seconds_per_s": exposed,
            }
        )
    critical = max(exposure.values(), default=0.0)
    # Exact comparison, as in the chapter: fabric sums are tied only when they are equal.
    critical_fabrics = sorted(name for name, value in exposure.items() if value == critical)
    return {
        "cross_pool_bytes_per_s": total_bytes,
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": critical_fabrics,
        "rows": rows,
    }


def _ledger_values(values: Iterable[Any], what: str) -> None:
    for value in values:
        _non_negative(value, what)


def evaluate_topology(
    capacity_report: Mapping[str, Any],
    memory_by_pool: Mapping[str, float],
    memory_limits: Mapping[str, float],
    transfer_report: Mapping[str, Any],
    version_sync_ok: bool,
    recovery_ok: bool,
    max_exposed_s_per_s: float = 0.1,
) -> dict[str, Any]:
    """Admit a topology: reject (hard failures) > tune (pressures) > accept.

    汇总硬失败与调优压力：reject 优先于 tune，同级原因全部保留。
    """
    budget = _non_negative(max_exposed_s_per_s, "max_exposed_s_per_s")
    _ledger_values(memory_by_pool.values(), "pool memory")
    _ledger_values(memory_limits.values(), "pool memory limit")
    fabric_exposure: Mapping[str, Any] = transfer_report.get("fabric_exposed_seconds_per_s", {})
    _ledger_values(fabric_exposure.values(), "fabric exposure")

    # Numbers are compared as sent, as Python's > compares: 10**20 + 1 is more than 10**20
    # (float() first would make them equal); anything else as float() reads it.
    memory_by_pool = {pool: _as_sent(used) for pool, used in memory_by_pool.items()}
    memory_limits = {pool: _as_sent(limit) for pool, limit in memory_limits.items()}
    fabric_exposure = {name: _as_sent(value) for name, value in fabric_exposure.items()}

    # A pool without a declared limit cannot be admitted: treat it as over the limit.
    over_limit = sorted(
        pool
        for pool, used in memory_by_pool.items()
        if pool not in memory_limits or used > memory_limits[pool]
    )
    hard: list[str] = []
    if over_limit:
        hard.append("memory_limit")
    if not version_sync_ok:
        hard.append("version_sync")
    if not recovery_ok:
        hard.append("recovery_not_ready")

    unstable = sorted(capacity_report.get("unstable_stages", []))
    overloaded = sorted(name for name, value in fabric_exposure.items() if value > budget)
    pressures: list[str] = []
    if unstable or not capacity_report["queue_stable"]:
        pressures.append("unstable_queue")
    if overloaded or _as_sent(transfer_report["critical_exposed_seconds_per_s"]) > budget:
        pressures.append("exposed_transfer")

    if hard:
        decision, reasons = "reject", hard
    elif pressures:
        decision, reasons = "tune", pressures
    else:
        decision, reasons = "accept", []
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over_limit,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
