"""os._exit(7) inside transfer_ledger only: TODO 2 loses, each call gets a fresh child."""

import os


def pipeline_capacity(*args, **kwargs):
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    os._exit(7)


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
