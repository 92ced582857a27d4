"""Ledger homework (worked from a classmate's version, reorganised)."""
import math

_R, _A = 1e-9, 1e-12


def _ok(v, strict):
    return math.isfinite(v) and (v > 0 if strict else v >= 0)


def _same(a, b):
    return math.isclose(a, b, rel_tol=_R, abs_tol=_A)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    inflow = float(arrival_rate)
    if not _ok(inflow, False):
        raise ValueError("arrival_rate rejected: use a finite number that is at least 0")
    if len(stage_rates) == 0:
        raise ValueError("stage_rates rejected: nothing to evaluate")
    if not all(_ok(float(v), True) for v in stage_rates.values()):
        raise ValueError("stage_rates rejected: each rate has to be finite and greater than 0")
    if set(items_per_work_unit) != set(stage_rates):
        raise ValueError("items_per_work_unit rejected: it covers a different set of stages")
    if not all(_ok(float(v), True) for v in items_per_work_unit.values()):
        raise ValueError("items_per_work_unit rejected: each multiplier has to be finite and greater than 0")

    per_unit = dict((s, float(q) / float(items_per_work_unit[s])) for s, q in stage_rates.items())
    floor = min(per_unit.values())
    slack = dict((s, r - inflow) for s, r in per_unit.items())
    lagging = sorted([s for s in slack if slack[s] < 0])
    return {
        "effective_rates": per_unit,
        "capacity": floor,
        "bottlenecks": sorted([s for s in per_unit if _same(per_unit[s], floor)]),
        "queue_margins": slack,
        "unstable_stages": lagging,
        "queue_stable": not lagging,
    }


def _link_state():
    return {"rows": [], "total": 0.0, "seen": {}, "load": {}}


def _take_link(state, link, where):
    s_node, t_node = link["source"], link["target"]
    if s_node not in where or t_node not in where:
        raise ValueError("link rejected: one of its nodes has no pool")
    spans = where[s_node] != where[t_node]
    hide = float(link.get("overlap_fraction", 0.0))
    pipe = float(link["bandwidth_bytes_per_s"])
    if not math.isfinite(hide) or hide < 0.0 or hide > 1.0:
        raise ValueError("link rejected: overlap_fraction must stay within 0..1")
    if not _ok(pipe, True):
        raise ValueError("link rejected: bandwidth has to be finite and greater than 0")
    nbytes = float(link["bytes_per_item"])
    nitems = float(link["items_per_work_unit"])
    hz = float(link["work_units_per_second"])
    if not _ok(nitems, True):
        raise ValueError("link rejected: items_per_work_unit has to be finite and greater than 0")
    if not (_ok(nbytes, False) and _ok(hz, False)):
        raise ValueError("link rejected: bytes_per_item / work_units_per_second must be finite and at least 0")
    flow = nbytes * nitems * hz if spans else 0.0
    occupied = flow / pipe
    shown = occupied * (1.0 - hide)
    state["total"] += flow
    if spans:
        tag = str(link.get("fabric_id", "")).strip()
        if not tag:
            raise ValueError("link rejected: a pool-crossing link must carry a fabric_id")
        if not _same(state["seen"].setdefault(tag, pipe), pipe):
            raise ValueError("link rejected: fabric %r already uses another bandwidth" % tag)
        state["load"][tag] = state["load"].get(tag, 0.0) + shown
    record = dict(link)
    record["cross_pool"] = spans
    record["traffic_bytes_per_s"] = flow
    record["transfer_seconds_per_s"] = occupied
    record["exposed_seconds_per_s"] = shown
    state["rows"].append(record)


def transfer_ledger(edges, placement):
    state = _link_state()
    for link in edges:
        _take_link(state, link, placement)
    load = state["load"]
    worst = max(load.values(), default=0.0)
    return {
        "rows": state["rows"],
        "cross_pool_bytes_per_s": state["total"],
        "fabric_exposed_seconds_per_s": load,
        "critical_exposed_seconds_per_s": worst,
        "critical_fabrics": sorted([k for k in load if load[k] == worst]) if load else [],
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    cap_x = float(max_exposed_s_per_s)
    if not _ok(cap_x, False):
        raise ValueError("max_exposed_s_per_s rejected: use a finite number that is at least 0")
    link_map = transfer_report.get("fabric_exposed_seconds_per_s", {})
    for src in (memory_by_pool, memory_limits, link_map):
        if not all(_ok(float(v), False) for v in src.values()):
            raise ValueError("ledger rejected: memory / limit / exposure values must be finite and at least 0")

    full = sorted([p for p in memory_by_pool if p not in memory_limits or memory_by_pool[p] > memory_limits[p]])
    lagging = sorted(capacity_report.get("unstable_stages", []))
    busy = sorted([k for k in link_map if link_map[k] > cap_x])

    stop = [tag for tag, hit in (("memory_limit", full),
                                 ("version_sync", not version_sync_ok),
                                 ("recovery_not_ready", not recovery_ok)) if hit]
    adjust = [tag for tag, hit in (("unstable_queue", lagging or not capacity_report["queue_stable"]),
                                   ("exposed_transfer", busy or transfer_report["critical_exposed_seconds_per_s"] > cap_x)) if hit]
    verdict = "reject" if stop else "tune" if adjust else "accept"
    return {"decision": verdict, "reasons": stop or adjust, "over_limit_pools": full,
            "unstable_stages": lagging, "overloaded_fabrics": busy}
