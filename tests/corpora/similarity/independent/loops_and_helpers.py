"""An independent solution: explicit loops and small checking helpers."""

import math


def _number(value, name, allow_zero):
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        raise ValueError(name + " is not finite")
    if number < 0 or (number == 0 and not allow_zero):
        raise ValueError(name + " is out of range")
    return number


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if len(stage_rates) == 0:
        raise ValueError("no stages")
    if sorted(stage_rates) != sorted(items_per_work_unit):
        raise ValueError("stage names differ between rates and multipliers")
    arrival = _number(arrival_rate, "arrival rate", True)
    effective = {}
    for stage in stage_rates:
        rate = _number(stage_rates[stage], "rate of " + stage, False)
        per_unit = _number(items_per_work_unit[stage], "multiplier of " + stage, False)
        effective[stage] = rate / per_unit
    slowest = min(effective.values())
    tied = []
    margins = {}
    backlog = []
    for stage, rate in effective.items():
        if math.isclose(rate, slowest, rel_tol=1e-9, abs_tol=1e-12):
            tied.append(stage)
        margins[stage] = rate - arrival
        if margins[stage] < 0:
            backlog.append(stage)
    tied.sort()
    backlog.sort()
    return {
        "capacity": slowest,
        "effective_rates": effective,
        "bottlenecks": tied,
        "queue_margins": margins,
        "unstable_stages": backlog,
        "queue_stable": len(backlog) == 0,
    }


def transfer_ledger(edges, placement):
    per_fabric = {}
    bandwidth_of = {}
    total = 0.0
    rows = []
    for edge in edges:
        src = edge["source"]
        dst = edge["target"]
        if src not in placement:
            raise ValueError("no pool for " + str(src))
        if dst not in placement:
            raise ValueError("no pool for " + str(dst))
        share = float(edge.get("overlap_fraction", 0.0))
        if not (0.0 <= share <= 1.0):
            raise ValueError("overlap_fraction must lie in [0, 1]")
        link = _number(edge["bandwidth_bytes_per_s"], "bandwidth", False)
        size = _number(edge["bytes_per_item"], "bytes_per_item", True)
        items = _number(edge["items_per_work_unit"], "items_per_work_unit", False)
        units = _number(edge["work_units_per_second"], "work_units_per_second", True)
        crosses = placement[src] != placement[dst]
        if crosses:
            traffic = size * items * units
        else:
            traffic = 0.0
        busy = traffic / link
        hidden = busy * (1.0 - share)
        if crosses:
            fabric = str(edge.get("fabric_id", "")).strip()
            if fabric == "":
                raise ValueError("a cross-pool edge needs a fabric_id")
            if fabric in bandwidth_of:
                if not math.isclose(bandwidth_of[fabric], link, rel_tol=1e-9, abs_tol=1e-12):
                    raise ValueError("fabric " + fabric + " has two bandwidths")
            else:
                bandwidth_of[fabric] = link
            per_fabric[fabric] = per_fabric.get(fabric, 0.0) + hidden
            total = total + traffic
        row = dict(edge)
        row["cross_pool"] = crosses
        row["traffic_bytes_per_s"] = traffic
        row["transfer_seconds_per_s"] = busy
        row["exposed_seconds_per_s"] = hidden
        rows.append(row)
    worst = 0.0
    for value in per_fabric.values():
        if value > worst:
            worst = value
    hottest = []
    if per_fabric:
        for fabric, value in per_fabric.items():
            if value == worst:
                hottest.append(fabric)
    hottest.sort()
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": per_fabric,
        "critical_exposed_seconds_per_s": worst,
        "critical_fabrics": hottest,
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    budget = _number(max_exposed_s_per_s, "max_exposed_s_per_s", True)
    for pool in memory_by_pool:
        _number(memory_by_pool[pool], "memory of " + pool, True)
    for pool in memory_limits:
        _number(memory_limits[pool], "limit of " + pool, True)
    exposures = transfer_report.get("fabric_exposed_seconds_per_s", {})
    for fabric in exposures:
        _number(exposures[fabric], "exposure of " + fabric, True)
    over = []
    for pool in memory_by_pool:
        if pool not in memory_limits or memory_by_pool[pool] > memory_limits[pool]:
            over.append(pool)
    over.sort()
    hard = []
    if over:
        hard.append("memory_limit")
    if not version_sync_ok:
        hard.append("version_sync")
    if not recovery_ok:
        hard.append("recovery_not_ready")
    unstable = sorted(capacity_report.get("unstable_stages", []))
    loaded = sorted(f for f in exposures if exposures[f] > budget)
    soft = []
    if unstable or not capacity_report["queue_stable"]:
        soft.append("unstable_queue")
    if loaded or transfer_report["critical_exposed_seconds_per_s"] > budget:
        soft.append("exposed_transfer")
    if hard:
        decision, reasons = "reject", hard
    elif soft:
        decision, reasons = "tune", soft
    else:
        decision, reasons = "accept", []
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": loaded,
    }
