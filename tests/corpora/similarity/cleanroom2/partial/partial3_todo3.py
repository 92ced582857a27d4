import math
from collections import defaultdict


def _valid(x, allow_zero):
    return math.isfinite(x) and (x >= 0 if allow_zero else x > 0)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    # own work
    if len(stage_rates) == 0 or stage_rates.keys() != items_per_work_unit.keys():
        raise ValueError("need the same, non-empty set of stages")
    if not _valid(arrival_rate, True):
        raise ValueError("bad arrival rate")
    for name in stage_rates:
        if not _valid(stage_rates[name], False) or not _valid(items_per_work_unit[name], False):
            raise ValueError("bad stage " + str(name))
    normalised = dict((name, stage_rates[name] / items_per_work_unit[name]) for name in stage_rates)
    minimum = min(normalised.values())
    slack = dict((name, value - arrival_rate) for name, value in normalised.items())
    neg = sorted(filter(lambda n: slack[n] < 0, slack))
    return {
        "effective_rates": normalised,
        "capacity": minimum,
        "bottlenecks": sorted(filter(lambda n: math.isclose(normalised[n], minimum, rel_tol=1e-9, abs_tol=1e-12), normalised)),
        "queue_margins": slack,
        "unstable_stages": neg,
        "queue_stable": not neg,
    }


def transfer_ledger(edges, placement):
    # own work: validate everything first, then compute
    for edge in edges:
        if edge["source"] not in placement or edge["target"] not in placement:
            raise ValueError("endpoint without pool")
        o = edge.get("overlap_fraction", 0)
        if not (0 <= o <= 1):
            raise ValueError("overlap out of [0,1]")
        if not _valid(edge["bandwidth_bytes_per_s"], False) or not _valid(edge["items_per_work_unit"], False):
            raise ValueError("bandwidth/items must be > 0")
        if not _valid(edge["bytes_per_item"], True) or not _valid(edge["work_units_per_second"], True):
            raise ValueError("bytes/rate must be >= 0")
    first_bw = {}
    sums = defaultdict(float)
    rows = []
    total = 0.0
    for edge in edges:
        is_cross = placement[edge["source"]] != placement[edge["target"]]
        vals = (0.0, 0.0, 0.0)
        if is_cross:
            fab = edge.get("fabric_id")
            if fab is None or len(fab.strip()) == 0:
                raise ValueError("fabric_id missing")
            bw = edge["bandwidth_bytes_per_s"]
            if fab not in first_bw:
                first_bw[fab] = bw
            if not math.isclose(first_bw[fab], bw, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError("inconsistent bandwidth")
            traffic = edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"]
            transfer = traffic / bw
            vals = (traffic, transfer, transfer * (1 - edge.get("overlap_fraction", 0)))
            total += traffic
            sums[fab] += vals[2]
        r = dict(edge)
        r["cross_pool"] = is_cross
        r["traffic_bytes_per_s"], r["transfer_seconds_per_s"], r["exposed_seconds_per_s"] = vals
        rows.append(r)
    fabrics = dict(sums)
    worst = max(fabrics.values()) if fabrics else 0.0
    return {"rows": rows, "cross_pool_bytes_per_s": total, "fabric_exposed_seconds_per_s": fabrics,
            "critical_exposed_seconds_per_s": worst,
            "critical_fabrics": sorted(k for k, v in fabrics.items() if v == worst)}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    # copied from the chapter answer, tidied up a bit
    budget = float(max_exposed_s_per_s)
    mem = [float(v) for v in memory_by_pool.values()] + [float(v) for v in memory_limits.values()]
    links = [float(v) for v in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    if not math.isfinite(budget) or budget < 0:
        raise ValueError('exposure budget must be finite and non-negative')
    if any(not math.isfinite(v) or v < 0 for v in mem + links):
        raise ValueError('memory and transfer ledgers must be finite and non-negative')
    over = sorted(pool for pool, used in memory_by_pool.items()
                  if pool not in memory_limits or used > memory_limits[pool])
    failures = []
    if over:
        failures.append('memory_limit')
    if not version_sync_ok:
        failures.append('version_sync')
    if not recovery_ok:
        failures.append('recovery_not_ready')
    backlog = sorted(capacity_report.get('unstable_stages', []))
    hot = sorted(name for name, value in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
                 if value > budget)
    pressures = []
    if backlog or not capacity_report['queue_stable']:
        pressures.append('unstable_queue')
    if hot or transfer_report['critical_exposed_seconds_per_s'] > budget:
        pressures.append('exposed_transfer')
    decision = 'reject' if failures else ('tune' if pressures else 'accept')
    return {'decision': decision, 'reasons': failures if failures else pressures, 'over_limit_pools': over,
            'unstable_stages': backlog, 'overloaded_fabrics': hot}
