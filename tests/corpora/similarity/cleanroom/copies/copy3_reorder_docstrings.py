import math
from typing import Dict, List  # kept from the chapter's skeleton


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    """Gate a candidate topology.

    Hard failures (memory_limit, version_sync, recovery_not_ready) lead to reject;
    otherwise tuning pressures (unstable_queue, exposed_transfer) lead to tune;
    otherwise accept. All triggered reasons of the winning level are kept.
    """
    limit_s = float(max_exposed_s_per_s)
    exposure_values = [float(x) for x in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    memory_values = [float(x) for x in memory_by_pool.values()] + [float(x) for x in memory_limits.values()]
    if not math.isfinite(limit_s) or limit_s < 0:
        raise ValueError('max_exposed_s_per_s must be finite, non-negative')
    if any(not math.isfinite(x) or x < 0 for x in memory_values + exposure_values):
        raise ValueError('memory / exposure entries must be finite, non-negative')

    stages_behind = sorted(capacity_report.get('unstable_stages', []))
    hot_links = sorted(
        fid for fid, x in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
        if x > limit_s
    )
    pools_exceeding = sorted(pool for pool, gb in memory_by_pool.items()
                             if pool not in memory_limits or gb > memory_limits[pool])

    pressures = []
    if stages_behind or not capacity_report['queue_stable']:
        pressures.append('unstable_queue')
    if hot_links or transfer_report['critical_exposed_seconds_per_s'] > limit_s:
        pressures.append('exposed_transfer')

    hard = []
    if pools_exceeding:
        hard.append('memory_limit')
    if not version_sync_ok:
        hard.append('version_sync')
    if not recovery_ok:
        hard.append('recovery_not_ready')

    reasons = hard if hard else pressures
    decision = 'reject' if hard else ('tune' if pressures else 'accept')
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': pools_exceeding,
            'unstable_stages': stages_behind, 'overloaded_fabrics': hot_links}


def transfer_ledger(edges, placement):
    """Per-edge ledger with exposure aggregated per shared fabric.

    Same-pool edges carry nothing. Exposure of edges on one fabric adds up; the
    critical value is the busiest fabric, not the sum over all fabrics.
    """
    ledger, sum_bytes, exposure_of, bandwidth_of = [], 0.0, {}, {}
    for link in edges:
        a, b = link['source'], link['target']
        if a not in placement or b not in placement:
            raise ValueError('edge endpoint missing from placement')
        ovl = float(link.get('overlap_fraction', 0.0))
        bw = float(link['bandwidth_bytes_per_s'])
        if not math.isfinite(ovl) or not math.isfinite(bw) or not 0.0 <= ovl <= 1.0 or bw <= 0:
            raise ValueError('bad overlap_fraction or bandwidth')
        wups = float(link['work_units_per_second'])
        ipwu = float(link['items_per_work_unit'])
        bpi = float(link['bytes_per_item'])
        if any(not math.isfinite(v) for v in (bpi, ipwu, wups)) or bpi < 0 or ipwu <= 0 or wups < 0:
            raise ValueError('bad bytes/items/frequency')
        crossing = placement[a] != placement[b]
        bps = bpi * ipwu * wups if crossing else 0.0
        t_busy = bps / bw
        t_exposed = t_busy * (1.0 - ovl)
        sum_bytes += bps
        if crossing:
            fabric = str(link.get('fabric_id', '')).strip()
            if not fabric:
                raise ValueError('cross-pool edge lacks fabric_id')
            first = bandwidth_of.setdefault(fabric, bw)
            if not math.isclose(first, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('fabric has inconsistent bandwidth')
            exposure_of[fabric] = exposure_of.get(fabric, 0.0) + t_exposed
        ledger.append(link | {'cross_pool': crossing, 'traffic_bytes_per_s': bps,
                              'transfer_seconds_per_s': t_busy, 'exposed_seconds_per_s': t_exposed})
    top = max(exposure_of.values(), default=0.0)
    top_fabrics = sorted(f for f, x in exposure_of.items() if x == top) if exposure_of else []
    return {'rows': ledger, 'cross_pool_bytes_per_s': sum_bytes, 'fabric_exposed_seconds_per_s': exposure_of,
            'critical_exposed_seconds_per_s': top, 'critical_fabrics': top_fabrics}


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """Normalise per-stage rates to work units/s; find bottlenecks and backlog."""
    lam = float(arrival_rate)
    mults = [float(x) for x in items_per_work_unit.values()]
    raw = [float(x) for x in stage_rates.values()]
    if not stage_rates or any(not math.isfinite(x) or x <= 0 for x in raw):
        raise ValueError('stage rates must be positive and finite')
    if not math.isfinite(lam) or lam < 0:
        raise ValueError('arrival rate must be finite and non-negative')
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(x) or x <= 0 for x in mults):
        raise ValueError('multipliers must cover the same stages and be positive')
    c = {j: float(q) / float(items_per_work_unit[j]) for j, q in stage_rates.items()}
    c_pipe = min(c.values())
    slack = {j: cj - lam for j, cj in c.items()}
    growing = sorted(j for j, sj in slack.items() if sj < 0)
    limiting = sorted(j for j, cj in c.items() if math.isclose(cj, c_pipe, rel_tol=1e-9, abs_tol=1e-12))
    return {'effective_rates': c, 'capacity': c_pipe, 'bottlenecks': limiting, 'queue_margins': slack,
            'unstable_stages': growing, 'queue_stable': not growing}
