# TODO 1-3 (correct alternative, issue 42)
# Rule: "Every other comparison is exact, as Python's <, > and == are"; "ints are compared as ints"
# Alternative: exact arithmetic throughout (fractions.Fraction for every sum, difference and
# comparison), floats only where a result is returned; `a < b` instead of `a - b < 0`;
# validation by `not (x > 0)` (NaN fails it) and math.isfinite.
import math
from fractions import Fraction


def _number(x, *, positive):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError("not a number")
    if not math.isfinite(x):
        raise ValueError("not finite")
    if positive and not (x > 0):
        raise ValueError("not positive")
    if not positive and x < 0:
        raise ValueError("negative")
    return Fraction(x)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if not stage_rates or set(stage_rates) != set(items_per_work_unit):
        raise ValueError("stage sets differ or are empty")
    exact = {
        n: _number(stage_rates[n], positive=True) / _number(items_per_work_unit[n], positive=True)
        for n in stage_rates
    }
    arrival = _number(arrival_rate, positive=False)
    effective = {n: float(v) for n, v in exact.items()}
    capacity = min(effective.values())
    bottlenecks = sorted(
        n for n, r in effective.items() if math.isclose(r, capacity, rel_tol=1e-9, abs_tol=1e-12)
    )
    # The margin is the float effective rate minus the arrival rate, as the template says.
    margins = {n: float(Fraction(r) - arrival) for n, r in effective.items()}
    unstable = sorted(n for n, r in effective.items() if Fraction(r) < arrival)
    return {
        "effective_rates": effective,
        "capacity": capacity,
        "bottlenecks": bottlenecks,
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": not unstable,
    }


def transfer_ledger(edges, placement):
    rows, total, exposure, width = [], Fraction(0), {}, {}
    for edge in edges:
        if edge["source"] not in placement or edge["target"] not in placement:
            raise ValueError("endpoint without a pool")
        overlap = edge.get("overlap_fraction", 0)
        if isinstance(overlap, bool) or not isinstance(overlap, (int, float)):
            raise ValueError("overlap not a number")
        if not (0 <= overlap <= 1):
            raise ValueError("overlap outside [0, 1]")
        bandwidth = _number(edge["bandwidth_bytes_per_s"], positive=True)
        size = _number(edge["bytes_per_item"], positive=False)
        items = _number(edge["items_per_work_unit"], positive=True)
        rate = _number(edge["work_units_per_second"], positive=False)
        cross = placement[edge["source"]] != placement[edge["target"]]
        if cross:
            fabric = edge.get("fabric_id")
            if not isinstance(fabric, str) or not fabric.strip():
                raise ValueError("cross-pool edge without a fabric_id")
            first = width.setdefault(fabric, float(bandwidth))
            if not math.isclose(first, float(bandwidth), rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("fabric declared with two bandwidths")
            traffic = size * items * rate
            transfer = float(traffic) / float(bandwidth)
            exposed = transfer * (1 - float(overlap))
            exposure[fabric] = exposure.get(fabric, Fraction(0)) + Fraction(exposed)
            total += traffic
        else:
            traffic, transfer, exposed = 0, 0.0, 0.0
        rows.append(
            {
                **edge,
                "cross_pool": cross,
                "traffic_bytes_per_s": float(traffic),
                "transfer_seconds_per_s": transfer,
                "exposed_seconds_per_s": exposed,
            }
        )
    fabrics = {f: float(v) for f, v in exposure.items()}
    critical = max(exposure.values(), default=Fraction(0))
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": float(total),
        "fabric_exposed_seconds_per_s": fabrics,
        "critical_exposed_seconds_per_s": float(critical),
        "critical_fabrics": sorted(f for f, v in exposure.items() if v == critical),
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    threshold = _number(max_exposed_s_per_s, positive=False)
    memory = {p: _number(v, positive=False) for p, v in memory_by_pool.items()}
    limits = {p: _number(v, positive=False) for p, v in memory_limits.items()}
    fabrics = {
        f: _number(v, positive=False)
        for f, v in transfer_report.get("fabric_exposed_seconds_per_s", {}).items()
    }
    over = sorted(p for p, used in memory.items() if p not in limits or used > limits[p])
    unstable = sorted(capacity_report.get("unstable_stages", []))
    overloaded = sorted(f for f, v in fabrics.items() if v > threshold)
    hard = [
        reason
        for reason, hit in (
            ("memory_limit", bool(over)),
            ("version_sync", version_sync_ok is False),
            ("recovery_not_ready", recovery_ok is False),
        )
        if hit
    ]
    pressures = [
        reason
        for reason, hit in (
            ("unstable_queue", bool(unstable) or capacity_report.get("queue_stable") is False),
            ("exposed_transfer", bool(overloaded)),
        )
        if hit
    ]
    decision = "reject" if hard else "tune" if pressures else "accept"
    return {
        "decision": decision,
        "reasons": hard or pressures,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
