"""PT-RL-SYSTEM exercise: the system ledger (TODO 1-3).

Fill in the three functions, then check them with:

    pytest --rlsys-submission rlsys_ledger.py

Every rule the grader checks is written in the docstrings below; the hidden cases test
nothing else. Return plain dicts, lists, strs, numbers and bools.

How the words are read: result numbers are compared with a relative tolerance of 1e-9,
so "equals" and "tied" mean equal (values 1e-6 apart are different, and rounding a
result changes it); "never modified" means every argument is exactly as it was after
the call (converting 2 to 2.0 in place, or sorting a list in place, modifies it).

补全三个函数，然后用上面的命令检查。只使用 Python 标准库。评分检查的每条规则都写在
下面的文档字符串里，隐藏用例不检查其他内容。返回普通的 dict、list、str、数字与 bool。

措辞的含义：结果中的数按 1e-9 的相对容差比较，因此“等于”“并列”指数值相等（相差
1e-6 的值不相等，对结果取整会改变结果）；“不得修改任何参数”指调用之后每个参数都与
调用前完全相同（原地把 2 换成 2.0，或原地排序列表，都算修改）。
"""

import math
import numbers
from typing import Dict, List  # kept from the chapter's skeleton


_TOLERANCE = 1e-9


def _as_number(value, label):
    """Return value unchanged if it is a real, non-bool number; raise otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError("%s must be a number, got %r" % (label, value))
    if math.isnan(value):
        raise ValueError("%s must not be NaN" % label)
    return value


def _check_strictly_positive(value, label):
    value = _as_number(value, label)
    if math.isinf(value):
        raise ValueError("%s must be finite" % label)
    if value <= 0:
        raise ValueError("%s must be > 0, got %r" % (label, value))
    return value


def _check_at_least_zero(value, label):
    value = _as_number(value, label)
    if math.isinf(value):
        raise ValueError("%s must be finite" % label)
    if value < 0:
        raise ValueError("%s must be >= 0, got %r" % (label, value))
    return value


def _check_mapping(value, label):
    if not isinstance(value, dict):
        raise ValueError("%s must be a dict" % label)
    return value


def _equal_within_tolerance(a, b):
    if a == b:
        return True
    return abs(a - b) <= _TOLERANCE * max(abs(a), abs(b))


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """Normalise stage rates to one work unit and keep bottleneck and backlog evidence.

    Returns a dict with six keys. effective_rates maps each stage to its rate divided
    by its items per work unit. capacity is the smallest effective rate. bottlenecks
    lists every stage whose effective rate equals the capacity, sorted by name.
    queue_margins maps each stage to its effective rate minus the arrival rate.
    unstable_stages lists the stages with a negative margin, sorted by name; a margin of
    exactly 0 is stable. queue_stable is True exactly when no stage is unstable.

    Every number may be an int or a float, including values between 0 and 1; the
    arrival rate may be 0. The arguments are never modified, and the order of dict
    entries does not change the result.

    Raises ValueError when stage_rates and items_per_work_unit name different stages,
    or no stage at all; when a rate or a multiplier is NaN, infinite, zero or negative;
    when the arrival rate is NaN, infinite or negative.

    把阶段速率归一到同一工作单位，并保留瓶颈与积压证据。

    返回含六个键的 dict。effective_rates：各阶段速率除以该阶段每工作单位的
    条目数。capacity 是最小的有效速率。bottlenecks 列出有效速率等于 capacity
    的全部阶段，按名称排序。queue_margins：各阶段有效速率减去到达率。
    unstable_stages 列出余量为负的阶段，按名称排序；余量恰好为 0 仍是稳定的。
    当且仅当没有积压阶段时 queue_stable 为 True。

    每个数都可能是 int 或 float，包括 0 与 1 之间的值；到达率可以为 0。
    不得修改任何参数；字典条目的顺序不影响结果。

    以下情况抛出 ValueError：stage_rates 与 items_per_work_unit 的阶段不一致，
    或没有任何阶段；某个速率或倍率为 NaN、无穷、零或负数；到达率为 NaN、无穷
    或负数。
    """
    _check_mapping(stage_rates, "stage_rates")
    _check_mapping(items_per_work_unit, "items_per_work_unit")
    if len(stage_rates) == 0:
        raise ValueError("stage_rates names no stage")
    rate_names = set(stage_rates.keys())
    multiplier_names = set(items_per_work_unit.keys())
    if rate_names != multiplier_names:
        only_rates = sorted(map(str, rate_names - multiplier_names))
        only_mults = sorted(map(str, multiplier_names - rate_names))
        raise ValueError(
            "stage mismatch: only in stage_rates=%s, only in items_per_work_unit=%s" % (only_rates, only_mults)
        )
    arrival = _check_at_least_zero(arrival_rate, "arrival_rate")

    effective_rates = {}
    for stage_name, raw_rate in stage_rates.items():
        rate = _check_strictly_positive(raw_rate, "rate of stage %r" % (stage_name,))
        multiplier = _check_strictly_positive(
            items_per_work_unit[stage_name], "items_per_work_unit of stage %r" % (stage_name,)
        )
        effective_rates[stage_name] = rate / multiplier

    assert len(effective_rates) == len(stage_rates)
    capacity = min(effective_rates.values())

    bottlenecks = sorted(
        stage_name for stage_name, value in effective_rates.items() if _equal_within_tolerance(value, capacity)
    )
    if not bottlenecks:  # cannot happen, the minimum is always attained
        raise RuntimeError("internal error: no bottleneck found")

    queue_margins = {}
    for stage_name, value in effective_rates.items():
        queue_margins[stage_name] = value - arrival

    unstable_stages = sorted(stage_name for stage_name, margin in queue_margins.items() if margin < 0)
    queue_stable = len(unstable_stages) == 0

    return {
        "effective_rates": effective_rates,
        "capacity": capacity,
        "bottlenecks": bottlenecks,
        "queue_margins": queue_margins,
        "unstable_stages": unstable_stages,
        "queue_stable": queue_stable,
    }


def transfer_ledger(edges, placement):
    """Build the per-edge ledger and sum exposure per shared fabric.

    Returns a dict with rows, cross_pool_bytes_per_s, fabric_exposed_seconds_per_s,
    critical_exposed_seconds_per_s and critical_fabrics. rows holds one dict per edge,
    in edge order: a copy of the edge's own fields plus cross_pool,
    traffic_bytes_per_s, transfer_seconds_per_s and exposed_seconds_per_s.

    A cross-pool edge (source and target placed in different pools) carries
    bytes_per_item * items_per_work_unit * work_units_per_second bytes/s; a same-pool
    edge carries zero traffic, transfer and exposure. transfer = traffic /
    bandwidth_bytes_per_s and exposed = transfer * (1 - overlap_fraction); an edge
    without overlap_fraction has overlap 0. cross_pool_bytes_per_s is the total
    traffic; fabric_exposed_seconds_per_s sums the exposure of the cross-pool edges of
    each fabric_id (a fabric named only by same-pool edges has no entry).
    critical_exposed_seconds_per_s is the largest fabric exposure (0.0
    when there is none) and critical_fabrics lists every fabric at that maximum, sorted
    by name.

    Every number may be an int or a float; bytes_per_item and work_units_per_second
    may be 0, and a bandwidth may lie between 0 and 1. The arguments are never
    modified, and neither the order of the edges nor the order of placement's entries
    changes the totals.

    Raises ValueError when an endpoint has no pool in placement; when
    overlap_fraction is NaN or outside [0, 1]; when bandwidth_bytes_per_s or
    items_per_work_unit is NaN, infinite, zero or negative; when bytes_per_item or
    work_units_per_second is NaN, infinite or negative; when a cross-pool edge has no
    fabric_id, or an empty or blank one; when two cross-pool edges of one fabric
    declare different bandwidths (even 1000 and 1000.5).

    建立逐边账本，并按共享互连域汇总暴露占用。

    返回含 rows、cross_pool_bytes_per_s、fabric_exposed_seconds_per_s、
    critical_exposed_seconds_per_s 与 critical_fabrics 的 dict。rows 按边的顺序
    每条边一项：该边自身字段的副本，再加上 cross_pool、traffic_bytes_per_s、
    transfer_seconds_per_s 与 exposed_seconds_per_s。

    跨池边（source 与 target 位于不同资源池）的流量为 bytes_per_item *
    items_per_work_unit * work_units_per_second；同池边的流量、传输与暴露均为零。
    transfer = traffic / bandwidth_bytes_per_s，exposed = transfer *
    (1 - overlap_fraction)；没有 overlap_fraction 的边重叠比例为 0。
    cross_pool_bytes_per_s 为总流量；fabric_exposed_seconds_per_s 按 fabric_id
    累加其跨池边的暴露（只被同池边引用的互连域没有条目）。
    critical_exposed_seconds_per_s 为最大的互连域暴露（没有时为 0.0），
    critical_fabrics 列出达到该最大值的全部互连域，按名称排序。

    每个数都可能是 int 或 float；bytes_per_item 与 work_units_per_second 可以为 0，
    带宽可以在 0 与 1 之间。不得修改任何参数；边的顺序与 placement 条目的顺序都
    不影响汇总结果。

    以下情况抛出 ValueError：某个端点在 placement 中没有资源池；overlap_fraction
    为 NaN 或不在 [0, 1] 内；bandwidth_bytes_per_s 或 items_per_work_unit 为 NaN、
    无穷、零或负数；bytes_per_item 或 work_units_per_second 为 NaN、无穷或负数；
    跨池边没有 fabric_id，或 fabric_id 为空或只含空白；同一互连域的两条跨池边
    声明了不同带宽（即使是 1000 与 1000.5）。
    """
    _check_mapping(placement, "placement")
    if not isinstance(edges, (list, tuple)):
        raise ValueError("edges must be a list of dicts")

    rows = []
    total_traffic = 0.0
    exposure_by_fabric = {}
    bandwidth_by_fabric = {}

    for position, edge in enumerate(edges):
        where = "edge #%d" % position
        _check_mapping(edge, where)
        for required in ("source", "target", "bytes_per_item", "items_per_work_unit",
                         "work_units_per_second", "bandwidth_bytes_per_s"):
            if required not in edge:
                raise ValueError("%s lacks the field %r" % (where, required))

        source = edge["source"]
        target = edge["target"]
        if source not in placement:
            raise ValueError("%s: source %r has no pool in placement" % (where, source))
        if target not in placement:
            raise ValueError("%s: target %r has no pool in placement" % (where, target))

        if "overlap_fraction" in edge:
            overlap = _as_number(edge["overlap_fraction"], where + ".overlap_fraction")
        else:
            overlap = 0.0
        if overlap < 0.0 or overlap > 1.0:
            raise ValueError("%s: overlap_fraction %r is outside [0, 1]" % (where, overlap))

        bandwidth = _check_strictly_positive(edge["bandwidth_bytes_per_s"], where + ".bandwidth_bytes_per_s")
        items = _check_strictly_positive(edge["items_per_work_unit"], where + ".items_per_work_unit")
        item_bytes = _check_at_least_zero(edge["bytes_per_item"], where + ".bytes_per_item")
        frequency = _check_at_least_zero(edge["work_units_per_second"], where + ".work_units_per_second")

        is_cross_pool = placement[source] != placement[target]
        if is_cross_pool:
            fabric = edge.get("fabric_id")
            if fabric is None:
                raise ValueError("%s crosses pools but has no fabric_id" % where)
            if isinstance(fabric, str) and fabric.strip() == "":
                raise ValueError("%s crosses pools but its fabric_id is empty or blank" % where)
            if fabric in bandwidth_by_fabric:
                if bandwidth_by_fabric[fabric] != bandwidth:
                    raise ValueError(
                        "fabric %r declares bandwidth %r and %r" % (fabric, bandwidth_by_fabric[fabric], bandwidth)
                    )
            else:
                bandwidth_by_fabric[fabric] = bandwidth

            traffic = item_bytes * items * frequency
            transfer = traffic / bandwidth
            exposed = transfer * (1.0 - overlap)
            exposure_by_fabric[fabric] = exposure_by_fabric.get(fabric, 0.0) + exposed
        else:
            traffic = 0.0
            transfer = 0.0
            exposed = 0.0

        total_traffic += traffic
        row = dict(edge)  # shallow copy: the caller's edge stays untouched
        row["cross_pool"] = is_cross_pool
        row["traffic_bytes_per_s"] = traffic
        row["transfer_seconds_per_s"] = transfer
        row["exposed_seconds_per_s"] = exposed
        rows.append(row)

    if exposure_by_fabric:
        critical_exposed = max(exposure_by_fabric.values())
        critical_fabrics = sorted(
            fabric for fabric, value in exposure_by_fabric.items()
            if _equal_within_tolerance(value, critical_exposed)
        )
    else:
        critical_exposed = 0.0
        critical_fabrics = []

    return {
        "rows": rows,
        "cross_pool_bytes_per_s": total_traffic,
        "fabric_exposed_seconds_per_s": exposure_by_fabric,
        "critical_exposed_seconds_per_s": critical_exposed,
        "critical_fabrics": critical_fabrics,
    }


def evaluate_topology(
    capacity_report,
    memory_by_pool,
    memory_limits,
    transfer_report,
    version_sync_ok,
    recovery_ok,
    max_exposed_s_per_s=0.1,
):
    """Return every triggered reason with priority reject > tune > accept.

    capacity_report is a result of pipeline_capacity, transfer_report one of
    transfer_ledger (its fabric_exposed_seconds_per_s and
    critical_exposed_seconds_per_s are read). Returns decision, reasons,
    over_limit_pools, unstable_stages and overloaded_fabrics.

    Hard failures: memory_limit (a pool uses more memory than its limit), version_sync
    (version_sync_ok is False), recovery_not_ready (recovery_ok is False). A pool
    without a declared limit counts as over its limit; memory exactly at the limit is
    within it. Tuning pressures: unstable_queue (the capacity report has unstable
    stages), exposed_transfer (a fabric's exposure is above max_exposed_s_per_s;
    exactly at it is not above). decision is reject when there is a hard failure, else
    tune when there is a pressure, else accept; reasons lists every hard failure in
    the order above, else every pressure in the order above, else nothing.
    over_limit_pools, unstable_stages and overloaded_fabrics are reported whatever the
    decision, each sorted by name.

    max_exposed_s_per_s defaults to 0.1; it, memory, limits and exposures may be 0,
    and every number may be an int or a float. The arguments are never modified, and
    the order of dict entries does not change the result.

    Raises ValueError when a pool's memory, a memory limit, a fabric exposure or
    max_exposed_s_per_s is NaN, infinite or negative.

    按 reject > tune > accept 的优先级返回全部触发原因。

    capacity_report 是 pipeline_capacity 的结果，transfer_report 是 transfer_ledger
    的结果（读取其 fabric_exposed_seconds_per_s 与 critical_exposed_seconds_per_s）。
    返回 decision、reasons、over_limit_pools、unstable_stages 与 overloaded_fabrics。

    硬失败：memory_limit（某资源池显存超过其上限）、version_sync（version_sync_ok
    为 False）、recovery_not_ready（recovery_ok 为 False）。未声明上限的资源池按
    超限处理；显存恰好等于上限不算超限。调优压力：unstable_queue（容量报告中有
    积压阶段）、exposed_transfer（某个互连域的暴露高于 max_exposed_s_per_s；恰好
    相等不算高于）。有硬失败时 decision 为 reject，否则有压力时为 tune，否则为
    accept；reasons 按上述顺序列出全部硬失败，否则按上述顺序列出全部压力，否则
    为空。无论 decision 为何，都报告 over_limit_pools、unstable_stages 与
    overloaded_fabrics，各自按名称排序。

    max_exposed_s_per_s 默认为 0.1；它、显存、上限与暴露都可以为 0，每个数都可能是
    int 或 float。不得修改任何参数；字典条目的顺序不影响结果。

    以下情况抛出 ValueError：某资源池显存、显存上限、互连域暴露或
    max_exposed_s_per_s 为 NaN、无穷或负数。
    """
    _check_mapping(capacity_report, "capacity_report")
    _check_mapping(memory_by_pool, "memory_by_pool")
    _check_mapping(memory_limits, "memory_limits")
    _check_mapping(transfer_report, "transfer_report")
    if "unstable_stages" not in capacity_report:
        raise ValueError("capacity_report lacks unstable_stages")
    if "fabric_exposed_seconds_per_s" not in transfer_report:
        raise ValueError("transfer_report lacks fabric_exposed_seconds_per_s")

    budget = _check_at_least_zero(max_exposed_s_per_s, "max_exposed_s_per_s")
    for pool, used in memory_by_pool.items():
        _check_at_least_zero(used, "memory of pool %r" % (pool,))
    for pool, limit in memory_limits.items():
        _check_at_least_zero(limit, "memory limit of pool %r" % (pool,))
    fabric_exposure = _check_mapping(transfer_report["fabric_exposed_seconds_per_s"],
                                     "fabric_exposed_seconds_per_s")
    for fabric, value in fabric_exposure.items():
        _check_at_least_zero(value, "exposure of fabric %r" % (fabric,))

    over_limit_pools = []
    for pool, used in memory_by_pool.items():
        if pool not in memory_limits:
            over_limit_pools.append(pool)  # undeclared limit counts as over
            continue
        if used > memory_limits[pool]:
            over_limit_pools.append(pool)
    over_limit_pools.sort()

    unstable_stages = sorted(capacity_report["unstable_stages"])

    overloaded_fabrics = sorted(fabric for fabric, value in fabric_exposure.items() if value > budget)

    hard_failures = []
    if over_limit_pools:
        hard_failures.append("memory_limit")
    if version_sync_ok is False or not version_sync_ok:
        hard_failures.append("version_sync")
    if recovery_ok is False or not recovery_ok:
        hard_failures.append("recovery_not_ready")

    tuning_pressures = []
    if unstable_stages:
        tuning_pressures.append("unstable_queue")
    if overloaded_fabrics:
        tuning_pressures.append("exposed_transfer")

    if hard_failures:
        decision, reasons = "reject", list(hard_failures)
    elif tuning_pressures:
        decision, reasons = "tune", list(tuning_pressures)
    else:
        decision, reasons = "accept", []

    assert decision in ("reject", "tune", "accept")
    return {
        "decision": decision,
        "reasons": reasons,
        "over_limit_pools": over_limit_pools,
        "unstable_stages": unstable_stages,
        "overloaded_fabrics": overloaded_fabrics,
    }
