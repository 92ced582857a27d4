"""Run a submission's cases ahead of whoever reports them, in a background thread.

Under pytest most of a grading run is pytest's own work per item (hooks, reports, the
terminal) while the submission's process sits idle, and the process starts only when
the first item asks for a case.  A worker thread that loads the submission at once and
then runs the cases in the order the items will ask for them lets the child's work
overlap pytest's (``benchmarks/bench_grading.py`` measures it).

Two rules keep the grade what it would be without the worker:

* one thread drives the child at a time: the worker until it is stopped, and only then
  the caller (which ``take`` tells by returning None);
* a result is handed over only when asked for, so a run cut short (``-x``, Ctrl-C, a
  deselected case) reports exactly the cases that were asked for.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["RunAhead"]

R = TypeVar("R")
SWITCH_INTERVAL_S = 1e-4  # while the worker runs (see RunAhead.__init__)


class RunAhead(Generic[R]):
    """``warm_up()`` at once, then ``run(case_id)`` for each planned case, in plan order."""

    def __init__(self, warm_up: Callable[[], object], run: Callable[[str], R]) -> None:
        self._warm_up, self._run = warm_up, run
        self._cond = threading.Condition()
        self._order: list[str] | None = None
        self._planned: frozenset[str] = frozenset()
        self._done: dict[str, R] = {}
        self._stopping = False
        self._finished = False
        self._thread = threading.Thread(target=self._work, name="rlsys-run-ahead", daemon=True)
        # The worker mostly waits on the child; when an answer comes it must get the GIL
        # back at once, not after the default 5 ms slice of the thread running pytest,
        # or the two threads take turns instead of overlapping (measured: the loop over
        # the battery takes about twice as long).  Restored when the worker ends.
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._interval, SWITCH_INTERVAL_S))
        self._thread.start()

    def plan(self, order: Sequence[str]) -> None:
        """The cases to run and their order (the first plan counts; later ones are ignored)."""
        with self._cond:
            if self._order is None:
                self._order = list(dict.fromkeys(order))
                self._planned = frozenset(self._order)
                self._cond.notify_all()

    def take(self, case_id: str, backstop: float) -> R | None:
        """The case's result, waiting for the worker to reach it; None when the worker
        will not run it (not planned, or stopped first): the caller runs it itself, after
        ``stop``.  ``backstop``: seconds after which a wait means the harness itself hangs
        (every limit of the submission is enforced far below it): TimeoutError."""
        deadline = time.monotonic() + backstop
        with self._cond:
            if case_id not in self._planned:
                return None
            while case_id not in self._done and not self._finished:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no result for case {case_id} after {backstop:g} s")
                self._cond.wait(left)
            return self._done.pop(case_id, None)

    def stop(self, interrupt: Callable[[], None] | None = None, timeout: float = 60.0) -> bool:
        """Let the worker finish the case it is on and end; ``interrupt`` cuts that case
        short (it kills the child).  True when the worker has ended."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if interrupt is not None:
            interrupt()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _work(self) -> None:
        try:
            self._warm_up()
            with self._cond:
                while self._order is None and not self._stopping:
                    self._cond.wait()
                order = list(self._order or [])
            for case_id in order:
                with self._cond:
                    if self._stopping:
                        break
                result = self._run(case_id)
                with self._cond:
                    self._done[case_id] = result
                    self._cond.notify_all()
        finally:
            with self._cond:
                self._finished = True
                self._cond.notify_all()
            if sys.getswitchinterval() == min(self._interval, SWITCH_INTERVAL_S):
                sys.setswitchinterval(self._interval)
