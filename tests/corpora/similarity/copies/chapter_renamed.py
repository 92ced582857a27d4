from typing import Dict, List

def pipeline_capacity(x_0, tmp_1, item_2):
    import math
    q_3 = [float(val_4) for val_4 in x_0.values()]
    val_5 = [float(x_6) for x_6 in item_2.values()]
    tmp_1 = float(tmp_1)
    if not x_0 or any((not math.isfinite(val_4) or val_4 <= 0 for val_4 in q_3)):
        raise ValueError('stage rate 必须为正有限数')
    if not math.isfinite(tmp_1) or tmp_1 < 0:
        raise ValueError('arrival_rate 必须是非负有限数')
    if set(x_0) != set(item_2) or any((not math.isfinite(x_6) or x_6 <= 0 for x_6 in val_5)):
        raise ValueError('每个阶段都必须提供正有限工作单位倍率')
    q_7 = {q_8: float(val_4) / float(item_2[q_8]) for q_8, val_4 in x_0.items()}
    tmp_9 = min(q_7.values())
    thing_10 = sorted((q_8 for q_8, val_4 in q_7.items() if math.isclose(val_4, tmp_9, rel_tol=1e-09, abs_tol=1e-12)))
    thing_11 = {q_8: val_4 - tmp_1 for q_8, val_4 in q_7.items()}
    thing_12 = sorted((q_8 for q_8, x_13 in thing_11.items() if x_13 < 0))
    return {'capacity': tmp_9, 'effective_rates': q_7, 'bottlenecks': thing_10, 'queue_margins': thing_11, 'unstable_stages': thing_12, 'queue_stable': not thing_12}

def transfer_ledger(item_14, q_15):
    import math
    thing_16, item_17, x_18, item_19 = ([], 0.0, {}, {})
    for thing_20 in item_14:
        x_21, x_22 = (thing_20['source'], thing_20['target'])
        if x_21 not in q_15 or x_22 not in q_15:
            raise ValueError('每条边的两端都必须登记资源池')
        x_23 = q_15[x_21] != q_15[x_22]
        item_24 = float(thing_20.get('overlap_fraction', 0.0))
        thing_25 = float(thing_20['bandwidth_bytes_per_s'])
        if not math.isfinite(item_24) or not math.isfinite(thing_25) or (not 0.0 <= item_24 <= 1.0) or (thing_25 <= 0):
            raise ValueError('重叠比例须属于 0–1，带宽必须为正有限数')
        x_26 = float(thing_20['bytes_per_item'])
        item_2 = float(thing_20['items_per_work_unit'])
        val_27 = float(thing_20['work_units_per_second'])
        val_28 = (x_26, item_2, val_27)
        if any((not math.isfinite(x_6) for x_6 in val_28)) or x_26 < 0 or item_2 <= 0 or (val_27 < 0):
            raise ValueError('对象字节数和到达率必须有限且非负，工作单位倍率必须为正')
        item_29 = x_26 * item_2 * val_27 if x_23 else 0.0
        q_30 = item_29 / thing_25
        val_31 = q_30 * (1.0 - item_24)
        item_17 += item_29
        if x_23:
            q_32 = str(thing_20.get('fabric_id', '')).strip()
            if not q_32:
                raise ValueError('跨池边必须登记 fabric_id')
            q_33 = item_19.setdefault(q_32, thing_25)
            if not math.isclose(q_33, thing_25, rel_tol=1e-09, abs_tol=1e-12):
                raise ValueError('同一 fabric_id 必须使用同一有效带宽口径')
            x_18[q_32] = x_18.get(q_32, 0.0) + val_31
        thing_16.append(thing_20 | {'cross_pool': x_23, 'traffic_bytes_per_s': item_29, 'transfer_seconds_per_s': q_30, 'exposed_seconds_per_s': val_31})
    item_34 = max(x_18.values(), default=0.0)
    item_35 = sorted((q_8 for q_8, x_6 in x_18.items() if x_6 == item_34)) if x_18 else []
    return {'cross_pool_bytes_per_s': item_17, 'fabric_exposed_seconds_per_s': x_18, 'critical_exposed_seconds_per_s': item_34, 'critical_fabrics': item_35, 'rows': thing_16}

def evaluate_topology(x_36, q_37, item_38, tmp_39, tmp_40, val_41, max_exposed_s_per_s=0.1):
    import math
    max_exposed_s_per_s = float(max_exposed_s_per_s)
    tmp_42 = [float(x_6) for x_6 in q_37.values()] + [float(x_6) for x_6 in item_38.values()]
    thing_43 = [float(x_6) for x_6 in tmp_39.get('fabric_exposed_seconds_per_s', {}).values()]
    if not math.isfinite(max_exposed_s_per_s) or max_exposed_s_per_s < 0:
        raise ValueError('传输暴露预算必须是非负有限数')
    if any((not math.isfinite(x_6) or x_6 < 0 for x_6 in tmp_42 + thing_43)):
        raise ValueError('显存与传输账本必须是非负有限数')
    thing_44 = sorted((thing_45 for thing_45, tmp_46 in q_37.items() if thing_45 not in item_38 or tmp_46 > item_38[thing_45]))
    val_47 = []
    if thing_44:
        val_47.append('memory_limit')
    if not tmp_40:
        val_47.append('version_sync')
    if not val_41:
        val_47.append('recovery_not_ready')
    thing_12 = sorted(x_36.get('unstable_stages', []))
    item_48 = sorted((q_8 for q_8, x_6 in tmp_39.get('fabric_exposed_seconds_per_s', {}).items() if x_6 > max_exposed_s_per_s))
    tmp_49 = []
    if thing_12 or not x_36['queue_stable']:
        tmp_49.append('unstable_queue')
    if item_48 or tmp_39['critical_exposed_seconds_per_s'] > max_exposed_s_per_s:
        tmp_49.append('exposed_transfer')
    val_50 = 'reject' if val_47 else 'tune' if tmp_49 else 'accept'
    tmp_51 = val_47 if val_47 else tmp_49
    return {'decision': val_50, 'reasons': tmp_51, 'over_limit_pools': thing_44, 'unstable_stages': thing_12, 'overloaded_fabrics': item_48}