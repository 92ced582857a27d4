"""System ledger exercise, written around small dataclasses."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional


def _is_real(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


@dataclass(frozen=True)
class Stage:
    name: str
    raw_rate: float
    multiplier: float

    def __post_init__(self):
        if not _is_real(self.raw_rate) or self.raw_rate <= 0:
            raise ValueError(f"Stage {self.name}: raw rate {self.raw_rate!r} is not a positive finite number")
        if not _is_real(self.multiplier) or self.multiplier <= 0:
            raise ValueError(f"Stage {self.name}: multiplier {self.multiplier!r} is not a positive finite number")

    @property
    def effective(self) -> float:
        return self.raw_rate / self.multiplier


@dataclass
class Pipeline:
    stages: List[Stage]
    arrival: float

    @classmethod
    def build(cls, rates, arrival, multipliers) -> "Pipeline":
        if not rates and not multipliers:
            raise ValueError("Pipeline: empty stage set")
        if set(rates) != set(multipliers):
            raise ValueError("Pipeline: stage names of rates and multipliers do not match")
        if not _is_real(arrival) or arrival < 0:
            raise ValueError(f"Pipeline: arrival rate {arrival!r} must be a finite non-negative number")
        return cls([Stage(n, rates[n], multipliers[n]) for n in rates], arrival)

    def report(self) -> dict:
        eff = {s.name: s.effective for s in self.stages}
        cap = min(eff.values())
        margins = {n: r - self.arrival for n, r in eff.items()}
        unstable = sorted(n for n, m in margins.items() if m < 0)
        return {
            "effective_rates": eff,
            "capacity": cap,
            "bottlenecks": sorted(n for n, r in eff.items()
                                  if math.isclose(r, cap, rel_tol=1e-9, abs_tol=1e-12)),
            "queue_margins": margins,
            "unstable_stages": unstable,
            "queue_stable": len(unstable) == 0,
        }


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    return Pipeline.build(stage_rates, arrival_rate, items_per_work_unit).report()


@dataclass
class Edge:
    raw: dict
    src_pool: object
    dst_pool: object

    @property
    def cross(self) -> bool:
        return self.src_pool != self.dst_pool

    @property
    def overlap(self) -> float:
        return self.raw.get("overlap_fraction", 0)

    @property
    def bandwidth(self) -> float:
        return self.raw["bandwidth_bytes_per_s"]

    @property
    def fabric(self) -> Optional[str]:
        return self.raw.get("fabric_id")

    def validate(self) -> None:
        ov = self.overlap
        if not isinstance(ov, (int, float)) or isinstance(ov, bool) or math.isnan(ov) or not 0 <= ov <= 1:
            raise ValueError(f"Edge {self.raw.get('source')}->{self.raw.get('target')}: overlap {ov!r} not in [0, 1]")
        for key in ("bandwidth_bytes_per_s", "items_per_work_unit"):
            v = self.raw[key]
            if not _is_real(v) or v <= 0:
                raise ValueError(f"Edge: {key}={v!r} must be positive and finite")
        for key in ("bytes_per_item", "work_units_per_second"):
            v = self.raw[key]
            if not _is_real(v) or v < 0:
                raise ValueError(f"Edge: {key}={v!r} must be non-negative and finite")
        if self.cross:
            f = self.fabric
            if not isinstance(f, str) or not f.strip():
                raise ValueError("Edge: cross-pool edge must name a non-blank fabric_id")

    def traffic(self) -> float:
        if not self.cross:
            return 0
        r = self.raw
        return r["bytes_per_item"] * r["items_per_work_unit"] * r["work_units_per_second"]

    def as_row(self) -> dict:
        traffic = self.traffic()
        transfer = traffic / self.bandwidth if self.cross else 0.0
        exposed = transfer * (1 - self.overlap) if self.cross else 0.0
        row = dict(self.raw)
        row.update(cross_pool=self.cross, traffic_bytes_per_s=traffic,
                   transfer_seconds_per_s=transfer, exposed_seconds_per_s=exposed)
        return row


@dataclass
class FabricBook:
    bandwidth: Dict[str, float] = field(default_factory=dict)
    exposure: Dict[str, float] = field(default_factory=dict)

    def add(self, edge: Edge, exposed: float) -> None:
        f = edge.fabric
        if f in self.bandwidth:
            if not math.isclose(self.bandwidth[f], edge.bandwidth, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError(f"FabricBook: fabric {f!r} has bandwidth {edge.bandwidth!r}, "
                                 f"first declared as {self.bandwidth[f]!r}")
        else:
            self.bandwidth[f] = edge.bandwidth
        self.exposure[f] = self.exposure.get(f, 0.0) + exposed

    def peak(self) -> float:
        return max(self.exposure.values()) if self.exposure else 0.0

    def critical(self) -> List[str]:
        p = self.peak()
        return sorted(f for f, x in self.exposure.items() if x == p)


def transfer_ledger(edges, placement):
    book = FabricBook()
    rows = []
    total = 0
    for raw in edges:
        for end in ("source", "target"):
            if raw[end] not in placement:
                raise ValueError(f"Edge: endpoint {raw[end]!r} has no pool in placement")
        edge = Edge(raw, placement[raw["source"]], placement[raw["target"]])
        edge.validate()
        row = edge.as_row()
        if edge.cross:
            book.add(edge, row["exposed_seconds_per_s"])
            total += row["traffic_bytes_per_s"]
        rows.append(row)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": dict(book.exposure),
        "critical_exposed_seconds_per_s": book.peak(),
        "critical_fabrics": book.critical(),
    }


@dataclass
class Verdict:
    hard: List[str] = field(default_factory=list)
    soft: List[str] = field(default_factory=list)

    @property
    def decision(self) -> str:
        if self.hard:
            return "reject"
        return "tune" if self.soft else "accept"

    @property
    def reasons(self) -> List[str]:
        return list(self.hard or self.soft)


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    def check(label, value):
        if not _is_real(value) or value < 0:
            raise ValueError(f"Gate: {label} = {value!r} must be finite and non-negative")

    check("max_exposed_s_per_s", max_exposed_s_per_s)
    for p, v in memory_by_pool.items():
        check(f"memory[{p}]", v)
    for p, v in memory_limits.items():
        check(f"limit[{p}]", v)
    exposure = transfer_report["fabric_exposed_seconds_per_s"]
    for f, v in exposure.items():
        check(f"exposure[{f}]", v)

    over = sorted(p for p, v in memory_by_pool.items() if p not in memory_limits or v > memory_limits[p])
    unstable = sorted(capacity_report["unstable_stages"])
    hot = sorted(f for f, v in exposure.items() if v > max_exposed_s_per_s)

    v = Verdict()
    if over:
        v.hard.append("memory_limit")
    if version_sync_ok is False:
        v.hard.append("version_sync")
    if recovery_ok is False:
        v.hard.append("recovery_not_ready")
    if unstable:
        v.soft.append("unstable_queue")
    if hot:
        v.soft.append("exposed_transfer")
    return {
        "decision": v.decision,
        "reasons": v.reasons,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": hot,
    }
