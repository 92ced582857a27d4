"""System ledger. Broken into small single-purpose helpers."""
import math

_TOL = {"rel_tol": 1e-9, "abs_tol": 1e-12}


def _to_floats(mapping):
    return [float(v) for v in mapping.values()]


def _all_positive_finite(values):
    return all(math.isfinite(v) and v > 0 for v in values)


def _all_nonneg_finite(values):
    return all(math.isfinite(v) and v >= 0 for v in values)


def _fail(text):
    raise ValueError(text)


def _check_stage_rates(stage_rates):
    if not stage_rates or not _all_positive_finite(_to_floats(stage_rates)):
        _fail("Invalid throughput: need at least one stage and every rate > 0 and finite.")


def _check_arrival(value):
    value = float(value)
    if not _all_nonneg_finite([value]):
        _fail("Invalid arrival: must be finite and >= 0.")
    return value


def _check_multipliers(stage_rates, items_per_work_unit):
    if set(stage_rates) != set(items_per_work_unit):
        _fail("Invalid multipliers: stage names do not line up with the rates.")
    if not _all_positive_finite(_to_floats(items_per_work_unit)):
        _fail("Invalid multipliers: each one must be > 0 and finite.")


def _normalise(stage_rates, items_per_work_unit):
    return {k: float(v) / float(items_per_work_unit[k]) for k, v in stage_rates.items()}


def _ties_with(rates, target):
    return sorted(k for k, v in rates.items() if math.isclose(v, target, **_TOL))


def _margins(rates, arrival):
    return {k: v - arrival for k, v in rates.items()}


def _negative_keys(mapping):
    return sorted(k for k, v in mapping.items() if v < 0)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    _check_stage_rates(stage_rates)
    arrival = _check_arrival(arrival_rate)
    _check_multipliers(stage_rates, items_per_work_unit)
    rates = _normalise(stage_rates, items_per_work_unit)
    cap = min(rates.values())
    margins = _margins(rates, arrival)
    unstable = _negative_keys(margins)
    return {"capacity": cap, "effective_rates": rates, "bottlenecks": _ties_with(rates, cap),
            "queue_margins": margins, "unstable_stages": unstable, "queue_stable": not unstable}


# ----------------------------------------------------------------- transfer

def _pools_exist(edge, placement):
    if edge["source"] not in placement or edge["target"] not in placement:
        _fail("Unknown endpoint: an edge touches a node with no pool.")


def _is_cross(edge, placement):
    return placement[edge["source"]] != placement[edge["target"]]


def _overlap_and_bandwidth(edge):
    overlap = float(edge.get("overlap_fraction", 0.0))
    bandwidth = float(edge["bandwidth_bytes_per_s"])
    if not math.isfinite(overlap) or not 0.0 <= overlap <= 1.0:
        _fail("Bad overlap: expected a value between 0 and 1.")
    if not _all_positive_finite([bandwidth]):
        _fail("Bad bandwidth: expected a finite value > 0.")
    return overlap, bandwidth


def _load_terms(edge):
    size = float(edge["bytes_per_item"])
    count = float(edge["items_per_work_unit"])
    freq = float(edge["work_units_per_second"])
    if not _all_nonneg_finite([size, freq]):
        _fail("Bad load: bytes per item and unit frequency must be finite and >= 0.")
    if not _all_positive_finite([count]):
        _fail("Bad load: items per unit must be finite and > 0.")
    return size, count, freq


def _fabric_name(edge):
    name = str(edge.get("fabric_id", "")).strip()
    if not name:
        _fail("Missing fabric: a cross-pool edge must say which interconnect it uses.")
    return name


def _register_bandwidth(seen, name, bandwidth):
    first = seen.setdefault(name, bandwidth)
    if not math.isclose(first, bandwidth, **_TOL):
        _fail("Conflicting fabric: two bandwidths declared for %s." % name)


def _accumulate(bucket, name, amount):
    bucket[name] = bucket.get(name, 0.0) + amount


def _annotated(edge, cross, traffic, transfer, exposed):
    return edge | {"cross_pool": cross, "traffic_bytes_per_s": traffic,
                   "transfer_seconds_per_s": transfer, "exposed_seconds_per_s": exposed}


def _critical(bucket):
    peak = max(bucket.values(), default=0.0)
    return peak, (sorted(k for k, v in bucket.items() if v == peak) if bucket else [])


def transfer_ledger(edges, placement):
    rows, total, exposure, seen = [], 0.0, {}, {}
    for edge in edges:
        _pools_exist(edge, placement)
        cross = _is_cross(edge, placement)
        overlap, bandwidth = _overlap_and_bandwidth(edge)
        size, count, freq = _load_terms(edge)
        traffic = size * count * freq if cross else 0.0
        transfer = traffic / bandwidth
        exposed = transfer * (1.0 - overlap)
        total += traffic
        if cross:
            name = _fabric_name(edge)
            _register_bandwidth(seen, name, bandwidth)
            _accumulate(exposure, name, exposed)
        rows.append(_annotated(edge, cross, traffic, transfer, exposed))
    peak, fabrics = _critical(exposure)
    return {"cross_pool_bytes_per_s": total, "fabric_exposed_seconds_per_s": exposure,
            "critical_exposed_seconds_per_s": peak, "critical_fabrics": fabrics, "rows": rows}


# ----------------------------------------------------------------- gate

def _fabric_map(report):
    return report.get("fabric_exposed_seconds_per_s", {})


def _check_budget(value):
    value = float(value)
    if not _all_nonneg_finite([value]):
        _fail("Bad budget: the exposure ceiling must be finite and >= 0.")
    return value


def _check_ledgers(memory_by_pool, memory_limits, transfer_report):
    nums = _to_floats(memory_by_pool) + _to_floats(memory_limits) + _to_floats(_fabric_map(transfer_report))
    if not _all_nonneg_finite(nums):
        _fail("Bad ledger: memory, limits and exposures must be finite and >= 0.")


def _pools_over(memory_by_pool, memory_limits):
    return sorted(p for p, used in memory_by_pool.items() if p not in memory_limits or used > memory_limits[p])


def _hard_list(over, version_sync_ok, recovery_ok):
    flags = [("memory_limit", bool(over)), ("version_sync", not version_sync_ok),
             ("recovery_not_ready", not recovery_ok)]
    return [name for name, hit in flags if hit]


def _hot_fabrics(transfer_report, budget):
    return sorted(k for k, v in _fabric_map(transfer_report).items() if v > budget)


def _soft_list(capacity_report, unstable, hot, transfer_report, budget):
    out = []
    if unstable or not capacity_report["queue_stable"]:
        out.append("unstable_queue")
    if hot or transfer_report["critical_exposed_seconds_per_s"] > budget:
        out.append("exposed_transfer")
    return out


def _decide(hard, soft):
    if hard:
        return "reject", hard
    return ("tune", soft) if soft else ("accept", soft)


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    budget = _check_budget(max_exposed_s_per_s)
    _check_ledgers(memory_by_pool, memory_limits, transfer_report)
    over = _pools_over(memory_by_pool, memory_limits)
    hard = _hard_list(over, version_sync_ok, recovery_ok)
    unstable = sorted(capacity_report.get("unstable_stages", []))
    hot = _hot_fabrics(transfer_report, budget)
    soft = _soft_list(capacity_report, unstable, hot, transfer_report, budget)
    decision, reasons = _decide(hard, soft)
    return {"decision": decision, "reasons": reasons, "over_limit_pools": over,
            "unstable_stages": unstable, "overloaded_fabrics": hot}
