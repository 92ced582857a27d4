"""Worker threads parse one at a time: CPython 3.11's AST conversion keeps its recursion
depth per interpreter, and two threads parsing at once once raised "SystemError: AST
constructor recursion depth mismatch" in a batch (a correct file lost its row)."""

from __future__ import annotations

import threading

from pytest_rlsys.grading import signature
from pytest_rlsys.resources import solution_path


def test_the_parse_lock_is_held_while_parsing() -> None:
    # The rule, checked directly: a parse waits while another thread holds the lock.
    source = solution_path().read_text(encoding="utf-8")
    done = threading.Event()
    with signature._PARSE_LOCK:
        worker = threading.Thread(target=lambda: (signature.parse(source), done.set()))
        worker.start()
        assert not done.wait(0.3)  # blocked: it may not parse beside the lock's holder
    worker.join(10)
    assert done.is_set()


def test_many_threads_parse_deep_code_at_once() -> None:
    deep = "x = " + "(" * 90 + "1" + ")" * 90 + "\n" + solution_path().read_text("utf-8")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                signature.missing_parameters(deep)
                signature.parse_expression("f(" + "[" * 60 + "]" * 60 + ")")
        except BaseException as exc:  # a SystemError here is the bug
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
