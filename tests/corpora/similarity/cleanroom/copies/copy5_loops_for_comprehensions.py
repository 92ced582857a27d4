"""PT-RL-SYSTEM: system ledger (TODO 1-3)"""
import math
from typing import Dict, List  # kept from the chapter's skeleton


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    speed_values = []
    for v in stage_rates.values():
        speed_values.append(float(v))
    mult_values = []
    for v in items_per_work_unit.values():
        mult_values.append(float(v))
    arrival_rate = float(arrival_rate)
    bad_speed = False
    for v in speed_values:
        if not math.isfinite(v) or v <= 0:
            bad_speed = True
    if not stage_rates or bad_speed:
        raise ValueError('stage rate must be a positive finite number')
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError('arrival_rate must be a non-negative finite number')
    bad_mult = False
    for v in mult_values:
        if not math.isfinite(v) or v <= 0:
            bad_mult = True
    if set(stage_rates) != set(items_per_work_unit) or bad_mult:
        raise ValueError('every stage needs a positive finite work-unit multiplier')
    effective = {}
    for stage, speed in stage_rates.items():
        effective[stage] = float(speed) / float(items_per_work_unit[stage])
    cap = min(effective.values())
    limiting = []
    for stage, speed in effective.items():
        if math.isclose(speed, cap, rel_tol=1e-9, abs_tol=1e-12):
            limiting.append(stage)
    limiting = sorted(limiting)
    margin_of = {}
    for stage, speed in effective.items():
        margin_of[stage] = speed - arrival_rate
    piling_up = []
    for stage, margin in margin_of.items():
        if margin < 0:
            piling_up.append(stage)
    piling_up = sorted(piling_up)
    return {'capacity': cap, 'effective_rates': effective, 'bottlenecks': limiting, 'queue_margins': margin_of,
            'unstable_stages': piling_up, 'queue_stable': not piling_up}


def transfer_ledger(edges, placement):
    rows_out = []
    bytes_acc = 0.0
    fab_exposed = {}
    fab_bw = {}
    for ed in edges:
        frm = ed['source']
        to = ed['target']
        if frm not in placement or to not in placement:
            raise ValueError('each edge needs both endpoints placed in a pool')
        is_cross = placement[frm] != placement[to]
        ov = float(ed.get('overlap_fraction', 0.0))
        bw = float(ed['bandwidth_bytes_per_s'])
        if not math.isfinite(ov) or not math.isfinite(bw) or not 0.0 <= ov <= 1.0 or bw <= 0:
            raise ValueError('overlap_fraction in 0-1 and bandwidth positive finite required')
        per_item = float(ed['bytes_per_item'])
        n_items = float(ed['items_per_work_unit'])
        units_s = float(ed['work_units_per_second'])
        finite_all = True
        for value in (per_item, n_items, units_s):
            if not math.isfinite(value):
                finite_all = False
        if not finite_all or per_item < 0 or n_items <= 0 or units_s < 0:
            raise ValueError('bytes and rates must be finite and non-negative; multiplier positive')
        if is_cross:
            traffic = per_item * n_items * units_s
        else:
            traffic = 0.0
        transfer = traffic / bw
        exposed = transfer * (1.0 - ov)
        bytes_acc = bytes_acc + traffic
        if is_cross:
            fid = str(ed.get('fabric_id', '')).strip()
            if not fid:
                raise ValueError('cross-pool edge requires fabric_id')
            prior = fab_bw.setdefault(fid, bw)
            if not math.isclose(prior, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('same fabric_id must use the same bandwidth')
            fab_exposed[fid] = fab_exposed.get(fid, 0.0) + exposed
        row = dict(ed)
        row['cross_pool'] = is_cross
        row['traffic_bytes_per_s'] = traffic
        row['transfer_seconds_per_s'] = transfer
        row['exposed_seconds_per_s'] = exposed
        rows_out.append(row)
    crit = max(fab_exposed.values(), default=0.0)
    crit_list = []
    if fab_exposed:
        for fid, value in fab_exposed.items():
            if value == crit:
                crit_list.append(fid)
        crit_list.sort()
    return {'cross_pool_bytes_per_s': bytes_acc, 'fabric_exposed_seconds_per_s': fab_exposed,
            'critical_exposed_seconds_per_s': crit, 'critical_fabrics': crit_list, 'rows': rows_out}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    mem_numbers = [float(x) for x in list(memory_by_pool.values()) + list(memory_limits.values())]
    fab_numbers = [float(x) for x in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError('exposure budget must be a non-negative finite number')
    for x in mem_numbers + fab_numbers:
        if not math.isfinite(x) or x < 0:
            raise ValueError('memory and transfer ledger must be non-negative finite')
    over = []
    for pool, used in memory_by_pool.items():
        if pool not in memory_limits or used > memory_limits[pool]:
            over.append(pool)
    over.sort()
    hard = []
    if over:
        hard.append('memory_limit')
    if not version_sync_ok:
        hard.append('version_sync')
    if not recovery_ok:
        hard.append('recovery_not_ready')

    stages = sorted(capacity_report.get('unstable_stages', []))
    loaded = []
    for name, x in transfer_report.get('fabric_exposed_seconds_per_s', {}).items():
        if x > max_exposed_s_per_s:
            loaded.append(name)
    loaded.sort()
    soft = []
    if stages or not capacity_report['queue_stable']:
        soft.append('unstable_queue')
    if loaded or transfer_report['critical_exposed_seconds_per_s'] > max_exposed_s_per_s:
        soft.append('exposed_transfer')

    decision = 'reject' if hard else ('tune' if soft else 'accept')
    reasons = hard if hard else soft
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': over,
            'unstable_stages': stages, 'overloaded_fabrics': loaded}
