# rlsys_ledger.py -- homework submission
# system ledger: pipeline capacity, transfer ledger, topology gate

from typing import Dict, List  # kept from the chapter's skeleton


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    import math

    # convert everything to floats first
    raw_rates = [
        float(r)
        for r in stage_rates.values()
    ]
    raw_mults = [
        float(m)
        for m in items_per_work_unit.values()
    ]
    arrival_rate = float(arrival_rate)

    # --- validation ---
    if (not stage_rates) or any(
        (not math.isfinite(r)) or (r <= 0)
        for r in raw_rates
    ):
        raise ValueError(
            'Every stage rate must be a positive, finite number.'
        )
    if (not math.isfinite(arrival_rate)) or (arrival_rate < 0):
        raise ValueError(
            'The arrival rate must be finite and not negative.'
        )
    if (set(stage_rates) != set(items_per_work_unit)) or any(
        (not math.isfinite(m)) or (m <= 0)
        for m in raw_mults
    ):
        raise ValueError(
            'Each stage needs a positive finite items_per_work_unit.'
        )

    # --- per-stage rates in work units / s ---
    unit_rates = {
        stage: float(r) / float(items_per_work_unit[stage])
        for stage, r in stage_rates.items()
    }
    pipe_cap = min(unit_rates.values())

    # the bottleneck set may contain several stages (ties)
    slow_ones = sorted(
        stage
        for stage, r in unit_rates.items()
        if math.isclose(
            r,
            pipe_cap,
            rel_tol=1e-9,
            abs_tol=1e-12,
        )
    )

    # how much headroom each stage has over the arrivals
    headroom = {
        stage: (r - arrival_rate)
        for stage, r in unit_rates.items()
    }
    growing = sorted(
        stage
        for stage, h in headroom.items()
        if h < 0
    )

    return {
        'capacity': pipe_cap,
        'effective_rates': unit_rates,
        'bottlenecks': slow_ones,
        'queue_margins': headroom,
        'unstable_stages': growing,
        'queue_stable': (not growing),
    }


def transfer_ledger(edges, placement):
    import math

    ledger_rows = []
    bytes_total = 0.0
    exposure_per_fabric = {}
    bw_per_fabric = {}

    for one_edge in edges:
        a_node = one_edge['source']
        b_node = one_edge['target']
        if (a_node not in placement) or (b_node not in placement):
            raise ValueError(
                'Both ends of an edge must be placed in some pool.'
            )
        is_cross = (placement[a_node] != placement[b_node])

        ovl = float(one_edge.get('overlap_fraction', 0.0))
        link_bw = float(one_edge['bandwidth_bytes_per_s'])
        if (
            (not math.isfinite(ovl))
            or (not math.isfinite(link_bw))
            or (not (0.0 <= ovl <= 1.0))
            or (link_bw <= 0)
        ):
            raise ValueError(
                'overlap_fraction must lie in [0, 1]; bandwidth must be positive and finite.'
            )

        obj_bytes = float(one_edge['bytes_per_item'])
        obj_per_unit = float(one_edge['items_per_work_unit'])
        unit_freq = float(one_edge['work_units_per_second'])
        triple = (obj_bytes, obj_per_unit, unit_freq)
        if (
            any((not math.isfinite(v)) for v in triple)
            or (obj_bytes < 0)
            or (obj_per_unit <= 0)
            or (unit_freq < 0)
        ):
            raise ValueError(
                'Sizes and frequencies must be finite and >= 0; the multiplier must be > 0.'
            )

        if is_cross:
            bps = obj_bytes * obj_per_unit * unit_freq
        else:
            bps = 0.0
        busy = bps / link_bw
        visible = busy * (1.0 - ovl)
        bytes_total = bytes_total + bps

        if is_cross:
            fab_name = str(one_edge.get('fabric_id', '')).strip()
            if not fab_name:
                raise ValueError(
                    'A cross-pool edge must declare its fabric_id.'
                )
            first_bw = bw_per_fabric.setdefault(fab_name, link_bw)
            if not math.isclose(
                first_bw,
                link_bw,
                rel_tol=1e-9,
                abs_tol=1e-12,
            ):
                raise ValueError(
                    'All edges of one fabric_id must share the same bandwidth.'
                )
            exposure_per_fabric[fab_name] = (
                exposure_per_fabric.get(fab_name, 0.0) + visible
            )

        ledger_rows.append(
            one_edge
            | {
                'cross_pool': is_cross,
                'traffic_bytes_per_s': bps,
                'transfer_seconds_per_s': busy,
                'exposed_seconds_per_s': visible,
            }
        )

    peak = max(exposure_per_fabric.values(), default=0.0)
    if exposure_per_fabric:
        peak_fabrics = sorted(
            name
            for name, v in exposure_per_fabric.items()
            if v == peak
        )
    else:
        peak_fabrics = []

    return {
        'cross_pool_bytes_per_s': bytes_total,
        'fabric_exposed_seconds_per_s': exposure_per_fabric,
        'critical_exposed_seconds_per_s': peak,
        'critical_fabrics': peak_fabrics,
        'rows': ledger_rows,
    }


def evaluate_topology(
    capacity_report,
    memory_by_pool,
    memory_limits,
    transfer_report,
    version_sync_ok,
    recovery_ok,
    max_exposed_s_per_s=0.1,
):
    import math

    max_exposed_s_per_s = float(max_exposed_s_per_s)
    mem_numbers = (
        [float(v) for v in memory_by_pool.values()]
        + [float(v) for v in memory_limits.values()]
    )
    link_numbers = [
        float(v)
        for v in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()
    ]

    # budget itself must be sane
    if (not math.isfinite(max_exposed_s_per_s)) or (max_exposed_s_per_s < 0):
        raise ValueError('The exposure budget must be finite and >= 0.')
    # and so must every ledger entry
    if any(
        (not math.isfinite(v)) or (v < 0)
        for v in (mem_numbers + link_numbers)
    ):
        raise ValueError('Memory and transfer figures must be finite and >= 0.')

    # pools with no limit are treated as over the limit
    pools_over = sorted(
        pool
        for pool, used in memory_by_pool.items()
        if (pool not in memory_limits) or (used > memory_limits[pool])
    )

    # hard failures
    fatal = []
    if pools_over:
        fatal.append('memory_limit')
    if not version_sync_ok:
        fatal.append('version_sync')
    if not recovery_ok:
        fatal.append('recovery_not_ready')

    # soft issues
    backlog_stages = sorted(capacity_report.get('unstable_stages', []))
    busy_fabrics = sorted(
        name
        for name, v in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
        if v > max_exposed_s_per_s
    )
    soft = []
    if backlog_stages or (not capacity_report['queue_stable']):
        soft.append('unstable_queue')
    if busy_fabrics or (transfer_report['critical_exposed_seconds_per_s'] > max_exposed_s_per_s):
        soft.append('exposed_transfer')

    # reject beats tune beats accept
    if fatal:
        outcome = 'reject'
    elif soft:
        outcome = 'tune'
    else:
        outcome = 'accept'
    if fatal:
        why = fatal
    else:
        why = soft

    return {
        'decision': outcome,
        'reasons': why,
        'over_limit_pools': pools_over,
        'unstable_stages': backlog_stages,
        'overloaded_fabrics': busy_fabrics,
    }
