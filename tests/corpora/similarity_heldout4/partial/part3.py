import math
from itertools import groupby


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    def ok(v, strict):
        return math.isfinite(v) and (v > 0 if strict else v >= 0)

    if not stage_rates or stage_rates.keys() != items_per_work_unit.keys():
        raise ValueError("stage_rates and items_per_work_unit must list the same non-empty stages")
    if not ok(arrival_rate, False):
        raise ValueError("arrival_rate invalid")
    bad = [s for s in stage_rates if not (ok(stage_rates[s], True) and ok(items_per_work_unit[s], True))]
    if bad:
        raise ValueError("invalid rate or multiplier for stage(s): %s" % ", ".join(map(str, bad)))
    effective = {s: stage_rates[s] / items_per_work_unit[s] for s in stage_rates}
    ordered = sorted(effective.items(), key=lambda kv: kv[1])
    cap = ordered[0][1]
    margins = {s: v - arrival_rate for s, v in effective.items()}
    unstable = sorted(s for s, v in margins.items() if v < 0)
    return {
        "effective_rates": effective,
        "capacity": cap,
        "bottlenecks": sorted(s for s, v in ordered if math.isclose(v, cap, rel_tol=1e-9, abs_tol=1e-12)),
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": unstable == [],
    }


def transfer_ledger(edges, placement):
    def ok(v, strict):
        return math.isfinite(v) and (v > 0 if strict else v >= 0)

    rows = []
    for n, e in enumerate(edges):
        if e["source"] not in placement or e["target"] not in placement:
            raise ValueError(f"edge {n}: endpoint not placed")
        o = e.get("overlap_fraction", 0)
        if o != o or not 0 <= o <= 1:
            raise ValueError(f"edge {n}: bad overlap_fraction {o}")
        if not all(ok(e[k], True) for k in ("bandwidth_bytes_per_s", "items_per_work_unit")):
            raise ValueError(f"edge {n}: bandwidth/items must be positive")
        if not all(ok(e[k], False) for k in ("bytes_per_item", "work_units_per_second")):
            raise ValueError(f"edge {n}: bytes/rate must be non-negative")
        cross = placement[e["source"]] != placement[e["target"]]
        if cross:
            fid = e.get("fabric_id")
            if not isinstance(fid, str) or fid.strip() == "":
                raise ValueError(f"edge {n}: cross-pool edge without fabric")
            traffic = e["bytes_per_item"] * e["items_per_work_unit"] * e["work_units_per_second"]
            transfer = traffic / e["bandwidth_bytes_per_s"]
            exposed = transfer * (1 - o)
        else:
            traffic, transfer, exposed = 0, 0.0, 0.0
        rows.append(dict(e, cross_pool=cross, traffic_bytes_per_s=traffic,
                         transfer_seconds_per_s=transfer, exposed_seconds_per_s=exposed))

    cross_rows = [r for r in rows if r["cross_pool"]]
    first_bw = {}
    for r in cross_rows:
        f = r["fabric_id"]
        if f in first_bw and not math.isclose(first_bw[f], r["bandwidth_bytes_per_s"], rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"fabric {f}: bandwidth differs from its first edge")
        first_bw.setdefault(f, r["bandwidth_bytes_per_s"])

    # stable sort keeps edge order inside each fabric
    per_fabric = {}
    for f, grp in groupby(sorted(cross_rows, key=lambda r: r["fabric_id"]), key=lambda r: r["fabric_id"]):
        total = 0.0
        for r in grp:
            total += r["exposed_seconds_per_s"]
        per_fabric[f] = total
    peak = max(per_fabric.values()) if per_fabric else 0.0
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": sum(r["traffic_bytes_per_s"] for r in rows),
        "fabric_exposed_seconds_per_s": per_fabric,
        "critical_exposed_seconds_per_s": peak,
        "critical_fabrics": sorted(f for f, v in per_fabric.items() if v == peak),
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    budget = float(max_exposed_s_per_s)
    mem = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
    exp = [float(v) for v in transfer_report.get("fabric_exposed_seconds_per_s", {}).values()]
    if not math.isfinite(budget) or budget < 0:
        raise ValueError(f"exposure budget {max_exposed_s_per_s} is not a finite non-negative number")
    if any(not math.isfinite(v) or v < 0 for v in mem + exp):
        raise ValueError("memory and exposure entries must all be finite and non-negative")
    too_big = sorted(p for p, m in memory_by_pool.items() if p not in memory_limits or m > memory_limits[p])
    blocking = []
    if too_big:
        blocking.append("memory_limit")
    if not version_sync_ok:
        blocking.append("version_sync")
    if not recovery_ok:
        blocking.append("recovery_not_ready")
    stuck = sorted(capacity_report.get("unstable_stages", []))
    busy = sorted(f for f, v in transfer_report.get("fabric_exposed_seconds_per_s", {}).items() if v > budget)
    adjust = []
    if stuck or not capacity_report["queue_stable"]:
        adjust.append("unstable_queue")
    if busy or transfer_report["critical_exposed_seconds_per_s"] > budget:
        adjust.append("exposed_transfer")
    return {"decision": "reject" if blocking else ("tune" if adjust else "accept"),
            "reasons": blocking if blocking else adjust,
            "over_limit_pools": too_big, "unstable_stages": stuck, "overloaded_fabrics": busy}
