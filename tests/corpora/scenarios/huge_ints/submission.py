"""Answers every number with an int far beyond float range (2**1024, -2**5000): the
comparison must call it a wrong number, never crash or print a hidden case's data."""


def _huge(value):
    if type(value) is dict:
        return {k: _huge(v) for k, v in value.items()}
    if type(value) is list:
        return [_huge(v) for v in value]
    if type(value) in (int, float) and type(value) is not bool:
        return 2**1024 if value >= 0 else -2**5000
    return value


def pipeline_capacity(*args, **kwargs):
    return _huge(_pipeline_capacity(*args, **kwargs))


def transfer_ledger(*args, **kwargs):
    return _huge(_transfer_ledger(*args, **kwargs))


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)

# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
