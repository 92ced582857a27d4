"""Post-training system ledger: capacity, transfer and admission.

Over-built on purpose: typed records, a validation layer, an enum for reasons
and a tiny rule engine for the admission gate.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

__all__ = ["pipeline_capacity", "transfer_ledger", "evaluate_topology"]

REL_TOL: float = 1e-9
ABS_TOL: float = 1e-12


def approx_equal(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


# --------------------------------------------------------------------------- validation
class Bound(enum.Enum):
    POSITIVE = "positive"          # finite and > 0
    NON_NEGATIVE = "non-negative"  # finite and >= 0
    UNIT_INTERVAL = "in [0, 1]"    # not NaN, 0 <= x <= 1


def validate(value: float, bound: Bound, label: str) -> float:
    if math.isnan(value):
        raise ValueError(f"{label}: NaN is not allowed")
    if bound is Bound.UNIT_INTERVAL:
        if value < 0 or value > 1:
            raise ValueError(f"{label}: expected a value in [0, 1], got {value!r}")
        return value
    if math.isinf(value):
        raise ValueError(f"{label}: infinite values are not allowed")
    if bound is Bound.POSITIVE and value <= 0:
        raise ValueError(f"{label}: expected > 0, got {value!r}")
    if bound is Bound.NON_NEGATIVE and value < 0:
        raise ValueError(f"{label}: expected >= 0, got {value!r}")
    return value


def validate_mapping(values: Mapping[str, float], bound: Bound, label: str) -> None:
    for key, value in values.items():
        validate(value, bound, f"{label}[{key!r}]")


def is_blank(text: Optional[str]) -> bool:
    return text is None or not isinstance(text, str) or text.strip() == ""


# --------------------------------------------------------------------------- TODO 1
@dataclass(frozen=True)
class StageRecord:
    name: str
    raw_rate: float
    multiplier: float

    @property
    def effective(self) -> float:
        return self.raw_rate / self.multiplier


def _build_stages(stage_rates: Mapping[str, float],
                  multipliers: Mapping[str, float]) -> List[StageRecord]:
    names = set(stage_rates)
    if not names:
        raise ValueError("pipeline_capacity: at least one stage is required")
    if names != set(multipliers):
        missing = sorted(names ^ set(multipliers))
        raise ValueError(f"pipeline_capacity: stage mismatch on {missing}")
    validate_mapping(stage_rates, Bound.POSITIVE, "stage_rates")
    validate_mapping(multipliers, Bound.POSITIVE, "items_per_work_unit")
    return [StageRecord(n, stage_rates[n], multipliers[n]) for n in names]


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    stages = _build_stages(stage_rates, items_per_work_unit)
    validate(arrival_rate, Bound.NON_NEGATIVE, "arrival_rate")

    effective_rates: Dict[str, float] = {s.name: s.effective for s in stages}
    capacity = min(effective_rates.values())
    queue_margins: Dict[str, float] = {
        name: rate - arrival_rate for name, rate in effective_rates.items()
    }
    bottlenecks = sorted(n for n, r in effective_rates.items() if approx_equal(r, capacity))
    unstable_stages = sorted(n for n, m in queue_margins.items() if m < 0)
    return {
        "effective_rates": effective_rates,
        "capacity": capacity,
        "bottlenecks": bottlenecks,
        "queue_margins": queue_margins,
        "unstable_stages": unstable_stages,
        "queue_stable": len(unstable_stages) == 0,
    }


# --------------------------------------------------------------------------- TODO 2
_EDGE_BOUNDS: Tuple[Tuple[str, Bound], ...] = (
    ("bandwidth_bytes_per_s", Bound.POSITIVE),
    ("items_per_work_unit", Bound.POSITIVE),
    ("bytes_per_item", Bound.NON_NEGATIVE),
    ("work_units_per_second", Bound.NON_NEGATIVE),
)


@dataclass
class EdgeLoad:
    index: int
    cross_pool: bool
    fabric_id: Optional[str]
    traffic: float = 0.0
    transfer: float = 0.0
    exposed: float = 0.0


@dataclass
class FabricAccumulator:
    bandwidth: float
    exposed: float = 0.0
    edges: List[int] = field(default_factory=list)


def _edge_load(index: int, edge: Mapping, placement: Mapping[str, str]) -> EdgeLoad:
    label = f"edge #{index}"
    for endpoint_key in ("source", "target"):
        node = edge[endpoint_key]
        if node not in placement:
            raise ValueError(f"{label}: {endpoint_key} {node!r} has no pool in placement")
    overlap = validate(edge.get("overlap_fraction", 0), Bound.UNIT_INTERVAL,
                       f"{label}.overlap_fraction")
    for key, bound in _EDGE_BOUNDS:
        validate(edge[key], bound, f"{label}.{key}")

    cross = placement[edge["source"]] != placement[edge["target"]]
    if not cross:
        return EdgeLoad(index, False, None)
    fabric = edge.get("fabric_id")
    if is_blank(fabric):
        raise ValueError(f"{label}: cross-pool edge needs a non-blank fabric_id")
    traffic = edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"]
    transfer = traffic / edge["bandwidth_bytes_per_s"]
    return EdgeLoad(index, True, fabric, traffic, transfer, transfer * (1 - overlap))


def transfer_ledger(edges, placement):
    loads = [_edge_load(i, e, placement) for i, e in enumerate(edges)]

    fabrics: Dict[str, FabricAccumulator] = {}
    for load in loads:
        if not load.cross_pool:
            continue
        bandwidth = edges[load.index]["bandwidth_bytes_per_s"]
        acc = fabrics.get(load.fabric_id)
        if acc is None:
            acc = fabrics[load.fabric_id] = FabricAccumulator(bandwidth=bandwidth)
        elif not approx_equal(acc.bandwidth, bandwidth):
            raise ValueError(
                f"fabric {load.fabric_id!r}: bandwidth {bandwidth!r} differs from {acc.bandwidth!r}")
        acc.exposed += load.exposed
        acc.edges.append(load.index)

    rows = []
    for load in loads:
        row = dict(edges[load.index])
        row["cross_pool"] = load.cross_pool
        row["traffic_bytes_per_s"] = load.traffic
        row["transfer_seconds_per_s"] = load.transfer
        row["exposed_seconds_per_s"] = load.exposed
        rows.append(row)

    exposure = {name: acc.exposed for name, acc in fabrics.items()}
    critical = max(exposure.values()) if exposure else 0.0
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": math.fsum(l.traffic for l in loads) if loads else 0.0,
        "fabric_exposed_seconds_per_s": exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": sorted(n for n, x in exposure.items() if x == critical),
    }


# --------------------------------------------------------------------------- TODO 3
class Severity(enum.IntEnum):
    TUNE = 1
    REJECT = 2


@dataclass(frozen=True)
class Rule:
    reason: str
    severity: Severity
    triggered: Callable[["GateContext"], bool]


@dataclass(frozen=True)
class GateContext:
    over_limit_pools: List[str]
    unstable_stages: List[str]
    overloaded_fabrics: List[str]
    version_sync_ok: bool
    recovery_ok: bool


RULES: Sequence[Rule] = (
    Rule("memory_limit", Severity.REJECT, lambda c: bool(c.over_limit_pools)),
    Rule("version_sync", Severity.REJECT, lambda c: not c.version_sync_ok),
    Rule("recovery_not_ready", Severity.REJECT, lambda c: not c.recovery_ok),
    Rule("unstable_queue", Severity.TUNE, lambda c: bool(c.unstable_stages)),
    Rule("exposed_transfer", Severity.TUNE, lambda c: bool(c.overloaded_fabrics)),
)

DECISION_NAMES = {Severity.REJECT: "reject", Severity.TUNE: "tune"}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    validate(max_exposed_s_per_s, Bound.NON_NEGATIVE, "max_exposed_s_per_s")
    validate_mapping(memory_by_pool, Bound.NON_NEGATIVE, "memory_by_pool")
    validate_mapping(memory_limits, Bound.NON_NEGATIVE, "memory_limits")
    exposure = transfer_report["fabric_exposed_seconds_per_s"]
    validate_mapping(exposure, Bound.NON_NEGATIVE, "fabric_exposed_seconds_per_s")

    ctx = GateContext(
        over_limit_pools=sorted(
            pool for pool, used in memory_by_pool.items()
            if pool not in memory_limits or used > memory_limits[pool]),
        unstable_stages=sorted(capacity_report["unstable_stages"]),
        overloaded_fabrics=sorted(f for f, x in exposure.items() if x > max_exposed_s_per_s),
        version_sync_ok=version_sync_ok,
        recovery_ok=recovery_ok,
    )
    fired = [rule for rule in RULES if rule.triggered(ctx)]
    if fired:
        worst = max(rule.severity for rule in fired)
        decision = DECISION_NAMES[worst]
        reasons = [rule.reason for rule in fired if rule.severity == worst]
    else:
        decision, reasons = "accept", []
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": list(ctx.over_limit_pools),
        "unstable_stages": list(ctx.unstable_stages),
        "overloaded_fabrics": list(ctx.overloaded_fabrics),
    }
