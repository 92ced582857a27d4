"""rlsys_ledger.py - system ledger homework."""
import math


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    # convert everything to float first
    raw = [float(x) for x in stage_rates.values()]
    mults = [float(x) for x in items_per_work_unit.values()]
    lam = float(arrival_rate)
    if not stage_rates or any(not math.isfinite(x) or x <= 0 for x in raw):
        raise ValueError("stage rates must be positive finite numbers")
    if not math.isfinite(lam) or lam < 0:
        raise ValueError("arrival_rate must be a non-negative finite number")
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(x) or x <= 0 for x in mults):
        raise ValueError("every stage needs a positive finite work-unit multiplier")

    effective = {
        s: float(q) / float(items_per_work_unit[s]) for s, q in stage_rates.items()
    }
    cap = min(effective.values())
    margins = {s: c - lam for s, c in effective.items()}
    return {
        "effective_rates": effective,
        "capacity": cap,
        "bottlenecks": sorted(
            s for s, c in effective.items()
            if math.isclose(c, cap, rel_tol=1e-9, abs_tol=1e-12)
        ),
        "queue_margins": margins,
        "unstable_stages": sorted(s for s, m in margins.items() if m < 0),
        "queue_stable": not any(m < 0 for m in margins.values()),
    }


def transfer_ledger(edges, placement):
    rows = []
    total_bytes = 0.0
    per_fabric = {}
    fabric_bw = {}
    for edge in edges:
        src, dst = edge["source"], edge["target"]
        if src not in placement or dst not in placement:
            raise ValueError("both ends of every edge must have a pool")
        cross = placement[src] != placement[dst]
        o = float(edge.get("overlap_fraction", 0.0))
        bw = float(edge["bandwidth_bytes_per_s"])
        if not math.isfinite(o) or not math.isfinite(bw) or not 0.0 <= o <= 1.0 or bw <= 0:
            raise ValueError("overlap must be in [0, 1] and bandwidth positive and finite")
        z = float(edge["bytes_per_item"])
        m = float(edge["items_per_work_unit"])
        freq = float(edge["work_units_per_second"])
        if any(not math.isfinite(v) for v in (z, m, freq)) or z < 0 or m <= 0 or freq < 0:
            raise ValueError("bytes and rates must be finite and non-negative, items per unit positive")
        traffic = z * m * freq if cross else 0.0
        transfer = traffic / bw
        exposed = transfer * (1.0 - o)
        total_bytes += traffic
        if cross:
            fid = str(edge.get("fabric_id", "")).strip()
            if not fid:
                raise ValueError("cross-pool edge must declare fabric_id")
            first = fabric_bw.setdefault(fid, bw)
            if not math.isclose(first, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("one fabric_id must use one effective bandwidth")
            per_fabric[fid] = per_fabric.get(fid, 0.0) + exposed
        rows.append({**edge,
                     "cross_pool": cross,
                     "traffic_bytes_per_s": traffic,
                     "transfer_seconds_per_s": transfer,
                     "exposed_seconds_per_s": exposed})
    peak = max(per_fabric.values(), default=0.0)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total_bytes,
        "fabric_exposed_seconds_per_s": per_fabric,
        "critical_exposed_seconds_per_s": peak,
        "critical_fabrics": sorted(f for f, v in per_fabric.items() if v == peak) if per_fabric else [],
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    limit = float(max_exposed_s_per_s)
    if not math.isfinite(limit) or limit < 0:
        raise ValueError("exposure budget must be a non-negative finite number")
    mem = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
    fab = [float(v) for v in transfer_report.get("fabric_exposed_seconds_per_s", {}).values()]
    if any(not math.isfinite(v) or v < 0 for v in mem + fab):
        raise ValueError("memory and transfer ledgers must be non-negative finite numbers")

    over_limit_pools = sorted(p for p, used in memory_by_pool.items()
                              if p not in memory_limits or used > memory_limits[p])
    unstable_stages = sorted(capacity_report.get("unstable_stages", []))
    overloaded = sorted(f for f, v in transfer_report.get("fabric_exposed_seconds_per_s", {}).items()
                        if v > limit)

    hard = []
    if over_limit_pools:
        hard.append("memory_limit")
    if not version_sync_ok:
        hard.append("version_sync")
    if not recovery_ok:
        hard.append("recovery_not_ready")
    soft = []
    if unstable_stages or not capacity_report["queue_stable"]:
        soft.append("unstable_queue")
    if overloaded or transfer_report["critical_exposed_seconds_per_s"] > limit:
        soft.append("exposed_transfer")

    return {
        "decision": "reject" if hard else ("tune" if soft else "accept"),
        "reasons": hard if hard else soft,
        "over_limit_pools": over_limit_pools,
        "unstable_stages": unstable_stages,
        "overloaded_fabrics": overloaded,
    }
