"""An example learner submission (used by the README): TODO 1 and TODO 3 are right,
TODO 2 has two bugs — it keeps only the single busiest fabric, so ties are lost, and it
compares a fabric's bandwidths exactly (the template says with math.isclose, rel_tol=1e-9).
Grade it with: rlsys grade examples/learner_example.py
"""

import math


def _check(value, low=0.0, strict=False):
    value = float(value)
    if not math.isfinite(value) or value < low or (strict and value == low):
        raise ValueError(f"invalid ledger value {value!r}")
    return value


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if not stage_rates or stage_rates.keys() != items_per_work_unit.keys():
        raise ValueError("every stage needs a rate and a multiplier")
    arrival = _check(arrival_rate)
    effective = {
        stage: _check(rate, strict=True) / _check(items_per_work_unit[stage], strict=True)
        for stage, rate in stage_rates.items()
    }
    capacity = min(effective.values())
    margins = {stage: rate - arrival for stage, rate in effective.items()}
    unstable = sorted(stage for stage, margin in margins.items() if margin < 0)
    return {
        "capacity": capacity,
        "effective_rates": effective,
        "bottlenecks": sorted(
            s for s, r in effective.items() if math.isclose(r, capacity, abs_tol=1e-12)
        ),
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": not unstable,
    }


def transfer_ledger(edges, placement):
    rows, total, fabrics, bandwidths = [], 0.0, {}, {}
    for edge in edges:
        if edge["source"] not in placement or edge["target"] not in placement:
            raise ValueError("edge endpoint without a pool")
        overlap = _check(edge.get("overlap_fraction", 0.0))
        if overlap > 1:
            raise ValueError("overlap_fraction must be within [0, 1]")
        bandwidth = _check(edge["bandwidth_bytes_per_s"], strict=True)
        size = _check(edge["bytes_per_item"])
        items = _check(edge["items_per_work_unit"], strict=True)
        rate = _check(edge["work_units_per_second"])
        cross = placement[edge["source"]] != placement[edge["target"]]
        traffic = size * items * rate if cross else 0.0
        exposed = traffic / bandwidth * (1 - overlap)
        if cross:
            fabric = str(edge.get("fabric_id", "")).strip()
            if not fabric:
                raise ValueError("a cross-pool edge needs a fabric_id")
            if bandwidths.setdefault(fabric, bandwidth) != bandwidth:
                raise ValueError(f"fabric {fabric} has two bandwidths")
            fabrics[fabric] = fabrics.get(fabric, 0.0) + exposed
        total += traffic
        rows.append(
            {
                **edge,
                "cross_pool": cross,
                "traffic_bytes_per_s": traffic,
                "transfer_seconds_per_s": traffic / bandwidth,
                "exposed_seconds_per_s": exposed,
            }
        )
    critical = max(fabrics.values(), default=0.0)
    # BUG: only one fabric, even when several are tied at the maximum.
    busiest = [max(fabrics, key=fabrics.get)] if fabrics else []
    return {
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": fabrics,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": busiest,
        "rows": rows,
    }


def evaluate_topology(
    capacity_report,
    memory_by_pool,
    memory_limits,
    transfer_report,
    version_sync_ok,
    recovery_ok,
    max_exposed_s_per_s=0.1,
):
    budget = _check(max_exposed_s_per_s)
    exposure = transfer_report.get("fabric_exposed_seconds_per_s", {})
    for value in [*memory_by_pool.values(), *memory_limits.values(), *exposure.values()]:
        _check(value)
    over = sorted(
        p for p, used in memory_by_pool.items() if p not in memory_limits or used > memory_limits[p]
    )
    hard = [
        name
        for name, failed in (
            ("memory_limit", bool(over)),
            ("version_sync", not version_sync_ok),
            ("recovery_not_ready", not recovery_ok),
        )
        if failed
    ]
    unstable = sorted(capacity_report.get("unstable_stages", []))
    overloaded = sorted(f for f, value in exposure.items() if value > budget)
    tune = [
        name
        for name, pressing in (
            ("unstable_queue", bool(unstable) or not capacity_report["queue_stable"]),
            (
                "exposed_transfer",
                bool(overloaded) or transfer_report["critical_exposed_seconds_per_s"] > budget,
            ),
        )
        if pressing
    ]
    decision = "reject" if hard else "tune" if tune else "accept"
    return {
        "decision": decision,
        "reasons": hard or tune,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
