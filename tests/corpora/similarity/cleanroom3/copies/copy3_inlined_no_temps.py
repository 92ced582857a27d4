import math
from typing import Dict, List


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if not stage_rates or any(not math.isfinite(float(r)) or float(r) <= 0 for r in stage_rates.values()):
        raise ValueError('stage rates must be positive and finite')
    if not math.isfinite(float(arrival_rate)) or float(arrival_rate) < 0:
        raise ValueError('arrival_rate must be non-negative and finite')
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(float(v)) or float(v) <= 0 for v in items_per_work_unit.values()):
        raise ValueError('each stage needs a positive finite multiplier')
    effective_rates = {n: float(r) / float(items_per_work_unit[n]) for n, r in stage_rates.items()}
    queue_margins = {n: r - float(arrival_rate) for n, r in effective_rates.items()}
    return {'capacity': min(effective_rates.values()), 'effective_rates': effective_rates,
            'bottlenecks': sorted(n for n, r in effective_rates.items()
                                  if math.isclose(r, min(effective_rates.values()), rel_tol=1e-9, abs_tol=1e-12)),
            'queue_margins': queue_margins,
            'unstable_stages': sorted(n for n, m in queue_margins.items() if m < 0),
            'queue_stable': not any(m < 0 for m in queue_margins.values())}


def transfer_ledger(edges, placement):
    rows, total, exposed_by_fabric, bw_by_fabric = [], 0.0, {}, {}
    for edge in edges:
        if edge['source'] not in placement or edge['target'] not in placement:
            raise ValueError('both endpoints of an edge need a pool')
        if (not math.isfinite(float(edge.get('overlap_fraction', 0.0))) or not math.isfinite(float(edge['bandwidth_bytes_per_s']))
                or not 0.0 <= float(edge.get('overlap_fraction', 0.0)) <= 1.0 or float(edge['bandwidth_bytes_per_s']) <= 0):
            raise ValueError('overlap must be within 0-1 and bandwidth positive finite')
        if (any(not math.isfinite(float(edge[k])) for k in ('bytes_per_item', 'items_per_work_unit', 'work_units_per_second'))
                or float(edge['bytes_per_item']) < 0 or float(edge['items_per_work_unit']) <= 0 or float(edge['work_units_per_second']) < 0):
            raise ValueError('byte size and rate must be finite and >= 0, items per unit > 0')
        traffic = (float(edge['bytes_per_item']) * float(edge['items_per_work_unit']) * float(edge['work_units_per_second'])
                   if placement[edge['source']] != placement[edge['target']] else 0.0)
        total += traffic
        if placement[edge['source']] != placement[edge['target']]:
            if not str(edge.get('fabric_id', '')).strip():
                raise ValueError('cross-pool edge must declare fabric_id')
            if not math.isclose(bw_by_fabric.setdefault(str(edge.get('fabric_id', '')).strip(), float(edge['bandwidth_bytes_per_s'])),
                                float(edge['bandwidth_bytes_per_s']), rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('a fabric_id must keep one bandwidth')
            exposed_by_fabric[str(edge.get('fabric_id', '')).strip()] = (
                exposed_by_fabric.get(str(edge.get('fabric_id', '')).strip(), 0.0)
                + traffic / float(edge['bandwidth_bytes_per_s']) * (1.0 - float(edge.get('overlap_fraction', 0.0))))
        rows.append(edge | {'cross_pool': placement[edge['source']] != placement[edge['target']],
                            'traffic_bytes_per_s': traffic,
                            'transfer_seconds_per_s': traffic / float(edge['bandwidth_bytes_per_s']),
                            'exposed_seconds_per_s': traffic / float(edge['bandwidth_bytes_per_s']) * (1.0 - float(edge.get('overlap_fraction', 0.0)))})
    return {'cross_pool_bytes_per_s': total, 'fabric_exposed_seconds_per_s': exposed_by_fabric,
            'critical_exposed_seconds_per_s': max(exposed_by_fabric.values(), default=0.0),
            'critical_fabrics': sorted(n for n, v in exposed_by_fabric.items()
                                       if v == max(exposed_by_fabric.values())) if exposed_by_fabric else [],
            'rows': rows}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    if not math.isfinite(float(max_exposed_s_per_s)) or float(max_exposed_s_per_s) < 0:
        raise ValueError('exposure budget must be finite and >= 0')
    if any(not math.isfinite(float(v)) or float(v) < 0
           for v in [*memory_by_pool.values(), *memory_limits.values(),
                     *transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]):
        raise ValueError('memory and transfer ledgers must be finite and >= 0')
    hard = (['memory_limit'] if any(p not in memory_limits or u > memory_limits[p] for p, u in memory_by_pool.items()) else []) \
        + (['version_sync'] if not version_sync_ok else []) + (['recovery_not_ready'] if not recovery_ok else [])
    soft = (['unstable_queue'] if capacity_report.get('unstable_stages', []) or not capacity_report['queue_stable'] else []) \
        + (['exposed_transfer'] if any(v > float(max_exposed_s_per_s) for v in transfer_report.get('fabric_exposed_seconds_per_s', {}).values())
           or transfer_report['critical_exposed_seconds_per_s'] > float(max_exposed_s_per_s) else [])
    return {'decision': 'reject' if hard else ('tune' if soft else 'accept'), 'reasons': hard if hard else soft,
            'over_limit_pools': sorted(p for p, u in memory_by_pool.items() if p not in memory_limits or u > memory_limits[p]),
            'unstable_stages': sorted(capacity_report.get('unstable_stages', [])),
            'overloaded_fabrics': sorted(n for n, v in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
                                         if v > float(max_exposed_s_per_s))}
