# PT-RL-SYSTEM ledger (TODO 1-3)
import math
from typing import Dict, List  # kept from the chapter's skeleton


class _Invalid(ValueError):
    """Raised for any bad input (a ValueError, as the exercise requires)."""


def _finite_number(x, what, allow_zero):
    try:
        ok = math.isfinite(x) and (x >= 0 if allow_zero else x > 0)
    except TypeError:
        ok = False
    if not ok:
        raise _Invalid("%s: %r" % (what, x))
    return x


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    # TODO 1 (own work)
    try:
        pairs = [(s, stage_rates[s], items_per_work_unit[s]) for s in stage_rates]
    except KeyError as missing:
        raise _Invalid("no multiplier for stage %s" % missing) from None
    if not pairs or len(items_per_work_unit) != len(stage_rates):
        raise _Invalid("stages differ or are missing")
    _finite_number(arrival_rate, "arrival_rate", allow_zero=True)
    table = {}
    for s, q, m in pairs:
        table[s] = _finite_number(q, "rate " + str(s), False) / _finite_number(m, "multiplier " + str(s), False)
    ordered = sorted(table.items(), key=lambda kv: (kv[1], kv[0]))
    low = ordered[0][1]
    ties = sorted(s for s, c in ordered if c - low <= 1e-9 * abs(low))
    margins = {s: c - arrival_rate for s, c in table.items()}
    negative = sorted(s for s in margins if margins[s] < 0)
    return {"effective_rates": table, "capacity": low, "bottlenecks": ties,
            "queue_margins": margins, "unstable_stages": negative, "queue_stable": len(negative) == 0}


def transfer_ledger(edges, placement):
    # TODO 2 (own work): pass 1 validates, pass 2 computes
    fabric_bw = {}
    for k, e in enumerate(edges):
        for end in (e["source"], e["target"]):
            if end not in placement:
                raise _Invalid("edge %d: %r not placed" % (k, end))
        o = e.get("overlap_fraction", 0)
        if math.isnan(o) or o < 0 or o > 1:
            raise _Invalid("edge %d: overlap %r" % (k, o))
        _finite_number(e["bandwidth_bytes_per_s"], "bandwidth", False)
        _finite_number(e["items_per_work_unit"], "items_per_work_unit", False)
        _finite_number(e["bytes_per_item"], "bytes_per_item", True)
        _finite_number(e["work_units_per_second"], "work_units_per_second", True)
        if placement[e["source"]] != placement[e["target"]]:
            f = e.get("fabric_id")
            if f is None or str(f).strip() == "":
                raise _Invalid("edge %d: cross-pool without fabric_id" % k)
            if fabric_bw.setdefault(f, e["bandwidth_bytes_per_s"]) != e["bandwidth_bytes_per_s"]:
                raise _Invalid("fabric %r: conflicting bandwidths" % (f,))

    rows, per_fabric, total = [], {}, 0.0
    for e in edges:
        row = e.copy()
        row["cross_pool"] = placement[e["source"]] != placement[e["target"]]
        if row["cross_pool"]:
            traffic = e["bytes_per_item"] * e["items_per_work_unit"] * e["work_units_per_second"]
            seconds = traffic / e["bandwidth_bytes_per_s"]
            hidden = seconds * e.get("overlap_fraction", 0)
            row.update(traffic_bytes_per_s=traffic, transfer_seconds_per_s=seconds,
                       exposed_seconds_per_s=seconds - hidden)
            per_fabric.setdefault(e["fabric_id"], []).append(seconds - hidden)
            total += traffic
        else:
            row.update(traffic_bytes_per_s=0.0, transfer_seconds_per_s=0.0, exposed_seconds_per_s=0.0)
        rows.append(row)
    exposure = {f: sum(parts) for f, parts in per_fabric.items()}
    peak = max(exposure.values(), default=0.0)
    return {"rows": rows, "cross_pool_bytes_per_s": total, "fabric_exposed_seconds_per_s": exposure,
            "critical_exposed_seconds_per_s": peak,
            "critical_fabrics": sorted(f for f in exposure if math.isclose(exposure[f], peak, rel_tol=1e-9))}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    # TODO 3
    budget = float(max_exposed_s_per_s)
    pool_numbers = ([float(x) for x in memory_by_pool.values()]
                    + [float(x) for x in memory_limits.values()])
    link_numbers = [float(x) for x in
                    transfer_report.get("fabric_exposed_seconds_per_s", {}).values()]
    if not math.isfinite(budget) or budget < 0:
        raise ValueError("exposure budget must be a non-negative finite number")
    if any(not math.isfinite(x) or x < 0 for x in pool_numbers + link_numbers):
        raise ValueError("memory and transfer ledgers must be non-negative finite numbers")

    pools_over = sorted(
        pool for pool, used in memory_by_pool.items()
        if pool not in memory_limits or used > memory_limits[pool]
    )
    failures = []
    if pools_over:
        failures.append("memory_limit")
    if not version_sync_ok:
        failures.append("version_sync")
    if not recovery_ok:
        failures.append("recovery_not_ready")

    stages = sorted(capacity_report.get("unstable_stages", []))
    hot = sorted(
        fab
        for fab, x in transfer_report.get("fabric_exposed_seconds_per_s", {}).items()
        if x > budget
    )
    pressures = []
    if stages or not capacity_report["queue_stable"]:
        pressures.append("unstable_queue")
    if hot or transfer_report["critical_exposed_seconds_per_s"] > budget:
        pressures.append("exposed_transfer")

    if failures:
        decision = "reject"
    else:
        decision = "tune" if pressures else "accept"
    reasons = failures if failures else pressures
    return {"decision": decision, "reasons": reasons, "over_limit_pools": pools_over,
            "unstable_stages": stages, "overloaded_fabrics": hot}
