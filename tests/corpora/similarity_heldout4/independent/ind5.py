from math import isclose, isfinite as fin


def _v(ok, m="invalid input"):
    if not ok: raise ValueError(m)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    R, M, a = stage_rates, items_per_work_unit, arrival_rate
    _v(R and R.keys() == M.keys(), "stage mismatch")
    _v(all(fin(x) and x > 0 for x in [*R.values(), *M.values()]), "rate/mult")
    _v(fin(a) and a >= 0, "arrival")
    e = {k: R[k] / M[k] for k in R}
    c = min(e.values())
    q = {k: v - a for k, v in e.items()}
    u = sorted(k for k in q if q[k] < 0)
    return {"effective_rates": e, "capacity": c,
            "bottlenecks": sorted(k for k in e if isclose(e[k], c, rel_tol=1e-9, abs_tol=1e-12)),
            "queue_margins": q, "unstable_stages": u, "queue_stable": not u}


def transfer_ledger(edges, placement):
    rows, bw, fx, tot = [], {}, {}, 0
    for d in edges:
        _v(d["source"] in placement and d["target"] in placement, "unplaced endpoint")
        o = d.get("overlap_fraction", 0)
        _v(0 <= o <= 1, "overlap")
        B, n, s, w = (d[k] for k in ("bandwidth_bytes_per_s", "items_per_work_unit", "bytes_per_item", "work_units_per_second"))
        _v(fin(B) and B > 0 and fin(n) and n > 0 and fin(s) and s >= 0 and fin(w) and w >= 0, "edge number")
        x = placement[d["source"]] != placement[d["target"]]
        t = tr = ex = 0.0
        if x:
            f = d.get("fabric_id")
            _v(isinstance(f, str) and f.strip(), "fabric_id")
            _v(isclose(bw.setdefault(f, B), B, rel_tol=1e-9, abs_tol=1e-12), "fabric bandwidth")
            t = s * n * w; tr = t / B; ex = tr * (1 - o)
            tot += t; fx[f] = fx.get(f, 0) + ex
        rows.append({**d, "cross_pool": x, "traffic_bytes_per_s": t,
                     "transfer_seconds_per_s": tr, "exposed_seconds_per_s": ex})
    m = max(fx.values(), default=0.0)
    return {"rows": rows, "cross_pool_bytes_per_s": tot, "fabric_exposed_seconds_per_s": fx,
            "critical_exposed_seconds_per_s": m, "critical_fabrics": sorted(f for f in fx if fx[f] == m)}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    X = transfer_report["fabric_exposed_seconds_per_s"]
    _v(all(fin(v) and v >= 0 for v in [max_exposed_s_per_s, *memory_by_pool.values(), *memory_limits.values(), *X.values()]), "gate number")
    o = sorted(p for p, v in memory_by_pool.items() if not v <= memory_limits.get(p, -1))
    u = sorted(capacity_report["unstable_stages"])
    h = sorted(f for f, v in X.items() if v > max_exposed_s_per_s)
    hard = [r for r, c in zip(("memory_limit", "version_sync", "recovery_not_ready"), (o, not version_sync_ok, not recovery_ok)) if c]
    soft = [r for r, c in zip(("unstable_queue", "exposed_transfer"), (u, h)) if c]
    return {"decision": "reject" if hard else "tune" if soft else "accept", "reasons": hard or soft,
            "over_limit_pools": o, "unstable_stages": u, "overloaded_fabrics": h}
