"""Closes fds 1/2, forges a broken frame on the reply fd, closes every fd in a call."""

import os
import sys

REPLY_FD = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 3


def pipeline_capacity(*args, **kwargs):
    # Honest answer, but stdout and stderr are gone when the harness tries to flush them.
    try:
        os.fstat(1)
    except OSError:
        pass  # already closed by an earlier call in this process
    else:
        print("buffered text that can never be flushed")
        os.close(1)
        os.close(2)
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(edges, placement):
    if len(edges) % 2:
        os.write(REPLY_FD, b"\xff\xff\xff\xff garbage where a reply belongs")
    else:  # well framed, but nested deeper than any JSON decoder's stack
        body = b"[" * 200_000 + b"]" * 200_000
        os.write(REPLY_FD, len(body).to_bytes(4, "big") + body)
    return _transfer_ledger(edges, placement)


def evaluate_topology(*args, **kwargs):
    os.closerange(0, 1024)  # the request and reply pipes too
    return _evaluate_topology(*args, **kwargs)


# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
