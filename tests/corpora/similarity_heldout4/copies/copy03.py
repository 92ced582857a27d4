import math


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    arrival = float(arrival_rate)
    if not stage_rates:
        raise ValueError('阶段速率必须是正的有限数')
    for r in stage_rates.values():
        r = float(r)
        if not math.isfinite(r) or r <= 0:
            raise ValueError('阶段速率必须是正的有限数')
    if not math.isfinite(arrival) or arrival < 0:
        raise ValueError('到达率必须非负且有限')
    if set(stage_rates) != set(items_per_work_unit):
        raise ValueError('每个阶段都要有正的有限倍率')
    for m in items_per_work_unit.values():
        m = float(m)
        if not math.isfinite(m) or m <= 0:
            raise ValueError('每个阶段都要有正的有限倍率')

    effective_rates = {}
    for name in stage_rates:
        effective_rates[name] = float(stage_rates[name]) / float(items_per_work_unit[name])
    capacity = min(effective_rates.values())
    bottlenecks = []
    queue_margins = {}
    unstable_stages = []
    for name in effective_rates:
        rate = effective_rates[name]
        if math.isclose(rate, capacity, rel_tol=1e-9, abs_tol=1e-12):
            bottlenecks.append(name)
        queue_margins[name] = rate - arrival
        if queue_margins[name] < 0:
            unstable_stages.append(name)
    bottlenecks.sort()
    unstable_stages.sort()
    return {'capacity': capacity, 'effective_rates': effective_rates, 'bottlenecks': bottlenecks,
            'queue_margins': queue_margins, 'unstable_stages': unstable_stages,
            'queue_stable': not unstable_stages}


def transfer_ledger(edges, placement):
    rows = []
    total_bytes = 0.0
    fabric_exposed = {}
    fabric_bandwidths = {}
    for edge in edges:
        source = edge['source']
        target = edge['target']
        if source not in placement or target not in placement:
            raise ValueError('边的两端都要登记资源池')
        cross_pool = placement[source] != placement[target]
        overlap = float(edge.get('overlap_fraction', 0.0))
        bandwidth = float(edge['bandwidth_bytes_per_s'])
        if not math.isfinite(overlap) or not math.isfinite(bandwidth) or not 0.0 <= overlap <= 1.0 or bandwidth <= 0:
            raise ValueError('重叠比例要在 0 到 1，带宽要为正有限数')
        bytes_per_item = float(edge['bytes_per_item'])
        items = float(edge['items_per_work_unit'])
        wps = float(edge['work_units_per_second'])
        for v in (bytes_per_item, items, wps):
            if not math.isfinite(v):
                raise ValueError('字节数、倍率和到达率要有限')
        if bytes_per_item < 0 or items <= 0 or wps < 0:
            raise ValueError('字节数和到达率要非负，倍率要为正')
        if cross_pool:
            traffic = bytes_per_item * items * wps
        else:
            traffic = 0.0
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        total_bytes += traffic
        if cross_pool:
            fabric_id = str(edge.get('fabric_id', '')).strip()
            if not fabric_id:
                raise ValueError('跨池边要登记 fabric_id')
            previous = fabric_bandwidths.setdefault(fabric_id, bandwidth)
            if not math.isclose(previous, bandwidth, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('同一个 fabric_id 的带宽要一致')
            fabric_exposed[fabric_id] = fabric_exposed.get(fabric_id, 0.0) + exposed
        row = dict(edge)
        row['cross_pool'] = cross_pool
        row['traffic_bytes_per_s'] = traffic
        row['transfer_seconds_per_s'] = transfer
        row['exposed_seconds_per_s'] = exposed
        rows.append(row)
    critical_exposed = max(fabric_exposed.values(), default=0.0)
    critical_fabrics = []
    for name in fabric_exposed:
        if fabric_exposed[name] == critical_exposed:
            critical_fabrics.append(name)
    critical_fabrics.sort()
    return {'cross_pool_bytes_per_s': total_bytes, 'fabric_exposed_seconds_per_s': fabric_exposed,
            'critical_exposed_seconds_per_s': critical_exposed, 'critical_fabrics': critical_fabrics,
            'rows': rows}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError('传输暴露预算要非负有限')
    fabrics = transfer_report.get('fabric_exposed_seconds_per_s', {})
    values = []
    for v in memory_by_pool.values():
        values.append(float(v))
    for v in memory_limits.values():
        values.append(float(v))
    for v in fabrics.values():
        values.append(float(v))
    for v in values:
        if not math.isfinite(v) or v < 0:
            raise ValueError('显存和传输账本要非负有限')
    over_limit_pools = []
    for pool in memory_by_pool:
        if pool not in memory_limits or memory_by_pool[pool] > memory_limits[pool]:
            over_limit_pools.append(pool)
    over_limit_pools.sort()
    hard_failures = []
    if over_limit_pools:
        hard_failures.append('memory_limit')
    if not version_sync_ok:
        hard_failures.append('version_sync')
    if not recovery_ok:
        hard_failures.append('recovery_not_ready')
    unstable_stages = sorted(capacity_report.get('unstable_stages', []))
    overloaded_fabrics = []
    for name in fabrics:
        if fabrics[name] > max_exposed_s_per_s:
            overloaded_fabrics.append(name)
    overloaded_fabrics.sort()
    tuning_pressures = []
    if unstable_stages or not capacity_report['queue_stable']:
        tuning_pressures.append('unstable_queue')
    if overloaded_fabrics or transfer_report['critical_exposed_seconds_per_s'] > max_exposed_s_per_s:
        tuning_pressures.append('exposed_transfer')
    if hard_failures:
        decision = 'reject'
        reasons = hard_failures
    elif tuning_pressures:
        decision = 'tune'
        reasons = tuning_pressures
    else:
        decision = 'accept'
        reasons = []
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': over_limit_pools,
            'unstable_stages': unstable_stages, 'overloaded_fabrics': overloaded_fabrics}
