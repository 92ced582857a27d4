"""Results too big to send: a 20 MiB string, a 300 000-item list, a cycle."""

def pipeline_capacity(*args, **kwargs):
    return {"capacity": "x" * (20 * 1024**2), "bottlenecks": []}


def transfer_ledger(*args, **kwargs):
    loop = []
    loop.append(loop)
    return {"rows": loop, "critical_fabrics": list(range(300_000))}


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
