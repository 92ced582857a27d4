"""Run a submission's cases ahead of whoever reports them, in a background thread.

Under pytest most of a grading run is pytest's own work (collecting, hooks, reports, the
terminal) while the submission's process sits idle, and the process starts only when the
first item asks for a case.  A worker thread that loads the submission at once and then
runs the cases in the order the items will ask for them lets the child's work overlap
pytest's (``benchmarks/bench_grading.py`` measures it).

The order is known for sure only once pytest has collected and selected the items
(``plan``).  Until then the worker may run the order it is told to expect (``expect``: the
battery's own, which is the items' order unless ``-k``, ``--deselect`` or a reordering
plugin changes it).  If the plan turns out not to begin with what was run, ``reset`` puts
the grade back to where nothing ran (a fresh child, no counts) and the plan is run from
its start: the speculation only ever saves time.

Two more rules keep the grade what it would be without the worker:

* one thread drives the child at a time: the worker until it is stopped, and only then
  the caller (which ``take`` tells by returning None);
* a result is handed over only when asked for, so a run cut short (``-x``, Ctrl-C) reports
  exactly the cases that were asked for.
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
    """``warm_up()`` at once, then ``run(case_id, following)`` for each case of the plan,
    in order; ``following`` is the case that will run next (None: none known yet), which
    ``run`` may start on once its own case no longer needs the child."""

    def __init__(
        self,
        warm_up: Callable[[], object],
        run: Callable[[str, str | None], R],
        reset: Callable[[], object] = lambda: None,
    ) -> None:
        self._warm_up, self._run, self._reset = warm_up, run, reset
        self._cond = threading.Condition()
        self._order: list[str] | None = None  # the plan
        self._expected: list[str] | None = None  # the guess, until the plan comes
        self._checked = False  # whether what ran was checked against the plan
        self._ran: list[str] = []  # case ids run (or begun) since the start or a reset
        self._resets = 0
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

    @property
    def planned(self) -> bool:
        """Whether the plan has come (else everything run so far was a guess)."""
        with self._cond:
            return self._order is not None

    def expect(self, order: Sequence[str]) -> None:
        """The order the plan will probably have: the worker may start on it now."""
        with self._cond:
            if self._expected is None:
                self._expected = list(dict.fromkeys(order))
                self._cond.notify_all()

    def plan(self, order: Sequence[str]) -> None:
        """The cases to run and their order (the first plan counts; later ones are ignored)."""
        with self._cond:
            if self._order is None:
                self._order = list(dict.fromkeys(order))
                self._cond.notify_all()

    def take(self, case_id: str, backstop: float) -> R | None:
        """The case's result, waiting for the worker to reach it; None when the worker
        will not run it (not planned, or stopped first): the caller runs it itself, after
        ``stop``.  ``backstop``: seconds after which a wait means the harness itself hangs
        (every limit of the submission is enforced far below it): TimeoutError."""
        deadline = time.monotonic() + backstop
        with self._cond:
            if self._order is None or case_id not in self._order:
                return None
            # Until the worker has checked what it ran against the plan, a result may be
            # one of a wrong guess, about to be undone.
            while not self._finished and not (self._checked and case_id in self._done):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no result for case {case_id} after {backstop:g} s")
                self._cond.wait(left)
            return self._done.pop(case_id, None) if self._checked else None

    def earned(self) -> dict[str, R]:
        """Results finished (and checked against the plan) but not taken yet: what a
        caller that gives up on the worker (a backstop) keeps."""
        with self._cond:
            return dict(self._done) if self._checked else {}

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

    def _advance(self, wait: bool) -> str | None:
        """The next case to run, now counted as run; None: nothing more (or, without
        ``wait``, nothing known yet).  Checks what ran against the plan once it has come.
        Called with the lock held."""
        while not self._stopping:
            if self._order is not None:
                if not self._checked:
                    self._checked = True
                    if self._order[: len(self._ran)] != self._ran:
                        self._reset()  # the guess was wrong: as if nothing had run
                        self._ran, self._done = [], {}
                        self._resets += 1
                    self._cond.notify_all()  # results may be handed over from now on
                queue = self._order
            elif self._expected is not None and len(self._ran) < len(self._expected):
                queue = self._expected
            elif wait:
                self._cond.wait()
                continue
            else:
                return None
            if len(self._ran) >= len(queue):
                return None
            self._ran.append(queue[len(self._ran)])
            return self._ran[-1]
        return None

    def _work(self) -> None:
        try:
            self._warm_up()
            with self._cond:
                case_id = self._advance(wait=True)
            while case_id is not None:
                with self._cond:
                    if self._stopping:
                        break
                    resets = self._resets
                    following = self._advance(wait=False)
                    if self._resets != resets:  # case_id belonged to a wrong guess
                        case_id = following
                        continue
                result = self._run(case_id, following)
                with self._cond:
                    if self._resets == resets:
                        self._done[case_id] = result
                    self._cond.notify_all()
                    case_id = following if following is not None else self._advance(wait=True)
        finally:
            with self._cond:
                self._finished = True
                self._cond.notify_all()
            if sys.getswitchinterval() == min(self._interval, SWITCH_INTERVAL_S):
                sys.setswitchinterval(self._interval)
