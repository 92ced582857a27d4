import math

_TOL = {'rel_tol': 1e-9, 'abs_tol': 1e-12}


def _bad_positive(value):
    return not math.isfinite(value) or value <= 0


def _bad_non_negative(value):
    return not math.isfinite(value) or value < 0


def _sorted_where(mapping, keep):
    return sorted(name for name, value in mapping.items() if keep(value))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    arrival_rate = float(arrival_rate)
    if not stage_rates or any(_bad_positive(float(rate)) for rate in stage_rates.values()):
        raise ValueError('stage rate 必须为正有限数')
    if _bad_non_negative(arrival_rate):
        raise ValueError('arrival_rate 必须是非负有限数')
    if set(stage_rates) != set(items_per_work_unit) or any(_bad_positive(float(v)) for v in items_per_work_unit.values()):
        raise ValueError('每个阶段都必须提供正有限工作单位倍率')
    effective_rates = {name: float(rate) / float(items_per_work_unit[name]) for name, rate in stage_rates.items()}
    capacity = min(effective_rates.values())
    queue_margins = {name: rate - arrival_rate for name, rate in effective_rates.items()}
    unstable_stages = _sorted_where(queue_margins, lambda margin: margin < 0)
    return {'capacity': capacity, 'effective_rates': effective_rates,
            'bottlenecks': _sorted_where(effective_rates, lambda rate: math.isclose(rate, capacity, **_TOL)),
            'queue_margins': queue_margins, 'unstable_stages': unstable_stages, 'queue_stable': not unstable_stages}


def _read_edge(edge):
    overlap = float(edge.get('overlap_fraction', 0.0))
    bandwidth = float(edge['bandwidth_bytes_per_s'])
    if not math.isfinite(overlap) or not 0.0 <= overlap <= 1.0 or _bad_positive(bandwidth):
        raise ValueError('重叠比例须属于 0–1，带宽必须为正有限数')
    bytes_per_item = float(edge['bytes_per_item'])
    items_per_work_unit = float(edge['items_per_work_unit'])
    work_units_per_second = float(edge['work_units_per_second'])
    if _bad_non_negative(bytes_per_item) or _bad_positive(items_per_work_unit) or _bad_non_negative(work_units_per_second):
        raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
    return overlap, bandwidth, bytes_per_item * items_per_work_unit * work_units_per_second


def _fabric_of(edge):
    fabric_id = str(edge.get('fabric_id', '')).strip()
    if not fabric_id:
        raise ValueError('跨池边必须登记 fabric_id')
    return fabric_id


def transfer_ledger(edges, placement):
    rows, total_bytes, fabric_exposed, fabric_bandwidths = [], 0.0, {}, {}
    for edge in edges:
        if edge['source'] not in placement or edge['target'] not in placement:
            raise ValueError('每条边的两端都必须登记资源池')
        cross_pool = placement[edge['source']] != placement[edge['target']]
        overlap, bandwidth, load = _read_edge(edge)
        traffic = load if cross_pool else 0.0
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        total_bytes += traffic
        if cross_pool:
            fabric_id = _fabric_of(edge)
            if not math.isclose(fabric_bandwidths.setdefault(fabric_id, bandwidth), bandwidth, **_TOL):
                raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')
            fabric_exposed[fabric_id] = fabric_exposed.get(fabric_id, 0.0) + exposed
        rows.append(edge | {'cross_pool': cross_pool, 'traffic_bytes_per_s': traffic,
                            'transfer_seconds_per_s': transfer, 'exposed_seconds_per_s': exposed})
    critical_exposed = max(fabric_exposed.values(), default=0.0)
    return {'cross_pool_bytes_per_s': total_bytes, 'fabric_exposed_seconds_per_s': fabric_exposed,
            'critical_exposed_seconds_per_s': critical_exposed,
            'critical_fabrics': _sorted_where(fabric_exposed, lambda value: value == critical_exposed),
            'rows': rows}


def _hard_failures(over_limit_pools, version_sync_ok, recovery_ok):
    hard_failures = []
    if over_limit_pools:
        hard_failures.append('memory_limit')
    if not version_sync_ok:
        hard_failures.append('version_sync')
    if not recovery_ok:
        hard_failures.append('recovery_not_ready')
    return hard_failures


def _tuning_pressures(capacity_report, transfer_report, unstable_stages, overloaded_fabrics, budget):
    tuning_pressures = []
    if unstable_stages or not capacity_report['queue_stable']:
        tuning_pressures.append('unstable_queue')
    if overloaded_fabrics or transfer_report['critical_exposed_seconds_per_s'] > budget:
        tuning_pressures.append('exposed_transfer')
    return tuning_pressures


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    fabric_exposure = transfer_report.get('fabric_exposed_seconds_per_s', {})
    if _bad_non_negative(max_exposed_s_per_s):
        raise ValueError('传输暴露预算必须是非负有限数')
    if any(_bad_non_negative(float(value)) for value in
           [*memory_by_pool.values(), *memory_limits.values(), *fabric_exposure.values()]):
        raise ValueError('显存与传输账本必须是非负有限数')
    over_limit_pools = sorted(pool for pool, used in memory_by_pool.items()
                              if pool not in memory_limits or used > memory_limits[pool])
    hard_failures = _hard_failures(over_limit_pools, version_sync_ok, recovery_ok)
    unstable_stages = sorted(capacity_report.get('unstable_stages', []))
    overloaded_fabrics = _sorted_where(fabric_exposure, lambda value: value > max_exposed_s_per_s)
    tuning_pressures = _tuning_pressures(capacity_report, transfer_report, unstable_stages,
                                         overloaded_fabrics, max_exposed_s_per_s)
    decision = 'reject' if hard_failures else ('tune' if tuning_pressures else 'accept')
    reasons = hard_failures if hard_failures else tuning_pressures
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': over_limit_pools,
            'unstable_stages': unstable_stages, 'overloaded_fabrics': overloaded_fabrics}
