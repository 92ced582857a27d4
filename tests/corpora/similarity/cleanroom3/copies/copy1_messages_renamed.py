import math
from typing import Dict, List


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    raw = [float(r) for r in stage_rates.values()]
    mults = [float(m) for m in items_per_work_unit.values()]
    lam = float(arrival_rate)
    if not stage_rates or any(not math.isfinite(r) or r <= 0 for r in raw):
        raise ValueError('every stage rate has to be a finite number above zero')
    if not math.isfinite(lam) or lam < 0:
        raise ValueError('arrival rate cannot be negative, NaN or infinite')
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(m) or m <= 0 for m in mults):
        raise ValueError('multipliers must cover exactly the same stages and be positive and finite')
    eff = {stage: float(r) / float(items_per_work_unit[stage]) for stage, r in stage_rates.items()}
    cap = min(eff.values())
    slowest = sorted(stage for stage, r in eff.items() if math.isclose(r, cap, rel_tol=1e-9, abs_tol=1e-12))
    margins = {stage: r - lam for stage, r in eff.items()}
    backlog = sorted(stage for stage, s in margins.items() if s < 0)
    return {'capacity': cap, 'effective_rates': eff, 'bottlenecks': slowest, 'queue_margins': margins,
            'unstable_stages': backlog, 'queue_stable': not backlog}


def transfer_ledger(edges, placement):
    out_rows, bytes_total, exposure_by_fabric, bw_by_fabric = [], 0.0, {}, {}
    for e in edges:
        src, dst = e['source'], e['target']
        if src not in placement or dst not in placement:
            raise ValueError('edge endpoint is missing from the placement map')
        crosses = placement[src] != placement[dst]
        ovl = float(e.get('overlap_fraction', 0.0))
        bw = float(e['bandwidth_bytes_per_s'])
        if not math.isfinite(ovl) or not math.isfinite(bw) or not 0.0 <= ovl <= 1.0 or bw <= 0:
            raise ValueError('overlap must lie in [0, 1] and bandwidth must be positive')
        size = float(e['bytes_per_item'])
        per_unit = float(e['items_per_work_unit'])
        freq = float(e['work_units_per_second'])
        nums = (size, per_unit, freq)
        if any(not math.isfinite(v) for v in nums) or size < 0 or per_unit <= 0 or freq < 0:
            raise ValueError('bad edge numbers: size/frequency must be >= 0, items per unit > 0')
        load = size * per_unit * freq if crosses else 0.0
        busy = load / bw
        visible = busy * (1.0 - ovl)
        bytes_total += load
        if crosses:
            fab = str(e.get('fabric_id', '')).strip()
            if not fab:
                raise ValueError('cross-pool edges need a fabric id')
            first_bw = bw_by_fabric.setdefault(fab, bw)
            if not math.isclose(first_bw, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('conflicting bandwidth declared for the same fabric')
            exposure_by_fabric[fab] = exposure_by_fabric.get(fab, 0.0) + visible
        out_rows.append(e | {'cross_pool': crosses, 'traffic_bytes_per_s': load,
                             'transfer_seconds_per_s': busy, 'exposed_seconds_per_s': visible})
    worst = max(exposure_by_fabric.values(), default=0.0)
    worst_fabrics = sorted(f for f, v in exposure_by_fabric.items() if v == worst) if exposure_by_fabric else []
    return {'cross_pool_bytes_per_s': bytes_total, 'fabric_exposed_seconds_per_s': exposure_by_fabric,
            'critical_exposed_seconds_per_s': worst, 'critical_fabrics': worst_fabrics, 'rows': out_rows}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    budget = float(max_exposed_s_per_s)
    mem_nums = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
    fab_nums = [float(v) for v in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    if not math.isfinite(budget) or budget < 0:
        raise ValueError('exposure budget has to be finite and not negative')
    if any(not math.isfinite(v) or v < 0 for v in mem_nums + fab_nums):
        raise ValueError('memory figures and exposures have to be finite and not negative')
    too_big = sorted(p for p, used in memory_by_pool.items()
                     if p not in memory_limits or used > memory_limits[p])
    hard = []
    if too_big:
        hard.append('memory_limit')
    if not version_sync_ok:
        hard.append('version_sync')
    if not recovery_ok:
        hard.append('recovery_not_ready')

    backlog = sorted(capacity_report.get('unstable_stages', []))
    hot = sorted(
        f for f, v in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
        if v > budget
    )
    soft = []
    if backlog or not capacity_report['queue_stable']:
        soft.append('unstable_queue')
    if hot or transfer_report['critical_exposed_seconds_per_s'] > budget:
        soft.append('exposed_transfer')

    verdict = 'reject' if hard else ('tune' if soft else 'accept')
    why = hard if hard else soft
    return {'decision': verdict, 'reasons': why, 'over_limit_pools': too_big,
            'unstable_stages': backlog, 'overloaded_fabrics': hot}
