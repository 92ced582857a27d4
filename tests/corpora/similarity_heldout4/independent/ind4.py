import math

TOL = dict(rel_tol=1e-9, abs_tol=1e-12)


# ---------- tiny checks ----------
def is_nan(x):
    return x != x


def is_inf(x):
    return x in (float("inf"), float("-inf"))


def is_bad_number(x):
    return is_nan(x) or is_inf(x)


def need_positive(x, what):
    if is_bad_number(x) or x <= 0:
        raise ValueError("%s should be a positive finite number, got %r" % (what, x))
    return x


def need_non_negative(x, what):
    if is_bad_number(x) or x < 0:
        raise ValueError("%s should be a non-negative finite number, got %r" % (what, x))
    return x


def need_fraction(x, what):
    if is_nan(x) or x < 0 or x > 1:
        raise ValueError("%s should lie in [0, 1], got %r" % (what, x))
    return x


def need_same_keys(a, b, what):
    if set(a) != set(b):
        raise ValueError("%s: key sets differ (%r vs %r)" % (what, sorted(map(str, a)), sorted(map(str, b))))


def need_non_empty(a, what):
    if not a:
        raise ValueError("%s is empty" % what)


def need_placed(node, placement):
    if node not in placement:
        raise ValueError("node %r is not in placement" % (node,))
    return placement[node]


def need_fabric_name(fid):
    if fid is None:
        raise ValueError("cross-pool edge has no fabric_id")
    if not isinstance(fid, str) or fid.strip() == "":
        raise ValueError("fabric_id %r is empty or blank" % (fid,))
    return fid


def same_value(a, b):
    return math.isclose(a, b, **TOL)


def sorted_names(names):
    return sorted(names)


def largest(values, default):
    best = default
    first = True
    for v in values:
        if first or v > best:
            best = v
            first = False
    return best


# ---------- TODO 1 ----------
def divide_rates(stage_rates, items_per_work_unit):
    out = {}
    for name in stage_rates:
        rate = need_positive(stage_rates[name], "rate of %s" % name)
        mult = need_positive(items_per_work_unit[name], "items_per_work_unit of %s" % name)
        out[name] = rate / mult
    return out


def margins_of(effective, arrival):
    return {name: r - arrival for name, r in effective.items()}


def negatives(margins):
    return sorted_names(n for n, m in margins.items() if m < 0)


def equal_to(effective, target):
    return sorted_names(n for n, r in effective.items() if same_value(r, target))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    need_non_empty(stage_rates, "stage_rates")
    need_same_keys(stage_rates, items_per_work_unit, "stages")
    need_non_negative(arrival_rate, "arrival_rate")
    effective = divide_rates(stage_rates, items_per_work_unit)
    capacity = largest([-r for r in effective.values()], 0) * -1
    margins = margins_of(effective, arrival_rate)
    unstable = negatives(margins)
    return {
        "effective_rates": effective,
        "capacity": capacity,
        "bottlenecks": equal_to(effective, capacity),
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": unstable == [],
    }


# ---------- TODO 2 ----------
def overlap_of(edge):
    return need_fraction(edge.get("overlap_fraction", 0), "overlap_fraction")


def check_edge_numbers(edge):
    need_positive(edge["bandwidth_bytes_per_s"], "bandwidth_bytes_per_s")
    need_positive(edge["items_per_work_unit"], "items_per_work_unit")
    need_non_negative(edge["bytes_per_item"], "bytes_per_item")
    need_non_negative(edge["work_units_per_second"], "work_units_per_second")


def is_cross(edge, placement):
    return need_placed(edge["source"], placement) != need_placed(edge["target"], placement)


def traffic_of(edge):
    return edge["bytes_per_item"] * edge["items_per_work_unit"] * edge["work_units_per_second"]


def remember_bandwidth(seen, fid, bw):
    if fid not in seen:
        seen[fid] = bw
    elif not same_value(seen[fid], bw):
        raise ValueError("fabric %r: bandwidth %r differs from first declared %r" % (fid, bw, seen[fid]))


def add_to(bucket, key, amount):
    bucket[key] = bucket.get(key, 0) + amount


def make_row(edge, cross, traffic, transfer, exposed):
    row = dict(edge)
    row["cross_pool"] = cross
    row["traffic_bytes_per_s"] = traffic
    row["transfer_seconds_per_s"] = transfer
    row["exposed_seconds_per_s"] = exposed
    return row


def transfer_ledger(edges, placement):
    rows, seen_bw, per_fabric = [], {}, {}
    total = 0
    for edge in edges:
        cross = is_cross(edge, placement)
        overlap = overlap_of(edge)
        check_edge_numbers(edge)
        if not cross:
            rows.append(make_row(edge, False, 0, 0, 0))
            continue
        fid = need_fabric_name(edge.get("fabric_id"))
        remember_bandwidth(seen_bw, fid, edge["bandwidth_bytes_per_s"])
        traffic = traffic_of(edge)
        transfer = traffic / edge["bandwidth_bytes_per_s"]
        exposed = transfer * (1 - overlap)
        total += traffic
        add_to(per_fabric, fid, exposed)
        rows.append(make_row(edge, True, traffic, transfer, exposed))
    peak = largest(per_fabric.values(), 0.0)
    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": per_fabric,
        "critical_exposed_seconds_per_s": peak,
        "critical_fabrics": sorted_names(f for f, x in per_fabric.items() if x == peak),
    }


# ---------- TODO 3 ----------
def check_all_non_negative(mapping, what):
    for k, v in mapping.items():
        need_non_negative(v, "%s[%r]" % (what, k))


def pools_over(memory_by_pool, memory_limits):
    return sorted_names(p for p, used in memory_by_pool.items()
                        if p not in memory_limits or used > memory_limits[p])


def fabrics_over(exposures, threshold):
    return sorted_names(f for f, x in exposures.items() if x > threshold)


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    need_non_negative(max_exposed_s_per_s, "max_exposed_s_per_s")
    check_all_non_negative(memory_by_pool, "memory_by_pool")
    check_all_non_negative(memory_limits, "memory_limits")
    exposures = transfer_report["fabric_exposed_seconds_per_s"]
    check_all_non_negative(exposures, "fabric exposure")

    over = pools_over(memory_by_pool, memory_limits)
    unstable = sorted_names(capacity_report["unstable_stages"])
    hot = fabrics_over(exposures, max_exposed_s_per_s)

    hard = []
    if over:
        hard.append("memory_limit")
    if not version_sync_ok:
        hard.append("version_sync")
    if not recovery_ok:
        hard.append("recovery_not_ready")
    soft = []
    if unstable:
        soft.append("unstable_queue")
    if hot:
        soft.append("exposed_transfer")

    if hard:
        decision, reasons = "reject", hard
    elif soft:
        decision, reasons = "tune", soft
    else:
        decision, reasons = "accept", []
    return {"decision": decision, "reasons": reasons, "over_limit_pools": over,
            "unstable_stages": unstable, "overloaded_fabrics": hot}
