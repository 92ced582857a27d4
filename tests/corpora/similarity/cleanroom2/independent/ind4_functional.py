import math
from functools import partial, reduce
from itertools import groupby
from operator import itemgetter

close = partial(math.isclose, rel_tol=1e-9, abs_tol=1e-12)
finite = math.isfinite
positive = lambda v: finite(v) and v > 0
non_negative = lambda v: finite(v) and v >= 0


def _fail_unless(ok, msg):
    if not ok:
        raise ValueError(msg)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    _fail_unless(stage_rates.keys() == items_per_work_unit.keys() and len(stage_rates) > 0,
                 "stage sets must match and be non-empty")
    _fail_unless(all(map(positive, stage_rates.values())), "rates must be positive")
    _fail_unless(all(map(positive, items_per_work_unit.values())), "multipliers must be positive")
    _fail_unless(non_negative(arrival_rate), "arrival rate must be non-negative")

    eff = {k: stage_rates[k] / items_per_work_unit[k] for k in stage_rates}
    cap = min(eff.values())
    margins = {k: v - arrival_rate for k, v in eff.items()}
    unstable = sorted(filter(lambda k: margins[k] < 0, margins))
    return dict(
        effective_rates=eff,
        capacity=cap,
        bottlenecks=sorted(k for k, v in eff.items() if close(v, cap)),
        queue_margins=margins,
        unstable_stages=unstable,
        queue_stable=not unstable,
    )


def _validate(edge, placement):
    _fail_unless(edge["source"] in placement and edge["target"] in placement, "unplaced endpoint")
    ov = edge.get("overlap_fraction", 0)
    _fail_unless(0 <= ov <= 1, "overlap_fraction must be in [0, 1]")
    _fail_unless(all(positive(edge[k]) for k in ("bandwidth_bytes_per_s", "items_per_work_unit")),
                 "bandwidth and items_per_work_unit must be positive")
    _fail_unless(all(non_negative(edge[k]) for k in ("bytes_per_item", "work_units_per_second")),
                 "bytes_per_item and work_units_per_second must be non-negative")
    cross = placement[edge["source"]] != placement[edge["target"]]
    if cross:
        fid = edge.get("fabric_id")
        _fail_unless(isinstance(fid, str) and fid.strip() != "", "cross-pool edge needs fabric_id")
    return edge, cross


def _row(pair):
    edge, cross = pair
    traffic = (edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"]
               if cross else 0.0)
    transfer = traffic / edge["bandwidth_bytes_per_s"] if cross else 0.0
    exposed = transfer * (1 - edge.get("overlap_fraction", 0)) if cross else 0.0
    return {**edge, "cross_pool": cross, "traffic_bytes_per_s": traffic,
            "transfer_seconds_per_s": transfer, "exposed_seconds_per_s": exposed}


def _check_bandwidth(first_seen, edge):
    fid, bw = edge["fabric_id"], edge["bandwidth_bytes_per_s"]
    _fail_unless(close(first_seen.get(fid, bw), bw), f"fabric {fid} bandwidth differs")
    return first_seen if fid in first_seen else {**first_seen, fid: bw}


def transfer_ledger(edges, placement):
    checked = list(map(lambda e: _validate(e, placement), edges))
    cross_edges = [e for e, c in checked if c]
    reduce(_check_bandwidth, cross_edges, {})
    rows = list(map(_row, checked))
    cross_rows = [r for r in rows if r["cross_pool"]]
    by_fabric = sorted(cross_rows, key=itemgetter("fabric_id"))
    exposure = {fid: sum(r["exposed_seconds_per_s"] for r in grp)
                for fid, grp in groupby(by_fabric, key=itemgetter("fabric_id"))}
    critical = max(exposure.values(), default=0.0)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": sum(r["traffic_bytes_per_s"] for r in rows),
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": sorted(f for f, x in exposure.items() if x == critical),
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    fabrics = transfer_report["fabric_exposed_seconds_per_s"]
    values = [*memory_by_pool.values(), *memory_limits.values(), *fabrics.values(),
              max_exposed_s_per_s]
    _fail_unless(all(map(non_negative, values)), "memory, limits and exposures must be finite and >= 0")

    over = sorted(p for p, m in memory_by_pool.items()
                  if m > memory_limits.get(p, -math.inf))
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = sorted(f for f, x in fabrics.items() if x > max_exposed_s_per_s)

    hard = [name for name, hit in (("memory_limit", bool(over)),
                                   ("version_sync", not version_sync_ok),
                                   ("recovery_not_ready", not recovery_ok)) if hit]
    tune = [name for name, hit in (("unstable_queue", bool(unstable)),
                                   ("exposed_transfer", bool(overloaded))) if hit]
    decision = "reject" if hard else ("tune" if tune else "accept")
    return {
        "decision": decision,
        "reasons": hard or tune,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
