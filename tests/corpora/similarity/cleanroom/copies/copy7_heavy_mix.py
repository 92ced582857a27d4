#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""
Ledger for the RL post-training system exercise.

Author: (student)
Contains three functions: capacity of the pipeline, a transfer ledger,
and the final topology gate.
"""
from typing import Dict, List  # kept from the chapter's skeleton
import math as _m

ACCEPT, TUNE, REJECT = "accept", "tune", "reject"


def _bad(v):
    # true when not a finite number
    return not _m.isfinite(v)


def _unused_mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def evaluate_topology(capacity_report, memory_by_pool, memory_limits,
                      transfer_report, version_sync_ok, recovery_ok,
                      max_exposed_s_per_s=0.1):
    cutoff = float(max_exposed_s_per_s)
    fabric_table = transfer_report.get("fabric_exposed_seconds_per_s", {})
    mem_nums = list(map(float, memory_by_pool.values())) + list(map(float, memory_limits.values()))
    fab_nums = list(map(float, fabric_table.values()))
    if _bad(cutoff) or cutoff < 0:
        raise ValueError("budget must be >= 0 and finite")
    for number in mem_nums + fab_nums:
        if _bad(number) or number < 0:
            raise ValueError("ledger values must be >= 0 and finite")

    exceeded = []
    for pool_name, gib in memory_by_pool.items():
        if pool_name not in memory_limits or gib > memory_limits[pool_name]:
            exceeded.append(pool_name)
    exceeded = sorted(exceeded)

    failures = [tag for tag, hit in [("memory_limit", bool(exceeded)),
                                      ("version_sync", not version_sync_ok),
                                      ("recovery_not_ready", not recovery_ok)] if hit]

    stuck = sorted(capacity_report.get("unstable_stages", []))
    saturated = sorted([fab for fab, secs in fabric_table.items() if secs > cutoff])
    tuning = []
    if stuck or not capacity_report["queue_stable"]:
        tuning += ["unstable_queue"]
    if saturated or transfer_report["critical_exposed_seconds_per_s"] > cutoff:
        tuning += ["exposed_transfer"]

    if failures:
        return {"decision": REJECT, "reasons": failures, "over_limit_pools": exceeded,
                "unstable_stages": stuck, "overloaded_fabrics": saturated}
    return {"decision": TUNE if tuning else ACCEPT, "reasons": tuning, "over_limit_pools": exceeded,
            "unstable_stages": stuck, "overloaded_fabrics": saturated}


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    incoming = float(arrival_rate)
    if not stage_rates:
        raise ValueError("need at least one stage")
    for r in stage_rates.values():
        if _bad(float(r)) or float(r) <= 0:
            raise ValueError("stage rate must be > 0 and finite")
    if _bad(incoming) or incoming < 0:
        raise ValueError("arrival rate must be >= 0 and finite")
    if set(stage_rates) != set(items_per_work_unit):
        raise ValueError("stage names differ")
    for k in items_per_work_unit.values():
        if _bad(float(k)) or float(k) <= 0:
            raise ValueError("multiplier must be > 0 and finite")

    normalized = dict()
    for nm, r in stage_rates.items():
        normalized[nm] = float(r) / float(items_per_work_unit[nm])
    floor_rate = min(normalized.values())
    narrowest = sorted([nm for nm, r in normalized.items()
                        if _m.isclose(r, floor_rate, rel_tol=1e-9, abs_tol=1e-12)])
    spare = {nm: r - incoming for nm, r in normalized.items()}
    overflowing = sorted([nm for nm, sp in spare.items() if sp < 0])
    return dict(capacity=floor_rate, effective_rates=normalized, bottlenecks=narrowest,
                queue_margins=spare, unstable_stages=overflowing,
                queue_stable=len(overflowing) == 0)


def transfer_ledger(edges, placement):
    table = []
    grand_total = 0.0
    busy = {}
    declared_bw = {}
    idx = 0
    while idx < len(edges):
        rec = edges[idx]
        idx = idx + 1
        left = rec["source"]; right = rec["target"]
        if not (left in placement and right in placement):
            raise ValueError("endpoint without pool")
        share = float(rec.get("overlap_fraction", 0.0))
        pipe = float(rec["bandwidth_bytes_per_s"])
        if _bad(share) or _bad(pipe) or not (0.0 <= share <= 1.0) or pipe <= 0:
            raise ValueError("invalid overlap_fraction / bandwidth")
        sz, cnt, frq = (float(rec["bytes_per_item"]), float(rec["items_per_work_unit"]),
                        float(rec["work_units_per_second"]))
        if _bad(sz) or _bad(cnt) or _bad(frq) or sz < 0 or cnt <= 0 or frq < 0:
            raise ValueError("invalid bytes_per_item / items_per_work_unit / work_units_per_second")
        across = placement[left] != placement[right]
        flow = (sz * cnt * frq) if across else 0.0
        occupancy = flow / pipe
        exposure = occupancy * (1.0 - share)
        grand_total = grand_total + flow
        if across:
            tag = str(rec.get("fabric_id", "")).strip()
            if len(tag) == 0:
                raise ValueError("missing fabric_id on cross-pool edge")
            earlier = declared_bw.setdefault(tag, pipe)
            if not _m.isclose(earlier, pipe, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("bandwidth mismatch within fabric")
            busy[tag] = busy.get(tag, 0.0) + exposure
        new_row = {**rec}
        new_row.update({"cross_pool": across, "traffic_bytes_per_s": flow,
                        "transfer_seconds_per_s": occupancy, "exposed_seconds_per_s": exposure})
        table.append(new_row)
    highest = max(busy.values(), default=0.0)
    hottest = [] if not busy else sorted(t for t, v in busy.items() if v == highest)
    return {"cross_pool_bytes_per_s": grand_total, "fabric_exposed_seconds_per_s": busy,
            "critical_exposed_seconds_per_s": highest, "critical_fabrics": hottest, "rows": table}
