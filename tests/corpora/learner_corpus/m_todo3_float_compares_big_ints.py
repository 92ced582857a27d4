"""Mutant (issue 42, ints past 2**53): ok_two_pass_fsum.py before the template said "ints
are compared as ints": memory, limits, exposures and the threshold are compared after
float(), so 10**20 + 1 is not more than a limit of 10**20."""
import copy
import math


def _num(x, *, zero_ok, inf_ok=False):
    v = float(x)
    if math.isnan(v) or (not inf_ok and math.isinf(v)):
        raise ValueError("not a finite number")
    if v < 0 or (v == 0 and not zero_ok):
        raise ValueError("out of range")
    return v


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    stage_rates = copy.deepcopy(stage_rates)
    items_per_work_unit = copy.deepcopy(items_per_work_unit)
    names = sorted(stage_rates)
    if not names or names != sorted(items_per_work_unit):
        raise ValueError("stage sets")
    rates = {n: _num(stage_rates[n], zero_ok=False) for n in names}
    mult = {n: _num(items_per_work_unit[n], zero_ok=False) for n in names}
    lam = _num(arrival_rate, zero_ok=True)
    eff = {n: rates[n] / mult[n] for n in names}
    cap = min(eff.values())
    margins = {n: eff[n] - lam for n in names}
    unstable = [n for n in names if margins[n] < 0]
    return dict(capacity=cap, effective_rates=eff, bottlenecks=[n for n in names if math.isclose(eff[n], cap, rel_tol=1e-9, abs_tol=1e-12)],
                queue_margins=margins, unstable_stages=unstable, queue_stable=len(unstable) == 0)


def transfer_ledger(edges, placement):
    edges = copy.deepcopy(list(edges))
    placement = dict(placement)
    parsed = []
    for e in edges:
        if e["source"] not in placement or e["target"] not in placement:
            raise ValueError("endpoint")
        ov = float(e.get("overlap_fraction", 0.0))
        if not (0.0 <= ov <= 1.0):  # NaN fails this comparison too
            raise ValueError("overlap")
        bw = _num(e["bandwidth_bytes_per_s"], zero_ok=False)
        ipw = _num(e["items_per_work_unit"], zero_ok=False)
        bpi = _num(e["bytes_per_item"], zero_ok=True)
        wps = _num(e["work_units_per_second"], zero_ok=True)
        cross = placement[e["source"]] != placement[e["target"]]
        fid = None
        if cross:
            fid = e.get("fabric_id")
            if not isinstance(fid, str) or fid.strip() == "":
                raise ValueError("fabric_id")
        parsed.append((e, cross, ov, bw, ipw, bpi, wps, fid))
    first_bw = {}
    for _, cross, _, bw, *_rest, fid in parsed:
        if cross:
            first_bw.setdefault(fid, bw)
            if not math.isclose(first_bw[fid], bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("fabric bandwidths differ")
    rows, traffic_all, per_fabric = [], [], {}
    for e, cross, ov, bw, ipw, bpi, wps, fid in parsed:
        traffic = bpi * ipw * wps if cross else 0.0
        transfer = traffic / bw if cross else 0.0
        exposed = transfer * (1.0 - ov) if cross else 0.0
        traffic_all.append(traffic)
        if cross:
            per_fabric.setdefault(fid, []).append(exposed)
        row = {k: v for k, v in e.items()}
        row["cross_pool"] = cross
        row["traffic_bytes_per_s"] = traffic
        row["transfer_seconds_per_s"] = transfer
        row["exposed_seconds_per_s"] = exposed
        rows.append(row)
    fab = {f: math.fsum(sorted(v)) for f, v in sorted(per_fabric.items())}
    crit = max(fab.values()) if fab else 0.0
    return {"rows": rows, "cross_pool_bytes_per_s": math.fsum(sorted(traffic_all)),
            "fabric_exposed_seconds_per_s": fab, "critical_exposed_seconds_per_s": crit,
            "critical_fabrics": [f for f in sorted(fab) if fab[f] == crit]}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    thr = _num(max_exposed_s_per_s, zero_ok=True)
    mem = {p: _num(v, zero_ok=True) for p, v in memory_by_pool.items()}
    lim = {p: _num(v, zero_ok=True) for p, v in memory_limits.items()}
    fab = {f: _num(v, zero_ok=True) for f, v in dict(transfer_report.get("fabric_exposed_seconds_per_s", {})).items()}
    over = [p for p in sorted(set(mem) | set(lim)) if p in mem and (p not in lim or mem[p] > lim[p])]
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = sorted(f for f in fab if fab[f] > thr)
    hard = [r for r, hit in (("memory_limit", bool(over)), ("version_sync", version_sync_ok is False),
                             ("recovery_not_ready", recovery_ok is False)) if hit]
    press = [r for r, hit in (("unstable_queue", bool(unstable)), ("exposed_transfer", bool(overloaded))) if hit]
    decision = "reject" if hard else "tune" if press else "accept"
    return {"decision": decision, "reasons": hard or press, "over_limit_pools": over,
            "unstable_stages": unstable, "overloaded_fabrics": overloaded}
