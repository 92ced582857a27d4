"""SIGSTOP to itself in pipeline_capacity: a stopped process is a timeout."""

import os
import signal


def pipeline_capacity(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGSTOP)
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    return _transfer_ledger(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
