import math

TOL = {"rel_tol": 1e-9, "abs_tol": 1e-12}


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    # TODO 1 -- written myself
    stages = sorted(stage_rates)
    if not stages or stages != sorted(items_per_work_unit):
        raise ValueError("stage_rates / items_per_work_unit mismatch")
    if not (math.isfinite(arrival_rate) and arrival_rate >= 0):
        raise ValueError("arrival_rate invalid")
    eff = {}
    for s in stages:
        q, k = stage_rates[s], items_per_work_unit[s]
        if not (math.isfinite(q) and q > 0) or not (math.isfinite(k) and k > 0):
            raise ValueError(f"stage {s}: invalid rate or multiplier")
        eff[s] = q / k
    lowest = min(eff.values())
    margin = {}
    for s in stages:
        margin[s] = eff[s] - arrival_rate
    slow = [s for s in stages if math.isclose(eff[s], lowest, **TOL)]
    backlog = [s for s in stages if margin[s] < 0]
    return {"effective_rates": eff, "capacity": lowest, "bottlenecks": slow,
            "queue_margins": margin, "unstable_stages": backlog, "queue_stable": backlog == []}


def transfer_ledger(edges, placement):
    # TODO 2 -- adapted from the reference answer
    rows, bytes_total, exposure, bw_of = [], 0.0, {}, {}
    for edge in edges:
        src, dst = edge['source'], edge['target']
        if src not in placement or dst not in placement:
            raise ValueError('edge endpoint has no pool')
        cross = placement[src] != placement[dst]
        ov = float(edge.get('overlap_fraction', 0.0))
        bw = float(edge['bandwidth_bytes_per_s'])
        if not math.isfinite(ov) or not math.isfinite(bw) or not 0.0 <= ov <= 1.0 or bw <= 0:
            raise ValueError('overlap must be in [0, 1], bandwidth positive and finite')
        size = float(edge['bytes_per_item'])
        per_unit = float(edge['items_per_work_unit'])
        freq = float(edge['work_units_per_second'])
        if any(not math.isfinite(v) for v in (size, per_unit, freq)) or size < 0 or per_unit <= 0 or freq < 0:
            raise ValueError('bytes/items/frequency invalid')
        traffic = size * per_unit * freq if cross else 0.0
        transfer = traffic / bw
        exposed = transfer * (1.0 - ov)
        bytes_total += traffic
        if cross:
            fid = str(edge.get('fabric_id', '')).strip()
            if not fid:
                raise ValueError('cross-pool edge needs fabric_id')
            first = bw_of.setdefault(fid, bw)
            if not math.isclose(first, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('bandwidth mismatch within fabric')
            exposure[fid] = exposure.get(fid, 0.0) + exposed
        rows.append(edge | {'cross_pool': cross, 'traffic_bytes_per_s': traffic,
                            'transfer_seconds_per_s': transfer, 'exposed_seconds_per_s': exposed})
    peak = max(exposure.values(), default=0.0)
    peak_fabrics = sorted(n for n, v in exposure.items() if v == peak) if exposure else []
    return {'cross_pool_bytes_per_s': bytes_total, 'fabric_exposed_seconds_per_s': exposure,
            'critical_exposed_seconds_per_s': peak, 'critical_fabrics': peak_fabrics, 'rows': rows}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    # TODO 3 -- written myself
    def bad(x):
        return not math.isfinite(x) or x < 0

    fx = transfer_report["fabric_exposed_seconds_per_s"]
    if bad(max_exposed_s_per_s):
        raise ValueError("max_exposed_s_per_s invalid")
    for table in (memory_by_pool, memory_limits, fx):
        if any(bad(v) for v in table.values()):
            raise ValueError("negative or non-finite value")

    report = {
        "over_limit_pools": sorted(p for p in memory_by_pool
                                   if p not in memory_limits or memory_by_pool[p] > memory_limits[p]),
        "unstable_stages": sorted(capacity_report["unstable_stages"]),
        "overloaded_fabrics": sorted(f for f in fx if fx[f] > max_exposed_s_per_s),
    }
    triggered = {
        "memory_limit": bool(report["over_limit_pools"]),
        "version_sync": not version_sync_ok,
        "recovery_not_ready": not recovery_ok,
        "unstable_queue": bool(report["unstable_stages"]),
        "exposed_transfer": bool(report["overloaded_fabrics"]),
    }
    hard = [r for r in ("memory_limit", "version_sync", "recovery_not_ready") if triggered[r]]
    soft = [r for r in ("unstable_queue", "exposed_transfer") if triggered[r]]
    report["decision"] = "reject" if hard else "tune" if soft else "accept"
    report["reasons"] = hard if hard else soft
    return report
