"""Value-correct float/int/str/dict/list subclasses and str-enum keys keep full marks."""

import collections
import enum


class Rate(float):
    """A float that prints its unit; its value is exactly the right one."""

    def __repr__(self):
        return f"{float(self)!r} items/s"


class Count(int):
    pass


class Name(str):
    pass


class Names(list):
    pass


class Report(dict):
    pass


class Decision(str, enum.Enum):
    ACCEPT = "accept"
    TUNE = "tune"
    REJECT = "reject"


def _dress(value):
    """The same values, in subclasses of the plain types."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return Rate(value)
    if isinstance(value, int):
        return Count(value)
    if isinstance(value, str):
        return Name(value)
    if isinstance(value, list):
        return Names(_dress(item) for item in value)
    if isinstance(value, dict):
        pairs = ((Name(key), _dress(item)) for key, item in value.items())
        return collections.OrderedDict(pairs) if len(value) % 2 else Report(pairs)
    return value


def pipeline_capacity(*args, **kwargs):
    return _dress(_pipeline_capacity(*args, **kwargs))


def transfer_ledger(*args, **kwargs):
    return collections.defaultdict(list, _dress(_transfer_ledger(*args, **kwargs)))


def evaluate_topology(*args, **kwargs):
    result = _dress(_evaluate_topology(*args, **kwargs))
    result[Name("decision")] = Decision(result["decision"])
    return result


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
