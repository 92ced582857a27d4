"""Defensive implementation of the rlsys system ledger.

Design notes
------------
* Inputs are never mutated: every mapping is snapshotted before use.
* All validation errors derive from ``LedgerInputError`` (a ``ValueError``).
* Numeric checks are centralised in ``_NumberPolicy`` so the three entry points
  agree on what a "valid" number is.
"""
from __future__ import annotations

import copy
import enum
import logging
import math
from collections import OrderedDict
from typing import Any, Dict, Iterable, List, Mapping, MutableMapping, Sequence, Tuple

__all__ = ["pipeline_capacity", "transfer_ledger", "evaluate_topology", "LedgerInputError"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

REL_TOL: float = 1e-9
ABS_TOL: float = 1e-12
DEFAULT_OVERLAP: float = 0
EDGE_POSITIVE_FIELDS: Tuple[str, ...] = ("bandwidth_bytes_per_s", "items_per_work_unit")
EDGE_NONNEG_FIELDS: Tuple[str, ...] = ("bytes_per_item", "work_units_per_second")


class LedgerInputError(ValueError):
    """Raised for any input that the ledger refuses to interpret."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"[{where}] {detail}")
        self.where = where
        self.detail = detail


class Decision(str, enum.Enum):
    ACCEPT = "accept"
    TUNE = "tune"
    REJECT = "reject"


class Reason(str, enum.Enum):
    MEMORY_LIMIT = "memory_limit"
    VERSION_SYNC = "version_sync"
    RECOVERY_NOT_READY = "recovery_not_ready"
    UNSTABLE_QUEUE = "unstable_queue"
    EXPOSED_TRANSFER = "exposed_transfer"


class _NumberPolicy:
    @staticmethod
    def _as_real(value: Any, where: str, name: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise LedgerInputError(where, f"{name} must be an int or float, not {type(value).__name__}")
        if isinstance(value, float) and math.isnan(value):
            raise LedgerInputError(where, f"{name} is NaN")
        return value

    @classmethod
    def positive(cls, value: Any, where: str, name: str) -> float:
        v = cls._as_real(value, where, name)
        if math.isinf(v):
            raise LedgerInputError(where, f"{name} is infinite")
        if v <= 0:
            raise LedgerInputError(where, f"{name} must be strictly positive (got {v!r})")
        return v

    @classmethod
    def non_negative(cls, value: Any, where: str, name: str) -> float:
        v = cls._as_real(value, where, name)
        if math.isinf(v):
            raise LedgerInputError(where, f"{name} is infinite")
        if v < 0:
            raise LedgerInputError(where, f"{name} must not be negative (got {v!r})")
        return v

    @classmethod
    def unit_interval(cls, value: Any, where: str, name: str) -> float:
        v = cls._as_real(value, where, name)
        if not (0 <= v <= 1):
            raise LedgerInputError(where, f"{name} must be within [0, 1] (got {v!r})")
        return v


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _require_mapping(obj: Any, where: str, name: str) -> Mapping:
    if not isinstance(obj, Mapping):
        raise LedgerInputError(where, f"{name} must be a mapping, got {type(obj).__name__}")
    return obj


# --------------------------------------------------------------------------- TODO 1
def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    where = "pipeline_capacity"
    rates = dict(_require_mapping(stage_rates, where, "stage_rates"))
    mults = dict(_require_mapping(items_per_work_unit, where, "items_per_work_unit"))

    if len(rates) == 0 and len(mults) == 0:
        raise LedgerInputError(where, "at least one stage is required")
    missing = set(rates).symmetric_difference(mults)
    if missing:
        raise LedgerInputError(where, f"stages present on only one side: {sorted(map(repr, missing))}")
    arrival = _NumberPolicy.non_negative(arrival_rate, where, "arrival_rate")

    effective: Dict[Any, float] = {}
    for stage in rates:
        q = _NumberPolicy.positive(rates[stage], where, f"stage_rates[{stage!r}]")
        m = _NumberPolicy.positive(mults[stage], where, f"items_per_work_unit[{stage!r}]")
        effective[stage] = q / m

    capacity = min(effective.values())
    margins = {stage: rate - arrival for stage, rate in effective.items()}
    bottlenecks = sorted(s for s, r in effective.items() if _close(r, capacity))
    unstable = sorted(s for s, margin in margins.items() if margin < 0)
    if unstable:
        _log.debug("unstable stages: %s", unstable)

    return {
        "effective_rates": effective,
        "capacity": capacity,
        "bottlenecks": list(bottlenecks),
        "queue_margins": margins,
        "unstable_stages": list(unstable),
        "queue_stable": bool(not unstable),
    }


# --------------------------------------------------------------------------- TODO 2
def _pool_of(placement: Mapping, node: Any, where: str) -> Any:
    try:
        return placement[node]
    except KeyError:
        raise LedgerInputError(where, f"endpoint {node!r} is not assigned to any pool") from None
    except TypeError:
        raise LedgerInputError(where, f"endpoint {node!r} is not a usable key") from None


def _fabric_of(edge: Mapping, where: str) -> str:
    fid = edge.get("fabric_id")
    if fid is None:
        raise LedgerInputError(where, "cross-pool edge is missing fabric_id")
    if not isinstance(fid, str):
        raise LedgerInputError(where, f"fabric_id must be a string, got {type(fid).__name__}")
    if not fid.strip():
        raise LedgerInputError(where, "fabric_id is empty or whitespace only")
    return fid


def transfer_ledger(edges, placement):
    placement = dict(_require_mapping(placement, "transfer_ledger", "placement"))
    rows: List[Dict[str, Any]] = []
    total_traffic: float = 0
    exposure: MutableMapping[str, float] = OrderedDict()
    declared_bw: Dict[str, float] = {}

    for index, original in enumerate(edges):
        where = f"transfer_ledger edge #{index}"
        edge = dict(_require_mapping(original, where, "edge"))
        for key in ("source", "target"):
            if key not in edge:
                raise LedgerInputError(where, f"edge has no {key}")
        src_pool = _pool_of(placement, edge["source"], where)
        dst_pool = _pool_of(placement, edge["target"], where)
        overlap = _NumberPolicy.unit_interval(edge.get("overlap_fraction", DEFAULT_OVERLAP), where, "overlap_fraction")
        values: Dict[str, float] = {}
        for key in EDGE_POSITIVE_FIELDS:
            if key not in edge:
                raise LedgerInputError(where, f"edge has no {key}")
            values[key] = _NumberPolicy.positive(edge[key], where, key)
        for key in EDGE_NONNEG_FIELDS:
            if key not in edge:
                raise LedgerInputError(where, f"edge has no {key}")
            values[key] = _NumberPolicy.non_negative(edge[key], where, key)

        cross = src_pool != dst_pool
        traffic: float = 0.0
        transfer: float = 0.0
        exposed: float = 0.0
        if cross:
            fid = _fabric_of(edge, where)
            bw = values["bandwidth_bytes_per_s"]
            reference_bw = declared_bw.setdefault(fid, bw)
            if not _close(reference_bw, bw):
                raise LedgerInputError(where, f"fabric {fid!r} bandwidth {bw!r} conflicts with {reference_bw!r}")
            traffic = values["bytes_per_item"] * values["items_per_work_unit"] * values["work_units_per_second"]
            transfer = traffic / bw
            exposed = transfer * (1 - overlap)
            total_traffic += traffic
            exposure[fid] = exposure.get(fid, 0.0) + exposed

        row = copy.deepcopy(edge)
        row["cross_pool"] = bool(cross)
        row["traffic_bytes_per_s"] = traffic
        row["transfer_seconds_per_s"] = transfer
        row["exposed_seconds_per_s"] = exposed
        rows.append(row)

    critical = max(exposure.values()) if exposure else 0.0
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total_traffic,
        "fabric_exposed_seconds_per_s": dict(exposure),
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": sorted(f for f, x in exposure.items() if x == critical),
    }


# --------------------------------------------------------------------------- TODO 3
def _validated_numbers(mapping: Any, where: str, name: str) -> Dict[Any, float]:
    checked = {}
    for key, value in _require_mapping(mapping, where, name).items():
        checked[key] = _NumberPolicy.non_negative(value, where, f"{name}[{key!r}]")
    return checked


def _first_level(*levels: Sequence[Reason]) -> Tuple[Decision, List[str]]:
    for decision, reasons in zip((Decision.REJECT, Decision.TUNE), levels):
        if reasons:
            return decision, [r.value for r in reasons]
    return Decision.ACCEPT, []


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    where = "evaluate_topology"
    threshold = _NumberPolicy.non_negative(max_exposed_s_per_s, where, "max_exposed_s_per_s")
    used = _validated_numbers(memory_by_pool, where, "memory_by_pool")
    limits = _validated_numbers(memory_limits, where, "memory_limits")
    report = _require_mapping(transfer_report, where, "transfer_report")
    exposures = _validated_numbers(report.get("fabric_exposed_seconds_per_s", {}), where,
                                   "fabric_exposed_seconds_per_s")
    cap = _require_mapping(capacity_report, where, "capacity_report")

    over_limit = sorted(pool for pool, amount in used.items()
                        if pool not in limits or amount > limits[pool])
    unstable = sorted(cap.get("unstable_stages", []))
    overloaded = sorted(f for f, x in exposures.items() if x > threshold)

    hard: List[Reason] = []
    if over_limit:
        hard.append(Reason.MEMORY_LIMIT)
    if not version_sync_ok:
        hard.append(Reason.VERSION_SYNC)
    if not recovery_ok:
        hard.append(Reason.RECOVERY_NOT_READY)
    pressure: List[Reason] = []
    if unstable:
        pressure.append(Reason.UNSTABLE_QUEUE)
    if overloaded:
        pressure.append(Reason.EXPOSED_TRANSFER)

    decision, reasons = _first_level(hard, pressure)
    return {
        "decision": decision.value,
        "reasons": reasons,
        "over_limit_pools": over_limit,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
