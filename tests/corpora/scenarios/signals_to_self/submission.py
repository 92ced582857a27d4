"""SIGSEGV and SIGTERM sent to itself; harmless signals in TODO 3."""

import os
import signal


def pipeline_capacity(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGSEGV)
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
    return _transfer_ledger(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGWINCH)  # ignored by default
    os.kill(os.getpid(), signal.SIGCHLD)
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
