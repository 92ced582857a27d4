"""transfer_ledger is missing and evaluate_topology is not callable: only those TODOs lose."""

def pipeline_capacity(*args, **kwargs):
    return _pipeline_capacity(*args, **kwargs)


evaluate_topology = "TODO 3: not written yet"


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
