"""PT-RL-SYSTEM ledger, TODO 1-3 (compact)."""
from math import isclose, isfinite
from typing import Dict, List  # kept from the chapter's skeleton


def _need(ok, msg='invalid input'):
    if not ok: raise ValueError(msg)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    _need(stage_rates and stage_rates.keys() == items_per_work_unit.keys(), 'stage sets')
    _need(all(isfinite(v) and v > 0 for d in (stage_rates, items_per_work_unit) for v in d.values()), 'rates')
    _need(isfinite(arrival_rate) and arrival_rate >= 0, 'arrival')
    eff = {k: r / items_per_work_unit[k] for k, r in stage_rates.items()}
    cap = min(eff.values())
    mar = {k: e - arrival_rate for k, e in eff.items()}
    bad = sorted(k for k in mar if mar[k] < 0)
    return dict(effective_rates=eff, capacity=cap, bottlenecks=sorted(k for k in eff if isclose(eff[k], cap, rel_tol=1e-9)),
                queue_margins=mar, unstable_stages=bad, queue_stable=not bad)


def transfer_ledger(edges, placement):
    rows, fx, fbw = [], {}, {}
    for e in edges:
        s, t, ov = e['source'], e['target'], e.get('overlap_fraction', 0)
        _need(s in placement and t in placement, 'placement')
        _need(0 <= ov <= 1, 'overlap')  # NaN fails both comparisons
        bw, n, z, w = e['bandwidth_bytes_per_s'], e['items_per_work_unit'], e['bytes_per_item'], e['work_units_per_second']
        _need(all(isfinite(v) for v in (bw, n, z, w)) and bw > 0 and n > 0 and z >= 0 and w >= 0, 'edge numbers')
        x = placement[s] != placement[t]
        tr = z * n * w if x else 0.0
        tt = tr / bw
        ex = tt * (1 - ov)
        if x:
            f = e.get('fabric_id')
            _need(f is not None and str(f).strip(), 'fabric_id')
            _need(fbw.setdefault(f, bw) == bw, 'fabric bandwidth')
            fx[f] = fx.get(f, 0.0) + ex
        rows.append({**e, 'cross_pool': x, 'traffic_bytes_per_s': tr, 'transfer_seconds_per_s': tt, 'exposed_seconds_per_s': ex})
    top = max(fx.values(), default=0.0)
    return dict(rows=rows, cross_pool_bytes_per_s=sum(r['traffic_bytes_per_s'] for r in rows), fabric_exposed_seconds_per_s=fx,
                critical_exposed_seconds_per_s=top, critical_fabrics=sorted(f for f in fx if isclose(fx[f], top, rel_tol=1e-9)))


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok,
                      max_exposed_s_per_s=0.1):
    fx = transfer_report['fabric_exposed_seconds_per_s']
    _need(all(isfinite(v) and v >= 0 for v in [max_exposed_s_per_s, *memory_by_pool.values(), *memory_limits.values(), *fx.values()]))
    pools = sorted(p for p, m in memory_by_pool.items() if m > memory_limits.get(p, -1))
    stages = sorted(capacity_report['unstable_stages'])
    fabs = sorted(f for f, v in fx.items() if v > max_exposed_s_per_s)
    hard = [r for r, c in zip(('memory_limit', 'version_sync', 'recovery_not_ready'), (pools, not version_sync_ok, not recovery_ok)) if c]
    soft = [r for r, c in zip(('unstable_queue', 'exposed_transfer'), (stages, fabs)) if c]
    return dict(decision='reject' if hard else 'tune' if soft else 'accept', reasons=hard or soft,
                over_limit_pools=pools, unstable_stages=stages, overloaded_fabrics=fabs)
