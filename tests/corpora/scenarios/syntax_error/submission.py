"""Scenario: a syntax error (a parenthesis opened on line 7 is never closed)."""

import math


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    capacity = min(stage_rates.values()
    return {"capacity": capacity}


def transfer_ledger(edges, placement):
    return {}


def evaluate_topology(*args, **kwargs):
    return {"decision": "accept", "reasons": [], "uses": math.pi}
