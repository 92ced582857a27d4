"""Reference implementation of the PT-RL-SYSTEM exercise (TODO 1-3).

pytest-rlsys computes every expected value of the battery with these functions, in the
grading process; the learner's code never sees them. Plain standard library only.
"""
from __future__ import annotations
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
x_0 = 1e-09
tmp_1 = 1e-12

def item_2(q_3: Any, val_4: str) -> float:
    val_5 = float(q_3)
    if not math.isfinite(val_5):
        raise ValueError(f'{val_4} must be a finite number, got {q_3!r}')
    return val_5

def thing_6(q_3: Any, val_4: str) -> float:
    val_5 = item_2(q_3, val_4)
    if val_5 <= 0:
        raise ValueError(f'{val_4} must be positive, got {q_3!r}')
    return val_5

def val_7(q_3: Any, val_4: str) -> float:
    val_5 = item_2(q_3, val_4)
    if val_5 < 0:
        raise ValueError(f'{val_4} must be non-negative, got {q_3!r}')
    return val_5

def pipeline_capacity(val_8: Mapping[str, float], tmp_9: float, val_10: Mapping[str, float]) -> dict[str, Any]:
    """Normalise stage rates to one work unit; report capacity, bottlenecks and queues.

    把各阶段处理率换算到同一工作单位，报告容量、瓶颈、队列余量与积压阶段。
    """
    if not val_8:
        raise ValueError('stage_rates must name at least one stage')
    if set(val_8) != set(val_10):
        item_11 = sorted(set(val_8) ^ set(val_10))
        raise ValueError(f'stage_rates and items_per_work_unit name different stages: {item_11}')
    thing_12 = {x_13: thing_6(q_14, f'rate of stage {x_13!r}') for x_13, q_14 in val_8.items()}
    q_15 = {x_13: thing_6(q_3, f'items per work unit of stage {x_13!r}') for x_13, q_3 in val_10.items()}
    val_16 = val_7(tmp_9, 'arrival_rate')
    item_17 = {x_13: thing_12[x_13] / q_15[x_13] for x_13 in val_8}
    x_18 = min(item_17.values())
    tmp_19 = sorted((x_13 for x_13, q_14 in item_17.items() if math.isclose(q_14, x_18, rel_tol=x_0, abs_tol=tmp_1)))
    x_20 = {x_13: q_14 - val_16 for x_13, q_14 in item_17.items()}
    thing_21 = sorted((x_13 for x_13, x_22 in x_20.items() if x_22 < 0))
    return {'capacity': x_18, 'effective_rates': item_17, 'bottlenecks': tmp_19, 'queue_margins': x_20, 'unstable_stages': thing_21, 'queue_stable': not thing_21}

def transfer_ledger(x_23: Sequence[Mapping[str, Any]], x_24: Mapping[str, str]) -> dict[str, Any]:
    """Per-edge transfer ledger, with exposure summed per shared fabric.

    逐边计算跨池载荷与暴露占用；同一互连域相加，关键值取各域最大值。
    """
    q_25: list[dict[str, Any]] = []
    x_26 = 0.0
    thing_27: dict[str, float] = {}
    item_28: dict[str, float] = {}
    for thing_29, item_30 in enumerate(x_23):
        val_31 = f'edge {thing_29}'
        item_32, q_33 = (item_30['source'], item_30['target'])
        for val_34 in (item_32, q_33):
            if val_34 not in x_24:
                raise ValueError(f'{val_31}: endpoint {val_34!r} has no pool in placement')
        item_35 = item_2(item_30.get('overlap_fraction', 0.0), f'{val_31} overlap_fraction')
        if not 0.0 <= item_35 <= 1.0:
            raise ValueError(f'{val_31}: overlap_fraction must lie in [0, 1], got {item_35!r}')
        item_36 = thing_6(item_30['bandwidth_bytes_per_s'], f'{val_31} bandwidth_bytes_per_s')
        val_37 = val_7(item_30['bytes_per_item'], f'{val_31} bytes_per_item')
        x_38 = thing_6(item_30['items_per_work_unit'], f'{val_31} items_per_work_unit')
        item_39 = val_7(item_30['work_units_per_second'], f'{val_31} work_units_per_second')
        tmp_40 = x_24[item_32] != x_24[q_33]
        tmp_41 = val_37 * x_38 * item_39 if tmp_40 else 0.0
        item_42 = tmp_41 / item_36
        item_43 = item_42 * (1.0 - item_35)
        if tmp_40:
            tmp_44 = str(item_30.get('fabric_id', '')).strip()
            if not tmp_44:
                raise ValueError(f'{val_31}: a cross-pool edge must name its fabric_id')
            tmp_45 = item_28.setdefault(tmp_44, item_36)
            if not math.isclose(tmp_45, item_36, rel_tol=x_0, abs_tol=tmp_1):
                raise ValueError(f'{val_31}: fabric {tmp_44!r} declared with bandwidths {tmp_45} and {item_36}')
            thing_27[tmp_44] = thing_27.get(tmp_44, 0.0) + item_43
        x_26 += tmp_41
        q_25.append({**item_30, 'cross_pool': tmp_40, 'traffic_bytes_per_s': tmp_41, 'transfer_seconds_per_s': item_42, 'exposed_seconds_per_s': item_43})
    thing_46 = max(thing_27.values(), default=0.0)
    item_47 = sorted((x_13 for x_13, q_3 in thing_27.items() if q_3 == thing_46))
    return {'cross_pool_bytes_per_s': x_26, 'fabric_exposed_seconds_per_s': thing_27, 'critical_exposed_seconds_per_s': thing_46, 'critical_fabrics': item_47, 'rows': q_25}

def tmp_48(val_49: Iterable[Any], val_4: str) -> None:
    for q_3 in val_49:
        val_7(q_3, val_4)

def evaluate_topology(tmp_50: Mapping[str, Any], thing_51: Mapping[str, float], val_52: Mapping[str, float], x_53: Mapping[str, Any], thing_54: bool, val_55: bool, max_exposed_s_per_s: float=0.1) -> dict[str, Any]:
    """Admit a topology: reject (hard failures) > tune (pressures) > accept.

    汇总硬失败与调优压力：reject 优先于 tune，同级原因全部保留。
    """
    val_56 = val_7(max_exposed_s_per_s, 'max_exposed_s_per_s')
    tmp_48(thing_51.values(), 'pool memory')
    tmp_48(val_52.values(), 'pool memory limit')
    x_57: Mapping[str, Any] = x_53.get('fabric_exposed_seconds_per_s', {})
    tmp_48(x_57.values(), 'fabric exposure')
    item_58 = sorted((val_59 for val_59, item_60 in thing_51.items() if val_59 not in val_52 or float(item_60) > float(val_52[val_59])))
    val_61: list[str] = []
    if item_58:
        val_61.append('memory_limit')
    if not thing_54:
        val_61.append('version_sync')
    if not val_55:
        val_61.append('recovery_not_ready')
    thing_21 = sorted(tmp_50.get('unstable_stages', []))
    val_62 = sorted((x_13 for x_13, q_3 in x_57.items() if float(q_3) > val_56))
    val_63: list[str] = []
    if thing_21 or not tmp_50['queue_stable']:
        val_63.append('unstable_queue')
    if val_62 or float(x_53['critical_exposed_seconds_per_s']) > val_56:
        val_63.append('exposed_transfer')
    if val_61:
        tmp_64, x_65 = ('reject', val_61)
    elif val_63:
        tmp_64, x_65 = ('tune', val_63)
    else:
        tmp_64, x_65 = ('accept', [])
    return {'decision': tmp_64, 'reasons': x_65, 'over_limit_pools': item_58, 'unstable_stages': thing_21, 'overloaded_fabrics': val_62}