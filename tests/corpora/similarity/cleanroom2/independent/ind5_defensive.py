"""System ledger solution with explicit input checking everywhere.

I check every input before using it and never touch the caller's objects.
"""
import copy
import math

REL_TOL = 1e-9
ABS_TOL = 1e-12


def _is_number(value):
    # bool is an int subclass but it is not a meaningful rate
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_number(value, what, allow_zero):
    if not _is_number(value):
        raise ValueError(f"{what} must be a number, got {type(value).__name__}")
    if math.isnan(value):
        raise ValueError(f"{what} is NaN")
    if math.isinf(value):
        raise ValueError(f"{what} is infinite")
    if allow_zero:
        if value < 0:
            raise ValueError(f"{what} is negative ({value})")
    else:
        if value <= 0:
            raise ValueError(f"{what} must be > 0 ({value})")


def _check_mapping(obj, what):
    if not isinstance(obj, dict):
        raise ValueError(f"{what} must be a dict")


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    _check_mapping(stage_rates, "stage_rates")
    _check_mapping(items_per_work_unit, "items_per_work_unit")
    rate_names = set(stage_rates.keys())
    mult_names = set(items_per_work_unit.keys())
    if len(rate_names) == 0 and len(mult_names) == 0:
        raise ValueError("no stage at all")
    if rate_names != mult_names:
        missing = rate_names.symmetric_difference(mult_names)
        raise ValueError(f"stage mismatch: {sorted(map(str, missing))}")
    _check_number(arrival_rate, "arrival_rate", allow_zero=True)
    for name in stage_rates:
        _check_number(stage_rates[name], f"stage_rates[{name!r}]", allow_zero=False)
        _check_number(items_per_work_unit[name], f"items_per_work_unit[{name!r}]", allow_zero=False)

    effective_rates = {}
    for name in stage_rates:
        effective_rates[name] = float(stage_rates[name]) / float(items_per_work_unit[name])

    capacity = min(effective_rates.values())
    assert math.isfinite(capacity) or capacity == math.inf

    bottlenecks = sorted(
        name for name, rate in effective_rates.items()
        if math.isclose(rate, capacity, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    )
    if not bottlenecks:  # cannot happen, the minimum always matches itself
        raise RuntimeError("no bottleneck found")

    queue_margins = {}
    for name, rate in effective_rates.items():
        queue_margins[name] = rate - arrival_rate

    unstable_stages = sorted(name for name, margin in queue_margins.items() if margin < 0)
    queue_stable = bool(len(unstable_stages) == 0)

    return {
        "effective_rates": effective_rates,
        "capacity": capacity,
        "bottlenecks": list(bottlenecks),
        "queue_margins": queue_margins,
        "unstable_stages": list(unstable_stages),
        "queue_stable": queue_stable,
    }


REQUIRED_EDGE_KEYS = (
    "source", "target", "bytes_per_item", "items_per_work_unit",
    "work_units_per_second", "bandwidth_bytes_per_s",
)


def transfer_ledger(edges, placement):
    _check_mapping(placement, "placement")
    if not isinstance(edges, (list, tuple)):
        edges = list(edges)

    rows = []
    fabric_exposed = {}
    fabric_first_bandwidth = {}
    cross_total = 0.0

    for index, edge in enumerate(edges):
        _check_mapping(edge, f"edges[{index}]")
        for key in REQUIRED_EDGE_KEYS:
            if key not in edge:
                raise ValueError(f"edges[{index}] is missing {key!r}")
        source = edge["source"]
        target = edge["target"]
        if source not in placement:
            raise ValueError(f"edges[{index}]: source {source!r} has no pool")
        if target not in placement:
            raise ValueError(f"edges[{index}]: target {target!r} has no pool")

        if "overlap_fraction" in edge:
            overlap = edge["overlap_fraction"]
            if not _is_number(overlap):
                raise ValueError(f"edges[{index}]: overlap_fraction is not a number")
            if math.isnan(overlap):
                raise ValueError(f"edges[{index}]: overlap_fraction is NaN")
            if overlap < 0 or overlap > 1:
                raise ValueError(f"edges[{index}]: overlap_fraction {overlap} outside [0, 1]")
        else:
            overlap = 0

        _check_number(edge["bandwidth_bytes_per_s"], f"edges[{index}].bandwidth_bytes_per_s", False)
        _check_number(edge["items_per_work_unit"], f"edges[{index}].items_per_work_unit", False)
        _check_number(edge["bytes_per_item"], f"edges[{index}].bytes_per_item", True)
        _check_number(edge["work_units_per_second"], f"edges[{index}].work_units_per_second", True)

        cross_pool = placement[source] != placement[target]
        row = copy.deepcopy(edge)
        if cross_pool:
            if "fabric_id" not in edge or edge["fabric_id"] is None:
                raise ValueError(f"edges[{index}]: cross-pool edge has no fabric_id")
            fabric = edge["fabric_id"]
            if not isinstance(fabric, str):
                raise ValueError(f"edges[{index}]: fabric_id must be a string")
            if fabric.strip() == "":
                raise ValueError(f"edges[{index}]: fabric_id is blank")
            bandwidth = edge["bandwidth_bytes_per_s"]
            if fabric not in fabric_first_bandwidth:
                fabric_first_bandwidth[fabric] = bandwidth
            elif not math.isclose(fabric_first_bandwidth[fabric], bandwidth,
                                  rel_tol=REL_TOL, abs_tol=ABS_TOL):
                raise ValueError(
                    f"edges[{index}]: fabric {fabric!r} bandwidth {bandwidth} differs from "
                    f"{fabric_first_bandwidth[fabric]}"
                )
            traffic = edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"]
            transfer = traffic / bandwidth
            exposed = transfer * (1 - overlap)
            cross_total += traffic
            fabric_exposed[fabric] = fabric_exposed.get(fabric, 0.0) + exposed
        else:
            traffic, transfer, exposed = 0.0, 0.0, 0.0

        row["cross_pool"] = bool(cross_pool)
        row["traffic_bytes_per_s"] = traffic
        row["transfer_seconds_per_s"] = transfer
        row["exposed_seconds_per_s"] = exposed
        rows.append(row)

    if fabric_exposed:
        critical = max(fabric_exposed.values())
        critical_fabrics = sorted(f for f, x in fabric_exposed.items() if x == critical)
    else:
        critical = 0.0
        critical_fabrics = []

    return {
        "rows": rows,
        "cross_pool_bytes_per_s": cross_total,
        "fabric_exposed_seconds_per_s": fabric_exposed,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": critical_fabrics,
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
    _check_mapping(capacity_report, "capacity_report")
    _check_mapping(memory_by_pool, "memory_by_pool")
    _check_mapping(memory_limits, "memory_limits")
    _check_mapping(transfer_report, "transfer_report")
    if "unstable_stages" not in capacity_report:
        raise ValueError("capacity_report lacks unstable_stages")
    if "fabric_exposed_seconds_per_s" not in transfer_report:
        raise ValueError("transfer_report lacks fabric_exposed_seconds_per_s")

    for pool, used in memory_by_pool.items():
        _check_number(used, f"memory_by_pool[{pool!r}]", True)
    for pool, limit in memory_limits.items():
        _check_number(limit, f"memory_limits[{pool!r}]", True)
    exposures = transfer_report["fabric_exposed_seconds_per_s"]
    _check_mapping(exposures, "fabric_exposed_seconds_per_s")
    for fabric, value in exposures.items():
        _check_number(value, f"exposure of {fabric!r}", True)
    _check_number(max_exposed_s_per_s, "max_exposed_s_per_s", True)

    over_limit_pools = []
    for pool, used in memory_by_pool.items():
        limit = memory_limits.get(pool)
        if limit is None or used > limit:
            over_limit_pools.append(pool)
    over_limit_pools = sorted(over_limit_pools)

    unstable_stages = sorted(list(capacity_report["unstable_stages"]))
    overloaded_fabrics = sorted(f for f, x in exposures.items() if x > max_exposed_s_per_s)

    hard_failures = []
    if over_limit_pools:
        hard_failures.append("memory_limit")
    if version_sync_ok is False:
        hard_failures.append("version_sync")
    if recovery_ok is False:
        hard_failures.append("recovery_not_ready")

    tuning_pressures = []
    if unstable_stages:
        tuning_pressures.append("unstable_queue")
    if overloaded_fabrics:
        tuning_pressures.append("exposed_transfer")

    if hard_failures:
        decision = "reject"
        reasons = list(hard_failures)
    elif tuning_pressures:
        decision = "tune"
        reasons = list(tuning_pressures)
    else:
        decision = "accept"
        reasons = []

    assert decision in ("accept", "tune", "reject")
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over_limit_pools,
        "unstable_stages": unstable_stages,
        "overloaded_fabrics": overloaded_fabrics,
    }
