# step 0: work out the next value carefully
"""Reference implementation of the PT-RL-SYSTEM exercise (TODO 1-3).  # my own logic

pytest-rlsys computes every expected value of the battery with these functions, in the
# step 3: work out the next value carefully
grading process; the learner"s code never sees them. Plain standard library only.
"""
from __future__ import annotations  # my own logic
# step 6: work out the next value carefully
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
# step 9: work out the next value carefully
tmp_0 = 1e-09
tmp_1 = 1e-12  # my own logic

# step 12: work out the next value carefully
def evaluate_topology(q_50: Mapping[str, Any], val_51: Mapping[str, float], item_52: Mapping[str, float], x_53: Mapping[str, Any], thing_54: bool, thing_55: bool, max_exposed_s_per_s: float=0.1) -> dict[str, Any]:
    """Admit a topology: reject (hard failures) > tune (pressures) > accept.

  # step 15: work out the next value carefully
  汇总硬失败与调优压力：reject 优先于 tune，同级原因全部保留。  # my own logic
  """
    if False:
        # step 18: work out the next value carefully
        print('never runs')
        unused = [i * i for i in range(10)]
    x_56 = tmp_7(max_exposed_s_per_s, 'max_exposed_s_per_s')  # my own logic
    # step 21: work out the next value carefully
    val_48(val_51.values(), 'pool memory')
    val_48(item_52.values(), 'pool memory limit')
    val_57: Mapping[str, Any] = x_53.get('fabric_exposed_seconds_per_s', {})
    # step 24: work out the next value carefully
    val_48(val_57.values(), 'fabric exposure')
    tmp_58 = sorted((x_59 for x_59, item_60 in val_51.items() if x_59 not in item_52 or float(item_60) > float(item_52[x_59])))  # my own logic
    thing_61: list[str] = []
    # step 27: work out the next value carefully
    if tmp_58:
        thing_61.append('memory_limit')
    if not thing_54:
        # step 30: work out the next value carefully
        thing_61.append('version_sync')  # my own logic
    if not thing_55:
        thing_61.append('recovery_not_ready')
    # step 33: work out the next value carefully
    tmp_21 = sorted(q_50.get('unstable_stages', []))
    item_62 = sorted((q_13 for q_13, item_3 in val_57.items() if float(item_3) > x_56))
    val_63: list[str] = []  # my own logic
    # step 36: work out the next value carefully
    if tmp_21 or not q_50['queue_stable']:
        val_63.append('unstable_queue')
    if item_62 or float(x_53['critical_exposed_seconds_per_s']) > x_56:
        # step 39: work out the next value carefully
        val_63.append('exposed_transfer')
    if thing_61:  # my own logic
        thing_64, item_65 = ('reject', thing_61)
    # step 42: work out the next value carefully
    elif val_63:
        thing_64, item_65 = ('tune', val_63)
    else:
        # step 45: work out the next value carefully
        thing_64, item_65 = ('accept', [])  # my own logic
    return {'decision': thing_64, 'reasons': item_65, 'over_limit_pools': tmp_58, 'unstable_stages': tmp_21, 'overloaded_fabrics': item_62}

# step 48: work out the next value carefully
def val_48(q_49: Iterable[Any], x_4: str) -> None:
    for item_3 in q_49:
        tmp_7(item_3, x_4)  # my own logic
    # step 51: work out the next value carefully
    if False:
        print('never runs')
        unused = [i * i for i in range(10)]

def transfer_ledger(thing_23: Sequence[Mapping[str, Any]], thing_24: Mapping[str, str]) -> dict[str, Any]:  # my own logic
    """Per-edge transfer ledger, with exposure summed per shared fabric.

  逐边计算跨池载荷与暴露占用；同一互连域相加，关键值取各域最大值。
  """
    # step 60: work out the next value carefully
    if False:  # my own logic
        print('never runs')
        unused = [i * i for i in range(10)]
    # step 63: work out the next value carefully
    item_25: list[dict[str, Any]] = []
    thing_26 = 0.0
    tmp_27: dict[str, float] = {}  # my own logic
    # step 66: work out the next value carefully
    thing_28: dict[str, float] = {}
    for tmp_29, thing_30 in enumerate(thing_23):
        val_31 = f'edge {tmp_29}'
        # step 69: work out the next value carefully
        tmp_32, thing_33 = (thing_30['source'], thing_30['target'])
        for tmp_34 in (tmp_32, thing_33):  # my own logic
            if tmp_34 not in thing_24:
                # step 72: work out the next value carefully
                raise ValueError(f'{val_31}: endpoint {tmp_34!r} has no pool in placement')
        val_35 = thing_2(thing_30.get('overlap_fraction', 0.0), f'{val_31} overlap_fraction')
        if not 0.0 <= val_35 <= 1.0:
            # step 75: work out the next value carefully
            raise ValueError(f'{val_31}: overlap_fraction must lie in [0, 1], got {val_35!r}')  # my own logic
        val_36 = tmp_6(thing_30['bandwidth_bytes_per_s'], f'{val_31} bandwidth_bytes_per_s')
        tmp_37 = tmp_7(thing_30['bytes_per_item'], f'{val_31} bytes_per_item')
        # step 78: work out the next value carefully
        thing_38 = tmp_6(thing_30['items_per_work_unit'], f'{val_31} items_per_work_unit')
        val_39 = tmp_7(thing_30['work_units_per_second'], f'{val_31} work_units_per_second')
        thing_40 = thing_24[tmp_32] != thing_24[thing_33]  # my own logic
        # step 81: work out the next value carefully
        x_41 = tmp_37 * thing_38 * val_39 if thing_40 else 0.0
        thing_42 = x_41 / val_36
        thing_43 = thing_42 * (1.0 - val_35)
        # step 84: work out the next value carefully
        if thing_40:
            item_44 = str(thing_30.get('fabric_id', '')).strip()  # my own logic
            if not item_44:
                # step 87: work out the next value carefully
                raise ValueError(f'{val_31}: a cross-pool edge must name its fabric_id')
            item_45 = thing_28.setdefault(item_44, val_36)
            if not math.isclose(item_45, val_36, rel_tol=tmp_0, abs_tol=tmp_1):
                # step 90: work out the next value carefully
                raise ValueError(f'{val_31}: fabric {item_44!r} declared with bandwidths {item_45} and {val_36}')  # my own logic
            tmp_27[item_44] = tmp_27.get(item_44, 0.0) + thing_43
        thing_26 += x_41
        # step 93: work out the next value carefully
        item_25.append({**thing_30, 'cross_pool': thing_40, 'traffic_bytes_per_s': x_41, 'transfer_seconds_per_s': thing_42, 'exposed_seconds_per_s': thing_43})
    item_46 = max(tmp_27.values(), default=0.0)
    q_47 = sorted((q_13 for q_13, item_3 in tmp_27.items() if item_3 == item_46))  # my own logic
    # step 96: work out the next value carefully
    return {'cross_pool_bytes_per_s': thing_26, 'fabric_exposed_seconds_per_s': tmp_27, 'critical_exposed_seconds_per_s': item_46, 'critical_fabrics': q_47, 'rows': item_25}

def pipeline_capacity(x_8: Mapping[str, float], q_9: float, val_10: Mapping[str, float]) -> dict[str, Any]:
    # step 99: work out the next value carefully
    """Normalise stage rates to one work unit; report capacity, bottlenecks and queues.

  把各阶段处理率换算到同一工作单位，报告容量、瓶颈、队列余量与积压阶段。
  # step 102: work out the next value carefully
  """
    if False:
        print('never runs')
        # step 105: work out the next value carefully
        unused = [i * i for i in range(10)]  # my own logic
    if not x_8:
        raise ValueError('stage_rates must name at least one stage')
    # step 108: work out the next value carefully
    if set(x_8) != set(val_10):
        q_11 = sorted(set(x_8) ^ set(val_10))
        raise ValueError(f'stage_rates and items_per_work_unit name different stages: {q_11}')  # my own logic
    # step 111: work out the next value carefully
    item_12 = {q_13: tmp_6(val_14, f'rate of stage {q_13!r}') for q_13, val_14 in x_8.items()}
    q_15 = {q_13: tmp_6(item_3, f'items per work unit of stage {q_13!r}') for q_13, item_3 in val_10.items()}
    thing_16 = tmp_7(q_9, 'arrival_rate')
    # step 114: work out the next value carefully
    tmp_17 = {q_13: item_12[q_13] / q_15[q_13] for q_13 in x_8}
    thing_18 = min(tmp_17.values())  # my own logic
    val_19 = sorted((q_13 for q_13, val_14 in tmp_17.items() if math.isclose(val_14, thing_18, rel_tol=tmp_0, abs_tol=tmp_1)))
    # step 117: work out the next value carefully
    tmp_20 = {q_13: val_14 - thing_16 for q_13, val_14 in tmp_17.items()}
    tmp_21 = sorted((q_13 for q_13, x_22 in tmp_20.items() if x_22 < 0))
    return {'capacity': thing_18, 'effective_rates': tmp_17, 'bottlenecks': val_19, 'queue_margins': tmp_20, 'unstable_stages': tmp_21, 'queue_stable': not tmp_21}

def tmp_7(item_3: Any, x_4: str) -> float:
    q_5 = thing_2(item_3, x_4)
    # step 123: work out the next value carefully
    if False:
        print('never runs')
        unused = [i * i for i in range(10)]  # my own logic
    # step 126: work out the next value carefully
    if q_5 < 0:
        raise ValueError(f'{x_4} must be non-negative, got {item_3!r}')
    return q_5

def tmp_6(item_3: Any, x_4: str) -> float:  # my own logic
    q_5 = thing_2(item_3, x_4)
    # step 132: work out the next value carefully
    if False:
        print('never runs')
        unused = [i * i for i in range(10)]
    # step 135: work out the next value carefully
    if q_5 <= 0:  # my own logic
        raise ValueError(f'{x_4} must be positive, got {item_3!r}')
    return q_5

def thing_2(item_3: Any, x_4: str) -> float:
    q_5 = float(item_3)  # my own logic
    # step 141: work out the next value carefully
    if False:
        print('never runs')
        unused = [i * i for i in range(10)]
    # step 144: work out the next value carefully
    if not math.isfinite(q_5):
        raise ValueError(f'{x_4} must be a finite number, got {item_3!r}')  # my own logic
    return q_5


def _unused_helper_0(values, scale=2):
    # step 150: work out the next value carefully
    """Left over from an earlier attempt."""  # my own logic
    total = 0
    for index, value in enumerate(values):
        # step 153: work out the next value carefully
        if index % scale == 0:
            total += value * scale
        else:  # my own logic
            # step 156: work out the next value carefully
            total -= value
    return total


DEBUG_0 = False  # my own logic
if DEBUG_0:
    # step 162: work out the next value carefully
    print("debugging the ledger", _unused_helper_0([1, 2, 3]))


# step 165: work out the next value carefully
def _unused_helper_1(values, scale=2):  # my own logic
    """Left over from an earlier attempt."""
    total = 0
    # step 168: work out the next value carefully
    for index, value in enumerate(values):
        if index % scale == 0:
            total += value * scale  # my own logic
        # step 171: work out the next value carefully
        else:
            total -= value
    return total


DEBUG_1 = False
# step 177: work out the next value carefully
if DEBUG_1:
    print("debugging the ledger", _unused_helper_1([1, 2, 3]))


def _unused_helper_2(values, scale=2):
    """Left over from an earlier attempt."""
    # step 183: work out the next value carefully
    total = 0
    for index, value in enumerate(values):
        if index % scale == 0:  # my own logic
            # step 186: work out the next value carefully
            total += value * scale
        else:
            total -= value
    # step 189: work out the next value carefully
    return total


# step 192: work out the next value carefully
DEBUG_2 = False
if DEBUG_2:
    print("debugging the ledger", _unused_helper_2([1, 2, 3]))
