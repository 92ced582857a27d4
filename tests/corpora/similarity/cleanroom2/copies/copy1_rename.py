def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    import math

    speeds = [float(r) for r in stage_rates.values()]
    factors = [float(v) for v in items_per_work_unit.values()]
    arrival_rate = float(arrival_rate)
    if not stage_rates or any(not math.isfinite(r) or r <= 0 for r in speeds):
        raise ValueError('stage rate 必须为正有限数')
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError('arrival_rate 必须是非负有限数')
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(v) or v <= 0 for v in factors):
        raise ValueError('每个阶段都必须提供正有限工作单位倍率')
    eff = {stage: float(r) / float(items_per_work_unit[stage]) for stage, r in stage_rates.items()}
    cap = min(eff.values())
    slowest = sorted(stage for stage, r in eff.items() if math.isclose(r, cap, rel_tol=1e-9, abs_tol=1e-12))
    margins = {stage: r - arrival_rate for stage, r in eff.items()}
    backlog = sorted(stage for stage, m in margins.items() if m < 0)
    return {'capacity': cap, 'effective_rates': eff, 'bottlenecks': slowest, 'queue_margins': margins,
            'unstable_stages': backlog, 'queue_stable': not backlog}

def transfer_ledger(edges, placement):
    import math

    out_rows, bytes_sum, exposure_by_fabric, bw_by_fabric = [], 0.0, {}, {}
    for e in edges:
        src, dst = e['source'], e['target']
        if src not in placement or dst not in placement:
            raise ValueError('每条边的两端都必须登记资源池')
        is_cross = placement[src] != placement[dst]
        ov = float(e.get('overlap_fraction', 0.0))
        bw = float(e['bandwidth_bytes_per_s'])
        if not math.isfinite(ov) or not math.isfinite(bw) or not 0.0 <= ov <= 1.0 or bw <= 0:
            raise ValueError('重叠比例须属于 0–1，带宽必须为正有限数')
        size = float(e['bytes_per_item'])
        per_unit = float(e['items_per_work_unit'])
        freq = float(e['work_units_per_second'])
        nums = (size, per_unit, freq)
        if any(not math.isfinite(n) for n in nums) or size < 0 or per_unit <= 0 or freq < 0:
            raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
        load = size * per_unit * freq if is_cross else 0.0
        busy = load / bw
        exp = busy * (1.0 - ov)
        bytes_sum += load
        if is_cross:
            fid = str(e.get('fabric_id', '')).strip()
            if not fid:
                raise ValueError('跨池边必须登记 fabric_id')
            prev_bw = bw_by_fabric.setdefault(fid, bw)
            if not math.isclose(prev_bw, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')
            exposure_by_fabric[fid] = exposure_by_fabric.get(fid, 0.0) + exp
        out_rows.append(e | {'cross_pool': is_cross, 'traffic_bytes_per_s': load,
                             'transfer_seconds_per_s': busy, 'exposed_seconds_per_s': exp})
    worst = max(exposure_by_fabric.values(), default=0.0)
    worst_fabrics = sorted(n for n, v in exposure_by_fabric.items() if v == worst) if exposure_by_fabric else []
    return {'cross_pool_bytes_per_s': bytes_sum, 'fabric_exposed_seconds_per_s': exposure_by_fabric,
            'critical_exposed_seconds_per_s': worst, 'critical_fabrics': worst_fabrics, 'rows': out_rows}

def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    import math

    max_exposed_s_per_s = float(max_exposed_s_per_s)
    mem_vals = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
    link_vals = [float(v) for v in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError('传输暴露预算必须是非负有限数')
    if any(not math.isfinite(v) or v < 0 for v in mem_vals + link_vals):
        raise ValueError('显存与传输账本必须是非负有限数')
    too_big = sorted(p for p, mem in memory_by_pool.items()
                     if p not in memory_limits or mem > memory_limits[p])
    fails = []
    if too_big:
        fails.append('memory_limit')
    if not version_sync_ok:
        fails.append('version_sync')
    if not recovery_ok:
        fails.append('recovery_not_ready')

    stuck = sorted(capacity_report.get('unstable_stages', []))
    hot = sorted(
        n for n, v in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
        if v > max_exposed_s_per_s
    )
    tunes = []
    if stuck or not capacity_report['queue_stable']:
        tunes.append('unstable_queue')
    if hot or transfer_report['critical_exposed_seconds_per_s'] > max_exposed_s_per_s:
        tunes.append('exposed_transfer')

    verdict = 'reject' if fails else ('tune' if tunes else 'accept')
    why = fails if fails else tunes
    return {'decision': verdict, 'reasons': why, 'over_limit_pools': too_big,
            'unstable_stages': stuck, 'overloaded_fabrics': hot}
