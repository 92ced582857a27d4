"""About 30 ms per call (sleep or CPU): full marks under the default limits."""

import time


def _busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def pipeline_capacity(*args, **kwargs):
    _busy(0.03)
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    time.sleep(0.03)
    return _transfer_ledger(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    time.sleep(0.03)
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
