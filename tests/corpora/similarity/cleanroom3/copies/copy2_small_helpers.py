import math
from typing import Dict, List

TOL = {'rel_tol': 1e-9, 'abs_tol': 1e-12}


def _as_floats(mapping):
    values = []
    for v in mapping.values():
        values.append(float(v))
    return values


def _all_positive_finite(values):
    for v in values:
        if not math.isfinite(v) or v <= 0:
            return False
    return True


def _check_stage_rates(stage_rates):
    rates = _as_floats(stage_rates)
    if not stage_rates or not _all_positive_finite(rates):
        raise ValueError('stage rate 必须为正有限数')
    return rates


def _check_arrival(arrival_rate):
    arrival_rate = float(arrival_rate)
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError('arrival_rate 必须是非负有限数')
    return arrival_rate


def _check_multipliers(stage_rates, items_per_work_unit):
    multipliers = _as_floats(items_per_work_unit)
    same = set(stage_rates) == set(items_per_work_unit)
    if not same or not _all_positive_finite(multipliers):
        raise ValueError('每个阶段都必须提供正有限工作单位倍率')


def _normalise(stage_rates, items_per_work_unit):
    effective = {}
    for name, rate in stage_rates.items():
        effective[name] = float(rate) / float(items_per_work_unit[name])
    return effective


def _bottlenecks(effective, capacity):
    names = [n for n, r in effective.items() if math.isclose(r, capacity, **TOL)]
    names.sort()
    return names


def _margins(effective, arrival_rate):
    margins = {}
    for name, rate in effective.items():
        margins[name] = rate - arrival_rate
    return margins


def _negative(margins):
    names = [n for n, m in margins.items() if m < 0]
    names.sort()
    return names


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    _check_stage_rates(stage_rates)
    arrival_rate = _check_arrival(arrival_rate)
    _check_multipliers(stage_rates, items_per_work_unit)
    effective_rates = _normalise(stage_rates, items_per_work_unit)
    capacity = min(effective_rates.values())
    queue_margins = _margins(effective_rates, arrival_rate)
    unstable = _negative(queue_margins)
    return {'capacity': capacity, 'effective_rates': effective_rates,
            'bottlenecks': _bottlenecks(effective_rates, capacity),
            'queue_margins': queue_margins, 'unstable_stages': unstable,
            'queue_stable': not unstable}


def _endpoints_placed(edge, placement):
    source, target = edge['source'], edge['target']
    if source not in placement or target not in placement:
        raise ValueError('每条边的两端都必须登记资源池')
    return placement[source] != placement[target]


def _overlap_and_bandwidth(edge):
    overlap = float(edge.get('overlap_fraction', 0.0))
    bandwidth = float(edge['bandwidth_bytes_per_s'])
    finite = math.isfinite(overlap) and math.isfinite(bandwidth)
    if not finite or not 0.0 <= overlap <= 1.0 or bandwidth <= 0:
        raise ValueError('重叠比例须属于 0–1，带宽必须为正有限数')
    return overlap, bandwidth


def _load_terms(edge):
    size = float(edge['bytes_per_item'])
    items = float(edge['items_per_work_unit'])
    rate = float(edge['work_units_per_second'])
    if any(not math.isfinite(v) for v in (size, items, rate)):
        raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
    if size < 0 or items <= 0 or rate < 0:
        raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
    return size, items, rate


def _edge_numbers(edge, cross_pool, overlap, bandwidth):
    size, items, rate = _load_terms(edge)
    traffic = size * items * rate if cross_pool else 0.0
    transfer = traffic / bandwidth
    exposed = transfer * (1.0 - overlap)
    return traffic, transfer, exposed


def _fabric_name(edge):
    name = str(edge.get('fabric_id', '')).strip()
    if not name:
        raise ValueError('跨池边必须登记 fabric_id')
    return name


def _check_fabric_bandwidth(known, fabric, bandwidth):
    first = known.setdefault(fabric, bandwidth)
    if not math.isclose(first, bandwidth, **TOL):
        raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')


def _add_exposure(totals, fabric, exposed):
    totals[fabric] = totals.get(fabric, 0.0) + exposed


def _make_row(edge, cross_pool, traffic, transfer, exposed):
    extra = {'cross_pool': cross_pool, 'traffic_bytes_per_s': traffic,
             'transfer_seconds_per_s': transfer, 'exposed_seconds_per_s': exposed}
    return edge | extra


def _critical(totals):
    top = max(totals.values(), default=0.0)
    names = sorted(n for n, v in totals.items() if v == top) if totals else []
    return top, names


def transfer_ledger(edges, placement):
    rows, total_bytes, fabric_exposed, fabric_bandwidths = [], 0.0, {}, {}
    for edge in edges:
        cross_pool = _endpoints_placed(edge, placement)
        overlap, bandwidth = _overlap_and_bandwidth(edge)
        traffic, transfer, exposed = _edge_numbers(edge, cross_pool, overlap, bandwidth)
        total_bytes += traffic
        if cross_pool:
            fabric = _fabric_name(edge)
            _check_fabric_bandwidth(fabric_bandwidths, fabric, bandwidth)
            _add_exposure(fabric_exposed, fabric, exposed)
        rows.append(_make_row(edge, cross_pool, traffic, transfer, exposed))
    critical_exposed, critical_fabrics = _critical(fabric_exposed)
    return {'cross_pool_bytes_per_s': total_bytes, 'fabric_exposed_seconds_per_s': fabric_exposed,
            'critical_exposed_seconds_per_s': critical_exposed, 'critical_fabrics': critical_fabrics,
            'rows': rows}


def _check_budget(limit):
    limit = float(limit)
    if not math.isfinite(limit) or limit < 0:
        raise ValueError('传输暴露预算必须是非负有限数')
    return limit


def _check_ledgers(memory_by_pool, memory_limits, transfer_report):
    values = _as_floats(memory_by_pool) + _as_floats(memory_limits)
    values += _as_floats(transfer_report.get('fabric_exposed_seconds_per_s', {}))
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise ValueError('显存与传输账本必须是非负有限数')


def _pools_over(memory_by_pool, memory_limits):
    pools = []
    for pool, used in memory_by_pool.items():
        if pool not in memory_limits or used > memory_limits[pool]:
            pools.append(pool)
    return sorted(pools)


def _hard(over, version_sync_ok, recovery_ok):
    failures = []
    if over:
        failures.append('memory_limit')
    if not version_sync_ok:
        failures.append('version_sync')
    if not recovery_ok:
        failures.append('recovery_not_ready')
    return failures


def _hot_fabrics(transfer_report, limit):
    exposures = transfer_report.get('fabric_exposed_seconds_per_s', {})
    return sorted(n for n, v in exposures.items() if v > limit)


def _pressures(capacity_report, unstable, overloaded, transfer_report, limit):
    pressures = []
    if unstable or not capacity_report['queue_stable']:
        pressures.append('unstable_queue')
    if overloaded or transfer_report['critical_exposed_seconds_per_s'] > limit:
        pressures.append('exposed_transfer')
    return pressures


def _decide(hard, soft):
    decision = 'reject' if hard else ('tune' if soft else 'accept')
    return decision, (hard if hard else soft)


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    limit = _check_budget(max_exposed_s_per_s)
    _check_ledgers(memory_by_pool, memory_limits, transfer_report)
    over_limit_pools = _pools_over(memory_by_pool, memory_limits)
    hard_failures = _hard(over_limit_pools, version_sync_ok, recovery_ok)
    unstable_stages = sorted(capacity_report.get('unstable_stages', []))
    overloaded_fabrics = _hot_fabrics(transfer_report, limit)
    tuning = _pressures(capacity_report, unstable_stages, overloaded_fabrics, transfer_report, limit)
    decision, reasons = _decide(hard_failures, tuning)
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': over_limit_pools,
            'unstable_stages': unstable_stages, 'overloaded_fabrics': overloaded_fabrics}
