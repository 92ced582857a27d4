import math


# TODO 1 (copied from the chapter's answer, lightly renamed)
def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    rate_list = [float(r) for r in stage_rates.values()]
    mult_list = [float(v) for v in items_per_work_unit.values()]
    arrival = float(arrival_rate)
    if not stage_rates or any(not math.isfinite(r) or r <= 0 for r in rate_list):
        raise ValueError('stage rates must be positive finite numbers')
    if not math.isfinite(arrival) or arrival < 0:
        raise ValueError('arrival_rate must be non-negative and finite')
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(v) or v <= 0 for v in mult_list):
        raise ValueError('every stage needs a positive finite multiplier')
    eff = {s: float(r) / float(items_per_work_unit[s]) for s, r in stage_rates.items()}
    cap = min(eff.values())
    necks = sorted(s for s, r in eff.items() if math.isclose(r, cap, rel_tol=1e-9, abs_tol=1e-12))
    margins = {s: r - arrival for s, r in eff.items()}
    unstable = sorted(s for s, mg in margins.items() if mg < 0)
    return {'capacity': cap, 'effective_rates': eff, 'bottlenecks': necks, 'queue_margins': margins,
            'unstable_stages': unstable, 'queue_stable': not unstable}


# TODO 2 (my own)
def _num(edge, key, strict):
    v = edge[key]
    if math.isnan(v) or math.isinf(v) or v < 0 or (strict and v == 0):
        raise ValueError(f"invalid {key}: {v}")
    return v


def transfer_ledger(edges, placement):
    ledger_rows = []
    per_fabric = {}
    bw_seen = {}
    total = 0
    for edge in edges:
        for end in ("source", "target"):
            if edge[end] not in placement:
                raise ValueError(f"{edge[end]} not placed")
        ov = edge.get("overlap_fraction", 0)
        if math.isnan(ov) or ov < 0 or ov > 1:
            raise ValueError("overlap_fraction out of range")
        bw = _num(edge, "bandwidth_bytes_per_s", True)
        ipw = _num(edge, "items_per_work_unit", True)
        bpi = _num(edge, "bytes_per_item", False)
        wps = _num(edge, "work_units_per_second", False)
        crossing = placement[edge["source"]] != placement[edge["target"]]
        new_row = dict(edge)
        new_row["cross_pool"] = crossing
        if not crossing:
            new_row.update(traffic_bytes_per_s=0.0, transfer_seconds_per_s=0.0, exposed_seconds_per_s=0.0)
            ledger_rows.append(new_row)
            continue
        fab = edge.get("fabric_id")
        if not isinstance(fab, str) or fab.strip() == "":
            raise ValueError("cross-pool edge needs fabric_id")
        if fab in bw_seen and not math.isclose(bw_seen[fab], bw, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError("bandwidth differs inside fabric " + fab)
        bw_seen.setdefault(fab, bw)
        tr = bpi * ipw * wps
        secs = tr / bw
        exp = secs * (1 - ov)
        total += tr
        per_fabric[fab] = per_fabric.get(fab, 0.0) + exp
        new_row.update(traffic_bytes_per_s=tr, transfer_seconds_per_s=secs, exposed_seconds_per_s=exp)
        ledger_rows.append(new_row)
    top = 0.0
    if per_fabric:
        top = max(per_fabric.values())
    return {
        "rows": ledger_rows,
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": per_fabric,
        "critical_exposed_seconds_per_s": top,
        "critical_fabrics": sorted([f for f in per_fabric if per_fabric[f] == top]),
    }


# TODO 3 (my own)
def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    exp = transfer_report["fabric_exposed_seconds_per_s"]
    checks = list(memory_by_pool.values()) + list(memory_limits.values()) + list(exp.values())
    checks.append(max_exposed_s_per_s)
    for v in checks:
        if math.isnan(v) or math.isinf(v) or v < 0:
            raise ValueError("invalid number in memory/exposure inputs")
    pools = []
    for name, used in memory_by_pool.items():
        lim = memory_limits.get(name)
        if lim is None or used > lim:
            pools.append(name)
    fabrics = [f for f, x in exp.items() if x > max_exposed_s_per_s]
    stages = list(capacity_report["unstable_stages"])
    reject = []
    if pools:
        reject.append("memory_limit")
    if version_sync_ok is False:
        reject.append("version_sync")
    if recovery_ok is False:
        reject.append("recovery_not_ready")
    tune = []
    if stages:
        tune.append("unstable_queue")
    if fabrics:
        tune.append("exposed_transfer")
    out = {"over_limit_pools": sorted(pools), "unstable_stages": sorted(stages),
           "overloaded_fabrics": sorted(fabrics)}
    if reject:
        out.update(decision="reject", reasons=reject)
    elif tune:
        out.update(decision="tune", reasons=tune)
    else:
        out.update(decision="accept", reasons=[])
    return out
