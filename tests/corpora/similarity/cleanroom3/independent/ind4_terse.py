from math import isclose, isfinite as fin

T = dict(rel_tol=1e-9, abs_tol=1e-12)


def _need(c, msg="invalid input"):
    if not c:
        raise ValueError(msg)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    _need(stage_rates and set(stage_rates) == set(items_per_work_unit), "stage sets")
    _need(fin(arrival_rate) and arrival_rate >= 0, "arrival")
    _need(all(fin(v) and v > 0 for d in (stage_rates, items_per_work_unit) for v in d.values()), "rates")
    eff = {k: stage_rates[k] / items_per_work_unit[k] for k in stage_rates}
    cap = min(eff.values())
    mar = {k: v - arrival_rate for k, v in eff.items()}
    bad = sorted(k for k, v in mar.items() if v < 0)
    return {"effective_rates": eff, "capacity": cap,
            "bottlenecks": sorted(k for k, v in eff.items() if isclose(v, cap, **T)),
            "queue_margins": mar, "unstable_stages": bad, "queue_stable": not bad}


def transfer_ledger(edges, placement):
    rows, fx, bw = [], {}, {}
    for e in edges:
        _need(e["source"] in placement and e["target"] in placement, "unplaced endpoint")
        o = e.get("overlap_fraction", 0)
        _need(0 <= o <= 1, "overlap")
        _need(all(fin(e[k]) and e[k] > 0 for k in ("bandwidth_bytes_per_s", "items_per_work_unit")), "bw/items")
        _need(all(fin(e[k]) and e[k] >= 0 for k in ("bytes_per_item", "work_units_per_second")), "bytes/freq")
        x = placement[e["source"]] != placement[e["target"]]
        b = u = z = 0.0
        if x:
            f = e.get("fabric_id")
            _need(isinstance(f, str) and f.strip(), "fabric_id")
            _need(isclose(bw.setdefault(f, e["bandwidth_bytes_per_s"]), e["bandwidth_bytes_per_s"], **T), "fabric bw")
            b = e["bytes_per_item"] * e["items_per_work_unit"] * e["work_units_per_second"]
            u = b / e["bandwidth_bytes_per_s"]
            z = u * (1 - o)
            fx[f] = fx.get(f, 0.0) + z
        rows.append({**e, "cross_pool": x, "traffic_bytes_per_s": b,
                     "transfer_seconds_per_s": u, "exposed_seconds_per_s": z})
    m = max(fx.values(), default=0.0)
    return {"rows": rows, "cross_pool_bytes_per_s": sum(r["traffic_bytes_per_s"] for r in rows),
            "fabric_exposed_seconds_per_s": fx, "critical_exposed_seconds_per_s": m,
            "critical_fabrics": sorted(k for k, v in fx.items() if v == m)}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    fx = transfer_report["fabric_exposed_seconds_per_s"]
    vals = [max_exposed_s_per_s, *memory_by_pool.values(), *memory_limits.values(), *fx.values()]
    _need(all(fin(v) and v >= 0 for v in vals), "non-finite or negative number")
    over = sorted(p for p, v in memory_by_pool.items() if v > memory_limits.get(p, -1))
    uns = sorted(capacity_report["unstable_stages"])
    hot = sorted(k for k, v in fx.items() if v > max_exposed_s_per_s)
    hard = [r for r, c in (("memory_limit", over), ("version_sync", not version_sync_ok),
                           ("recovery_not_ready", not recovery_ok)) if c]
    soft = [r for r, c in (("unstable_queue", uns), ("exposed_transfer", hot)) if c]
    return {"decision": "reject" if hard else "tune" if soft else "accept",
            "reasons": hard or soft, "over_limit_pools": over,
            "unstable_stages": uns, "overloaded_fabrics": hot}
