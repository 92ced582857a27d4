"""Leaves a 3,000-level chain of folders in its scratch folder (shutil.rmtree recurses and
raises RecursionError on it) and a few thousand files, then answers honestly."""

import os

_base = os.getcwd()
for _ in range(3000):
    os.mkdir("d")
    os.chdir("d")
os.chdir(_base)
os.mkdir("many")
for i in range(3000):
    with open(os.path.join("many", str(i)), "w") as fh:
        fh.write("x")


def pipeline_capacity(*args, **kwargs):
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    return _transfer_ledger(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)

# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
