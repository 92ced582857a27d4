from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass, field


def _finite(x):
    return math.isfinite(x)


@dataclass(frozen=True)
class Stage:
    name: str
    rate: float
    multiplier: float

    def __post_init__(self):
        if not _finite(self.rate) or self.rate <= 0:
            raise ValueError(f"stage {self.name}: rate must be positive and finite")
        if not _finite(self.multiplier) or self.multiplier <= 0:
            raise ValueError(f"stage {self.name}: multiplier must be positive and finite")

    @property
    def effective(self):
        return self.rate / self.multiplier


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    if set(stage_rates) != set(items_per_work_unit):
        raise ValueError("stage sets differ")
    if len(stage_rates) == 0:
        raise ValueError("empty pipeline")
    if not _finite(arrival_rate) or arrival_rate < 0:
        raise ValueError("arrival rate must be finite and non-negative")
    stages = [Stage(n, stage_rates[n], items_per_work_unit[n]) for n in stage_rates]
    eff = {s.name: s.effective for s in stages}
    cap = min(eff.values())
    margins = {s.name: s.effective - arrival_rate for s in stages}
    bottlenecks = sorted(s.name for s in stages
                         if math.isclose(s.effective, cap, rel_tol=1e-9, abs_tol=1e-12))
    unstable = sorted(s.name for s in stages if margins[s.name] < 0)
    return {
        "effective_rates": eff,
        "capacity": cap,
        "bottlenecks": bottlenecks,
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": len(unstable) == 0,
    }


Load = namedtuple("Load", "traffic transfer exposed")
ZERO_LOAD = Load(0.0, 0.0, 0.0)


@dataclass
class Edge:
    raw: dict
    source_pool: object
    target_pool: object
    bytes_per_item: float
    items: float
    frequency: float
    bandwidth: float
    overlap: float

    @classmethod
    def parse(cls, raw, placement):
        for end in ("source", "target"):
            if raw[end] not in placement:
                raise ValueError(f"{end} {raw[end]!r} is not placed")
        overlap = raw.get("overlap_fraction", 0)
        if not (0 <= overlap <= 1):  # NaN fails this too
            raise ValueError("overlap_fraction outside [0, 1]")
        bw, items = raw["bandwidth_bytes_per_s"], raw["items_per_work_unit"]
        size, freq = raw["bytes_per_item"], raw["work_units_per_second"]
        for label, v in (("bandwidth", bw), ("items_per_work_unit", items)):
            if not _finite(v) or v <= 0:
                raise ValueError(f"{label} must be positive")
        for label, v in (("bytes_per_item", size), ("work_units_per_second", freq)):
            if not _finite(v) or v < 0:
                raise ValueError(f"{label} must be non-negative")
        return cls(raw, placement[raw["source"]], placement[raw["target"]],
                   size, items, freq, bw, overlap)

    @property
    def cross_pool(self):
        return self.source_pool != self.target_pool

    @property
    def fabric(self):
        fid = self.raw.get("fabric_id")
        if fid is None or fid.strip() == "":
            raise ValueError("cross-pool edge without a usable fabric_id")
        return fid

    def load(self):
        if not self.cross_pool:
            return ZERO_LOAD
        traffic = self.bytes_per_item * self.items * self.frequency
        transfer = traffic / self.bandwidth
        return Load(traffic, transfer, transfer * (1 - self.overlap))

    def row(self):
        load = self.load()
        out = dict(self.raw)
        out["cross_pool"] = self.cross_pool
        out["traffic_bytes_per_s"] = load.traffic
        out["transfer_seconds_per_s"] = load.transfer
        out["exposed_seconds_per_s"] = load.exposed
        return out


@dataclass
class FabricBook:
    bandwidth: dict = field(default_factory=dict)
    exposure: dict = field(default_factory=dict)

    def add(self, edge: Edge):
        fid = edge.fabric
        if fid in self.bandwidth:
            if not math.isclose(self.bandwidth[fid], edge.bandwidth, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError(f"fabric {fid} has inconsistent bandwidth")
        else:
            self.bandwidth[fid] = edge.bandwidth
        self.exposure[fid] = self.exposure.get(fid, 0.0) + edge.load().exposed


def transfer_ledger(edges, placement):
    parsed = [Edge.parse(e, placement) for e in edges]
    book = FabricBook()
    for e in parsed:
        if e.cross_pool:
            book.add(e)
    rows = [e.row() for e in parsed]
    total = sum(r["traffic_bytes_per_s"] for r in rows)
    critical = max(book.exposure.values()) if book.exposure else 0.0
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": book.exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": sorted(f for f, x in book.exposure.items() if x == critical),
    }


@dataclass
class Verdict:
    hard_failures: list = field(default_factory=list)
    pressures: list = field(default_factory=list)

    @property
    def decision(self):
        if self.hard_failures:
            return "reject"
        return "tune" if self.pressures else "accept"

    @property
    def reasons(self):
        if self.hard_failures:
            return list(self.hard_failures)
        return list(self.pressures)


def _check_values(mapping, what):
    for k, v in mapping.items():
        if not _finite(v) or v < 0:
            raise ValueError(f"{what} for {k!r} must be finite and non-negative")


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    exposures = transfer_report["fabric_exposed_seconds_per_s"]
    _check_values(memory_by_pool, "memory")
    _check_values(memory_limits, "memory limit")
    _check_values(exposures, "fabric exposure")
    if not _finite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError("max_exposed_s_per_s must be finite and non-negative")

    over = sorted(p for p in memory_by_pool
                  if p not in memory_limits or memory_by_pool[p] > memory_limits[p])
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = sorted(f for f, x in exposures.items() if x > max_exposed_s_per_s)

    v = Verdict()
    if over:
        v.hard_failures.append("memory_limit")
    if version_sync_ok is False:
        v.hard_failures.append("version_sync")
    if recovery_ok is False:
        v.hard_failures.append("recovery_not_ready")
    if unstable:
        v.pressures.append("unstable_queue")
    if overloaded:
        v.pressures.append("exposed_transfer")
    return {
        "decision": v.decision,
        "reasons": v.reasons,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
