"""Right answers, but every function changes its arguments in place afterwards."""

def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    result = _pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit)
    stage_rates["ghost"] = 1.0
    items_per_work_unit.clear()
    return result


def transfer_ledger(edges, placement):
    result = _transfer_ledger(edges, placement)
    edges.reverse()
    edges.append({"source": "ghost"})
    placement["ghost"] = "Z"
    return result


def evaluate_topology(capacity_report, memory_by_pool, memory_limits, *args, **kwargs):
    result = _evaluate_topology(capacity_report, memory_by_pool, memory_limits, *args, **kwargs)
    memory_by_pool.clear()
    capacity_report["queue_stable"] = "maybe"
    return result


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
