"""Homework 7 - RL system ledger.

Author: (student)
"""
import math as _m

EPS_REL = 1e-9
EPS_ABS = 1e-12


def _ok_pos(x):
    # finite and strictly positive
    return _m.isfinite(x) and x > 0


def _ok_nonneg(x):
    return _m.isfinite(x) and x >= 0


def _fmt(x):
    # helper I used while debugging
    return f"{x:.6g}"


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    budget = float(max_exposed_s_per_s)
    per_fabric = transfer_report.get('fabric_exposed_seconds_per_s', {})
    mem_nums = [float(v) for v in memory_by_pool.values()]
    mem_nums += [float(v) for v in memory_limits.values()]
    link_nums = [float(v) for v in per_fabric.values()]
    if not _ok_nonneg(budget):
        raise ValueError('exposure budget must be a non-negative finite number')
    for v in mem_nums + link_nums:
        if not _ok_nonneg(v):
            raise ValueError('memory / exposure ledger must be non-negative and finite')

    # --- hard failures ---
    pools_over = []
    for pool, used in memory_by_pool.items():
        if pool not in memory_limits or used > memory_limits[pool]:
            pools_over.append(pool)
    pools_over.sort()
    hard = []
    if pools_over:
        hard.append('memory_limit')
    if not version_sync_ok:
        hard.append('version_sync')
    if not recovery_ok:
        hard.append('recovery_not_ready')

    # --- tuning pressures ---
    stuck = sorted(capacity_report.get('unstable_stages', []))
    hot = sorted(f for f, x in per_fabric.items() if x > budget)
    soft = []
    if not (capacity_report['queue_stable'] and not stuck):
        soft.append('unstable_queue')
    if hot or budget < transfer_report['critical_exposed_seconds_per_s']:
        soft.append('exposed_transfer')

    if hard:
        verdict, why = 'reject', hard
    else:
        verdict, why = ('tune' if soft else 'accept'), soft
    return {'decision': verdict, 'reasons': why, 'over_limit_pools': pools_over,
            'unstable_stages': stuck, 'overloaded_fabrics': hot}


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    lam = float(arrival_rate)
    q = [float(r) for r in stage_rates.values()]
    mults = [float(v) for v in items_per_work_unit.values()]
    if len(stage_rates) == 0 or not all(_ok_pos(r) for r in q):
        raise ValueError('stage rates must be positive and finite')
    if not _ok_nonneg(lam):
        raise ValueError('arrival rate must be non-negative and finite')
    if set(stage_rates) != set(items_per_work_unit) or not all(_ok_pos(v) for v in mults):
        raise ValueError('every stage needs a positive finite multiplier')
    # c_j = q_j / m_j
    c = {}
    for stage, r in stage_rates.items():
        c[stage] = float(r) / float(items_per_work_unit[stage])
    c_pipe = min(c.values())
    s = {stage: cj - lam for stage, cj in c.items()}
    tied = sorted(stage for stage, cj in c.items() if _m.isclose(cj, c_pipe, rel_tol=EPS_REL, abs_tol=EPS_ABS))
    growing = sorted(stage for stage, sj in s.items() if sj < 0)
    return {'effective_rates': c, 'capacity': c_pipe, 'bottlenecks': tied,
            'queue_margins': s, 'unstable_stages': growing, 'queue_stable': not growing}


def transfer_ledger(edges, placement):
    out, bytes_total = [], 0.0
    x_by_fabric, B_by_fabric = {}, {}
    unused_counter = 0
    for e in edges:
        a, b = e['source'], e['target']
        if a not in placement or b not in placement:
            raise ValueError('both endpoints of an edge need a pool')
        crosses = placement[a] != placement[b]
        o = float(e.get('overlap_fraction', 0.0))
        B = float(e['bandwidth_bytes_per_s'])
        if not (_m.isfinite(o) and 0.0 <= o <= 1.0) or not _ok_pos(B):
            raise ValueError('overlap must be within [0, 1]; bandwidth must be positive')
        z = float(e['bytes_per_item'])
        me = float(e['items_per_work_unit'])
        lam_e = float(e['work_units_per_second'])
        if not _ok_nonneg(z) or not _ok_pos(me) or not _ok_nonneg(lam_e):
            raise ValueError('bytes/frequency must be >= 0 and finite, items_per_work_unit > 0')
        b_e = z * me * lam_e if crosses else 0.0   # traffic
        u_e = b_e / B                               # utilisation
        x_e = u_e * (1.0 - o)                       # exposed
        bytes_total += b_e
        if crosses:
            fid = str(e.get('fabric_id', '')).strip()
            if not fid:
                raise ValueError('cross-pool edge without fabric_id')
            first_B = B_by_fabric.setdefault(fid, B)
            if not _m.isclose(first_B, B, rel_tol=EPS_REL, abs_tol=EPS_ABS):
                raise ValueError('fabric %s: bandwidth differs from its first edge' % fid)
            x_by_fabric[fid] = x_by_fabric.get(fid, 0.0) + x_e
        else:
            unused_counter += 1
        out.append(e | {'cross_pool': crosses, 'traffic_bytes_per_s': b_e,
                        'transfer_seconds_per_s': u_e, 'exposed_seconds_per_s': x_e})
    x_crit = max(x_by_fabric.values(), default=0.0)
    crit = [] if not x_by_fabric else sorted(f for f, x in x_by_fabric.items() if x == x_crit)
    return {'rows': out, 'cross_pool_bytes_per_s': bytes_total, 'fabric_exposed_seconds_per_s': x_by_fabric,
            'critical_exposed_seconds_per_s': x_crit, 'critical_fabrics': crit}
