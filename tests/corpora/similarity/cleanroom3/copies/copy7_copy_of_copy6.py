# Ledger exercise (rollout / reward / learner system)
import math
from typing import Dict, List

EPS = {'rel_tol': 1e-9, 'abs_tol': 1e-12}


def invalid(num, allow_zero=True):
    """True when num is NaN/inf or falls under the allowed range."""
    num = float(num)
    if not math.isfinite(num):
        return True
    return num < 0 if allow_zero else num <= 0


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    incoming = float(arrival_rate)
    if invalid(incoming):
        raise ValueError('Arrival rate: expected a finite, non-negative value.')
    if len(stage_rates) == 0 or stage_rates.keys() != items_per_work_unit.keys():
        raise ValueError('Stages: both maps must list the same (non-empty) set of stages.')
    for key in stage_rates:
        if invalid(stage_rates[key], allow_zero=False) or invalid(items_per_work_unit[key], allow_zero=False):
            raise ValueError('Stage %r: rate and multiplier must be finite and strictly positive.' % (key,))

    normalised, headroom, backlog = {}, {}, []
    for key in stage_rates:
        normalised[key] = float(stage_rates[key]) / float(items_per_work_unit[key])
        headroom[key] = normalised[key] - incoming
        if headroom[key] < 0:
            backlog.append(key)
    backlog.sort()
    limit = min(normalised.values())
    slowest = [k for k in sorted(normalised) if math.isclose(normalised[k], limit, **EPS)]
    return dict(effective_rates=normalised, capacity=limit, bottlenecks=slowest,
                queue_margins=headroom, unstable_stages=backlog, queue_stable=not backlog)


def read_edge(edge, placement):
    head, tail = edge['source'], edge['target']
    for end in (head, tail):
        if end not in placement:
            raise ValueError('Endpoint %r is not assigned to a pool.' % (end,))
    ov = float(edge.get('overlap_fraction', 0.0))
    if not math.isfinite(ov) or ov < 0.0 or ov > 1.0:
        raise ValueError('overlap_fraction has to be inside [0, 1].')
    link = float(edge['bandwidth_bytes_per_s'])
    if invalid(link, allow_zero=False):
        raise ValueError('Bandwidth has to be finite and strictly positive.')
    nbytes = float(edge['bytes_per_item'])
    count = float(edge['items_per_work_unit'])
    hz = float(edge['work_units_per_second'])
    if invalid(count, allow_zero=False):
        raise ValueError('items_per_work_unit has to be finite and strictly positive.')
    if invalid(nbytes) or invalid(hz):
        raise ValueError('bytes_per_item and work_units_per_second have to be finite and >= 0.')
    return placement[head] != placement[tail], ov, link, nbytes * count * hz


def transfer_ledger(edges, placement):
    table, moved, fabric_load, fabric_link = [], 0.0, {}, {}
    for edge in edges:
        crossing, ov, link, payload = read_edge(edge, placement)
        payload = payload if crossing else 0.0
        busy = payload / link
        hidden_not = busy * (1.0 - ov)
        moved += payload
        if crossing:
            name = str(edge.get('fabric_id', '')).strip()
            if name == '':
                raise ValueError('Cross-pool edge without a usable fabric_id.')
            first_link = fabric_link.setdefault(name, link)
            if not math.isclose(first_link, link, **EPS):
                raise ValueError('Fabric %s was declared with another bandwidth before.' % name)
            fabric_load[name] = fabric_load.get(name, 0.0) + hidden_not
        entry = dict(edge)
        entry['cross_pool'] = crossing
        entry['traffic_bytes_per_s'] = payload
        entry['transfer_seconds_per_s'] = busy
        entry['exposed_seconds_per_s'] = hidden_not
        table.append(entry)

    peak = max(fabric_load.values()) if fabric_load else 0.0
    hottest = []
    for name in sorted(fabric_load):
        if fabric_load[name] == peak:
            hottest.append(name)
    return dict(rows=table, cross_pool_bytes_per_s=moved, fabric_exposed_seconds_per_s=fabric_load,
                critical_exposed_seconds_per_s=peak, critical_fabrics=hottest)


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    cap = float(max_exposed_s_per_s)
    fabric_x = transfer_report.get('fabric_exposed_seconds_per_s', {})
    if invalid(cap):
        raise ValueError('Exposure budget has to be finite and >= 0.')
    numbers = list(memory_by_pool.values()) + list(memory_limits.values()) + list(fabric_x.values())
    if any(invalid(n) for n in numbers):
        raise ValueError('Memory, limits and exposures have to be finite and >= 0.')

    over_pools = []
    for pool in sorted(memory_by_pool):
        if pool not in memory_limits or memory_by_pool[pool] > memory_limits[pool]:
            over_pools.append(pool)
    queues = sorted(capacity_report.get('unstable_stages', []))
    busy_fabrics = [f for f in sorted(fabric_x) if fabric_x[f] > cap]

    checks = [
        ('memory_limit', 'hard', bool(over_pools)),
        ('version_sync', 'hard', not version_sync_ok),
        ('recovery_not_ready', 'hard', not recovery_ok),
        ('unstable_queue', 'soft', bool(queues) or not capacity_report['queue_stable']),
        ('exposed_transfer', 'soft', bool(busy_fabrics) or transfer_report['critical_exposed_seconds_per_s'] > cap),
    ]
    hard = [r for r, level, hit in checks if hit and level == 'hard']
    soft = [r for r, level, hit in checks if hit and level == 'soft']
    outcome = 'reject' if hard else 'tune' if soft else 'accept'
    return dict(decision=outcome, reasons=hard if hard else soft, over_limit_pools=over_pools,
                unstable_stages=queues, overloaded_fabrics=busy_fabrics)
