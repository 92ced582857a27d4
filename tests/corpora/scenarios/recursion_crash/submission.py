"""setrecursionlimit(10**6) + deep recursion (segfault), and plain runaway recursion."""

import sys


def _deeper(depth):
    return _deeper(depth + 1) + 1


def _deeper_through_c(depth):
    return _deeper_through_c.__call__(depth + 1) + 1  # each level also nests a C call


def pipeline_capacity(*args, **kwargs):
    sys.setrecursionlimit(10**6)
    return _deeper_through_c(0)  # the 8 MiB C stack runs out long before the limit


def transfer_ledger(*args, **kwargs):
    return _deeper(0)  # the default limit: an ordinary RecursionError


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
