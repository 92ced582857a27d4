# rlsys_ledger 作业 —— 自己整理的版本
import math
from typing import Dict, List

EPS = dict(rel_tol=1e-9, abs_tol=1e-12)


def _fin(x):
    return math.isfinite(x)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """算每个阶段的等价处理率 c = q / m，容量取最小。"""
    lam = float(arrival_rate)
    if not (_fin(lam) and lam >= 0):
        raise ValueError(f"到达率不合法: {arrival_rate!r}")
    if not stage_rates or set(stage_rates) != set(items_per_work_unit):
        raise ValueError("速率表和倍率表的阶段对不上（或者为空）")
    c: Dict[str, float] = {}
    for stage in stage_rates:
        q = float(stage_rates[stage])
        m = float(items_per_work_unit[stage])
        if not (_fin(q) and q > 0):
            raise ValueError(f"{stage} 的处理率不是正有限数")
        if not (_fin(m) and m > 0):
            raise ValueError(f"{stage} 的倍率不是正有限数")
        c[stage] = q / m
    c_min = min(c.values())
    s = {k: v - lam for k, v in c.items()}
    growing: List[str] = []
    for k in s:
        if s[k] < 0:
            growing.append(k)
    growing.sort()
    return {
        "effective_rates": c,
        "queue_margins": s,
        "capacity": c_min,
        "bottlenecks": sorted([k for k in c if math.isclose(c[k], c_min, **EPS)]),
        "queue_stable": not growing,
        "unstable_stages": growing,
    }


def _edge_numbers(e):
    ov = float(e.get("overlap_fraction", 0.0))
    B = float(e["bandwidth_bytes_per_s"])
    z = float(e["bytes_per_item"])
    n = float(e["items_per_work_unit"])
    lam = float(e["work_units_per_second"])
    if not _fin(ov) or ov < 0.0 or ov > 1.0:
        raise ValueError("overlap_fraction 不在 [0,1] 里")
    if not _fin(B) or B <= 0 or not _fin(n) or n <= 0:
        raise ValueError("带宽/每单位对象数 必须 > 0 且有限")
    if not _fin(z) or z < 0 or not _fin(lam) or lam < 0:
        raise ValueError("字节数/频率 必须 >= 0 且有限")
    return ov, B, z, n, lam


def transfer_ledger(edges, placement):
    out = []
    bytes_sum = 0.0
    X: Dict[str, float] = {}
    B_first: Dict[str, float] = {}
    for e in edges:
        if e["source"] not in placement:
            raise ValueError(f"source {e['source']} 没有资源池")
        if e["target"] not in placement:
            raise ValueError(f"target {e['target']} 没有资源池")
        cross = placement[e["source"]] != placement[e["target"]]
        ov, B, z, n, lam = _edge_numbers(e)
        b = z * n * lam if cross else 0.0
        u = b / B
        x = u * (1.0 - ov)
        if cross:
            fab = str(e.get("fabric_id", "")).strip()
            if fab == "":
                raise ValueError("跨池的边一定要写 fabric_id")
            if fab in B_first and not math.isclose(B_first[fab], B, **EPS):
                raise ValueError(f"互连域 {fab} 前后带宽不一样")
            B_first.setdefault(fab, B)
            X[fab] = X.get(fab, 0.0) + x
        bytes_sum += b
        row = {**e}
        row["cross_pool"] = cross
        row["traffic_bytes_per_s"] = b
        row["transfer_seconds_per_s"] = u
        row["exposed_seconds_per_s"] = x
        out.append(row)
    X_crit = max(X.values()) if X else 0.0
    crit = []
    for k, v in X.items():
        if v == X_crit:
            crit.append(k)
    return {
        "rows": out,
        "fabric_exposed_seconds_per_s": X,
        "cross_pool_bytes_per_s": bytes_sum,
        "critical_fabrics": sorted(crit),
        "critical_exposed_seconds_per_s": X_crit,
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    th = float(max_exposed_s_per_s)
    fab = transfer_report.get("fabric_exposed_seconds_per_s", {})
    for name, table in (("显存", memory_by_pool), ("显存上限", memory_limits), ("暴露占用", fab)):
        for k, v in table.items():
            v = float(v)
            if not _fin(v) or v < 0:
                raise ValueError(f"{name}[{k}] 不是非负有限数")
    if not _fin(th) or th < 0:
        raise ValueError("暴露阈值不是非负有限数")

    stages = sorted(capacity_report.get("unstable_stages", []))
    hot = sorted([k for k, v in fab.items() if v > th])
    pools = sorted([p for p, used in memory_by_pool.items()
                    if p not in memory_limits or used > memory_limits[p]])

    tune = []
    if stages or not capacity_report["queue_stable"]:
        tune.append("unstable_queue")
    if hot or transfer_report["critical_exposed_seconds_per_s"] > th:
        tune.append("exposed_transfer")
    hard = []
    if pools:
        hard.append("memory_limit")
    if not version_sync_ok:
        hard.append("version_sync")
    if not recovery_ok:
        hard.append("recovery_not_ready")

    if len(hard) > 0:
        return {"decision": "reject", "reasons": hard, "over_limit_pools": pools,
                "unstable_stages": stages, "overloaded_fabrics": hot}
    return {"decision": "tune" if tune else "accept", "reasons": tune, "over_limit_pools": pools,
            "unstable_stages": stages, "overloaded_fabrics": hot}
