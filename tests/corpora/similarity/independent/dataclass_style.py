"""An independent solution: a validated record per edge, functional aggregation."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce


def _finite(x, what):
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{what}: {x} is not finite")
    return x


def _positive(x, what):
    x = _finite(x, what)
    if x <= 0:
        raise ValueError(f"{what}: {x} must be > 0")
    return x


def _nonneg(x, what):
    x = _finite(x, what)
    if x < 0:
        raise ValueError(f"{what}: {x} must be >= 0")
    return x


def _ties(mapping, target):
    return sorted(k for k, v in mapping.items() if math.isclose(v, target, rel_tol=1e-9, abs_tol=1e-12))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    names = set(stage_rates)
    if not names or names != set(items_per_work_unit):
        raise ValueError("stage_rates and items_per_work_unit must name the same non-empty stages")
    lam = _nonneg(arrival_rate, "arrival_rate")
    eff = {s: _positive(stage_rates[s], s) / _positive(items_per_work_unit[s], s) for s in stage_rates}
    cap = min(eff.values())
    margin = {s: r - lam for s, r in eff.items()}
    bad = sorted(filter(lambda s: margin[s] < 0, margin))
    return dict(capacity=cap, effective_rates=eff, bottlenecks=_ties(eff, cap),
                queue_margins=margin, unstable_stages=bad, queue_stable=not bad)


@dataclass
class _Edge:
    raw: dict
    cross: bool
    fabric: str | None
    bandwidth: float
    traffic: float
    overlap: float

    @property
    def busy(self):
        return self.traffic / self.bandwidth

    @property
    def exposed(self):
        return self.busy * (1 - self.overlap)

    def row(self):
        return {**self.raw, "cross_pool": self.cross, "traffic_bytes_per_s": self.traffic,
                "transfer_seconds_per_s": self.busy, "exposed_seconds_per_s": self.exposed}


def _edge(raw, placement):
    ends = (raw["source"], raw["target"])
    if any(e not in placement for e in ends):
        raise ValueError(f"endpoint without a pool in {ends}")
    ov = _finite(raw.get("overlap_fraction", 0.0), "overlap_fraction")
    if ov < 0 or ov > 1:
        raise ValueError("overlap_fraction outside [0, 1]")
    bw = _positive(raw["bandwidth_bytes_per_s"], "bandwidth_bytes_per_s")
    load = (_nonneg(raw["bytes_per_item"], "bytes_per_item")
            * _positive(raw["items_per_work_unit"], "items_per_work_unit")
            * _nonneg(raw["work_units_per_second"], "work_units_per_second"))
    cross = placement[ends[0]] != placement[ends[1]]
    fabric = None
    if cross:
        fabric = str(raw.get("fabric_id", "")).strip()
        if not fabric:
            raise ValueError(f"cross-pool edge {ends} lacks fabric_id")
    return _Edge(raw, cross, fabric, bw, load if cross else 0.0, ov)


def transfer_ledger(edges, placement):
    parsed = [_edge(e, placement) for e in edges]
    crossing = [p for p in parsed if p.cross]
    speeds = {}
    for p in crossing:
        known = speeds.setdefault(p.fabric, p.bandwidth)
        if not math.isclose(known, p.bandwidth, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"fabric {p.fabric} declared with two bandwidths")
    exposure = reduce(lambda acc, p: {**acc, p.fabric: acc.get(p.fabric, 0.0) + p.exposed}, crossing, {})
    peak = max(exposure.values(), default=0.0)
    return {
        "rows": [p.row() for p in parsed],
        "cross_pool_bytes_per_s": math.fsum(p.traffic for p in crossing) if crossing else 0.0,
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": peak,
        "critical_fabrics": sorted(f for f, v in exposure.items() if v == peak),
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    limit = _nonneg(max_exposed_s_per_s, "max_exposed_s_per_s")
    fabrics = transfer_report.get("fabric_exposed_seconds_per_s", {})
    for label, table in (("memory", memory_by_pool), ("limit", memory_limits), ("exposure", fabrics)):
        for key, value in table.items():
            _nonneg(value, f"{label} {key}")
    overs = sorted(p for p, used in memory_by_pool.items() if used > memory_limits.get(p, -math.inf))
    checks = [("memory_limit", bool(overs)), ("version_sync", not version_sync_ok),
              ("recovery_not_ready", not recovery_ok)]
    failures = [name for name, failed in checks if failed]
    stages = sorted(capacity_report.get("unstable_stages", []))
    hot = sorted(f for f, v in fabrics.items() if v > limit)
    pressures = [name for name, on in (
        ("unstable_queue", bool(stages) or not capacity_report["queue_stable"]),
        ("exposed_transfer", bool(hot) or transfer_report["critical_exposed_seconds_per_s"] > limit),
    ) if on]
    verdict = "reject" if failures else "tune" if pressures else "accept"
    return {"decision": verdict, "reasons": failures or pressures, "over_limit_pools": overs,
            "unstable_stages": stages, "overloaded_fabrics": hot}
