"""PT-RL-SYSTEM exercise: the system ledger (TODO 1-3)."""

import math
from typing import Dict, List  # kept from the chapter's skeleton


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """TODO 1 -- walk the stages once in name order and keep running state."""
    names = sorted(stage_rates)
    if not names:
        raise ValueError("empty pipeline")
    if names != sorted(items_per_work_unit):
        raise ValueError("stage_rates / items_per_work_unit disagree on the stages")
    if arrival_rate != arrival_rate or arrival_rate in (float("inf"), float("-inf")) or arrival_rate < 0:
        raise ValueError("arrival_rate must be finite and >= 0")

    effective_rates, queue_margins = {}, {}
    capacity = float("inf")
    bottlenecks, unstable_stages = [], []
    for name in names:
        q, m = stage_rates[name], items_per_work_unit[name]
        for label, x in (("rate", q), ("multiplier", m)):
            if x != x or x == float("inf") or x <= 0:
                raise ValueError("%s of %s must be finite and > 0" % (label, name))
        c = q / m
        effective_rates[name] = c
        queue_margins[name] = c - arrival_rate
        if queue_margins[name] < 0:
            unstable_stages.append(name)
        if c < capacity:
            capacity = c
    # second pass: every stage tied with the minimum (names are already sorted)
    for name in names:
        if math.isclose(effective_rates[name], capacity, rel_tol=1e-9):
            bottlenecks.append(name)
    return {
        "effective_rates": effective_rates,
        "capacity": capacity,
        "bottlenecks": bottlenecks,
        "queue_margins": queue_margins,
        "unstable_stages": unstable_stages,
        "queue_stable": unstable_stages == [],
    }


def transfer_ledger(edges, placement):
    import math

    ledger_rows, bytes_total, exposure_by_fabric, bandwidth_by_fabric = [], 0.0, {}, {}
    for e in edges:
        src, dst = e['source'], e['target']
        if src not in placement or dst not in placement:
            raise ValueError('每条边的两端都必须登记资源池')
        crosses = placement[src] != placement[dst]
        ov = float(e.get('overlap_fraction', 0.0))
        bw = float(e['bandwidth_bytes_per_s'])
        if not math.isfinite(ov) or not math.isfinite(bw) or not 0.0 <= ov <= 1.0 or bw <= 0:
            raise ValueError('重叠比例须属于 0–1，带宽必须为正有限数')
        size = float(e['bytes_per_item'])
        per_unit = float(e['items_per_work_unit'])
        freq = float(e['work_units_per_second'])
        vals = (size, per_unit, freq)
        if any(not math.isfinite(v) for v in vals) or size < 0 or per_unit <= 0 or freq < 0:
            raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
        traffic = size * per_unit * freq if crosses else 0.0
        transfer = traffic / bw
        exposed = transfer * (1.0 - ov)
        bytes_total += traffic
        if crosses:
            fid = str(e.get('fabric_id', '')).strip()
            if not fid:
                raise ValueError('跨池边必须登记 fabric_id')
            prev_bw = bandwidth_by_fabric.setdefault(fid, bw)
            if not math.isclose(prev_bw, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')
            exposure_by_fabric[fid] = exposure_by_fabric.get(fid, 0.0) + exposed
        ledger_rows.append(e | {'cross_pool': crosses, 'traffic_bytes_per_s': traffic,
                                'transfer_seconds_per_s': transfer, 'exposed_seconds_per_s': exposed})
    critical = max(exposure_by_fabric.values(), default=0.0)
    critical_list = sorted(f for f, v in exposure_by_fabric.items() if v == critical) if exposure_by_fabric else []
    return {'cross_pool_bytes_per_s': bytes_total, 'fabric_exposed_seconds_per_s': exposure_by_fabric,
            'critical_exposed_seconds_per_s': critical, 'critical_fabrics': critical_list, 'rows': ledger_rows}


def evaluate_topology(
    capacity_report,
    memory_by_pool,
    memory_limits,
    transfer_report,
    version_sync_ok,
    recovery_ok,
    max_exposed_s_per_s=0.1,
):
    """TODO 3 -- set algebra for the pools, then two reason ladders."""
    exposures = transfer_report["fabric_exposed_seconds_per_s"]

    def sane(x):
        return math.isfinite(x) and x >= 0

    if not sane(max_exposed_s_per_s):
        raise ValueError("max_exposed_s_per_s")
    if not all(map(sane, memory_by_pool.values())) or not all(map(sane, memory_limits.values())):
        raise ValueError("memory numbers must be finite and >= 0")
    if not all(map(sane, exposures.values())):
        raise ValueError("fabric exposures must be finite and >= 0")

    undeclared = set(memory_by_pool) - set(memory_limits)
    exceeding = {p for p in set(memory_by_pool) & set(memory_limits) if memory_by_pool[p] > memory_limits[p]}
    over_limit_pools = sorted(undeclared | exceeding)
    unstable_stages = sorted(set(capacity_report["unstable_stages"]))
    overloaded_fabrics = sorted({f for f, x in exposures.items() if x > max_exposed_s_per_s})

    reasons = []
    if over_limit_pools:
        reasons.append("memory_limit")
    if not version_sync_ok:
        reasons.append("version_sync")
    if not recovery_ok:
        reasons.append("recovery_not_ready")
    decision = "reject"
    if not reasons:
        decision = "accept"
        if unstable_stages:
            reasons.append("unstable_queue")
        if overloaded_fabrics:
            reasons.append("exposed_transfer")
        if reasons:
            decision = "tune"
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over_limit_pools,
        "unstable_stages": unstable_stages,
        "overloaded_fabrics": overloaded_fabrics,
    }
