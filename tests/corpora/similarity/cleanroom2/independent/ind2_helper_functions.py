"""Ledger exercise -- solution split into small helper functions."""
import math

TOL = dict(rel_tol=1e-9, abs_tol=1e-12)


def is_finite_number(x):
    return not (math.isnan(x) or math.isinf(x))


def require_positive(name, x):
    if not is_finite_number(x) or x <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {x!r}")
    return x


def require_non_negative(name, x):
    if not is_finite_number(x) or x < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {x!r}")
    return x


def same_value(a, b):
    return math.isclose(a, b, **TOL)


def sorted_names_where(mapping, predicate):
    return sorted(name for name, value in mapping.items() if predicate(value))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if not stage_rates and not items_per_work_unit:
        raise ValueError("at least one stage is required")
    if set(stage_rates) != set(items_per_work_unit):
        raise ValueError("stage_rates and items_per_work_unit name different stages")
    require_non_negative("arrival_rate", arrival_rate)

    effective = {}
    for stage, rate in stage_rates.items():
        require_positive(f"rate of {stage}", rate)
        multiplier = require_positive(f"multiplier of {stage}", items_per_work_unit[stage])
        effective[stage] = rate / multiplier

    capacity = min(effective.values())
    margins = {stage: rate - arrival_rate for stage, rate in effective.items()}
    unstable = sorted_names_where(margins, lambda m: m < 0)
    return {
        "effective_rates": effective,
        "capacity": capacity,
        "bottlenecks": sorted_names_where(effective, lambda r: same_value(r, capacity)),
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": not unstable,
    }


def pool_of(placement, node):
    if node not in placement:
        raise ValueError(f"{node!r} has no pool in placement")
    return placement[node]


def validate_edge_numbers(edge):
    overlap = edge.get("overlap_fraction", 0)
    if math.isnan(overlap) or not 0 <= overlap <= 1:
        raise ValueError("overlap_fraction must lie in [0, 1]")
    require_positive("bandwidth_bytes_per_s", edge["bandwidth_bytes_per_s"])
    require_positive("items_per_work_unit", edge["items_per_work_unit"])
    require_non_negative("bytes_per_item", edge["bytes_per_item"])
    require_non_negative("work_units_per_second", edge["work_units_per_second"])
    return overlap


def fabric_of(edge):
    fabric = edge.get("fabric_id")
    if fabric is None or not str(fabric).strip():
        raise ValueError("cross-pool edge needs a non-blank fabric_id")
    return fabric


def edge_load(edge, overlap):
    traffic = edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"]
    transfer = traffic / edge["bandwidth_bytes_per_s"]
    return traffic, transfer, transfer * (1 - overlap)


def transfer_ledger(edges, placement):
    rows = []
    exposure = {}
    first_bandwidth = {}
    total = 0
    for edge in edges:
        crosses = pool_of(placement, edge["source"]) != pool_of(placement, edge["target"])
        overlap = validate_edge_numbers(edge)
        traffic = transfer = exposed = 0.0
        if crosses:
            fabric = fabric_of(edge)
            bandwidth = edge["bandwidth_bytes_per_s"]
            first_bandwidth.setdefault(fabric, bandwidth)
            if not same_value(first_bandwidth[fabric], bandwidth):
                raise ValueError(f"fabric {fabric!r} declared with two bandwidths")
            traffic, transfer, exposed = edge_load(edge, overlap)
            total += traffic
            exposure[fabric] = exposure.get(fabric, 0.0) + exposed
        row = dict(edge)
        row.update(cross_pool=crosses, traffic_bytes_per_s=traffic,
                   transfer_seconds_per_s=transfer, exposed_seconds_per_s=exposed)
        rows.append(row)

    critical = max(exposure.values(), default=0.0)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": sorted_names_where(exposure, lambda x: x == critical),
    }


def check_all_non_negative(label, mapping):
    for key, value in mapping.items():
        require_non_negative(f"{label}[{key!r}]", value)


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    check_all_non_negative("memory_by_pool", memory_by_pool)
    check_all_non_negative("memory_limits", memory_limits)
    fabrics = transfer_report["fabric_exposed_seconds_per_s"]
    check_all_non_negative("fabric exposure", fabrics)
    require_non_negative("max_exposed_s_per_s", max_exposed_s_per_s)

    over = sorted(p for p, used in memory_by_pool.items()
                  if p not in memory_limits or used > memory_limits[p])
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = sorted_names_where(fabrics, lambda x: x > max_exposed_s_per_s)

    hard = []
    if over:
        hard.append("memory_limit")
    if not version_sync_ok:
        hard.append("version_sync")
    if not recovery_ok:
        hard.append("recovery_not_ready")
    pressure = []
    if unstable:
        pressure.append("unstable_queue")
    if overloaded:
        pressure.append("exposed_transfer")

    if hard:
        decision, reasons = "reject", hard
    elif pressure:
        decision, reasons = "tune", pressure
    else:
        decision, reasons = "accept", []
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
