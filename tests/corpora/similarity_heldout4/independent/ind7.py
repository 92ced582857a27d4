# -*- coding: utf-8 -*-
# 作业：后训练系统账本（TODO 1-3）
# 思路：先校验输入，再按统一工作单位换算，最后汇总成报告。

import math

# 容差：和题目说明保持一致
相对容差 = 1e-9
绝对容差 = 1e-12


def _是有限数(x):
    # NaN、正负无穷都不算有限数
    return math.isfinite(x)


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    # 第一步：阶段集合必须一致，而且不能为空
    阶段集合 = set(stage_rates)
    if not 阶段集合:
        raise ValueError("没有任何阶段，无法计算容量")
    if 阶段集合 != set(items_per_work_unit):
        raise ValueError("速率与倍率的阶段集合不一致")
    # 到达率可以为 0，但不能为负、NaN 或无穷
    if not _是有限数(arrival_rate) or arrival_rate < 0:
        raise ValueError("到达率必须是非负有限数")

    # 第二步：换算成每个工作单位的等价处理率 c_j = q_j / m_j
    等价速率 = {}
    for 阶段, 原始速率 in stage_rates.items():
        倍率 = items_per_work_unit[阶段]
        if not _是有限数(原始速率) or 原始速率 <= 0:
            raise ValueError(f"阶段 {阶段} 的速率必须是正的有限数")
        if not _是有限数(倍率) or 倍率 <= 0:
            raise ValueError(f"阶段 {阶段} 的倍率必须是正的有限数")
        等价速率[阶段] = 原始速率 / 倍率

    # 第三步：容量取最小值；并列瓶颈全部保留
    容量 = min(等价速率.values())
    瓶颈 = []
    for 阶段, 速率 in 等价速率.items():
        if math.isclose(速率, 容量, rel_tol=相对容差, abs_tol=绝对容差):
            瓶颈.append(阶段)

    # 第四步：队列余量 s_j = c_j - λ，负数表示队列持续增长
    余量 = {}
    积压阶段 = []
    for 阶段, 速率 in 等价速率.items():
        余量[阶段] = 速率 - arrival_rate
        if 余量[阶段] < 0:
            积压阶段.append(阶段)

    return {
        "effective_rates": 等价速率,
        "capacity": 容量,
        "bottlenecks": sorted(瓶颈),
        "queue_margins": 余量,
        "unstable_stages": sorted(积压阶段),
        "queue_stable": len(积压阶段) == 0,
    }


def _检查边(边):
    # 重叠比例缺省为 0，必须在 [0, 1] 内
    重叠 = 边.get("overlap_fraction", 0)
    if math.isnan(重叠) or 重叠 < 0 or 重叠 > 1:
        raise ValueError("重叠比例必须在 0 到 1 之间")
    # 带宽和每单位对象数：必须为正
    for 键 in ("bandwidth_bytes_per_s", "items_per_work_unit"):
        if not _是有限数(边[键]) or 边[键] <= 0:
            raise ValueError(f"{键} 必须是正的有限数")
    # 字节数和频率：可以为 0
    for 键 in ("bytes_per_item", "work_units_per_second"):
        if not _是有限数(边[键]) or 边[键] < 0:
            raise ValueError(f"{键} 必须是非负有限数")
    return 重叠


def transfer_ledger(edges, placement):
    逐边 = []
    总流量 = 0
    域暴露 = {}
    域带宽 = {}  # 每个互连域第一条跨池边的带宽

    for 边 in edges:
        源, 目标 = 边["source"], 边["target"]
        if 源 not in placement or 目标 not in placement:
            raise ValueError("边的端点没有分配资源池")
        重叠 = _检查边(边)
        跨池 = placement[源] != placement[目标]

        if 跨池:
            域 = 边.get("fabric_id")
            if not isinstance(域, str) or 域.strip() == "":
                raise ValueError("跨池边必须给出非空的 fabric_id")
            带宽 = 边["bandwidth_bytes_per_s"]
            if 域 in 域带宽:
                if not math.isclose(域带宽[域], 带宽, rel_tol=相对容差, abs_tol=绝对容差):
                    raise ValueError(f"互连域 {域} 的带宽口径不一致")
            else:
                域带宽[域] = 带宽
            # b_e = z_e * m_e * λ_e；u_e = b_e / B_e；x_e = u_e * (1 - o_e)
            流量 = 边["bytes_per_item"] * 边["items_per_work_unit"] * 边["work_units_per_second"]
            占用 = 流量 / 带宽
            暴露 = 占用 * (1 - 重叠)
            总流量 += 流量
            域暴露[域] = 域暴露.get(域, 0) + 暴露
        else:
            # 同池边不计传输
            流量 = 占用 = 暴露 = 0.0

        行 = dict(边)
        行["cross_pool"] = 跨池
        行["traffic_bytes_per_s"] = 流量
        行["transfer_seconds_per_s"] = 占用
        行["exposed_seconds_per_s"] = 暴露
        逐边.append(行)

    # 关键互连预算：各域聚合值的最大值
    关键暴露 = max(域暴露.values()) if 域暴露 else 0.0
    关键域 = sorted(域 for 域, 值 in 域暴露.items() if 值 == 关键暴露)
    return {
        "rows": 逐边,
        "cross_pool_bytes_per_s": 总流量,
        "fabric_exposed_seconds_per_s": 域暴露,
        "critical_exposed_seconds_per_s": 关键暴露,
        "critical_fabrics": 关键域,
    }


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    def 非负有限(值, 说明):
        if not _是有限数(值) or 值 < 0:
            raise ValueError(f"{说明} 必须是非负有限数")

    非负有限(max_exposed_s_per_s, "暴露阈值")
    for 池, 值 in memory_by_pool.items():
        非负有限(值, f"资源池 {池} 的显存")
    for 池, 值 in memory_limits.items():
        非负有限(值, f"资源池 {池} 的显存上限")
    域暴露 = transfer_report["fabric_exposed_seconds_per_s"]
    for 域, 值 in 域暴露.items():
        非负有限(值, f"互连域 {域} 的暴露占用")

    # 硬失败：显存超限（没有上限也算超限）、版本未确认、恢复未就绪
    超限池 = sorted(池 for 池, 值 in memory_by_pool.items()
                 if 池 not in memory_limits or 值 > memory_limits[池])
    积压阶段 = sorted(capacity_report["unstable_stages"])
    过载域 = sorted(域 for 域, 值 in 域暴露.items() if 值 > max_exposed_s_per_s)

    硬失败 = []
    if 超限池:
        硬失败.append("memory_limit")
    if not version_sync_ok:
        硬失败.append("version_sync")
    if not recovery_ok:
        硬失败.append("recovery_not_ready")

    # 调优压力：队列积压、传输暴露过高
    调优 = []
    if 积压阶段:
        调优.append("unstable_queue")
    if 过载域:
        调优.append("exposed_transfer")

    # 优先级 reject > tune > accept
    if 硬失败:
        结论, 原因 = "reject", 硬失败
    elif 调优:
        结论, 原因 = "tune", 调优
    else:
        结论, 原因 = "accept", []

    return {
        "decision": 结论,
        "reasons": 原因,
        "over_limit_pools": 超限池,
        "unstable_stages": 积压阶段,
        "overloaded_fabrics": 过载域,
    }
