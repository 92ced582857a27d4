"""rlsys_ledger -- system ledger exercise (TODO 1-3).

My solution: small validation helpers shared by all three functions, then each
function is mostly a handful of dict/list comprehensions.
"""

import math
from typing import Dict, List  # kept from the chapter's skeleton

REL_TOL = 1e-9


def _finite(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


def _require_positive(x, what):
    if not _finite(x) or x <= 0:
        raise ValueError(f"{what} must be a positive finite number, got {x!r}")


def _require_non_negative(x, what):
    if not _finite(x) or x < 0:
        raise ValueError(f"{what} must be a non-negative finite number, got {x!r}")


def _ties(values: Dict[str, float], target: float) -> List[str]:
    """Names whose value equals target (relative tolerance), sorted."""
    return sorted(k for k, v in values.items() if math.isclose(v, target, rel_tol=REL_TOL))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """TODO 1: effective rates, capacity, bottlenecks, margins and unstable stages."""
    if not stage_rates or set(stage_rates) != set(items_per_work_unit):
        raise ValueError("stage_rates and items_per_work_unit must name the same, non-empty set of stages")
    for stage in stage_rates:
        _require_positive(stage_rates[stage], f"rate of {stage}")
        _require_positive(items_per_work_unit[stage], f"multiplier of {stage}")
    _require_non_negative(arrival_rate, "arrival_rate")

    effective = {s: stage_rates[s] / items_per_work_unit[s] for s in stage_rates}
    capacity = min(effective.values())
    margins = {s: r - arrival_rate for s, r in effective.items()}
    unstable = sorted(s for s, m in margins.items() if m < 0)
    return {
        "effective_rates": effective,
        "capacity": capacity,
        "bottlenecks": _ties(effective, capacity),
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": not unstable,
    }


def _check_edge(edge):
    ov = edge.get("overlap_fraction", 0)
    if not isinstance(ov, (int, float)) or math.isnan(ov) or not (0 <= ov <= 1):
        raise ValueError(f"overlap_fraction must lie in [0, 1], got {ov!r}")
    _require_positive(edge["bandwidth_bytes_per_s"], "bandwidth_bytes_per_s")
    _require_positive(edge["items_per_work_unit"], "items_per_work_unit")
    _require_non_negative(edge["bytes_per_item"], "bytes_per_item")
    _require_non_negative(edge["work_units_per_second"], "work_units_per_second")
    return ov


def _fabric_of(edge):
    fid = edge.get("fabric_id")
    if fid is None or (isinstance(fid, str) and not fid.strip()):
        raise ValueError(f"cross-pool edge {edge.get('source')}->{edge.get('target')} has no fabric_id")
    return fid


def _ledger_row(edge, placement):
    missing = [n for n in (edge["source"], edge["target"]) if n not in placement]
    if missing:
        raise ValueError(f"no pool in placement for {missing}")
    overlap = _check_edge(edge)
    cross = placement[edge["source"]] != placement[edge["target"]]
    traffic = edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"] if cross else 0.0
    transfer = traffic / edge["bandwidth_bytes_per_s"] if cross else 0.0
    exposed = transfer * (1 - overlap) if cross else 0.0
    return {**edge, "cross_pool": cross, "traffic_bytes_per_s": traffic,
            "transfer_seconds_per_s": transfer, "exposed_seconds_per_s": exposed}


def transfer_ledger(edges, placement):
    """TODO 2: per-edge rows plus exposure summed per fabric."""
    rows = [_ledger_row(e, placement) for e in edges]
    cross_rows = [(r, _fabric_of(r)) for r in rows if r["cross_pool"]]

    bandwidth_seen = {}
    for row, fid in cross_rows:
        bw = row["bandwidth_bytes_per_s"]
        if bandwidth_seen.setdefault(fid, bw) != bw:
            raise ValueError(f"fabric {fid!r} declares bandwidths {bandwidth_seen[fid]} and {bw}")

    fabrics = {fid for _, fid in cross_rows}
    exposure = {f: math.fsum(r["exposed_seconds_per_s"] for r, fid in cross_rows if fid == f) for f in fabrics}
    critical = max(exposure.values(), default=0.0)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": math.fsum(r["traffic_bytes_per_s"] for r in rows),
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": _ties(exposure, critical) if exposure else [],
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
    """TODO 3: reject > tune > accept, keeping every triggered reason."""
    _require_non_negative(max_exposed_s_per_s, "max_exposed_s_per_s")
    exposure = transfer_report["fabric_exposed_seconds_per_s"]
    for label, table in (("memory", memory_by_pool), ("memory limit", memory_limits), ("exposure", exposure)):
        for key, value in table.items():
            _require_non_negative(value, f"{label} of {key}")

    over = sorted(p for p, used in memory_by_pool.items() if p not in memory_limits or used > memory_limits[p])
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = sorted(f for f, x in exposure.items() if x > max_exposed_s_per_s)

    hard = [why for why, hit in (("memory_limit", bool(over)),
                                 ("version_sync", not version_sync_ok),
                                 ("recovery_not_ready", not recovery_ok)) if hit]
    soft = [why for why, hit in (("unstable_queue", bool(unstable)),
                                 ("exposed_transfer", bool(overloaded))) if hit]
    decision = "reject" if hard else "tune" if soft else "accept"
    return {
        "decision": decision,
        "reasons": hard or soft,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
