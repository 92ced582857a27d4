"""PT-RL-SYSTEM exercise: the system ledger (TODO 1-3)."""

from typing import Dict, List  # kept from the chapter's skeleton


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    import math

    speeds = [float(s) for s in stage_rates.values()]
    factors = [float(f) for f in items_per_work_unit.values()]
    arrival_rate = float(arrival_rate)
    if not stage_rates or any(not math.isfinite(s) or s <= 0 for s in speeds):
        raise ValueError("stage rates have to be positive and finite")
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError("arrival rate has to be finite and >= 0")
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(f) or f <= 0 for f in factors):
        raise ValueError("each stage needs a positive finite multiplier")
    eff = {stage: float(speed) / float(items_per_work_unit[stage]) for stage, speed in stage_rates.items()}
    cap = min(eff.values())
    slowest = sorted(stage for stage, speed in eff.items() if math.isclose(speed, cap, rel_tol=1e-9, abs_tol=1e-12))
    margins = {stage: speed - arrival_rate for stage, speed in eff.items()}
    backlog = sorted(stage for stage, m in margins.items() if m < 0)
    return {"capacity": cap, "effective_rates": eff, "bottlenecks": slowest, "queue_margins": margins,
            "unstable_stages": backlog, "queue_stable": not backlog}


def transfer_ledger(edges, placement):
    import math

    out_rows, bytes_sum, per_fabric, fabric_bw = [], 0.0, {}, {}
    for e in edges:
        src, dst = e["source"], e["target"]
        if src not in placement or dst not in placement:
            raise ValueError("both endpoints need a pool")
        crosses = placement[src] != placement[dst]
        ov = float(e.get("overlap_fraction", 0.0))
        bw = float(e["bandwidth_bytes_per_s"])
        if not math.isfinite(ov) or not math.isfinite(bw) or not 0.0 <= ov <= 1.0 or bw <= 0:
            raise ValueError("overlap must be in [0, 1] and bandwidth positive finite")
        size = float(e["bytes_per_item"])
        per_unit = float(e["items_per_work_unit"])
        freq = float(e["work_units_per_second"])
        nums = (size, per_unit, freq)
        if any(not math.isfinite(n) for n in nums) or size < 0 or per_unit <= 0 or freq < 0:
            raise ValueError("bytes and frequency must be finite and >= 0, multiplier > 0")
        load = size * per_unit * freq if crosses else 0.0
        secs = load / bw
        exp = secs * (1.0 - ov)
        bytes_sum += load
        if crosses:
            fab = str(e.get("fabric_id", "")).strip()
            if not fab:
                raise ValueError("cross-pool edge needs fabric_id")
            old_bw = fabric_bw.setdefault(fab, bw)
            if not math.isclose(old_bw, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("one fabric_id, one bandwidth")
            per_fabric[fab] = per_fabric.get(fab, 0.0) + exp
        out_rows.append(e | {"cross_pool": crosses, "traffic_bytes_per_s": load,
                             "transfer_seconds_per_s": secs, "exposed_seconds_per_s": exp})
    worst = max(per_fabric.values(), default=0.0)
    worst_fabrics = sorted(f for f, v in per_fabric.items() if v == worst) if per_fabric else []
    return {"cross_pool_bytes_per_s": bytes_sum, "fabric_exposed_seconds_per_s": per_fabric,
            "critical_exposed_seconds_per_s": worst, "critical_fabrics": worst_fabrics, "rows": out_rows}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    import math

    max_exposed_s_per_s = float(max_exposed_s_per_s)
    mem_vals = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
    xfer_vals = [float(v) for v in transfer_report.get("fabric_exposed_seconds_per_s", {}).values()]
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError("exposure budget must be finite and >= 0")
    if any(not math.isfinite(v) or v < 0 for v in mem_vals + xfer_vals):
        raise ValueError("memory and transfer ledgers must be finite and >= 0")
    too_big = sorted(p for p, used in memory_by_pool.items()
                     if p not in memory_limits or used > memory_limits[p])
    failures = []
    if too_big:
        failures.append("memory_limit")
    if not version_sync_ok:
        failures.append("version_sync")
    if not recovery_ok:
        failures.append("recovery_not_ready")

    backlog = sorted(capacity_report.get("unstable_stages", []))
    hot = sorted(
        f for f, v in transfer_report.get("fabric_exposed_seconds_per_s", {}).items()
        if v > max_exposed_s_per_s
    )
    pressures = []
    if backlog or not capacity_report["queue_stable"]:
        pressures.append("unstable_queue")
    if hot or transfer_report["critical_exposed_seconds_per_s"] > max_exposed_s_per_s:
        pressures.append("exposed_transfer")

    verdict = "reject" if failures else ("tune" if pressures else "accept")
    why = failures if failures else pressures
    return {"decision": verdict, "reasons": why, "over_limit_pools": too_big,
            "unstable_stages": backlog, "overloaded_fabrics": hot}
