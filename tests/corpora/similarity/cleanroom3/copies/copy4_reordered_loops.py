import math
from typing import Dict, List


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    arrival_rate = float(arrival_rate)
    if arrival_rate < 0 or not math.isfinite(arrival_rate):
        raise ValueError('arrival_rate 必须是非负有限数')
    if set(stage_rates) != set(items_per_work_unit):
        raise ValueError('每个阶段都必须提供工作单位倍率')
    if not stage_rates:
        raise ValueError('至少需要一个阶段')
    for name in stage_rates:
        rate = float(stage_rates[name])
        if rate <= 0 or not math.isfinite(rate):
            raise ValueError('stage rate 必须为正有限数')
        value = float(items_per_work_unit[name])
        if value <= 0 or not math.isfinite(value):
            raise ValueError('工作单位倍率必须为正有限数')
    effective_rates = {}
    queue_margins = {}
    for name, rate in stage_rates.items():
        effective_rates[name] = float(rate) / float(items_per_work_unit[name])
        queue_margins[name] = effective_rates[name] - arrival_rate
    capacity = min(effective_rates.values())
    bottlenecks = []
    unstable_stages = []
    for name in sorted(effective_rates):
        if math.isclose(effective_rates[name], capacity, rel_tol=1e-9, abs_tol=1e-12):
            bottlenecks.append(name)
        if queue_margins[name] < 0:
            unstable_stages.append(name)
    return {'effective_rates': effective_rates, 'capacity': capacity, 'bottlenecks': bottlenecks,
            'queue_margins': queue_margins, 'unstable_stages': unstable_stages,
            'queue_stable': len(unstable_stages) == 0}


def transfer_ledger(edges, placement):
    rows = []
    total_bytes = 0.0
    fabric_exposed = {}
    fabric_bandwidths = {}
    i = 0
    while i < len(edges):
        edge = edges[i]
        i += 1
        bytes_per_item = float(edge['bytes_per_item'])
        items_per_work_unit = float(edge['items_per_work_unit'])
        work_units_per_second = float(edge['work_units_per_second'])
        bandwidth = float(edge['bandwidth_bytes_per_s'])
        overlap = float(edge.get('overlap_fraction', 0.0))
        if not (math.isfinite(bytes_per_item) and bytes_per_item >= 0):
            raise ValueError('对象字节数必须有限且非负')
        if not (math.isfinite(work_units_per_second) and work_units_per_second >= 0):
            raise ValueError('到达率必须有限且非负')
        if not (math.isfinite(items_per_work_unit) and items_per_work_unit > 0):
            raise ValueError('工作单位倍率必须为正')
        if not (math.isfinite(bandwidth) and bandwidth > 0):
            raise ValueError('带宽必须为正有限数')
        if not (math.isfinite(overlap) and 0.0 <= overlap <= 1.0):
            raise ValueError('重叠比例须属于 0–1')
        source, target = edge['source'], edge['target']
        if source not in placement:
            raise ValueError('边的起点没有登记资源池')
        if target not in placement:
            raise ValueError('边的终点没有登记资源池')
        cross_pool = placement[source] != placement[target]
        if cross_pool:
            traffic = bytes_per_item * items_per_work_unit * work_units_per_second
        else:
            traffic = 0.0
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        total_bytes = total_bytes + traffic
        if cross_pool:
            fabric_id = str(edge.get('fabric_id', '')).strip()
            if fabric_id == '':
                raise ValueError('跨池边必须登记 fabric_id')
            if fabric_id not in fabric_bandwidths:
                fabric_bandwidths[fabric_id] = bandwidth
                fabric_exposed[fabric_id] = 0.0
            elif not math.isclose(fabric_bandwidths[fabric_id], bandwidth, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')
            fabric_exposed[fabric_id] += exposed
        row = dict(edge)
        row['cross_pool'] = cross_pool
        row['traffic_bytes_per_s'] = traffic
        row['transfer_seconds_per_s'] = transfer
        row['exposed_seconds_per_s'] = exposed
        rows.append(row)
    critical_exposed = 0.0
    critical_fabrics = []
    if fabric_exposed:
        critical_exposed = max(fabric_exposed.values())
        for name in sorted(fabric_exposed):
            if fabric_exposed[name] == critical_exposed:
                critical_fabrics.append(name)
    return {'rows': rows, 'cross_pool_bytes_per_s': total_bytes, 'fabric_exposed_seconds_per_s': fabric_exposed,
            'critical_exposed_seconds_per_s': critical_exposed, 'critical_fabrics': critical_fabrics}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    exposures = transfer_report.get('fabric_exposed_seconds_per_s', {})
    for value in list(memory_by_pool.values()) + list(memory_limits.values()):
        value = float(value)
        if value < 0 or not math.isfinite(value):
            raise ValueError('显存账本必须是非负有限数')
    for value in exposures.values():
        value = float(value)
        if value < 0 or not math.isfinite(value):
            raise ValueError('传输账本必须是非负有限数')
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    if max_exposed_s_per_s < 0 or not math.isfinite(max_exposed_s_per_s):
        raise ValueError('传输暴露预算必须是非负有限数')

    over_limit_pools = []
    for pool in sorted(memory_by_pool):
        if pool not in memory_limits:
            over_limit_pools.append(pool)
        elif memory_by_pool[pool] > memory_limits[pool]:
            over_limit_pools.append(pool)
    unstable_stages = sorted(capacity_report.get('unstable_stages', []))
    overloaded_fabrics = []
    for name in sorted(exposures):
        if exposures[name] > max_exposed_s_per_s:
            overloaded_fabrics.append(name)

    tuning_pressures = []
    if unstable_stages or not capacity_report['queue_stable']:
        tuning_pressures.append('unstable_queue')
    if overloaded_fabrics or transfer_report['critical_exposed_seconds_per_s'] > max_exposed_s_per_s:
        tuning_pressures.append('exposed_transfer')
    hard_failures = []
    if over_limit_pools:
        hard_failures.append('memory_limit')
    if not version_sync_ok:
        hard_failures.append('version_sync')
    if not recovery_ok:
        hard_failures.append('recovery_not_ready')

    if hard_failures:
        decision, reasons = 'reject', hard_failures
    elif tuning_pressures:
        decision, reasons = 'tune', tuning_pressures
    else:
        decision, reasons = 'accept', tuning_pressures
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': over_limit_pools,
            'unstable_stages': unstable_stages, 'overloaded_fabrics': overloaded_fabrics}
