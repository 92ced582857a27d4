import math


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    rates = [float(rate) for rate in stage_rates.values()]
    multipliers = [float(value) for value in items_per_work_unit.values()]
    arrival_rate = float(arrival_rate)

    if not stage_rates or any(
        not math.isfinite(rate) or rate <= 0 for rate in rates
    ):
        raise ValueError("stage rate 必须为正有限数")
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError("arrival_rate 必须是非负有限数")
    if set(stage_rates) != set(items_per_work_unit) or any(
        not math.isfinite(value) or value <= 0 for value in multipliers
    ):
        raise ValueError("每个阶段都必须提供正有限工作单位倍率")

    effective_rates = {
        name: float(rate) / float(items_per_work_unit[name])
        for name, rate in stage_rates.items()
    }
    capacity = min(effective_rates.values())
    bottlenecks = sorted(
        name
        for name, rate in effective_rates.items()
        if math.isclose(rate, capacity, rel_tol=1e-9, abs_tol=1e-12)
    )
    queue_margins = {
        name: rate - arrival_rate for name, rate in effective_rates.items()
    }
    unstable_stages = sorted(
        name for name, margin in queue_margins.items() if margin < 0
    )

    return {
        "capacity": capacity,
        "effective_rates": effective_rates,
        "bottlenecks": bottlenecks,
        "queue_margins": queue_margins,
        "unstable_stages": unstable_stages,
        "queue_stable": not unstable_stages,
    }


def transfer_ledger(edges, placement):
    rows = []
    total_bytes = 0.0
    fabric_exposed = {}
    fabric_bandwidths = {}

    for edge in edges:
        source = edge["source"]
        target = edge["target"]
        if source not in placement or target not in placement:
            raise ValueError("每条边的两端都必须登记资源池")

        cross_pool = placement[source] != placement[target]
        overlap = float(edge.get("overlap_fraction", 0.0))
        bandwidth = float(edge["bandwidth_bytes_per_s"])
        if (
            not math.isfinite(overlap)
            or not math.isfinite(bandwidth)
            or not 0.0 <= overlap <= 1.0
            or bandwidth <= 0
        ):
            raise ValueError("重叠比例须属于 0–1，带宽必须为正有限数")

        bytes_per_item = float(edge["bytes_per_item"])
        items_per_work_unit = float(edge["items_per_work_unit"])
        work_units_per_second = float(edge["work_units_per_second"])
        values = (bytes_per_item, items_per_work_unit, work_units_per_second)
        if (
            any(not math.isfinite(value) for value in values)
            or bytes_per_item < 0
            or items_per_work_unit <= 0
            or work_units_per_second < 0
        ):
            raise ValueError(
                "对象字节数和到达率必须有限且非负，工作单位倍率必须为正"
            )

        traffic = (
            bytes_per_item * items_per_work_unit * work_units_per_second
            if cross_pool
            else 0.0
        )
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        total_bytes += traffic

        if cross_pool:
            fabric_id = str(edge.get("fabric_id", "")).strip()
            if not fabric_id:
                raise ValueError("跨池边必须登记 fabric_id")
            previous_bandwidth = fabric_bandwidths.setdefault(fabric_id, bandwidth)
            if not math.isclose(
                previous_bandwidth, bandwidth, rel_tol=1e-9, abs_tol=1e-12
            ):
                raise ValueError("同一 fabric_id 必须使用同一有效带宽口径")
            fabric_exposed[fabric_id] = fabric_exposed.get(fabric_id, 0.0) + exposed

        rows.append(
            edge
            | {
                "cross_pool": cross_pool,
                "traffic_bytes_per_s": traffic,
                "transfer_seconds_per_s": transfer,
                "exposed_seconds_per_s": exposed,
            }
        )

    critical_exposed = max(fabric_exposed.values(), default=0.0)
    critical_fabrics = (
        sorted(
            name
            for name, value in fabric_exposed.items()
            if value == critical_exposed
        )
        if fabric_exposed
        else []
    )
    return {
        "cross_pool_bytes_per_s": total_bytes,
        "fabric_exposed_seconds_per_s": fabric_exposed,
        "critical_exposed_seconds_per_s": critical_exposed,
        "critical_fabrics": critical_fabrics,
        "rows": rows,
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
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    memory_values = [float(value) for value in memory_by_pool.values()] + [
        float(value) for value in memory_limits.values()
    ]
    transfer_values = [
        float(value)
        for value in transfer_report.get("fabric_exposed_seconds_per_s", {}).values()
    ]
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError("传输暴露预算必须是非负有限数")
    if any(
        not math.isfinite(value) or value < 0
        for value in memory_values + transfer_values
    ):
        raise ValueError("显存与传输账本必须是非负有限数")

    over_limit_pools = sorted(
        pool
        for pool, used in memory_by_pool.items()
        if pool not in memory_limits or used > memory_limits[pool]
    )

    hard_failures = []
    if over_limit_pools:
        hard_failures.append("memory_limit")
    if not version_sync_ok:
        hard_failures.append("version_sync")
    if not recovery_ok:
        hard_failures.append("recovery_not_ready")

    unstable_stages = sorted(capacity_report.get("unstable_stages", []))
    overloaded_fabrics = sorted(
        name
        for name, value in transfer_report.get(
            "fabric_exposed_seconds_per_s", {}
        ).items()
        if value > max_exposed_s_per_s
    )

    tuning_pressures = []
    if unstable_stages or not capacity_report["queue_stable"]:
        tuning_pressures.append("unstable_queue")
    if (
        overloaded_fabrics
        or transfer_report["critical_exposed_seconds_per_s"] > max_exposed_s_per_s
    ):
        tuning_pressures.append("exposed_transfer")

    decision = (
        "reject" if hard_failures else ("tune" if tuning_pressures else "accept")
    )
    reasons = hard_failures if hard_failures else tuning_pressures
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over_limit_pools,
        "unstable_stages": unstable_stages,
        "overloaded_fabrics": overloaded_fabrics,
    }
