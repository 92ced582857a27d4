"""PT-RL-SYSTEM exercise: the system ledger (TODO 1-3)."""

import math
from collections import defaultdict
from typing import Dict, List  # kept from the chapter's skeleton


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    import math

    rates = [float(rate) for rate in stage_rates.values()]
    multipliers = [float(value) for value in items_per_work_unit.values()]
    arrival_rate = float(arrival_rate)
    if not stage_rates or any(not math.isfinite(rate) or rate <= 0 for rate in rates):
        raise ValueError('stage rate 必须为正有限数')
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError('arrival_rate 必须是非负有限数')
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(value) or value <= 0 for value in multipliers):
        raise ValueError('每个阶段都必须提供正有限工作单位倍率')
    effective_rates = {name: float(rate) / float(items_per_work_unit[name]) for name, rate in stage_rates.items()}
    capacity = min(effective_rates.values())
    bottlenecks = sorted(name for name, rate in effective_rates.items() if math.isclose(rate, capacity, rel_tol=1e-9, abs_tol=1e-12))
    queue_margins = {name: rate - arrival_rate for name, rate in effective_rates.items()}
    unstable_stages = sorted(name for name, margin in queue_margins.items() if margin < 0)
    return {'capacity': capacity, 'effective_rates': effective_rates, 'bottlenecks': bottlenecks, 'queue_margins': queue_margins,
            'unstable_stages': unstable_stages, 'queue_stable': not unstable_stages}


# ---- my own code from here -------------------------------------------------------

_POSITIVE = ("bandwidth_bytes_per_s", "items_per_work_unit")
_NON_NEGATIVE = ("bytes_per_item", "work_units_per_second")


def _validate_edge(edge, placement):
    for end in ("source", "target"):
        if edge[end] not in placement:
            raise ValueError("%s %r is not placed" % (end, edge[end]))
    for key in _POSITIVE:
        if not (math.isfinite(edge[key]) and edge[key] > 0):
            raise ValueError("%s must be > 0" % key)
    for key in _NON_NEGATIVE:
        if not (math.isfinite(edge[key]) and edge[key] >= 0):
            raise ValueError("%s must be >= 0" % key)
    overlap = edge.get("overlap_fraction", 0)
    if overlap != overlap or overlap < 0 or overlap > 1:
        raise ValueError("overlap_fraction outside [0, 1]")


def transfer_ledger(edges, placement):
    for edge in edges:
        _validate_edge(edge, placement)

    per_fabric = defaultdict(list)  # fabric -> list of row indices
    rows = []
    for i, edge in enumerate(edges):
        crossing = placement[edge["source"]] != placement[edge["target"]]
        row = dict(edge, cross_pool=crossing, traffic_bytes_per_s=0.0,
                   transfer_seconds_per_s=0.0, exposed_seconds_per_s=0.0)
        if crossing:
            fabric = edge.get("fabric_id")
            if fabric is None or (isinstance(fabric, str) and fabric.strip() == ""):
                raise ValueError("cross-pool edge without a usable fabric_id")
            traffic = edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"]
            row["traffic_bytes_per_s"] = traffic
            row["transfer_seconds_per_s"] = traffic / edge["bandwidth_bytes_per_s"]
            row["exposed_seconds_per_s"] = row["transfer_seconds_per_s"] * (1 - edge.get("overlap_fraction", 0))
            per_fabric[fabric].append(i)
        rows.append(row)

    exposure = {}
    for fabric, members in per_fabric.items():
        bandwidths = {edges[i]["bandwidth_bytes_per_s"] for i in members}
        if len(bandwidths) != 1:
            raise ValueError("fabric %r mixes bandwidths %s" % (fabric, sorted(bandwidths)))
        exposure[fabric] = math.fsum(rows[i]["exposed_seconds_per_s"] for i in members)

    critical = max(exposure.values()) if exposure else 0.0
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": math.fsum(r["traffic_bytes_per_s"] for r in rows),
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": sorted(f for f in exposure if abs(exposure[f] - critical) <= 1e-9 * abs(critical)),
    }


_HARD_RULES = ("memory_limit", "version_sync", "recovery_not_ready")
_SOFT_RULES = ("unstable_queue", "exposed_transfer")


def evaluate_topology(
    capacity_report,
    memory_by_pool,
    memory_limits,
    transfer_report,
    version_sync_ok,
    recovery_ok,
    max_exposed_s_per_s=0.1,
):
    fabric_exposure = transfer_report["fabric_exposed_seconds_per_s"]
    to_check = {"max_exposed_s_per_s": max_exposed_s_per_s}
    to_check.update({"memory_by_pool[%s]" % k: v for k, v in memory_by_pool.items()})
    to_check.update({"memory_limits[%s]" % k: v for k, v in memory_limits.items()})
    to_check.update({"exposure[%s]" % k: v for k, v in fabric_exposure.items()})
    for label, value in to_check.items():
        if not math.isfinite(value) or value < 0:
            raise ValueError("%s must be finite and >= 0" % label)

    report = {
        "over_limit_pools": sorted(p for p in memory_by_pool
                                   if p not in memory_limits or memory_by_pool[p] > memory_limits[p]),
        "unstable_stages": sorted(capacity_report["unstable_stages"]),
        "overloaded_fabrics": sorted(f for f in fabric_exposure if fabric_exposure[f] > max_exposed_s_per_s),
    }
    triggered = {
        "memory_limit": bool(report["over_limit_pools"]),
        "version_sync": not version_sync_ok,
        "recovery_not_ready": not recovery_ok,
        "unstable_queue": bool(report["unstable_stages"]),
        "exposed_transfer": bool(report["overloaded_fabrics"]),
    }
    hard = [r for r in _HARD_RULES if triggered[r]]
    soft = [r for r in _SOFT_RULES if triggered[r]]
    if hard:
        report.update(decision="reject", reasons=hard)
    elif soft:
        report.update(decision="tune", reasons=soft)
    else:
        report.update(decision="accept", reasons=[])
    return report
