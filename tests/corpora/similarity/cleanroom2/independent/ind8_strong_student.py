"""System ledger: pipeline capacity, transfer ledger and topology gate."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

Number = int | float

_REL, _ABS = 1e-9, 1e-12


def _approx_equal(a: Number, b: Number) -> bool:
    return math.isclose(a, b, rel_tol=_REL, abs_tol=_ABS)


def _ensure(value: Number, *, label: str, strictly_positive: bool) -> Number:
    """Finite and >0 (or >=0); NaN fails both comparisons below."""
    ok = math.isfinite(value) and (value > 0 if strictly_positive else value >= 0)
    if not ok:
        kind = "positive" if strictly_positive else "non-negative"
        raise ValueError(f"{label} must be finite and {kind}: {value!r}")
    return value


def _names(items: Iterable[tuple[str, Any]], keep: Callable[[Any], bool]) -> list[str]:
    return sorted(name for name, v in items if keep(v))


def pipeline_capacity(
    stage_rates: Mapping[str, Number],
    arrival_rate: Number,
    items_per_work_unit: Mapping[str, Number],
) -> dict[str, Any]:
    if stage_rates.keys() != items_per_work_unit.keys():
        raise ValueError("stage_rates and items_per_work_unit disagree on stages")
    if not stage_rates:
        raise ValueError("pipeline has no stages")
    _ensure(arrival_rate, label="arrival_rate", strictly_positive=False)

    effective: dict[str, float] = {
        stage: _ensure(rate, label=f"rate[{stage}]", strictly_positive=True)
        / _ensure(items_per_work_unit[stage], label=f"multiplier[{stage}]", strictly_positive=True)
        for stage, rate in stage_rates.items()
    }
    capacity = min(effective.values())
    margins = {stage: c - arrival_rate for stage, c in effective.items()}
    unstable = _names(margins.items(), lambda m: m < 0)
    return {
        "effective_rates": effective,
        "capacity": capacity,
        "bottlenecks": _names(effective.items(), lambda c: _approx_equal(c, capacity)),
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": not unstable,
    }


def _overlap(edge: Mapping[str, Any]) -> Number:
    o = edge.get("overlap_fraction", 0)
    if not 0 <= o <= 1:
        raise ValueError(f"overlap_fraction {o!r} outside [0, 1]")
    return o


def _validate_edge(edge: Mapping[str, Any]) -> None:
    for key in ("bandwidth_bytes_per_s", "items_per_work_unit"):
        _ensure(edge[key], label=key, strictly_positive=True)
    for key in ("bytes_per_item", "work_units_per_second"):
        _ensure(edge[key], label=key, strictly_positive=False)


def _fabric_id(edge: Mapping[str, Any]) -> str:
    fid = edge.get("fabric_id")
    if not isinstance(fid, str) or not fid.strip():
        raise ValueError(f"cross-pool edge {edge.get('source')}->{edge.get('target')} lacks a fabric_id")
    return fid


def transfer_ledger(
    edges: Iterable[Mapping[str, Any]], placement: Mapping[str, Any]
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    exposure: defaultdict[str, float] = defaultdict(float)
    declared_bw: dict[str, Number] = {}
    total_traffic: Number = 0

    for edge in edges:
        try:
            src_pool, dst_pool = placement[edge["source"]], placement[edge["target"]]
        except KeyError as missing:
            raise ValueError(f"endpoint {missing} has no pool") from None
        overlap = _overlap(edge)
        _validate_edge(edge)
        cross = src_pool != dst_pool
        traffic = transfer = exposed = 0.0
        if cross:
            fid = _fabric_id(edge)
            bw = edge["bandwidth_bytes_per_s"]
            if not _approx_equal(declared_bw.setdefault(fid, bw), bw):
                raise ValueError(f"fabric {fid!r}: bandwidth {bw} != {declared_bw[fid]}")
            traffic = edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"]
            transfer = traffic / bw
            exposed = transfer * (1 - overlap)
            exposure[fid] += exposed
            total_traffic += traffic
        rows.append({
            **edge,
            "cross_pool": cross,
            "traffic_bytes_per_s": traffic,
            "transfer_seconds_per_s": transfer,
            "exposed_seconds_per_s": exposed,
        })

    fabric_exposure = dict(exposure)
    critical = max(fabric_exposure.values(), default=0.0)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total_traffic,
        "fabric_exposed_seconds_per_s": fabric_exposure,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": _names(fabric_exposure.items(), lambda x: x == critical),
    }


_HARD = ("memory_limit", "version_sync", "recovery_not_ready")
_TUNE = ("unstable_queue", "exposed_transfer")


def evaluate_topology(
    capacity_report: Mapping[str, Any],
    memory_by_pool: Mapping[str, Number],
    memory_limits: Mapping[str, Number],
    transfer_report: Mapping[str, Any],
    version_sync_ok: bool,
    recovery_ok: bool,
    max_exposed_s_per_s: Number = 0.1,
) -> dict[str, Any]:
    exposures: Mapping[str, Number] = transfer_report["fabric_exposed_seconds_per_s"]
    for label, table in (("memory", memory_by_pool), ("limit", memory_limits), ("exposure", exposures)):
        for key, value in table.items():
            _ensure(value, label=f"{label}[{key}]", strictly_positive=False)
    _ensure(max_exposed_s_per_s, label="max_exposed_s_per_s", strictly_positive=False)

    over = _names(
        ((pool, (pool, used)) for pool, used in memory_by_pool.items()),
        lambda pu: pu[0] not in memory_limits or pu[1] > memory_limits[pu[0]],
    )
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = _names(exposures.items(), lambda x: x > max_exposed_s_per_s)

    hard_hits = dict(zip(_HARD, (bool(over), version_sync_ok is False, recovery_ok is False)))
    tune_hits = dict(zip(_TUNE, (bool(unstable), bool(overloaded))))
    hard = [r for r in _HARD if hard_hits[r]]
    tune = [r for r in _TUNE if tune_hits[r]]

    if hard:
        decision, reasons = "reject", hard
    elif tune:
        decision, reasons = "tune", tune
    else:
        decision, reasons = "accept", []
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
