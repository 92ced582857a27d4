# PT-RL-SYSTEM: system ledger (TODO 1-3)
# Approach: parse every input into small frozen dataclasses first, so that the
# arithmetic works on validated, typed records and the inputs are never touched.

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Dict, List, Optional  # kept from the chapter's skeleton


def _positive(x) -> bool:
    return math.isfinite(x) and x > 0


def _non_negative(x) -> bool:
    return math.isfinite(x) and x >= 0


@dataclass(frozen=True)
class Stage:
    name: str
    rate: float
    per_unit: float

    def __post_init__(self):
        if not _positive(self.rate):
            raise ValueError(f"stage {self.name}: rate must be positive and finite")
        if not _positive(self.per_unit):
            raise ValueError(f"stage {self.name}: items_per_work_unit must be positive and finite")

    @property
    def effective(self) -> float:
        return self.rate / self.per_unit


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """Normalise stage rates to one work unit; report bottlenecks and backlog."""
    if not stage_rates:
        raise ValueError("at least one stage is required")
    if stage_rates.keys() != items_per_work_unit.keys():
        raise ValueError("stage_rates and items_per_work_unit must name the same stages")
    if not _non_negative(arrival_rate):
        raise ValueError("arrival_rate must be finite and non-negative")

    stages = [Stage(n, stage_rates[n], items_per_work_unit[n]) for n in stage_rates]
    effective = {s.name: s.effective for s in stages}
    cap = min(s.effective for s in stages)

    bottlenecks: List[str] = []
    unstable: List[str] = []
    margins: Dict[str, float] = {}
    for s in sorted(stages, key=lambda st: st.name):
        if math.isclose(s.effective, cap, rel_tol=1e-9):
            bottlenecks.append(s.name)
        margins[s.name] = s.effective - arrival_rate
        if margins[s.name] < 0:
            unstable.append(s.name)

    return dict(
        effective_rates=effective,
        capacity=cap,
        bottlenecks=bottlenecks,
        queue_margins=margins,
        unstable_stages=unstable,
        queue_stable=len(unstable) == 0,
    )


@dataclass
class Edge:
    raw: dict
    source: str
    target: str
    bytes_per_item: float
    items_per_work_unit: float
    work_units_per_second: float
    bandwidth: float
    overlap: float
    fabric: Optional[str]

    @classmethod
    def parse(cls, raw: dict) -> "Edge":
        overlap = raw.get("overlap_fraction", 0)
        if math.isnan(overlap) or overlap < 0 or overlap > 1:
            raise ValueError("overlap_fraction must be within [0, 1]")
        e = cls(raw, raw["source"], raw["target"], raw["bytes_per_item"],
                raw["items_per_work_unit"], raw["work_units_per_second"],
                raw["bandwidth_bytes_per_s"], overlap, raw.get("fabric_id"))
        if not _positive(e.bandwidth):
            raise ValueError("bandwidth_bytes_per_s must be positive and finite")
        if not _positive(e.items_per_work_unit):
            raise ValueError("items_per_work_unit must be positive and finite")
        if not _non_negative(e.bytes_per_item):
            raise ValueError("bytes_per_item must be finite and non-negative")
        if not _non_negative(e.work_units_per_second):
            raise ValueError("work_units_per_second must be finite and non-negative")
        return e


Load = namedtuple("Load", "cross traffic transfer exposed")


def _load(edge: Edge, placement) -> Load:
    for end in (edge.source, edge.target):
        if end not in placement:
            raise ValueError(f"endpoint {end!r} has no pool")
    if placement[edge.source] == placement[edge.target]:
        return Load(False, 0.0, 0.0, 0.0)
    if edge.fabric is None or not str(edge.fabric).strip():
        raise ValueError("a cross-pool edge needs a non-blank fabric_id")
    traffic = edge.bytes_per_item * edge.items_per_work_unit * edge.work_units_per_second
    transfer = traffic / edge.bandwidth
    return Load(True, traffic, transfer, transfer * (1 - edge.overlap))


@dataclass
class Fabric:
    bandwidth: float
    exposed: float = 0.0
    members: List[int] = field(default_factory=list)


def transfer_ledger(edges, placement):
    """Per-edge ledger; exposure summed per shared fabric."""
    parsed = [Edge.parse(raw) for raw in edges]
    loads = [_load(e, placement) for e in parsed]

    fabrics: Dict[str, Fabric] = {}
    for idx, (e, ld) in enumerate(zip(parsed, loads)):
        if not ld.cross:
            continue
        fab = fabrics.get(e.fabric)
        if fab is None:
            fab = fabrics[e.fabric] = Fabric(bandwidth=e.bandwidth)
        elif fab.bandwidth != e.bandwidth:
            raise ValueError(f"fabric {e.fabric!r} has inconsistent bandwidths")
        fab.exposed += ld.exposed
        fab.members.append(idx)

    rows = []
    for e, ld in zip(parsed, loads):
        row = dict(e.raw)
        row.update(cross_pool=ld.cross, traffic_bytes_per_s=ld.traffic,
                   transfer_seconds_per_s=ld.transfer, exposed_seconds_per_s=ld.exposed)
        rows.append(row)

    exposure = {name: f.exposed for name, f in fabrics.items()}
    worst = max(exposure.values()) if exposure else 0.0
    return dict(
        rows=rows,
        cross_pool_bytes_per_s=sum(ld.traffic for ld in loads),
        fabric_exposed_seconds_per_s=exposure,
        critical_exposed_seconds_per_s=worst,
        critical_fabrics=sorted(n for n, x in exposure.items() if math.isclose(x, worst, rel_tol=1e-9)),
    )


@dataclass
class Verdict:
    hard_failures: List[str] = field(default_factory=list)
    tuning_pressures: List[str] = field(default_factory=list)

    @property
    def decision(self) -> str:
        if self.hard_failures:
            return "reject"
        return "tune" if self.tuning_pressures else "accept"

    @property
    def reasons(self) -> List[str]:
        return list(self.hard_failures or self.tuning_pressures)


def evaluate_topology(
    capacity_report,
    memory_by_pool,
    memory_limits,
    transfer_report,
    version_sync_ok,
    recovery_ok,
    max_exposed_s_per_s=0.1,
):
    """Collect hard failures and tuning pressures; reject > tune > accept."""
    exposure = transfer_report["fabric_exposed_seconds_per_s"]
    checks = [("max_exposed_s_per_s", max_exposed_s_per_s)]
    checks += [(f"memory[{p}]", v) for p, v in memory_by_pool.items()]
    checks += [(f"limit[{p}]", v) for p, v in memory_limits.items()]
    checks += [(f"exposure[{f}]", v) for f, v in exposure.items()]
    for label, value in checks:
        if not _non_negative(value):
            raise ValueError(f"{label} must be finite and non-negative")

    over = sorted(p for p, used in memory_by_pool.items()
                  if memory_limits.get(p) is None or used > memory_limits[p])
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = sorted(f for f, x in exposure.items() if x > max_exposed_s_per_s)

    v = Verdict()
    if over:
        v.hard_failures.append("memory_limit")
    if not version_sync_ok:
        v.hard_failures.append("version_sync")
    if not recovery_ok:
        v.hard_failures.append("recovery_not_ready")
    if unstable:
        v.tuning_pressures.append("unstable_queue")
    if overloaded:
        v.tuning_pressures.append("exposed_transfer")

    return dict(decision=v.decision, reasons=v.reasons, over_limit_pools=over,
                unstable_stages=unstable, overloaded_fabrics=overloaded)
