"""PT-RL-SYSTEM exercise: the system ledger (TODO 1-3).

Fill in the three functions, then check them with:

    pytest --rlsys-submission rlsys_ledger.py

Every rule the grader checks is written in the docstrings below; the hidden cases test
nothing else. Return plain dicts, lists, strs, numbers and bools. Use only the standard
library, and save the file as UTF-8 (no other encoding loads, even with a coding line).

How the words are read: result numbers are compared with a relative tolerance of 1e-9
(absolute 1e-12 near zero), so rounding a result changes it. Two rules use that same
tolerance, math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12): a bottleneck's rate
"equals" the capacity, and a fabric's bandwidths are "different" (1e12 and 1e12 + 1
are equal; 1.0 and 1.0 + 1e-8 are different, and so are values 1e-6 apart). Every other
comparison is exact, as Python's <, > and == are: a negative margin is any margin
below 0 (even -1e-15; -0.0 is not below 0, so it is not negative but zero), ints
are compared as ints (10**20 + 1 is more than 10**20), "more than its limit" and
"above max_exposed_s_per_s" are strict, and "at that maximum" means == (an exposure
1e-12 below the maximum is not at it; inputs whose sums round differently in another
edge order are not graded). Names are sorted as sorted() sorts them, by code point
('B' < 'a' < 'é'). "Blank" means made only of whitespace, all that str.strip() removes
(spaces, tabs, newlines, and Unicode spaces such as U+00A0 and U+3000). Results are
graded by type too: a list is a list (not a tuple or a generator), a number is an int
or a float (not a bool, a Fraction or a numpy number), queue_stable and cross_pool are
True or False (not 1 or 0). "never modified" means every argument is exactly as it was
after the call (converting 2 to 2.0 in place, or sorting a list in place, modifies it).

补全三个函数，然后用上面的命令检查。只使用 Python 标准库，文件以 UTF-8 保存（其他编码即使
写了 coding 声明也无法加载）。评分检查的每条规则都写在
下面的文档字符串里，隐藏用例不检查其他内容。返回普通的 dict、list、str、数字与 bool。

措辞的含义：结果中的数按 1e-9 的相对容差（接近零时为 1e-12 的绝对容差）比较，因此
对结果取整会改变结果。两条规则使用同一容差 math.isclose(a, b, rel_tol=1e-9,
abs_tol=1e-12)：瓶颈阶段的速率“等于”capacity，以及同一互连域的带宽“不同”（1e12 与
1e12 + 1 相等；1.0 与 1.0 + 1e-8 不同，相差 1e-6 的值也不同）。其余比较都是精确的，
与 Python 的 <、> 和 == 相同：余量低于 0 即为负（即使是 -1e-15；-0.0 不低于 0，
它不是负数而是零），int 按 int 比较（10**20 + 1 大于 10**20），“超过其上限”与
“高于 max_exposed_s_per_s”都是严格比较，“达到该最大值”指 ==（比最大值低 1e-12 的
暴露不算达到；换一种边的顺序求和会舍入出不同结果的输入不评分）。名称按 sorted()
的方式排序，即按码位（'B' < 'a' < 'é'）。“空白”指只含空白字符，即 str.strip() 会
去掉的全部字符（空格、制表符、换行，以及 U+00A0、U+3000 等 Unicode 空格）。结果也按
类型评分：list 必须是 list（不能是 tuple 或生成器），数必须是 int 或 float（不能是 bool、
Fraction 或 numpy 数），queue_stable 与 cross_pool 必须是 True 或 False（不能是 1 或 0）。
“不得修改任何参数”指调用之后每个参数都与调用前完全相同（原地把 2 换成 2.0，或原地排序
列表，都算修改）。
"""

from typing import Dict, List  # kept from the chapter's skeleton


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    """Normalise stage rates to one work unit and keep bottleneck and backlog evidence.

    Returns a dict with six keys. effective_rates maps each stage to its rate divided
    by its items per work unit. capacity is the smallest effective rate. bottlenecks
    lists every stage whose effective rate equals the capacity, sorted by name.
    queue_margins maps each stage to its effective rate minus the arrival rate.
    unstable_stages lists the stages with a negative margin, sorted by name; a margin of
    exactly 0 is stable. queue_stable is True exactly when no stage is unstable.

    Every number may be an int or a float, including values between 0 and 1; the
    arrival rate may be 0. Stage names are used exactly as given: 'rollout' and
    'rollout ' are two stages. The arguments are never modified, and the order of dict
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
    阶段名称按原样使用：'rollout' 与 'rollout ' 是两个阶段。
    不得修改任何参数；字典条目的顺序不影响结果。

    以下情况抛出 ValueError：stage_rates 与 items_per_work_unit 的阶段不一致，
    或没有任何阶段；某个速率或倍率为 NaN、无穷、零或负数；到达率为 NaN、无穷
    或负数。
    """
    # ==========================================
    # TODO 1: compute effective_rates, capacity, queue_margins, bottlenecks, unstable_stages.
    # TODO 1：计算 effective_rates、capacity、queue_margins、bottlenecks 与 unstable_stages。
    # 同一容量可能对应多个瓶颈；负余量阶段必须逐项保留。
    # ==========================================
    raise NotImplementedError("TODO 1：计算流水线容量与队列余量 / compute pipeline capacity")


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
    when there is none) and critical_fabrics lists every fabric at that maximum (==),
    sorted by name.

    Every number may be an int or a float; bytes_per_item and work_units_per_second
    may be 0, and a bandwidth may lie between 0 and 1. Pool and endpoint names are
    used exactly as given: pools 'A' and 'A ' are different pools (a fabric_id is only
    tested for blank; one with spaces around other characters is not graded). The
    arguments are never modified, and neither the order of the edges nor the order of
    placement's entries changes the totals.

    Raises ValueError when an endpoint has no pool in placement; when
    overlap_fraction is NaN or outside [0, 1]; when bandwidth_bytes_per_s or
    items_per_work_unit is NaN, infinite, zero or negative; when bytes_per_item or
    work_units_per_second is NaN, infinite or negative; when a cross-pool edge has no
    fabric_id, or an empty or blank one; when a cross-pool edge declares a bandwidth
    different from that of the first cross-pool edge of its fabric (even 1000 and
    1000.5).

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
    critical_fabrics 列出达到该最大值（==）的全部互连域，按名称排序。

    每个数都可能是 int 或 float；bytes_per_item 与 work_units_per_second 可以为 0，
    带宽可以在 0 与 1 之间。资源池与端点名称按原样使用：资源池 'A' 与 'A ' 是不同的
    资源池（fabric_id 只检查是否为空白；两侧带空格的 fabric_id 不评分）。
    不得修改任何参数；边的顺序与 placement 条目的顺序都不影响汇总结果。

    以下情况抛出 ValueError：某个端点在 placement 中没有资源池；overlap_fraction
    为 NaN 或不在 [0, 1] 内；bandwidth_bytes_per_s 或 items_per_work_unit 为 NaN、
    无穷、零或负数；bytes_per_item 或 work_units_per_second 为 NaN、无穷或负数；
    跨池边没有 fabric_id，或 fabric_id 为空或只含空白；某条跨池边声明的带宽
    与其互连域第一条跨池边的带宽不同（即使是 1000 与 1000.5）。
    """
    # ==========================================
    # TODO 2: same-pool edges carry zero load; cross-pool edges get traffic, transfer, exposed.
    # TODO 2：同池边载荷记零；跨池边计算 traffic、transfer 与 exposed。
    # 同一 fabric 的 exposed 相加，critical_fabrics 保留最大值对应的全部互连域。
    # ==========================================
    raise NotImplementedError("TODO 2：建立跨池传输账本 / build the transfer ledger")


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
    and every number may be an int or a float. Pool names are used exactly as given:
    a limit declared for 'gpu' is no limit for 'gpu '. The arguments are never modified, and
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
    int 或 float。资源池名称按原样使用：为 'gpu' 声明的上限不是 'gpu ' 的上限。
    不得修改任何参数；字典条目的顺序不影响结果。

    以下情况抛出 ValueError：某资源池显存、显存上限、互连域暴露或
    max_exposed_s_per_s 为 NaN、无穷或负数。
    """
    # ==========================================
    # TODO 3: collect hard_failures and tuning_pressures, then decide.
    # TODO 3：汇总 hard_failures 与 tuning_pressures，再决定 decision。
    # 报告同时保留超限资源池、积压阶段与过载互连域。
    # ==========================================
    raise NotImplementedError("TODO 3：执行系统拓扑准入 / evaluate the topology")
