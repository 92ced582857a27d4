import math as mth


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    到达 = float(arrival_rate)
    阶段名 = list(stage_rates)
    if not 阶段名:
        raise ValueError("一个阶段都没有")
    if set(阶段名) != set(items_per_work_unit):
        raise ValueError("两张表里的阶段名称不相同")
    if any(not mth.isfinite(float(stage_rates[k])) or float(stage_rates[k]) <= 0 for k in 阶段名) \
            or any(not mth.isfinite(float(items_per_work_unit[k])) or float(items_per_work_unit[k]) <= 0 for k in 阶段名):
        raise ValueError("处理率或倍率出现了零、负数、NaN 或无穷")
    if not mth.isfinite(到达) or 到达 < 0:
        raise ValueError("到达率出现了负数、NaN 或无穷")

    tbl = []
    for k in 阶段名:
        r = float(stage_rates[k]) / float(items_per_work_unit[k])
        tbl.append((k, r, r - 到达))
    lo = min(t[1] for t in tbl)
    bn, bad = [], []
    for k, r, gap in tbl:
        if mth.isclose(r, lo, rel_tol=1e-9, abs_tol=1e-12):
            bn.append(k)
        if gap < 0:
            bad.append(k)
    return {"queue_stable": not bad,
            "unstable_stages": sorted(bad),
            "bottlenecks": sorted(bn),
            "capacity": lo,
            "queue_margins": {k: gap for k, _, gap in tbl},
            "effective_rates": {k: r for k, r, _ in tbl}}


def transfer_ledger(edges, placement):
    lines = []
    acc = [0.0]
    per = {}
    for ed in edges:
        if ed["source"] not in placement or ed["target"] not in placement:
            raise ValueError("这条边有端点没分到资源池")
        a, b = placement[ed["source"]], placement[ed["target"]]
        diff = a != b
        w = float(ed["bandwidth_bytes_per_s"])
        h = float(ed.get("overlap_fraction", 0.0))
        if not mth.isfinite(w) or w <= 0:
            raise ValueError("带宽出现了零、负数、NaN 或无穷")
        if not mth.isfinite(h) or not (0.0 <= h <= 1.0):
            raise ValueError("重叠比例超出了 0 到 1")
        triple = (float(ed["bytes_per_item"]), float(ed["items_per_work_unit"]), float(ed["work_units_per_second"]))
        if not all(mth.isfinite(v) for v in triple) or triple[1] <= 0:
            raise ValueError("每单位对象数出现了零、负数、NaN 或无穷")
        if triple[0] < 0 or triple[2] < 0:
            raise ValueError("对象大小或工作单位频率是负数")
        flow = triple[0] * triple[1] * triple[2] if diff else 0.0
        if diff:
            name = str(ed.get("fabric_id", "")).strip()
            if not name:
                raise ValueError("跨资源池的边没写互连域")
            if name in per:
                if not mth.isclose(per[name][0], w, rel_tol=1e-9, abs_tol=1e-12):
                    raise ValueError("同一个互连域出现了两种带宽")
            else:
                per[name] = (w, 0.0)
        sec = flow / w
        vis = sec * (1.0 - h)
        acc[0] += flow
        if diff:
            per[name] = (per[name][0], per[name][1] + vis)
        lines.append(ed | dict(cross_pool=diff, traffic_bytes_per_s=flow,
                                transfer_seconds_per_s=sec, exposed_seconds_per_s=vis))
    totals = {k: v[1] for k, v in per.items()}
    hi = max(totals.values(), default=0.0)
    return {"rows": lines,
            "critical_fabrics": sorted(k for k, v in totals.items() if v == hi) if totals else [],
            "critical_exposed_seconds_per_s": hi,
            "fabric_exposed_seconds_per_s": totals,
            "cross_pool_bytes_per_s": acc[0]}


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    link = transfer_report.get("fabric_exposed_seconds_per_s", {})
    lim = float(max_exposed_s_per_s)
    if not mth.isfinite(lim) or lim < 0:
        raise ValueError("暴露上限出现了负数、NaN 或无穷")
    for v in list(memory_by_pool.values()) + list(memory_limits.values()):
        if not mth.isfinite(float(v)) or float(v) < 0:
            raise ValueError("显存数字出现了负数、NaN 或无穷")
    for v in link.values():
        if not mth.isfinite(float(v)) or float(v) < 0:
            raise ValueError("互连暴露出现了负数、NaN 或无穷")

    over = []
    for p, used in memory_by_pool.items():
        if p not in memory_limits or used > memory_limits[p]:
            over.append(p)
    jam = sorted(capacity_report.get("unstable_stages", []))
    heavy = sorted(k for k, v in link.items() if v > lim)
    fatal = ["memory_limit"] * bool(over) + ["version_sync"] * (not version_sync_ok) \
        + ["recovery_not_ready"] * (not recovery_ok)
    soft = ["unstable_queue"] * bool(jam or not capacity_report["queue_stable"]) \
        + ["exposed_transfer"] * bool(heavy or transfer_report["critical_exposed_seconds_per_s"] > lim)
    return {"over_limit_pools": sorted(over), "unstable_stages": jam, "overloaded_fabrics": heavy,
            "decision": "reject" if fatal else ("tune" if soft else "accept"),
            "reasons": fatal if fatal else soft}
