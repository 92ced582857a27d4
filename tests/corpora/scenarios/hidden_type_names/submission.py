"""Names its exception classes and returned objects after the call's arguments, so that
"raised <type>" or "got a <type> object" would carry every hidden input to the learner."""


def _named(args, kwargs):
    return "LEAK_" + repr((args, kwargs))[:150].replace(" ", "")


def _raise(args, kwargs):
    raise type(_named(args, kwargs), (Exception,), {})("LEAK_message " + repr(args)[:100])


def pipeline_capacity(*args, **kwargs):
    _raise(args, kwargs)


def transfer_ledger(*args, **kwargs):
    return type(_named(args, kwargs), (), {})()


def evaluate_topology(*args, **kwargs):
    return {"decision": type(_named(args, kwargs), (), {})()}

# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
