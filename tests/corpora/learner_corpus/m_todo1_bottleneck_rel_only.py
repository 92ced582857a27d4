"""Mutant (issue 31, boundary): relative tolerance 1e-9 only, dropping the stated abs_tol=1e-12."""

import math
from typing import Dict, List  # kept from the chapter's skeleton


def _finite(x):
    return math.isfinite(float(x))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if not stage_rates or set(stage_rates) != set(items_per_work_unit):
        raise ValueError("stage sets differ or empty")
    for name in stage_rates:
        r = float(stage_rates[name])
        m = float(items_per_work_unit[name])
        if not math.isfinite(r) or r <= 0:
            raise ValueError("bad rate")
        if not math.isfinite(m) or m <= 0:
            raise ValueError("bad multiplier")
    a = float(arrival_rate)
    if not math.isfinite(a) or a < 0:
        raise ValueError("bad arrival rate")
    effective_rates = {n: float(stage_rates[n]) / float(items_per_work_unit[n]) for n in stage_rates}
    capacity = min(effective_rates.values())
    bottlenecks = sorted(n for n, r in effective_rates.items() if math.isclose(r, capacity, rel_tol=1e-9))
    queue_margins = {n: r - a for n, r in effective_rates.items()}
    unstable_stages = sorted(n for n, m in queue_margins.items() if m < 0)
    return {
        "effective_rates": effective_rates,
        "capacity": capacity,
        "bottlenecks": bottlenecks,
        "queue_margins": queue_margins,
        "unstable_stages": unstable_stages,
        "queue_stable": not unstable_stages,
    }


def transfer_ledger(edges, placement):
    rows = []
    total = 0.0
    fabric_exposed = {}
    fabric_bw = {}
    for edge in edges:
        src, tgt = edge["source"], edge["target"]
        if src not in placement or tgt not in placement:
            raise ValueError("endpoint without pool")
        overlap = float(edge.get("overlap_fraction", 0))
        if math.isnan(overlap) or not 0.0 <= overlap <= 1.0:
            raise ValueError("bad overlap")
        bw = float(edge["bandwidth_bytes_per_s"])
        ipw = float(edge["items_per_work_unit"])
        if not math.isfinite(bw) or bw <= 0 or not math.isfinite(ipw) or ipw <= 0:
            raise ValueError("bad bandwidth / items_per_work_unit")
        bpi = float(edge["bytes_per_item"])
        wps = float(edge["work_units_per_second"])
        if not math.isfinite(bpi) or bpi < 0 or not math.isfinite(wps) or wps < 0:
            raise ValueError("bad bytes_per_item / work_units_per_second")
        cross = placement[src] != placement[tgt]
        if cross:
            fid = edge.get("fabric_id")
            if fid is None or not isinstance(fid, str) or not fid.strip():
                raise ValueError("cross-pool edge without fabric_id")
            if fid in fabric_bw and not math.isclose(fabric_bw[fid], bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("inconsistent fabric bandwidth")
            fabric_bw.setdefault(fid, bw)
            traffic = bpi * ipw * wps
            transfer = traffic / bw
            exposed = transfer * (1.0 - overlap)
            fabric_exposed[fid] = fabric_exposed.get(fid, 0.0) + exposed
        else:
            traffic = transfer = exposed = 0.0
        total += traffic
        row = dict(edge)
        row.update(
            cross_pool=cross,
            traffic_bytes_per_s=traffic,
            transfer_seconds_per_s=transfer,
            exposed_seconds_per_s=exposed,
        )
        rows.append(row)
    critical = max(fabric_exposed.values(), default=0.0)
    critical_fabrics = sorted(f for f, v in fabric_exposed.items() if v == critical)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": fabric_exposed,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": critical_fabrics,
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
    def check(x):
        v = float(x)
        if not math.isfinite(v) or v < 0:
            raise ValueError("bad number")
        return v

    thr = check(max_exposed_s_per_s)
    for v in memory_by_pool.values():
        check(v)
    for v in memory_limits.values():
        check(v)
    fabrics = transfer_report.get("fabric_exposed_seconds_per_s", {})
    for v in fabrics.values():
        check(v)
    over = sorted(p for p, used in memory_by_pool.items() if p not in memory_limits or used > memory_limits[p])
    hard = []
    if over:
        hard.append("memory_limit")
    if version_sync_ok is False:
        hard.append("version_sync")
    if recovery_ok is False:
        hard.append("recovery_not_ready")
    unstable = sorted(capacity_report.get("unstable_stages", []))
    overloaded = sorted(f for f, v in fabrics.items() if v > thr)
    press = []
    if unstable:
        press.append("unstable_queue")
    if overloaded:
        press.append("exposed_transfer")
    if hard:
        decision, reasons = "reject", list(hard)
    elif press:
        decision, reasons = "tune", list(press)
    else:
        decision, reasons = "accept", []
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
