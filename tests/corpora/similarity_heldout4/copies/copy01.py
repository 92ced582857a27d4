def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    import math

    rate_list = [float(r) for r in stage_rates.values()]
    mult_list = [float(v) for v in items_per_work_unit.values()]
    arrival_rate = float(arrival_rate)
    if not stage_rates or any(not math.isfinite(r) or r <= 0 for r in rate_list):
        raise ValueError('stage rate 必须为正有限数')
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError('arrival_rate 必须是非负有限数')
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(v) or v <= 0 for v in mult_list):
        raise ValueError('每个阶段都必须提供正有限工作单位倍率')
    eff = {stage: float(r) / float(items_per_work_unit[stage]) for stage, r in stage_rates.items()}
    cap = min(eff.values())
    bneck = sorted(stage for stage, r in eff.items() if math.isclose(r, cap, rel_tol=1e-9, abs_tol=1e-12))
    margins = {stage: r - arrival_rate for stage, r in eff.items()}
    unstable = sorted(stage for stage, m in margins.items() if m < 0)
    return {'capacity': cap, 'effective_rates': eff, 'bottlenecks': bneck, 'queue_margins': margins,
            'unstable_stages': unstable, 'queue_stable': not unstable}

def transfer_ledger(edges, placement):
    import math

    out, total, fab_exp, fab_bw = [], 0.0, {}, {}
    for e in edges:
        src, dst = e['source'], e['target']
        if src not in placement or dst not in placement:
            raise ValueError('每条边的两端都必须登记资源池')
        is_cross = placement[src] != placement[dst]
        ov = float(e.get('overlap_fraction', 0.0))
        bw = float(e['bandwidth_bytes_per_s'])
        if not math.isfinite(ov) or not math.isfinite(bw) or not 0.0 <= ov <= 1.0 or bw <= 0:
            raise ValueError('重叠比例须属于 0–1，带宽必须为正有限数')
        bpi = float(e['bytes_per_item'])
        ipw = float(e['items_per_work_unit'])
        wps = float(e['work_units_per_second'])
        vals = (bpi, ipw, wps)
        if any(not math.isfinite(v) for v in vals) or bpi < 0 or ipw <= 0 or wps < 0:
            raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
        tr = bpi * ipw * wps if is_cross else 0.0
        xfer = tr / bw
        exp = xfer * (1.0 - ov)
        total += tr
        if is_cross:
            fid = str(e.get('fabric_id', '')).strip()
            if not fid:
                raise ValueError('跨池边必须登记 fabric_id')
            prev = fab_bw.setdefault(fid, bw)
            if not math.isclose(prev, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')
            fab_exp[fid] = fab_exp.get(fid, 0.0) + exp
        out.append(e | {'cross_pool': is_cross, 'traffic_bytes_per_s': tr,
                        'transfer_seconds_per_s': xfer, 'exposed_seconds_per_s': exp})
    crit = max(fab_exp.values(), default=0.0)
    crit_fabs = sorted(n for n, v in fab_exp.items() if v == crit) if fab_exp else []
    return {'cross_pool_bytes_per_s': total, 'fabric_exposed_seconds_per_s': fab_exp,
            'critical_exposed_seconds_per_s': crit, 'critical_fabrics': crit_fabs, 'rows': out}

def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    import math

    max_exposed_s_per_s = float(max_exposed_s_per_s)
    mem_vals = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
    xfer_vals = [float(v) for v in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError('传输暴露预算必须是非负有限数')
    if any(not math.isfinite(v) or v < 0 for v in mem_vals + xfer_vals):
        raise ValueError('显存与传输账本必须是非负有限数')
    over = sorted(p for p, u in memory_by_pool.items()
                  if p not in memory_limits or u > memory_limits[p])
    hard = []
    if over:
        hard.append('memory_limit')
    if not version_sync_ok:
        hard.append('version_sync')
    if not recovery_ok:
        hard.append('recovery_not_ready')

    unstable = sorted(capacity_report.get('unstable_stages', []))
    hot = sorted(
        n for n, v in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
        if v > max_exposed_s_per_s
    )
    tune = []
    if unstable or not capacity_report['queue_stable']:
        tune.append('unstable_queue')
    if hot or transfer_report['critical_exposed_seconds_per_s'] > max_exposed_s_per_s:
        tune.append('exposed_transfer')

    decision = 'reject' if hard else ('tune' if tune else 'accept')
    reasons = hard if hard else tune
    return {'decision': decision, 'reasons': reasons, 'over_limit_pools': over,
            'unstable_stages': unstable, 'overloaded_fabrics': hot}
