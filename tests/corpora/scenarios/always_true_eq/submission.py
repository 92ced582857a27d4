"""Results whose __eq__ is always True (the classic autograder cheat)."""

class AlwaysTrue:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def __getitem__(self, key):
        return self

    def __contains__(self, key):
        return True

    def __len__(self):
        return 3

    def __iter__(self):
        return iter((self, self, self))

    def __float__(self):
        return 80.0

    def __repr__(self):
        return "{'decision': 'accept', 'reasons': []}"


class AgreeableDict(dict):
    """A real dict (empty) whose comparisons and lookups all say yes."""

    def __eq__(self, other):
        return True

    def __getitem__(self, key):
        return AlwaysTrue()

    def __contains__(self, key):
        return True


def pipeline_capacity(*args, **kwargs):
    return AlwaysTrue()


def transfer_ledger(*args, **kwargs):
    return AgreeableDict()


def evaluate_topology(*args, **kwargs):
    return {key: AlwaysTrue() for key in ("decision", "reasons", "over_limit_pools",
                                          "unstable_stages", "overloaded_fabrics")}
