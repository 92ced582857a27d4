# 系统账本练习 —— 我自己的实现
import math
from typing import Dict, List


def _bad(x):
    # NaN 或无穷
    return isinstance(x, float) and (math.isnan(x) or math.isinf(x))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """把阶段速率归一到同一工作单位，并保留瓶颈与积压证据。"""
    if len(stage_rates) == 0:
        raise ValueError("至少需要一个阶段")
    if set(stage_rates.keys()) != set(items_per_work_unit.keys()):
        raise ValueError("速率表和倍率表的阶段对不上")
    if _bad(arrival_rate) or arrival_rate < 0:
        raise ValueError("到达率必须是非负有限数")

    effective = {}
    for name in stage_rates:
        q = stage_rates[name]
        m = items_per_work_unit[name]
        if _bad(q) or q <= 0:
            raise ValueError("阶段 %s 的速率不合法: %r" % (name, q))
        if _bad(m) or m <= 0:
            raise ValueError("阶段 %s 的倍率不合法: %r" % (name, m))
        effective[name] = q / m

    cap = min(effective.values())
    bottlenecks = []
    margins = {}
    unstable = []
    for name, c in effective.items():
        if math.isclose(c, cap, rel_tol=1e-9, abs_tol=1e-12):
            bottlenecks.append(name)
        s = c - arrival_rate
        margins[name] = s
        if s < 0:
            unstable.append(name)
    bottlenecks.sort()
    unstable.sort()

    return {
        "effective_rates": effective,
        "capacity": cap,
        "bottlenecks": bottlenecks,
        "queue_margins": margins,
        "unstable_stages": unstable,
        "queue_stable": len(unstable) == 0,
    }


def transfer_ledger(edges, placement):
    """建立逐边账本，并按共享互连域汇总暴露占用。"""
    rows = []
    total = 0.0
    per_fabric = {}
    fabric_bw = {}
    for e in edges:
        src, dst = e["source"], e["target"]
        if src not in placement:
            raise ValueError("端点 %s 没有分配资源池" % src)
        if dst not in placement:
            raise ValueError("端点 %s 没有分配资源池" % dst)

        o = e.get("overlap_fraction", 0.0)
        if _bad(o) or o < 0 or o > 1:
            raise ValueError("重叠比例必须在 0 到 1 之间")
        bw = e["bandwidth_bytes_per_s"]
        if _bad(bw) or bw <= 0:
            raise ValueError("带宽必须为正")
        m = e["items_per_work_unit"]
        if _bad(m) or m <= 0:
            raise ValueError("每工作单位条目数必须为正")
        z = e["bytes_per_item"]
        if _bad(z) or z < 0:
            raise ValueError("字节数不能为负")
        lam = e["work_units_per_second"]
        if _bad(lam) or lam < 0:
            raise ValueError("工作单位频率不能为负")

        row = dict(e)
        cross = placement[src] != placement[dst]
        if cross:
            fid = e.get("fabric_id")
            if fid is None or fid.strip() == "":
                raise ValueError("跨池边必须写明 fabric_id")
            if fid in fabric_bw:
                if not math.isclose(fabric_bw[fid], bw, rel_tol=1e-9, abs_tol=1e-12):
                    raise ValueError("互连域 %s 的带宽前后不一致" % fid)
            else:
                fabric_bw[fid] = bw
            b = z * m * lam
            u = b / bw
            x = u * (1 - o)
            per_fabric[fid] = per_fabric.get(fid, 0.0) + x
            total += b
        else:
            b = u = x = 0.0
        row["cross_pool"] = cross
        row["traffic_bytes_per_s"] = b
        row["transfer_seconds_per_s"] = u
        row["exposed_seconds_per_s"] = x
        rows.append(row)

    if per_fabric:
        crit = max(per_fabric.values())
    else:
        crit = 0.0
    crit_list = sorted([f for f in per_fabric if per_fabric[f] == crit])

    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total,
        "fabric_exposed_seconds_per_s": per_fabric,
        "critical_exposed_seconds_per_s": crit,
        "critical_fabrics": crit_list,
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    """按 reject > tune > accept 的优先级返回全部触发原因。"""
    if _bad(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError("暴露阈值不合法")
    for p, v in memory_by_pool.items():
        if _bad(v) or v < 0:
            raise ValueError("资源池 %s 的显存数值不合法" % p)
    for p, v in memory_limits.items():
        if _bad(v) or v < 0:
            raise ValueError("资源池 %s 的显存上限不合法" % p)
    fabrics = transfer_report["fabric_exposed_seconds_per_s"]
    for f, v in fabrics.items():
        if _bad(v) or v < 0:
            raise ValueError("互连域 %s 的暴露值不合法" % f)

    over = []
    for p, v in memory_by_pool.items():
        if p not in memory_limits or v > memory_limits[p]:
            over.append(p)
    over.sort()
    unstable = sorted(capacity_report["unstable_stages"])
    overloaded = sorted(f for f, v in fabrics.items() if v > max_exposed_s_per_s)

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
    if overloaded:
        soft.append("exposed_transfer")

    if hard:
        decision, reasons = "reject", hard
    elif soft:
        decision, reasons = "tune", soft
    else:
        decision, reasons = "accept", []
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over,
        "unstable_stages": unstable,
        "overloaded_fabrics": overloaded,
    }
