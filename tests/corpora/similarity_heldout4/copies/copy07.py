import math


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    # keep stages as (name, rate, multiplier) triples
    triples = [(n, float(stage_rates[n]), float(items_per_work_unit[n]))
               for n in stage_rates if n in items_per_work_unit]
    lam = float(arrival_rate)
    if len(triples) == 0 or len(triples) != len(stage_rates) or len(stage_rates) != len(items_per_work_unit):
        raise ValueError("pipeline_capacity: stage lists are empty or do not correspond")
    if lam < 0 or not math.isfinite(lam):
        raise ValueError("pipeline_capacity: arrival needs to be finite and non-negative")
    for n, q, k in triples:
        if not (math.isfinite(q) and q > 0 and math.isfinite(k) and k > 0):
            raise ValueError("pipeline_capacity: stage %r has a non-positive or non-finite number" % (n,))
    pairs = [(n, q / k) for n, q, k in triples]
    low = min(c for _, c in pairs)
    margin_pairs = [(n, c - lam) for n, c in pairs]
    neg = sorted(n for n, s in margin_pairs if s < 0)
    return {
        "capacity": low,
        "effective_rates": dict(pairs),
        "bottlenecks": sorted(n for n, c in pairs if math.isclose(c, low, rel_tol=1e-9, abs_tol=1e-12)),
        "queue_margins": dict(margin_pairs),
        "unstable_stages": neg,
        "queue_stable": len(neg) == 0,
    }


_NUMERIC = ("bytes_per_item", "items_per_work_unit", "work_units_per_second")


def transfer_ledger(edges, placement):
    rows = []
    sum_bytes = 0.0
    book = []  # list of [fabric, bandwidth, exposure]

    def locate(fid):
        for entry in book:
            if entry[0] == fid:
                return entry
        return None

    for edge in edges:
        ends = (edge["source"], edge["target"])
        if any(x not in placement for x in ends):
            raise ValueError("transfer_ledger: an edge points at an unplaced node")
        pools = tuple(placement[x] for x in ends)
        crossing = pools[0] != pools[1]
        o = float(edge.get("overlap_fraction", 0.0))
        if not math.isfinite(o) or o < 0.0 or o > 1.0:
            raise ValueError("transfer_ledger: overlap fraction is outside the unit interval")
        bw = float(edge["bandwidth_bytes_per_s"])
        z, m, f = (float(edge[key]) for key in _NUMERIC)
        if not all(math.isfinite(v) for v in (bw, z, m, f)):
            raise ValueError("transfer_ledger: edge numbers have to be finite")
        if bw <= 0 or m <= 0:
            raise ValueError("transfer_ledger: bandwidth and items per unit have to be above zero")
        if z < 0 or f < 0:
            raise ValueError("transfer_ledger: bytes and unit rate cannot be below zero")
        load = z * m * f if crossing else 0.0
        t = load / bw
        x = t * (1.0 - o)
        sum_bytes += load
        if crossing:
            fid = str(edge.get("fabric_id", "")).strip()
            if fid == "":
                raise ValueError("transfer_ledger: crossing edge carries no fabric identifier")
            entry = locate(fid)
            if entry is None:
                book.append([fid, bw, 0.0])
                entry = book[-1]
            elif not math.isclose(entry[1], bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("transfer_ledger: fabric %s seen with two bandwidths" % fid)
            entry[2] += x
        extra = (("cross_pool", crossing), ("traffic_bytes_per_s", load),
                 ("transfer_seconds_per_s", t), ("exposed_seconds_per_s", x))
        rows.append(dict(list(edge.items()) + list(extra)))

    top = max((e[2] for e in book), default=0.0)
    return {
        "cross_pool_bytes_per_s": sum_bytes,
        "fabric_exposed_seconds_per_s": {e[0]: e[2] for e in book},
        "critical_exposed_seconds_per_s": top,
        "critical_fabrics": sorted(e[0] for e in book if e[2] == top) if book else [],
        "rows": rows,
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    fab_items = list(transfer_report.get("fabric_exposed_seconds_per_s", {}).items())
    ceiling = float(max_exposed_s_per_s)
    checks = [float(v) for v in memory_by_pool.values()]
    checks += [float(v) for v in memory_limits.values()]
    checks += [float(v) for _, v in fab_items]
    if any(v < 0 or not math.isfinite(v) for v in checks):
        raise ValueError("evaluate_topology: memory and exposure figures must be finite and >= 0")
    if ceiling < 0 or not math.isfinite(ceiling):
        raise ValueError("evaluate_topology: the exposure ceiling must be finite and >= 0")

    pool_rows = [(p, u, memory_limits.get(p)) for p, u in memory_by_pool.items()]
    over = sorted(p for p, u, lim in pool_rows if p not in memory_limits or u > lim)
    stages = sorted(capacity_report.get("unstable_stages", []))
    hot = sorted(n for n, v in fab_items if v > ceiling)

    table = (
        ("memory_limit", bool(over), "hard"),
        ("version_sync", not version_sync_ok, "hard"),
        ("recovery_not_ready", not recovery_ok, "hard"),
        ("unstable_queue", bool(stages) or not capacity_report["queue_stable"], "soft"),
        ("exposed_transfer", bool(hot) or transfer_report["critical_exposed_seconds_per_s"] > ceiling, "soft"),
    )
    hard = [name for name, hit, level in table if hit and level == "hard"]
    soft = [name for name, hit, level in table if hit and level == "soft"]
    return {
        "decision": "reject" if hard else ("tune" if soft else "accept"),
        "reasons": hard if hard else soft,
        "over_limit_pools": over,
        "unstable_stages": stages,
        "overloaded_fabrics": hot,
    }
