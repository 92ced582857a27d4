"""PT-RL-SYSTEM exercise: the system ledger (TODO 1-3).

Fill in the three functions, then check them with:

    pytest --rlsys-submission rlsys_ledger.py

补全三个函数，然后用上面的命令检查。只使用 Python 标准库。
"""

from typing import Dict, List  # kept from the chapter's skeleton


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """Normalise stage rates to one work unit and keep bottleneck and backlog evidence.

    把阶段速率归一到同一工作单位，并保留瓶颈与积压证据。

    Returns a dict with ``capacity``, ``effective_rates`` (rate / items per work unit),
    ``bottlenecks`` (every stage tied at the minimum, sorted), ``queue_margins``
    (effective rate - arrival rate), ``unstable_stages`` (negative margin, sorted) and
    ``queue_stable``. Raises ValueError on mismatched stage sets, non-finite or
    non-positive rates or multipliers, and a negative or non-finite arrival rate.
    """
    # ==========================================
    # TODO 1: compute effective_rates, capacity, queue_margins, bottlenecks, unstable_stages.
    # TODO 1：计算 effective_rates、capacity、queue_margins、bottlenecks 与 unstable_stages。
    # 同一容量可能对应多个瓶颈；负余量阶段必须逐项保留。
    # ==========================================
    raise NotImplementedError("TODO 1：计算流水线容量与队列余量 / compute pipeline capacity")


def transfer_ledger(edges, placement):
    """Build the per-edge ledger and sum exposure per shared fabric.

    建立逐边账本，并按共享互连域汇总暴露占用。

    Returns ``rows`` (each edge plus ``cross_pool``, ``traffic_bytes_per_s``,
    ``transfer_seconds_per_s``, ``exposed_seconds_per_s``), ``cross_pool_bytes_per_s``,
    ``fabric_exposed_seconds_per_s``, ``critical_exposed_seconds_per_s`` and
    ``critical_fabrics`` (all fabrics tied at the maximum, sorted). Same-pool edges carry
    zero traffic. Raises ValueError on an endpoint without a pool, an overlap outside
    [0, 1], a non-positive bandwidth, a cross-pool edge without ``fabric_id`` and one
    fabric declared with two bandwidths.
    """
    # ==========================================
    # TODO 2: same-pool edges carry zero load; cross-pool edges get traffic, transfer, exposed.
    # TODO 2：同池边载荷记零；跨池边计算 traffic、transfer 与 exposed。
    # 同一 fabric 的 exposed 相加，critical_fabrics 保留最大值对应的全部互连域。
    # ==========================================
    raise NotImplementedError("TODO 2：建立跨池传输账本 / build the transfer ledger")


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, transfer_report,
                      version_sync_ok, recovery_ok, max_exposed_s_per_s=0.1):
    """Return every triggered reason with priority reject > tune > accept.

    按 reject > tune > accept 的优先级返回全部触发原因。

    Returns ``decision``, ``reasons`` (hard failures in the order memory_limit,
    version_sync, recovery_not_ready; otherwise tuning pressures in the order
    unstable_queue, exposed_transfer), ``over_limit_pools``, ``unstable_stages`` and
    ``overloaded_fabrics``. Raises ValueError on non-finite or negative ledger values.
    """
    # ==========================================
    # TODO 3: collect hard_failures and tuning_pressures, then decide.
    # TODO 3：汇总 hard_failures 与 tuning_pressures，再决定 decision。
    # 报告同时保留超限资源池、积压阶段与过载互连域。
    # ==========================================
    raise NotImplementedError("TODO 3：执行系统拓扑准入 / evaluate the topology")
