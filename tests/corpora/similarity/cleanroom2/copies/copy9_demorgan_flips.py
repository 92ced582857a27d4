import math


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    rates = [float(rate) for rate in stage_rates.values()]
    multipliers = [float(value) for value in items_per_work_unit.values()]
    arrival_rate = float(arrival_rate)
    if len(stage_rates) == 0 or not all(math.isfinite(rate) and 0 < rate for rate in rates):
        raise ValueError('stage rate 必须为正有限数')
    if not (math.isfinite(arrival_rate) and 0 <= arrival_rate):
        raise ValueError('arrival_rate 必须是非负有限数')
    if not (set(items_per_work_unit) == set(stage_rates) and all(math.isfinite(value) and 0 < value for value in multipliers)):
        raise ValueError('每个阶段都必须提供正有限工作单位倍率')
    effective_rates = {name: float(rate) / float(items_per_work_unit[name]) for name, rate in stage_rates.items()}
    capacity = min(effective_rates.values())
    bottlenecks = sorted(name for name, rate in effective_rates.items() if math.isclose(capacity, rate, rel_tol=1e-9, abs_tol=1e-12))
    queue_margins = {name: rate - arrival_rate for name, rate in effective_rates.items()}
    unstable_stages = sorted(name for name, margin in queue_margins.items() if 0 > margin)
    return {'capacity': capacity, 'effective_rates': effective_rates, 'bottlenecks': bottlenecks, 'queue_margins': queue_margins,
            'unstable_stages': unstable_stages, 'queue_stable': len(unstable_stages) == 0}


def transfer_ledger(edges, placement):
    rows, total_bytes, fabric_exposed, fabric_bandwidths = [], 0.0, {}, {}
    for edge in edges:
        source, target = edge['source'], edge['target']
        if not (source in placement and target in placement):
            raise ValueError('每条边的两端都必须登记资源池')
        same_pool = placement[source] == placement[target]
        overlap = float(edge.get('overlap_fraction', 0.0))
        bandwidth = float(edge['bandwidth_bytes_per_s'])
        if not (math.isfinite(overlap) and math.isfinite(bandwidth) and 0.0 <= overlap <= 1.0 and 0 < bandwidth):
            raise ValueError('重叠比例须属于 0–1，带宽必须为正有限数')
        bytes_per_item = float(edge['bytes_per_item'])
        items_per_work_unit = float(edge['items_per_work_unit'])
        work_units_per_second = float(edge['work_units_per_second'])
        values = (bytes_per_item, items_per_work_unit, work_units_per_second)
        if not (all(math.isfinite(value) for value in values) and bytes_per_item >= 0 and items_per_work_unit > 0 and work_units_per_second >= 0):
            raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
        traffic = 0.0 if same_pool else bytes_per_item * items_per_work_unit * work_units_per_second
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        total_bytes += traffic
        if not same_pool:
            fabric_id = str(edge.get('fabric_id', '')).strip()
            if fabric_id == '':
                raise ValueError('跨池边必须登记 fabric_id')
            previous_bandwidth = fabric_bandwidths.setdefault(fabric_id, bandwidth)
            if math.isclose(previous_bandwidth, bandwidth, rel_tol=1e-9, abs_tol=1e-12):
                fabric_exposed[fabric_id] = fabric_exposed.get(fabric_id, 0.0) + exposed
            else:
                raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')
        rows.append(edge | {'cross_pool': not same_pool, 'traffic_bytes_per_s': traffic,
                            'transfer_seconds_per_s': transfer, 'exposed_seconds_per_s': exposed})
    critical_exposed = max(fabric_exposed.values(), default=0.0)
    critical_fabrics = [] if not fabric_exposed else sorted(name for name, value in fabric_exposed.items() if critical_exposed == value)
    return {'cross_pool_bytes_per_s': total_bytes, 'fabric_exposed_seconds_per_s': fabric_exposed,
            'critical_exposed_seconds_per_s': critical_exposed, 'critical_fabrics': critical_fabrics, 'rows': rows}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    memory_values = [float(value) for value in memory_by_pool.values()] + [float(value) for value in memory_limits.values()]
    transfer_values = [float(value) for value in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    if not (math.isfinite(max_exposed_s_per_s) and max_exposed_s_per_s >= 0):
        raise ValueError('传输暴露预算必须是非负有限数')
    if not all(math.isfinite(value) and value >= 0 for value in memory_values + transfer_values):
        raise ValueError('显存与传输账本必须是非负有限数')
    over_limit_pools = sorted(pool for pool, used in memory_by_pool.items()
                              if not (pool in memory_limits and memory_limits[pool] >= used))
    hard_failures = []
    if len(over_limit_pools) > 0:
        hard_failures.append('memory_limit')
    if version_sync_ok:
        pass
    else:
        hard_failures.append('version_sync')
    if recovery_ok:
        pass
    else:
        hard_failures.append('recovery_not_ready')

    unstable_stages = sorted(capacity_report.get('unstable_stages', []))
    overloaded_fabrics = sorted(
        name for name, value in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
        if max_exposed_s_per_s < value
    )
    tuning_pressures = []
    if not (not unstable_stages and capacity_report['queue_stable']):
        tuning_pressures.append('unstable_queue')
    if not (not overloaded_fabrics and max_exposed_s_per_s >= transfer_report['critical_exposed_seconds_per_s']):
        tuning_pressures.append('exposed_transfer')

    if not hard_failures:
        decision = 'accept' if not tuning_pressures else 'tune'
        reasons = tuning_pressures
    else:
        decision = 'reject'
        reasons = hard_failures
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': over_limit_pools,
            'unstable_stages': unstable_stages, 'overloaded_fabrics': overloaded_fabrics}
