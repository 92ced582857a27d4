import math
F = math.isfinite
C = lambda a, b: math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if not stage_rates or set(stage_rates) != set(items_per_work_unit): raise ValueError("stages")
    if any(not F(v) or v <= 0 for d in (stage_rates, items_per_work_unit) for v in d.values()): raise ValueError("rate")
    if not F(arrival_rate) or arrival_rate < 0: raise ValueError("arrival")
    e = {s: r / items_per_work_unit[s] for s, r in stage_rates.items()}
    c = min(e.values()); m = {s: v - arrival_rate for s, v in e.items()}
    u = sorted(s for s in m if m[s] < 0)
    return {"effective_rates": e, "capacity": c, "bottlenecks": sorted(s for s in e if C(e[s], c)),
            "queue_margins": m, "unstable_stages": u, "queue_stable": not u}


def transfer_ledger(edges, placement):
    rows, ex, bw, tot = [], {}, {}, 0
    for d in edges:
        if d["source"] not in placement or d["target"] not in placement: raise ValueError("pool")
        o = d.get("overlap_fraction", 0)
        if not 0 <= o <= 1: raise ValueError("overlap")
        if any(not F(d[k]) or d[k] <= 0 for k in ("bandwidth_bytes_per_s", "items_per_work_unit")): raise ValueError("pos")
        if any(not F(d[k]) or d[k] < 0 for k in ("bytes_per_item", "work_units_per_second")): raise ValueError("nonneg")
        x = placement[d["source"]] != placement[d["target"]]
        t = u = z = 0.0
        if x:
            f = d.get("fabric_id")
            if not f or not f.strip(): raise ValueError("fabric")
            if not C(bw.setdefault(f, d["bandwidth_bytes_per_s"]), d["bandwidth_bytes_per_s"]): raise ValueError("bw")
            t = d["bytes_per_item"] * d["items_per_work_unit"] * d["work_units_per_second"]
            u = t / d["bandwidth_bytes_per_s"]; z = u * (1 - o)
            tot += t; ex[f] = ex.get(f, 0.0) + z
        rows.append({**d, "cross_pool": x, "traffic_bytes_per_s": t, "transfer_seconds_per_s": u, "exposed_seconds_per_s": z})
    k = max(ex.values(), default=0.0)
    return {"rows": rows, "cross_pool_bytes_per_s": tot, "fabric_exposed_seconds_per_s": ex,
            "critical_exposed_seconds_per_s": k, "critical_fabrics": sorted(f for f in ex if ex[f] == k)}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    fx = transfer_report["fabric_exposed_seconds_per_s"]
    if any(not F(v) or v < 0 for v in [*memory_by_pool.values(), *memory_limits.values(), *fx.values(), max_exposed_s_per_s]):
        raise ValueError("bad number")
    ol = sorted(p for p, v in memory_by_pool.items() if p not in memory_limits or v > memory_limits[p])
    us = sorted(capacity_report["unstable_stages"]); of = sorted(f for f in fx if fx[f] > max_exposed_s_per_s)
    h = [r for r, b in zip(("memory_limit", "version_sync", "recovery_not_ready"), (ol, not version_sync_ok, not recovery_ok)) if b]
    p = [r for r, b in zip(("unstable_queue", "exposed_transfer"), (us, of)) if b]
    return {"decision": "reject" if h else "tune" if p else "accept", "reasons": h or p,
            "over_limit_pools": ol, "unstable_stages": us, "overloaded_fabrics": of}
