"""PT-RL-SYSTEM ledger exercise - my solution (TODO 1-3)."""

from typing import Dict, List
import math


def _is_bad(x, strict):
    # non-finite, or below zero (or at zero when strict)
    x = float(x)
    return (not math.isfinite(x)) or (x <= 0 if strict else x < 0)


def _near(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    # TODO 1: normalise every stage to one work unit
    lam = float(arrival_rate)
    if _is_bad(lam, strict=False):
        raise ValueError('arrival rate needs to be a finite value >= 0')
    if not stage_rates:
        raise ValueError('there are no stages')
    if set(stage_rates) != set(items_per_work_unit):
        raise ValueError('the stage names do not match')
    if any(_is_bad(q, True) for q in stage_rates.values()) or any(_is_bad(m, True) for m in items_per_work_unit.values()):
        raise ValueError('rates and multipliers need to be finite and > 0')

    per_unit = {}
    for stage, q in stage_rates.items():
        per_unit[stage] = float(q) / float(items_per_work_unit[stage])
    c_pipe = min(per_unit.values())
    slack = {stage: c - lam for stage, c in per_unit.items()}
    growing = sorted(stage for stage in slack if slack[stage] < 0)
    return {
        'effective_rates': per_unit,
        'capacity': c_pipe,
        'bottlenecks': sorted(s for s in per_unit if _near(per_unit[s], c_pipe)),
        'queue_margins': slack,
        'unstable_stages': growing,
        'queue_stable': not growing,
    }


def _edge_fields(e):
    size = float(e['bytes_per_item'])
    mult = float(e['items_per_work_unit'])
    freq = float(e['work_units_per_second'])
    if _is_bad(size, False) or _is_bad(freq, False):
        raise ValueError('bytes_per_item / work_units_per_second must be finite and >= 0')
    if _is_bad(mult, True):
        raise ValueError('items_per_work_unit must be finite and > 0')
    return size, mult, freq


def transfer_ledger(edges, placement):
    # TODO 2: only cross-pool edges carry load; sum exposure per fabric
    ledger_rows = []
    bytes_sum = 0.0
    per_fabric = {}
    fabric_bw = {}
    for e in edges:
        a, b = e['source'], e['target']
        if a not in placement or b not in placement:
            raise ValueError('edge endpoint %r -> %r is not placed' % (a, b))
        o = float(e.get('overlap_fraction', 0.0))
        if not (math.isfinite(o) and 0.0 <= o <= 1.0):
            raise ValueError('overlap_fraction out of range')
        bw = float(e['bandwidth_bytes_per_s'])
        if _is_bad(bw, True):
            raise ValueError('bandwidth must be finite and > 0')
        size, mult, freq = _edge_fields(e)
        is_cross = placement[a] != placement[b]

        load = size * mult * freq if is_cross else 0.0
        u = load / bw
        x = u * (1.0 - o)
        bytes_sum += load
        if is_cross:
            fid = str(e.get('fabric_id', '')).strip()
            if not fid:
                raise ValueError('missing fabric_id on a cross-pool edge')
            if not _near(fabric_bw.setdefault(fid, bw), bw):
                raise ValueError('fabric %s: bandwidth differs from its first edge' % fid)
            per_fabric[fid] = per_fabric.get(fid, 0.0) + x

        row = dict(e)
        row.update({'cross_pool': is_cross, 'traffic_bytes_per_s': load,
                    'transfer_seconds_per_s': u, 'exposed_seconds_per_s': x})
        ledger_rows.append(row)

    x_crit = max(per_fabric.values(), default=0.0)
    return {
        'rows': ledger_rows,
        'cross_pool_bytes_per_s': bytes_sum,
        'fabric_exposed_seconds_per_s': per_fabric,
        'critical_exposed_seconds_per_s': x_crit,
        'critical_fabrics': sorted(f for f in per_fabric if per_fabric[f] == x_crit),
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    # TODO 3: hard failures beat tuning pressures
    budget = float(max_exposed_s_per_s)
    exposures = transfer_report.get('fabric_exposed_seconds_per_s', {})
    if _is_bad(budget, False):
        raise ValueError('max_exposed_s_per_s must be finite and >= 0')
    for v in [*memory_by_pool.values(), *memory_limits.values(), *exposures.values()]:
        if _is_bad(v, False):
            raise ValueError('memory / limit / exposure must be finite and >= 0')

    over = sorted(p for p, used in memory_by_pool.items()
                  if p not in memory_limits or used > memory_limits[p])
    unstable = sorted(capacity_report.get('unstable_stages', []))
    hot = sorted(f for f, v in exposures.items() if v > budget)

    hard = []
    if over:
        hard.append('memory_limit')
    if not version_sync_ok:
        hard.append('version_sync')
    if not recovery_ok:
        hard.append('recovery_not_ready')
    soft = []
    if unstable or not capacity_report['queue_stable']:
        soft.append('unstable_queue')
    if hot or transfer_report['critical_exposed_seconds_per_s'] > budget:
        soft.append('exposed_transfer')

    if hard:
        verdict = 'reject'
    elif soft:
        verdict = 'tune'
    else:
        verdict = 'accept'
    return {'decision': verdict, 'reasons': hard or soft, 'over_limit_pools': over,
            'unstable_stages': unstable, 'overloaded_fabrics': hot}
