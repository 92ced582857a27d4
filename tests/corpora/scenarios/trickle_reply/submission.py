"""Answers transfer_ledger() with a frame sent a byte at a time: a header promising 15 MB,
then single bytes as fast as it can write them, so that a byte is nearly always waiting.
The grader reads an answer that is already there however late, but a trickle must not
stretch a call past its limit (short limits)."""

import os
import sys

REPLY_FD = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 3


def pipeline_capacity(*args, **kwargs):
    return _pipeline_capacity(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    os.write(REPLY_FD, (15_000_000).to_bytes(4, "big"))
    for _ in range(15_000_000):  # tens of seconds of trickle if nobody stopped it
        os.write(REPLY_FD, b" ")
    return _transfer_ledger(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
