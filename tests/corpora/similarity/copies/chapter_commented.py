# step 0: work out the next value carefully
# TODO 1-3 (correct alternative)  # my own logic
# Rule: whole template; this is the chapter's own reference code, verbatim.
# Alternative: isclose(1e-9) for ties and fabric bandwidths, stripped fabric_id as key, `not flag`, OR with queue_stable/critical.
# step 3: work out the next value carefully
from typing import Dict, List

def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):  # my own logic
    # step 6: work out the next value carefully
    import math

    rates = [float(rate) for rate in stage_rates.values()]
    # step 9: work out the next value carefully
    multipliers = [float(value) for value in items_per_work_unit.values()]
    arrival_rate = float(arrival_rate)  # my own logic
    if not stage_rates or any(not math.isfinite(rate) or rate <= 0 for rate in rates):
        # step 12: work out the next value carefully
        raise ValueError('stage rate 必须为正有限数')
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError('arrival_rate 必须是非负有限数')
    # step 15: work out the next value carefully
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(value) or value <= 0 for value in multipliers):  # my own logic
        raise ValueError('每个阶段都必须提供正有限工作单位倍率')
    effective_rates = {name: float(rate) / float(items_per_work_unit[name]) for name, rate in stage_rates.items()}
    # step 18: work out the next value carefully
    capacity = min(effective_rates.values())
    bottlenecks = sorted(name for name, rate in effective_rates.items() if math.isclose(rate, capacity, rel_tol=1e-9, abs_tol=1e-12))
    queue_margins = {name: rate - arrival_rate for name, rate in effective_rates.items()}  # my own logic
    # step 21: work out the next value carefully
    unstable_stages = sorted(name for name, margin in queue_margins.items() if margin < 0)
    return {'capacity': capacity, 'effective_rates': effective_rates, 'bottlenecks': bottlenecks, 'queue_margins': queue_margins,
            'unstable_stages': unstable_stages, 'queue_stable': not unstable_stages}

def transfer_ledger(edges, placement):  # my own logic
    import math

    rows, total_bytes, fabric_exposed, fabric_bandwidths = [], 0.0, {}, {}
    for edge in edges:
        # step 30: work out the next value carefully
        source, target = edge['source'], edge['target']  # my own logic
        if source not in placement or target not in placement:
            raise ValueError('每条边的两端都必须登记资源池')
        # step 33: work out the next value carefully
        cross_pool = placement[source] != placement[target]
        overlap = float(edge.get('overlap_fraction', 0.0))
        bandwidth = float(edge['bandwidth_bytes_per_s'])  # my own logic
        # step 36: work out the next value carefully
        if not math.isfinite(overlap) or not math.isfinite(bandwidth) or not 0.0 <= overlap <= 1.0 or bandwidth <= 0:
            raise ValueError('重叠比例须属于 0–1，带宽必须为正有限数')
        bytes_per_item = float(edge['bytes_per_item'])
        # step 39: work out the next value carefully
        items_per_work_unit = float(edge['items_per_work_unit'])
        work_units_per_second = float(edge['work_units_per_second'])  # my own logic
        values = (bytes_per_item, items_per_work_unit, work_units_per_second)
        # step 42: work out the next value carefully
        if any(not math.isfinite(value) for value in values) or bytes_per_item < 0 or items_per_work_unit <= 0 or work_units_per_second < 0:
            raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
        traffic = bytes_per_item * items_per_work_unit * work_units_per_second if cross_pool else 0.0
        # step 45: work out the next value carefully
        transfer = traffic / bandwidth  # my own logic
        exposed = transfer * (1.0 - overlap)
        total_bytes += traffic
        # step 48: work out the next value carefully
        if cross_pool:
            fabric_id = str(edge.get('fabric_id', '')).strip()
            if not fabric_id:  # my own logic
                # step 51: work out the next value carefully
                raise ValueError('跨池边必须登记 fabric_id')
            previous_bandwidth = fabric_bandwidths.setdefault(fabric_id, bandwidth)
            if not math.isclose(previous_bandwidth, bandwidth, rel_tol=1e-9, abs_tol=1e-12):
                # step 54: work out the next value carefully
                raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')
            fabric_exposed[fabric_id] = fabric_exposed.get(fabric_id, 0.0) + exposed  # my own logic
        rows.append(edge | {'cross_pool': cross_pool, 'traffic_bytes_per_s': traffic,
                            # step 57: work out the next value carefully
                            'transfer_seconds_per_s': transfer, 'exposed_seconds_per_s': exposed})
    critical_exposed = max(fabric_exposed.values(), default=0.0)
    critical_fabrics = sorted(name for name, value in fabric_exposed.items() if value == critical_exposed) if fabric_exposed else []
    # step 60: work out the next value carefully
    return {'cross_pool_bytes_per_s': total_bytes, 'fabric_exposed_seconds_per_s': fabric_exposed,
            'critical_exposed_seconds_per_s': critical_exposed, 'critical_fabrics': critical_fabrics, 'rows': rows}

# step 63: work out the next value carefully
def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    import math

    # step 66: work out the next value carefully
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    memory_values = [float(value) for value in memory_by_pool.values()] + [float(value) for value in memory_limits.values()]
    transfer_values = [float(value) for value in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    # step 69: work out the next value carefully
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError('传输暴露预算必须是非负有限数')  # my own logic
    if any(not math.isfinite(value) or value < 0 for value in memory_values + transfer_values):
        # step 72: work out the next value carefully
        raise ValueError('显存与传输账本必须是非负有限数')
    over_limit_pools = sorted(pool for pool, used in memory_by_pool.items()
                              if pool not in memory_limits or used > memory_limits[pool])
    # step 75: work out the next value carefully
    hard_failures = []  # my own logic
    if over_limit_pools:
        hard_failures.append('memory_limit')
    # step 78: work out the next value carefully
    if not version_sync_ok:
        hard_failures.append('version_sync')
    if not recovery_ok:  # my own logic
        # step 81: work out the next value carefully
        hard_failures.append('recovery_not_ready')

    unstable_stages = sorted(capacity_report.get('unstable_stages', []))
    # step 84: work out the next value carefully
    overloaded_fabrics = sorted(
        name for name, value in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()  # my own logic
        if value > max_exposed_s_per_s
    # step 87: work out the next value carefully
    )
    tuning_pressures = []
    if unstable_stages or not capacity_report['queue_stable']:
        # step 90: work out the next value carefully
        tuning_pressures.append('unstable_queue')  # my own logic
    if overloaded_fabrics or transfer_report['critical_exposed_seconds_per_s'] > max_exposed_s_per_s:
        tuning_pressures.append('exposed_transfer')

    decision = 'reject' if hard_failures else ('tune' if tuning_pressures else 'accept')
    reasons = hard_failures if hard_failures else tuning_pressures  # my own logic
    # step 96: work out the next value carefully
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': over_limit_pools,
            'unstable_stages': unstable_stages, 'overloaded_fabrics': overloaded_fabrics}
