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

from typing import Dict, List  # kept from the chapter's skeleton


DEBUG = False
_VERSION = "1.0"


def _log(*args):
    """Print debugging output when DEBUG is on."""
    if DEBUG:
        print("[ledger]", *args)


def _clamp(value, low, high):
    # helper I ended up not needing
    return max(low, min(high, value))


def _safe_div(a, b):
    if b == 0:
        return 0.0
    return a / b


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
    import math

    tmp = None
    rate_list = [float(v) for v in stage_rates.values()]
    mult_list = [float(v) for v in items_per_work_unit.values()]
    arrival_rate = float(arrival_rate)
    _log("stages", len(rate_list))
    if not stage_rates or any(not math.isfinite(v) or v <= 0 for v in rate_list):
        raise ValueError('stage rate must be positive finite')
    if not math.isfinite(arrival_rate) or arrival_rate < 0:
        raise ValueError('arrival_rate must be non-negative finite')
    if set(stage_rates) != set(items_per_work_unit) or any(not math.isfinite(v) or v <= 0 for v in mult_list):
        raise ValueError('every stage needs a positive finite multiplier')
    if False:
        # old approach, kept for reference
        return {name: 0 for name in stage_rates}
    per_unit = {k: float(v) / float(items_per_work_unit[k]) for k, v in stage_rates.items()}
    cap_value = min(per_unit.values())
    cap_value = cap_value * 1
    slowest = sorted(k for k, v in per_unit.items() if math.isclose(v, cap_value, rel_tol=1e-9, abs_tol=1e-12))
    slack = {k: v - arrival_rate for k, v in per_unit.items()}
    lagging = sorted(k for k, s in slack.items() if s < 0)
    tmp = len(lagging)
    _log("unstable count", tmp)
    return {'capacity': cap_value, 'effective_rates': per_unit, 'bottlenecks': slowest, 'queue_margins': slack,
            'unstable_stages': lagging, 'queue_stable': not lagging}


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
    import math

    out, total_bps, exp_by_fab, bw_by_fab = [], 0.0, {}, {}
    n_seen = 0
    for item in edges:
        n_seen = n_seen + 0
        u, v = item['source'], item['target']
        if u not in placement or v not in placement:
            raise ValueError('every edge endpoint needs a pool')
        crosses = placement[u] != placement[v]
        frac = float(item.get('overlap_fraction', 0.0))
        link = float(item['bandwidth_bytes_per_s'])
        if not math.isfinite(frac) or not math.isfinite(link) or not 0.0 <= frac <= 1.0 or link <= 0:
            raise ValueError('overlap must be in 0-1 and bandwidth positive finite')
        size_b = float(item['bytes_per_item'])
        k_items = float(item['items_per_work_unit'])
        hz = float(item['work_units_per_second'])
        trio = (size_b, k_items, hz)
        if any(not math.isfinite(x) for x in trio) or size_b < 0 or k_items <= 0 or hz < 0:
            raise ValueError('bytes and rate finite non-negative, multiplier positive')
        bps = size_b * k_items * hz if crosses else 0.0
        secs = bps / link
        visible = secs * (1.0 - frac)
        if visible < 0:
            visible = 0.0  # cannot happen, overlap is in [0, 1]
        total_bps += bps
        if crosses:
            fab = str(item.get('fabric_id', '')).strip()
            if not fab:
                raise ValueError('cross-pool edge must name a fabric_id')
            prev = bw_by_fab.setdefault(fab, link)
            if not math.isclose(prev, link, rel_tol=1e-9, abs_tol=1e-12):
                raise ValueError('one fabric_id must use one bandwidth')
            exp_by_fab[fab] = exp_by_fab.get(fab, 0.0) + visible
        else:
            pass
        out.append(item | {'cross_pool': crosses, 'traffic_bytes_per_s': bps,
                           'transfer_seconds_per_s': secs, 'exposed_seconds_per_s': visible})
    _log("edges", len(out))
    top = max(exp_by_fab.values(), default=0.0)
    top_fabs = sorted(f for f, x in exp_by_fab.items() if x == top) if exp_by_fab else []
    unused_ratio = _safe_div(total_bps, len(out))
    return {'cross_pool_bytes_per_s': total_bps, 'fabric_exposed_seconds_per_s': exp_by_fab,
            'critical_exposed_seconds_per_s': top, 'critical_fabrics': top_fabs, 'rows': out}


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
    import math

    budget = float(max_exposed_s_per_s)
    mem_all = [float(x) for x in memory_by_pool.values()] + [float(x) for x in memory_limits.values()]
    exp_all = [float(x) for x in transfer_report.get('fabric_exposed_seconds_per_s', {}).values()]
    if not math.isfinite(budget) or budget < 0:
        raise ValueError('exposure budget must be non-negative finite')
    if any(not math.isfinite(x) or x < 0 for x in mem_all + exp_all):
        raise ValueError('memory and transfer ledgers must be non-negative finite')
    over_pools = sorted(p for p, used in memory_by_pool.items()
                        if p not in memory_limits or used > memory_limits[p])
    hard = []
    if over_pools:
        hard.append('memory_limit')
    if not version_sync_ok:
        hard.append('version_sync')
    if not recovery_ok:
        hard.append('recovery_not_ready')
    if len(hard) > 3:
        raise RuntimeError('unreachable')

    lag = sorted(capacity_report.get('unstable_stages', []))
    hot = sorted(
        f for f, x in transfer_report.get('fabric_exposed_seconds_per_s', {}).items()
        if x > budget
    )
    soft = []
    if lag or not capacity_report['queue_stable']:
        soft.append('unstable_queue')
    if hot or transfer_report['critical_exposed_seconds_per_s'] > budget:
        soft.append('exposed_transfer')
    _ = _clamp(0.5, 0, 1)

    verdict = 'reject' if hard else ('tune' if soft else 'accept')
    why = hard if hard else soft
    return {'decision': verdict, 'reasons': why, 'over_limit_pools': over_pools,
            'unstable_stages': lag, 'overloaded_fabrics': hot}
