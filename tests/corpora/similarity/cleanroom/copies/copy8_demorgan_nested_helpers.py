from math import isclose, isfinite
from typing import Dict, List  # kept from the chapter's skeleton

# TODO 1 -------------------------------------------------------------------------------

def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    def positive(v):
        return isfinite(v) and v > 0

    rs = list(map(float, stage_rates.values()))
    ms = list(map(float, items_per_work_unit.values()))
    ar = float(arrival_rate)
    if not (stage_rates and all(positive(r) for r in rs)):
        raise ValueError('rates: positive finite only')
    if not (isfinite(ar) and ar >= 0):
        raise ValueError('arrival: non-negative finite only')
    if not (set(stage_rates) == set(items_per_work_unit) and all(positive(m) for m in ms)):
        raise ValueError('multipliers: positive finite, same stages')
    er = {n: float(r) / float(items_per_work_unit[n]) for n, r in stage_rates.items()}
    cp = min(er.values())
    bn = sorted(n for n, r in er.items() if isclose(r, cp, rel_tol=1e-9, abs_tol=1e-12))
    qm = {n: r - ar for n, r in er.items()}
    us = sorted(n for n, g in qm.items() if g < 0)
    return {'capacity': cp, 'effective_rates': er, 'bottlenecks': bn, 'queue_margins': qm,
            'unstable_stages': us, 'queue_stable': len(us) == 0}

# TODO 2 -------------------------------------------------------------------------------

def transfer_ledger(edges, placement):
    def check_edge(ov, bw, bpi, ipw, wps):
        if not (isfinite(ov) and isfinite(bw) and 0.0 <= ov <= 1.0 and bw > 0):
            raise ValueError('overlap in [0,1], bandwidth positive finite')
        if not (all(isfinite(v) for v in (bpi, ipw, wps)) and bpi >= 0 and ipw > 0 and wps >= 0):
            raise ValueError('bytes/frequency non-negative finite, multiplier positive')

    rws, tot, fx, fb = [], 0.0, {}, {}
    for e in edges:
        s, t = e['source'], e['target']
        if not (s in placement and t in placement):
            raise ValueError('endpoint has no pool')
        xp = not (placement[s] == placement[t])
        ov = float(e.get('overlap_fraction', 0.0))
        bw = float(e['bandwidth_bytes_per_s'])
        bpi = float(e['bytes_per_item'])
        ipw = float(e['items_per_work_unit'])
        wps = float(e['work_units_per_second'])
        check_edge(ov, bw, bpi, ipw, wps)
        tr = bpi * ipw * wps if xp else 0.0
        ts = tr / bw
        ex = ts * (1.0 - ov)
        tot = tot + tr
        if xp:
            fid = str(e.get('fabric_id', '')).strip()
            if fid == '':
                raise ValueError('fabric_id required for cross-pool edge')
            if not isclose(fb.setdefault(fid, bw), bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('fabric bandwidth mismatch')
            fx[fid] = fx.get(fid, 0.0) + ex
        rws.append({**e, 'cross_pool': xp, 'traffic_bytes_per_s': tr,
                    'transfer_seconds_per_s': ts, 'exposed_seconds_per_s': ex})
    ce = max(fx.values()) if fx else 0.0
    cf = sorted(f for f, v in fx.items() if v == ce) if fx else []
    return {'cross_pool_bytes_per_s': tot, 'fabric_exposed_seconds_per_s': fx,
            'critical_exposed_seconds_per_s': ce, 'critical_fabrics': cf, 'rows': rws}

# TODO 3 -------------------------------------------------------------------------------

def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    def non_negative(v):
        return isfinite(v) and v >= 0

    mx = float(max_exposed_s_per_s)
    fex = transfer_report.get('fabric_exposed_seconds_per_s', {})
    vals = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
    vals.extend(float(v) for v in fex.values())
    if not non_negative(mx):
        raise ValueError('budget must be non-negative finite')
    if not all(non_negative(v) for v in vals):
        raise ValueError('ledgers must be non-negative finite')
    olp = sorted(p for p, u in memory_by_pool.items() if p not in memory_limits or u > memory_limits[p])
    hf = []
    if olp:
        hf.append('memory_limit')
    if not version_sync_ok:
        hf.append('version_sync')
    if not recovery_ok:
        hf.append('recovery_not_ready')
    uss = sorted(capacity_report.get('unstable_stages', []))
    ovf = sorted(f for f, v in fex.items() if v > mx)
    tp = []
    if uss or not capacity_report['queue_stable']:
        tp.append('unstable_queue')
    if ovf or transfer_report['critical_exposed_seconds_per_s'] > mx:
        tp.append('exposed_transfer')
    dec = 'reject' if hf else 'tune' if tp else 'accept'
    return {'decision': dec, 'reasons': hf or tp, 'over_limit_pools': olp,
            'unstable_stages': uss, 'overloaded_fabrics': ovf}
