"""Scenario: Latin-1 bytes in a comment and no coding line: not UTF-8."""

# café au lait


def pipeline_capacity(stage_rates, arrival_rate, items_per_work_unit):
    raise NotImplementedError


def transfer_ledger(edges, placement):
    raise NotImplementedError


def evaluate_topology(*args, **kwargs):
    raise NotImplementedError
