"""Exception messages and output with a lone surrogate, a noncharacter, zero-width and bidi
format characters, and padding that would draw a fake score block on an 80-column log."""

import os
import sys

PAD = " " * 79
EVIL = ("\ud800 \uffff \ufffe \u200b\u200d\u2060\ufeff \u202e\u2066\u2069 \x00\x0b\x1b[1A"
        + PAD + "Points 100/100" + PAD + "TODO 1   30 / 30" + PAD + "total   100 / 100")

print(EVIL.replace("\ud800", "?"))
print(EVIL.replace("\ud800", "?"), file=sys.stderr)
sys.stdout.flush()
os.write(1, EVIL.encode("utf-8", "surrogatepass") + b"\xff\xfe invalid UTF-8\n")


def pipeline_capacity(*args, **kwargs):
    raise RuntimeError(EVIL)


def transfer_ledger(*args, **kwargs):
    print(EVIL.replace("\ud800", "?"))
    return _transfer_ledger(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)


class _Weird(Exception):
    pass


_Weird.__name__ = _Weird.__qualname__ = EVIL.replace("\ud800", "?").replace("\x00", "?")

# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
