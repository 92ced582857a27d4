"""The honest part of many scenarios: a correct, compact implementation of the three
TODOs.  tests/corpora/test_scenarios.py appends it to every submission.py that ends with the
`rlsys-scenario` marker line, so each hostile file holds only its attack."""

# --- a correct, compact implementation of the three TODOs (the scenario's honest part) ---
import math


def _number(value, what, positive=False):
    number = float(value)
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        raise ValueError(f"invalid {what}: {value!r}")
    return number


def _pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if not stage_rates or set(stage_rates) != set(items_per_work_unit):
        raise ValueError("stage_rates and items_per_work_unit name different stages")
    effective = {
        name: _number(rate, "rate", True) / _number(items_per_work_unit[name], "multiplier", True)
        for name, rate in stage_rates.items()
    }
    arrival = _number(arrival_rate, "arrival rate")
    capacity = min(effective.values())
    margins = {name: rate - arrival for name, rate in effective.items()}
    unstable = sorted(name for name, margin in margins.items() if margin < 0)
    bottlenecks = sorted(name for name, rate in effective.items()
                         if math.isclose(rate, capacity, rel_tol=1e-9, abs_tol=1e-12))
    return {"capacity": capacity, "effective_rates": effective, "bottlenecks": bottlenecks,
            "queue_margins": margins, "unstable_stages": unstable, "queue_stable": not unstable}


def _transfer_ledger(edges, placement):
    rows, total, exposure, bandwidth_of = [], 0.0, {}, {}
    for edge in edges:
        source, target = edge["source"], edge["target"]
        if source not in placement or target not in placement:
            raise ValueError("an endpoint has no pool")
        overlap = _number(edge.get("overlap_fraction", 0.0), "overlap_fraction")
        if overlap > 1:
            raise ValueError("overlap_fraction above 1")
        bandwidth = _number(edge["bandwidth_bytes_per_s"], "bandwidth", True)
        size = _number(edge["bytes_per_item"], "bytes_per_item")
        items = _number(edge["items_per_work_unit"], "items_per_work_unit", True)
        frequency = _number(edge["work_units_per_second"], "work_units_per_second")
        cross = placement[source] != placement[target]
        traffic = size * items * frequency if cross else 0.0
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        if cross:
            fabric = str(edge.get("fabric_id", "")).strip()
            if not fabric:
                raise ValueError("a cross-pool edge needs a fabric_id")
            known = bandwidth_of.setdefault(fabric, bandwidth)
            if not math.isclose(known, bandwidth, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("one fabric, two bandwidths")
            exposure[fabric] = exposure.get(fabric, 0.0) + exposed
        total += traffic
        rows.append({**edge, "cross_pool": cross, "traffic_bytes_per_s": traffic,
                     "transfer_seconds_per_s": transfer, "exposed_seconds_per_s": exposed})
    critical = max(exposure.values(), default=0.0)
    return {"cross_pool_bytes_per_s": total, "fabric_exposed_seconds_per_s": exposure,
            "critical_exposed_seconds_per_s": critical,
            "critical_fabrics": sorted(f for f, v in exposure.items() if v == critical),
            "rows": rows}


def _evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                       version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    budget = _number(max_exposed_s_per_s, "max_exposed_s_per_s")
    exposure = transfer_report.get("fabric_exposed_seconds_per_s", {})
    for values in (memory_by_pool, memory_limits, exposure):
        for value in values.values():
            _number(value, "ledger value")
    over = sorted(pool for pool, used in memory_by_pool.items()
                  if pool not in memory_limits or used > memory_limits[pool])
    hard = [reason for reason, failed in (("memory_limit", bool(over)),
                                          ("version_sync", not version_sync_ok),
                                          ("recovery_not_ready", not recovery_ok)) if failed]
    unstable = sorted(capacity_report.get("unstable_stages", []))
    overloaded = sorted(name for name, value in exposure.items() if value > budget)
    pressures = []
    if unstable or not capacity_report["queue_stable"]:
        pressures.append("unstable_queue")
    if overloaded or transfer_report["critical_exposed_seconds_per_s"] > budget:
        pressures.append("exposed_transfer")
    decision = "reject" if hard else "tune" if pressures else "accept"
    return {"decision": decision, "reasons": hard or pressures, "over_limit_pools": over,
            "unstable_stages": unstable, "overloaded_fabrics": overloaded}
