# Homework: rlsys ledger
# my solution - plain loops, tried to keep it simple

import math


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if len(stage_rates) == 0:
        raise ValueError("there are no stages")
    if set(stage_rates.keys()) != set(items_per_work_unit.keys()):
        raise ValueError("stage_rates and items_per_work_unit have different stages")
    if math.isnan(arrival_rate) or math.isinf(arrival_rate) or arrival_rate < 0:
        raise ValueError("arrival rate is not valid")

    effective_rates = {}
    for stage in stage_rates:
        rate = stage_rates[stage]
        mult = items_per_work_unit[stage]
        if math.isnan(rate) or math.isinf(rate) or rate <= 0:
            raise ValueError("bad rate for stage " + str(stage))
        if math.isnan(mult) or math.isinf(mult) or mult <= 0:
            raise ValueError("bad multiplier for stage " + str(stage))
        effective_rates[stage] = rate / mult

    capacity = None
    for stage in effective_rates:
        if capacity is None or effective_rates[stage] < capacity:
            capacity = effective_rates[stage]

    bottlenecks = []
    for stage in effective_rates:
        if math.isclose(effective_rates[stage], capacity, rel_tol=1e-9, abs_tol=1e-12):
            bottlenecks.append(stage)
    bottlenecks.sort()

    queue_margins = {}
    unstable_stages = []
    for stage in effective_rates:
        margin = effective_rates[stage] - arrival_rate
        queue_margins[stage] = margin
        if margin < 0:
            unstable_stages.append(stage)
    unstable_stages.sort()

    queue_stable = False
    if len(unstable_stages) == 0:
        queue_stable = True

    result = {}
    result["effective_rates"] = effective_rates
    result["capacity"] = capacity
    result["bottlenecks"] = bottlenecks
    result["queue_margins"] = queue_margins
    result["unstable_stages"] = unstable_stages
    result["queue_stable"] = queue_stable
    return result


def transfer_ledger(edges, placement):
    rows = []
    total_bytes = 0
    fabric_exposed = {}
    fabric_bandwidth = {}

    for edge in edges:
        source = edge["source"]
        target = edge["target"]
        if source not in placement:
            raise ValueError("source " + str(source) + " is not placed")
        if target not in placement:
            raise ValueError("target " + str(target) + " is not placed")

        overlap = edge.get("overlap_fraction", 0)
        if math.isnan(overlap) or overlap < 0 or overlap > 1:
            raise ValueError("overlap_fraction must be between 0 and 1")

        bandwidth = edge["bandwidth_bytes_per_s"]
        if math.isnan(bandwidth) or math.isinf(bandwidth) or bandwidth <= 0:
            raise ValueError("bandwidth must be positive")
        items = edge["items_per_work_unit"]
        if math.isnan(items) or math.isinf(items) or items <= 0:
            raise ValueError("items_per_work_unit must be positive")
        size = edge["bytes_per_item"]
        if math.isnan(size) or math.isinf(size) or size < 0:
            raise ValueError("bytes_per_item can not be negative")
        freq = edge["work_units_per_second"]
        if math.isnan(freq) or math.isinf(freq) or freq < 0:
            raise ValueError("work_units_per_second can not be negative")

        cross = placement[source] != placement[target]

        row = dict(edge)
        row["cross_pool"] = cross
        if cross:
            fabric = edge.get("fabric_id")
            if fabric is None or str(fabric).strip() == "":
                raise ValueError("cross pool edge needs a fabric_id")
            if fabric in fabric_bandwidth:
                first_bw = fabric_bandwidth[fabric]
                if not math.isclose(first_bw, bandwidth, rel_tol=1e-9, abs_tol=1e-12):
                    raise ValueError("fabric " + str(fabric) + " has two different bandwidths")
            else:
                fabric_bandwidth[fabric] = bandwidth

            traffic = size * items * freq
            transfer = traffic / bandwidth
            exposed = transfer * (1 - overlap)
            total_bytes = total_bytes + traffic
            if fabric in fabric_exposed:
                fabric_exposed[fabric] = fabric_exposed[fabric] + exposed
            else:
                fabric_exposed[fabric] = exposed
        else:
            traffic = 0
            transfer = 0.0
            exposed = 0.0
        row["traffic_bytes_per_s"] = traffic
        row["transfer_seconds_per_s"] = transfer
        row["exposed_seconds_per_s"] = exposed
        rows.append(row)

    critical = 0.0
    for fabric in fabric_exposed:
        if fabric_exposed[fabric] > critical:
            critical = fabric_exposed[fabric]

    critical_fabrics = []
    for fabric in fabric_exposed:
        if fabric_exposed[fabric] == critical:
            critical_fabrics.append(fabric)
    critical_fabrics.sort()

    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total_bytes,
        "fabric_exposed_seconds_per_s": fabric_exposed,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": critical_fabrics,
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    if math.isnan(max_exposed_s_per_s) or math.isinf(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError("max_exposed_s_per_s is not valid")
    for pool in memory_by_pool:
        m = memory_by_pool[pool]
        if math.isnan(m) or math.isinf(m) or m < 0:
            raise ValueError("memory of pool " + str(pool) + " is not valid")
    for pool in memory_limits:
        m = memory_limits[pool]
        if math.isnan(m) or math.isinf(m) or m < 0:
            raise ValueError("memory limit of pool " + str(pool) + " is not valid")
    fabrics = transfer_report["fabric_exposed_seconds_per_s"]
    for fabric in fabrics:
        x = fabrics[fabric]
        if math.isnan(x) or math.isinf(x) or x < 0:
            raise ValueError("exposure of fabric " + str(fabric) + " is not valid")

    over_limit_pools = []
    for pool in memory_by_pool:
        if pool not in memory_limits:
            over_limit_pools.append(pool)
        elif memory_by_pool[pool] > memory_limits[pool]:
            over_limit_pools.append(pool)
    over_limit_pools.sort()

    unstable_stages = list(capacity_report["unstable_stages"])
    unstable_stages.sort()

    overloaded_fabrics = []
    for fabric in fabrics:
        if fabrics[fabric] > max_exposed_s_per_s:
            overloaded_fabrics.append(fabric)
    overloaded_fabrics.sort()

    hard = []
    if len(over_limit_pools) > 0:
        hard.append("memory_limit")
    if version_sync_ok == False:
        hard.append("version_sync")
    if recovery_ok == False:
        hard.append("recovery_not_ready")

    tune = []
    if len(unstable_stages) > 0:
        tune.append("unstable_queue")
    if len(overloaded_fabrics) > 0:
        tune.append("exposed_transfer")

    if len(hard) > 0:
        decision = "reject"
        reasons = hard
    elif len(tune) > 0:
        decision = "tune"
        reasons = tune
    else:
        decision = "accept"
        reasons = []

    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over_limit_pools,
        "unstable_stages": unstable_stages,
        "overloaded_fabrics": overloaded_fabrics,
    }
