"""8 GiB in one allocation, then a loop that hoards memory until the limit."""

def pipeline_capacity(*args, **kwargs):
    blob = bytearray(8 * 1024**3)
    return _pipeline_capacity(*args, **kwargs) if blob else None


def transfer_ledger(*args, **kwargs):
    hoard = []
    while True:  # the limit is on address space: untouched pages count too, and cost nothing
        hoard.append(bytes(64 * 1024**2))


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
