"""rlsys ledger -- functional take: small pure expressions, comprehensions everywhere."""
from functools import reduce
from math import isclose, isfinite
from operator import itemgetter

_close = lambda a, b: isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
_finite_pos = lambda v: isfinite(v) and v > 0
_finite_nonneg = lambda v: isfinite(v) and v >= 0


def _require(ok, msg):
    if not ok:
        raise ValueError(msg)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    stages = frozenset(stage_rates)
    _require(bool(stages), "need at least one stage")
    _require(stages == frozenset(items_per_work_unit), "rate and multiplier stages disagree")
    _require(all(map(_finite_pos, stage_rates.values())), "every stage rate must be finite and > 0")
    _require(all(map(_finite_pos, items_per_work_unit.values())), "every multiplier must be finite and > 0")
    _require(_finite_nonneg(arrival_rate), "arrival rate must be finite and >= 0")

    eff = {s: stage_rates[s] / items_per_work_unit[s] for s in stages}
    cap = min(eff.values())
    margins = {s: r - arrival_rate for s, r in eff.items()}
    unstable = sorted(s for s, m in margins.items() if m < 0)
    return dict(
        effective_rates=eff,
        capacity=cap,
        bottlenecks=sorted(s for s, r in eff.items() if _close(r, cap)),
        queue_margins=margins,
        unstable_stages=unstable,
        queue_stable=not unstable,
    )


def _check_edge(e, placement):
    _require(e["source"] in placement and e["target"] in placement, "edge endpoint missing from placement")
    ov = e.get("overlap_fraction", 0)
    _require(0 <= ov <= 1, "overlap_fraction outside [0, 1]")  # NaN fails both comparisons
    _require(all(_finite_pos(e[k]) for k in ("bandwidth_bytes_per_s", "items_per_work_unit")),
             "bandwidth and items_per_work_unit must be finite and > 0")
    _require(all(_finite_nonneg(e[k]) for k in ("bytes_per_item", "work_units_per_second")),
             "bytes_per_item and work_units_per_second must be finite and >= 0")
    return ov


def _row(e, placement):
    ov = _check_edge(e, placement)
    cross = placement[e["source"]] != placement[e["target"]]
    if cross:
        fid = e.get("fabric_id")
        _require(isinstance(fid, str) and fid.strip() != "", "cross-pool edge lacks a usable fabric_id")
        traffic = e["bytes_per_item"] * e["items_per_work_unit"] * e["work_units_per_second"]
        transfer = traffic / e["bandwidth_bytes_per_s"]
        exposed = transfer * (1 - ov)
    else:
        traffic = transfer = exposed = 0.0
    return {**e, "cross_pool": cross, "traffic_bytes_per_s": traffic,
            "transfer_seconds_per_s": transfer, "exposed_seconds_per_s": exposed}


def transfer_ledger(edges, placement):
    rows = [_row(e, placement) for e in edges]
    cross_rows = [r for r in rows if r["cross_pool"]]

    def fold_bw(seen, r):
        first = seen.setdefault(r["fabric_id"], r["bandwidth_bytes_per_s"])
        _require(_close(first, r["bandwidth_bytes_per_s"]),
                 f"fabric {r['fabric_id']!r} mixes bandwidths")
        return seen

    reduce(fold_bw, cross_rows, {})

    fabric_ids = list(dict.fromkeys(r["fabric_id"] for r in cross_rows))
    per_fabric = {f: sum(r["exposed_seconds_per_s"] for r in cross_rows if r["fabric_id"] == f)
                  for f in fabric_ids}
    peak = max(per_fabric.values(), default=0.0)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": sum(map(itemgetter("traffic_bytes_per_s"), rows)),
        "fabric_exposed_seconds_per_s": per_fabric,
        "critical_exposed_seconds_per_s": peak,
        "critical_fabrics": sorted(f for f, x in per_fabric.items() if x == peak),
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    exposures = transfer_report["fabric_exposed_seconds_per_s"]
    numbers = [max_exposed_s_per_s, *memory_by_pool.values(), *memory_limits.values(), *exposures.values()]
    _require(all(map(_finite_nonneg, numbers)), "memory, limits, exposures and threshold must be finite and >= 0")

    over = sorted(p for p, used in memory_by_pool.items()
                  if p not in memory_limits or used > memory_limits[p])
    unstable = sorted(capacity_report["unstable_stages"])
    hot = sorted(f for f, x in exposures.items() if x > max_exposed_s_per_s)

    hard = [name for name, hit in (("memory_limit", over),
                                   ("version_sync", not version_sync_ok),
                                   ("recovery_not_ready", not recovery_ok)) if hit]
    soft = [name for name, hit in (("unstable_queue", unstable),
                                   ("exposed_transfer", hot)) if hit]
    decision = "reject" if hard else "tune" if soft else "accept"
    return {
        "decision": decision,
        "reasons": hard or soft or [],
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": hot,
    }
