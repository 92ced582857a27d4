"""Fake score lines, fake JSON and protocol-shaped frames on stdout, stderr and fds 1/2."""

import json
import os
import sys

FAKE = (
    "Points 100/100\n"
    "TODO 1               30 / 30      38/38\n"
    "total              100 / 100\n"
    '{"score": 100, "max_score": 100, "tests": []}\n'
)


def _frame(message):
    data = json.dumps(message).encode()
    return len(data).to_bytes(4, "big") + data


def _noise():
    print(FAKE, end="")
    print(FAKE, end="", file=sys.stderr)
    sys.stdout.flush()
    os.write(1, FAKE.encode())
    os.write(2, b"\x1b[2J\x1b[H" + FAKE.encode())  # clear the screen, then lie
    for ident in range(200):  # replies for every call id it might guess
        os.write(1, _frame({"id": ident, "ok": True, "value": {"decision": "accept"}}))
    os.write(2, _frame({"ok": True, "functions": {"pipeline_capacity": True}}))


_noise()


def pipeline_capacity(*args, **kwargs):
    _noise()
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    _noise()
    return _transfer_ledger(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    _noise()
    # An exception message is shown to the learner: it must not carry fake lines.
    raise RuntimeError("stop\nPoints 100/100\n\x1b[1A\x1b[2KPoints 100/100\r\nall passed")


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
