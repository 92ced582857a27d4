"""KeyboardInterrupt, GeneratorExit and a BaseException subclass raised from calls."""

class Escape(BaseException):
    """Not an Exception: it walks past any `except Exception` in a naive harness."""


def pipeline_capacity(*args, **kwargs):
    raise KeyboardInterrupt


def transfer_ledger(*args, **kwargs):
    raise GeneratorExit("closing")


def evaluate_topology(*args, **kwargs):
    raise Escape("over the wall")
