import math


def _bad(x):
    return not math.isfinite(x)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    names = sorted(stage_rates, key=str)
    if not names:
        raise ValueError("empty pipeline")
    if len(names) != len(items_per_work_unit) or any(n not in items_per_work_unit for n in names):
        raise ValueError("multipliers must cover exactly the same stages")
    if _bad(arrival_rate) or arrival_rate < 0:
        raise ValueError("arrival_rate must be >= 0 and finite")
    eff = {}
    for n in names:
        q, m = stage_rates[n], items_per_work_unit[n]
        if _bad(q) or q <= 0 or _bad(m) or m <= 0:
            raise ValueError("stage %r: rate and multiplier must be > 0 and finite" % (n,))
        eff[n] = q / m
    low = min(eff.values())
    marg = {n: eff[n] - arrival_rate for n in names}
    neg = sorted(n for n in names if marg[n] < 0)
    tie = sorted(n for n in names if math.isclose(eff[n], low, rel_tol=1e-9, abs_tol=1e-12))
    return {"effective_rates": eff, "capacity": low, "bottlenecks": tie,
            "queue_margins": marg, "unstable_stages": neg, "queue_stable": len(neg) == 0}


def transfer_ledger(edges, placement):
    out, moved, by_fabric, fabric_bw = [], 0.0, {}, {}
    for link in edges:
        a, b = link["source"], link["target"]
        if a not in placement or b not in placement:
            raise ValueError("link has an endpoint with no pool assigned")
        crossing = placement[a] != placement[b]
        hidden = float(link.get("overlap_fraction", 0.0))
        bw = float(link["bandwidth_bytes_per_s"])
        if not math.isfinite(hidden) or not math.isfinite(bw) or not 0.0 <= hidden <= 1.0 or bw <= 0:
            raise ValueError("overlap must be within 0..1 and bandwidth finite and > 0")
        size = float(link["bytes_per_item"])
        per_unit = float(link["items_per_work_unit"])
        freq = float(link["work_units_per_second"])
        if any(not math.isfinite(v) for v in (size, per_unit, freq)) or size < 0 or per_unit <= 0 or freq < 0:
            raise ValueError("size/frequency must be finite and >= 0; items per unit finite and > 0")
        load = size * per_unit * freq if crossing else 0.0
        busy = load / bw
        shown = busy * (1.0 - hidden)
        moved += load
        if crossing:
            fab = str(link.get("fabric_id", "")).strip()
            if not fab:
                raise ValueError("a pool-crossing link needs a fabric_id")
            if not math.isclose(fabric_bw.setdefault(fab, bw), bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("fabric used with two different bandwidths")
            by_fabric[fab] = by_fabric.get(fab, 0.0) + shown
        out.append({**link, "cross_pool": crossing, "traffic_bytes_per_s": load,
                    "transfer_seconds_per_s": busy, "exposed_seconds_per_s": shown})
    top = max(by_fabric.values(), default=0.0)
    return {"cross_pool_bytes_per_s": moved, "fabric_exposed_seconds_per_s": by_fabric,
            "critical_exposed_seconds_per_s": top,
            "critical_fabrics": sorted(f for f, v in by_fabric.items() if v == top) if by_fabric else [],
            "rows": out}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    fx = transfer_report["fabric_exposed_seconds_per_s"]
    for label, v in [("max_exposed_s_per_s", max_exposed_s_per_s)] + \
            [("memory " + str(k), v) for k, v in memory_by_pool.items()] + \
            [("limit " + str(k), v) for k, v in memory_limits.items()] + \
            [("exposure " + str(k), v) for k, v in fx.items()]:
        if _bad(v) or v < 0:
            raise ValueError(label + " must be >= 0 and finite")
    pools = sorted(k for k in memory_by_pool if k not in memory_limits or memory_by_pool[k] > memory_limits[k])
    stages = sorted(capacity_report["unstable_stages"])
    links = sorted(k for k in fx if fx[k] > max_exposed_s_per_s)
    checks = [
        ("memory_limit", bool(pools), 2),
        ("version_sync", not version_sync_ok, 2),
        ("recovery_not_ready", not recovery_ok, 2),
        ("unstable_queue", bool(stages), 1),
        ("exposed_transfer", bool(links), 1),
    ]
    level = max([lvl for _, hit, lvl in checks if hit], default=0)
    return {"decision": {2: "reject", 1: "tune", 0: "accept"}[level],
            "reasons": [n for n, hit, lvl in checks if hit and lvl == level],
            "over_limit_pools": pools, "unstable_stages": stages, "overloaded_fabrics": links}
