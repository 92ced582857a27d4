# Ledger assignment -- everything in one function per task, no temporaries.
import math as _m


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if not _m.isfinite(float(arrival_rate)) or float(arrival_rate) < 0:
        raise ValueError('Arrival rate has to be a finite value of zero or more.')
    if (not stage_rates
            or any(not _m.isfinite(float(q)) or float(q) <= 0 for q in stage_rates.values())
            or set(stage_rates) != set(items_per_work_unit)
            or any(not _m.isfinite(float(k)) or float(k) <= 0 for k in items_per_work_unit.values())):
        raise ValueError('Each stage needs a finite, strictly positive rate and a matching multiplier.')
    eff = {n: float(stage_rates[n]) / float(items_per_work_unit[n]) for n in stage_rates}
    return {
        'capacity': min(eff.values()),
        'effective_rates': eff,
        'bottlenecks': sorted(n for n in eff if _m.isclose(eff[n], min(eff.values()), rel_tol=1e-9, abs_tol=1e-12)),
        'queue_margins': {n: eff[n] - float(arrival_rate) for n in eff},
        'unstable_stages': sorted(n for n in eff if eff[n] - float(arrival_rate) < 0),
        'queue_stable': not [n for n in eff if eff[n] - float(arrival_rate) < 0],
    }


def transfer_ledger(edges, placement):
    out, tot, fx, fb = [], 0.0, {}, {}
    for e in edges:
        if e['source'] not in placement or e['target'] not in placement:
            raise ValueError('Found an edge whose endpoint is missing from the placement map.')
        if (not _m.isfinite(float(e.get('overlap_fraction', 0.0)))
                or not 0.0 <= float(e.get('overlap_fraction', 0.0)) <= 1.0
                or not _m.isfinite(float(e['bandwidth_bytes_per_s']))
                or float(e['bandwidth_bytes_per_s']) <= 0):
            raise ValueError('Overlap must sit in [0, 1]; bandwidth must be finite and above zero.')
        if (any(not _m.isfinite(float(e[k])) for k in ('bytes_per_item', 'items_per_work_unit', 'work_units_per_second'))
                or float(e['bytes_per_item']) < 0 or float(e['items_per_work_unit']) <= 0
                or float(e['work_units_per_second']) < 0):
            raise ValueError('Payload size and unit frequency cannot be negative; items per unit must exceed zero.')
        if placement[e['source']] != placement[e['target']]:
            if not str(e.get('fabric_id', '')).strip():
                raise ValueError('Cross-pool edges have to name their interconnect (fabric_id).')
            if not _m.isclose(fb.setdefault(str(e.get('fabric_id', '')).strip(), float(e['bandwidth_bytes_per_s'])),
                              float(e['bandwidth_bytes_per_s']), rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('Edges sharing an interconnect disagree about its bandwidth.')
        out.append(e | {
            'cross_pool': placement[e['source']] != placement[e['target']],
            'traffic_bytes_per_s': float(e['bytes_per_item']) * float(e['items_per_work_unit']) * float(e['work_units_per_second'])
            if placement[e['source']] != placement[e['target']] else 0.0,
        })
        out[-1]['transfer_seconds_per_s'] = out[-1]['traffic_bytes_per_s'] / float(e['bandwidth_bytes_per_s'])
        out[-1]['exposed_seconds_per_s'] = out[-1]['transfer_seconds_per_s'] * (1.0 - float(e.get('overlap_fraction', 0.0)))
        tot += out[-1]['traffic_bytes_per_s']
        if out[-1]['cross_pool']:
            fx[str(e.get('fabric_id', '')).strip()] = fx.get(str(e.get('fabric_id', '')).strip(), 0.0) + out[-1]['exposed_seconds_per_s']
    return {
        'cross_pool_bytes_per_s': tot,
        'fabric_exposed_seconds_per_s': fx,
        'critical_exposed_seconds_per_s': max(fx.values(), default=0.0),
        'critical_fabrics': sorted(k for k in fx if fx[k] == max(fx.values(), default=0.0)) if fx else [],
        'rows': out,
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok,
                      max_exposed_s_per_s=0.1):
    if not _m.isfinite(float(max_exposed_s_per_s)) or float(max_exposed_s_per_s) < 0:
        raise ValueError('The exposure threshold should be finite and not below zero.')
    if any(not _m.isfinite(float(v)) or float(v) < 0
           for v in [*memory_by_pool.values(), *memory_limits.values(),
                     *transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]):
        raise ValueError('Memory figures, limits and link exposures all have to be finite and non-negative.')
    hard = (['memory_limit'] if any(p not in memory_limits or u > memory_limits[p] for p, u in memory_by_pool.items()) else []) \
        + (['version_sync'] if not version_sync_ok else []) \
        + (['recovery_not_ready'] if not recovery_ok else [])
    soft = (['unstable_queue'] if capacity_report.get('unstable_stages', []) or not capacity_report['queue_stable'] else []) \
        + (['exposed_transfer'] if any(v > float(max_exposed_s_per_s) for v in transfer_report.get('fabric_exposed_seconds_per_s', {}).values())
           or transfer_report['critical_exposed_seconds_per_s'] > float(max_exposed_s_per_s) else [])
    return {
        'decision': 'reject' if hard else ('tune' if soft else 'accept'),
        'reasons': hard if hard else soft,
        'over_limit_pools': sorted(p for p, u in memory_by_pool.items() if p not in memory_limits or u > memory_limits[p]),
        'unstable_stages': sorted(capacity_report.get('unstable_stages', [])),
        'overloaded_fabrics': sorted(k for k, v in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
                                     if v > float(max_exposed_s_per_s)),
    }
