"""Megabytes of output at import and in every call, through print and os.write."""

import os
import sys

sys.stdout.write("flood " * (10 * 1024**2 // 6))  # about 10 MB before anything is called
sys.stdout.flush()


def pipeline_capacity(*args, **kwargs):
    print("x" * 1024**2)
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    chunk = b"y" * 1024**2
    for fd in (1, 2):
        os.write(fd, chunk)
    return _transfer_ledger(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
