# rlsys ledger -- learner "P1"
import math
from collections import defaultdict


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    vals = [float(x) for x in stage_rates.values()]
    mults = [float(x) for x in items_per_work_unit.values()]
    arr = float(arrival_rate)
    if not stage_rates or any(not math.isfinite(x) or x <= 0 for x in vals):
        raise ValueError("stage rates: need a non-empty set of positive, finite rates")
    if not math.isfinite(arr) or arr < 0:
        raise ValueError("arrival: must be finite and >= 0")
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(x) or x <= 0 for x in mults):
        raise ValueError("multipliers: one positive finite value per stage, same stage names")
    eff = {k: float(v) / float(items_per_work_unit[k]) for k, v in stage_rates.items()}
    low = min(eff.values())
    slow = sorted(k for k, v in eff.items() if math.isclose(v, low, rel_tol=1e-9, abs_tol=1e-12))
    gaps = {k: v - arr for k, v in eff.items()}
    backlog = sorted(k for k, g in gaps.items() if g < 0)
    return {"capacity": low, "effective_rates": eff, "bottlenecks": slow, "queue_margins": gaps,
            "unstable_stages": backlog, "queue_stable": not backlog}


def _num_ok(x, allow_zero):
    try:
        f = float(x)
    except (TypeError, ValueError):
        return False
    if f != f or f in (math.inf, -math.inf):
        return False
    return f >= 0 if allow_zero else f > 0


def transfer_ledger(edges, placement):
    out_rows = []
    traffic_sum = 0
    exposure = defaultdict(float)
    band = {}
    i = 0
    while i < len(edges):
        e = edges[i]
        i += 1
        try:
            ps, pt = placement[e["source"]], placement[e["target"]]
        except KeyError:
            raise ValueError("edge %d: unknown endpoint" % i)
        ov = e["overlap_fraction"] if "overlap_fraction" in e else 0
        if not (ov >= 0 and ov <= 1):
            raise ValueError("edge %d: overlap_fraction out of range" % i)
        if not (_num_ok(e["bandwidth_bytes_per_s"], False) and _num_ok(e["items_per_work_unit"], False)):
            raise ValueError("edge %d: bandwidth/items must be > 0" % i)
        if not (_num_ok(e["bytes_per_item"], True) and _num_ok(e["work_units_per_second"], True)):
            raise ValueError("edge %d: bytes/frequency must be >= 0" % i)
        r = dict(e)
        if ps == pt:
            r.update(cross_pool=False, traffic_bytes_per_s=0, transfer_seconds_per_s=0, exposed_seconds_per_s=0)
            out_rows.append(r)
            continue
        fab = e.get("fabric_id", "")
        if not isinstance(fab, str) or len(fab.strip()) == 0:
            raise ValueError("edge %d: fabric_id required for cross-pool edge" % i)
        bw = e["bandwidth_bytes_per_s"]
        if fab in band and not math.isclose(band[fab], bw, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError("edge %d: fabric %s bandwidth mismatch" % (i, fab))
        band.setdefault(fab, bw)
        tr = e["bytes_per_item"] * e["items_per_work_unit"] * e["work_units_per_second"]
        sec = tr / bw
        exp = sec * (1 - ov)
        traffic_sum += tr
        exposure[fab] += exp
        r.update(cross_pool=True, traffic_bytes_per_s=tr, transfer_seconds_per_s=sec, exposed_seconds_per_s=exp)
        out_rows.append(r)
    exposure = dict(exposure)
    top = 0.0
    if exposure:
        top = max(exposure.values())
    return {"rows": out_rows, "cross_pool_bytes_per_s": traffic_sum,
            "fabric_exposed_seconds_per_s": exposure, "critical_exposed_seconds_per_s": top,
            "critical_fabrics": sorted([k for k in exposure if exposure[k] == top])}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    exp = transfer_report["fabric_exposed_seconds_per_s"]
    if not _num_ok(max_exposed_s_per_s, True):
        raise ValueError("threshold must be >= 0")
    for d, label in ((memory_by_pool, "memory"), (memory_limits, "limit"), (exp, "exposure")):
        for k in d:
            if not _num_ok(d[k], True):
                raise ValueError("%s for %s must be >= 0" % (label, k))
    over = []
    for pool in sorted(memory_by_pool):
        lim = memory_limits.get(pool)
        if lim is None or memory_by_pool[pool] > lim:
            over.append(pool)
    stages = sorted(capacity_report["unstable_stages"])
    fabs = sorted([f for f in exp if exp[f] > max_exposed_s_per_s])
    reasons = []
    if over:
        reasons.append("memory_limit")
    if version_sync_ok is not True:
        reasons.append("version_sync")
    if recovery_ok is not True:
        reasons.append("recovery_not_ready")
    decision = "reject"
    if not reasons:
        if stages:
            reasons.append("unstable_queue")
        if fabs:
            reasons.append("exposed_transfer")
        decision = "tune" if reasons else "accept"
    return {"decision": decision, "reasons": reasons, "over_limit_pools": over,
            "unstable_stages": stages, "overloaded_fabrics": fabs}
