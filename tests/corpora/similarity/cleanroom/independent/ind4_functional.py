"""PT-RL-SYSTEM exercise: the system ledger (TODO 1-3) -- functional take.

No mutation of inputs anywhere: every result is built with map/filter/sorted/min/max
and functools.reduce over immutable tuples.
"""

from functools import reduce
from itertools import groupby
from math import isclose, isfinite, isnan
from operator import itemgetter
from typing import Dict, List  # kept from the chapter's skeleton

ok_pos = lambda v: isfinite(v) and v > 0
ok_nonneg = lambda v: isfinite(v) and v >= 0
same = lambda a, b: isclose(a, b, rel_tol=1e-9)


def _fail_if(cond, msg):
    if cond:
        raise ValueError(msg)


def _argmins(pairs, key=itemgetter(1)):
    """All names attaining the minimum of key over (name, value) pairs, sorted by name."""
    best = min(pairs, key=key)
    return sorted(map(itemgetter(0), filter(lambda p: same(key(p), key(best)), pairs)))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    _fail_if(not stage_rates or set(stage_rates) != set(items_per_work_unit), "stage sets differ or are empty")
    _fail_if(not all(map(ok_pos, stage_rates.values())), "rates must be positive finite")
    _fail_if(not all(map(ok_pos, items_per_work_unit.values())), "multipliers must be positive finite")
    _fail_if(not ok_nonneg(arrival_rate), "arrival rate must be non-negative finite")

    pairs = tuple(sorted(((k, stage_rates[k] / items_per_work_unit[k]) for k in stage_rates), key=itemgetter(0)))
    capacity = min(map(itemgetter(1), pairs))
    margins = tuple((k, v - arrival_rate) for k, v in pairs)
    unstable = [k for k, _ in filter(lambda kv: kv[1] < 0, margins)]
    return {
        "effective_rates": dict(pairs),
        "capacity": capacity,
        "bottlenecks": _argmins(pairs),
        "queue_margins": dict(margins),
        "unstable_stages": unstable,
        "queue_stable": not unstable,
    }


def _row(placement):
    def build(edge):
        _fail_if(edge["source"] not in placement or edge["target"] not in placement, "endpoint without pool")
        ov = edge.get("overlap_fraction", 0)
        _fail_if(isnan(ov) or not 0 <= ov <= 1, "overlap_fraction outside [0, 1]")
        _fail_if(not all(map(ok_pos, itemgetter("bandwidth_bytes_per_s", "items_per_work_unit")(edge))),
                 "bandwidth / items_per_work_unit must be positive finite")
        _fail_if(not all(map(ok_nonneg, itemgetter("bytes_per_item", "work_units_per_second")(edge))),
                 "bytes_per_item / work_units_per_second must be non-negative finite")
        cross = placement[edge["source"]] != placement[edge["target"]]
        fid = edge.get("fabric_id")
        _fail_if(cross and (fid is None or str(fid).strip() == ""), "cross-pool edge without fabric_id")
        traffic = reduce(lambda a, b: a * b, itemgetter("bytes_per_item", "items_per_work_unit",
                                                        "work_units_per_second")(edge)) if cross else 0.0
        transfer = traffic / edge["bandwidth_bytes_per_s"] if cross else 0.0
        return {**edge, "cross_pool": cross, "traffic_bytes_per_s": traffic,
                "transfer_seconds_per_s": transfer, "exposed_seconds_per_s": transfer * (1 - ov) if cross else 0.0}
    return build


def transfer_ledger(edges, placement):
    rows = list(map(_row(placement), edges))
    crossing = sorted(filter(itemgetter("cross_pool"), rows), key=itemgetter("fabric_id"))
    grouped = {fid: list(g) for fid, g in groupby(crossing, key=itemgetter("fabric_id"))}
    _fail_if(any(len(set(map(itemgetter("bandwidth_bytes_per_s"), g))) > 1 for g in grouped.values()),
             "one fabric declares different bandwidths")
    exposure = {fid: reduce(lambda acc, r: acc + r["exposed_seconds_per_s"], g, 0.0) for fid, g in grouped.items()}
    peak = max(exposure.values(), default=0.0)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": reduce(lambda acc, r: acc + r["traffic_bytes_per_s"], rows, 0.0),
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": peak,
        "critical_fabrics": sorted(k for k in exposure if same(exposure[k], peak)),
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
    exposure = transfer_report["fabric_exposed_seconds_per_s"]
    every_number = [max_exposed_s_per_s, *memory_by_pool.values(), *memory_limits.values(), *exposure.values()]
    _fail_if(not all(map(ok_nonneg, every_number)), "memory, limits, exposures and budget must be non-negative finite")

    over = sorted(filter(lambda p: p not in memory_limits or memory_by_pool[p] > memory_limits[p], memory_by_pool))
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = sorted(filter(lambda f: exposure[f] > max_exposed_s_per_s, exposure))

    pick = lambda table: [name for name, hit in table if hit]
    hard = pick((("memory_limit", over), ("version_sync", not version_sync_ok), ("recovery_not_ready", not recovery_ok)))
    soft = pick((("unstable_queue", unstable), ("exposed_transfer", overloaded)))
    decision = next(d for d, cond in (("reject", hard), ("tune", soft), ("accept", True)) if cond)
    return {
        "decision": decision,
        "reasons": hard if hard else soft,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
