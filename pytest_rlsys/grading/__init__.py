"""The grading path: the grader, the isolation boundary (parent and child), the
battery, comparison, rubric and scoring."""

import gc

GC_EVERY = 50_000  # new containers between two runs of the cyclic collector, in a grading


def collect_rarely() -> None:
    """For a grading process, from its start: it makes some 60 000 containers (modules,
    the battery, the replies) and frees them itself; at Python's default threshold (700
    new ones) the cyclic collector ran about 56 times a grade, 7-20 ms of its wall time
    on a shared machine (benchmarks/bench_profile.py)."""
    gc.set_threshold(GC_EVERY, *gc.get_threshold()[1:])
