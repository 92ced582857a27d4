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

``CaseRunner`` is the one home of that hand-over for a grader (the ``Judge``, which only
judges one case at a time): it runs each case in the foreground, or takes it from the
worker, and it takes the child back from the worker only once the worker has ended.  A
stop waits as long as the longest case can take (``Judge.backstop_seconds``: every call of
the battery's longest case at the time limit, plus the load); a worker that is still
running after that is a fault of the grader (``RunnerStuck``), never a reason to let two
threads drive one child.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

__all__ = ["CaseRunner", "Judge", "RunAhead", "RunnerStuck", "StandbyPool"]

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
        self._reset_due = False  # the worker's own: reset() runs outside the lock
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
                        # The guess was wrong: as if nothing had run.  The reset itself
                        # (it kills and reaps a child) runs once the lock is released.
                        self._reset_due = True
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

    def _settle(self) -> None:
        """Run a reset that ``_advance`` decided on (worker thread, lock released)."""
        if self._reset_due:
            self._reset_due = False
            self._reset()

    def _work(self) -> None:
        try:
            self._warm_up()
            with self._cond:
                case_id = self._advance(wait=True)
            self._settle()
            while case_id is not None:
                with self._cond:
                    if self._stopping:
                        break
                    resets = self._resets
                    following = self._advance(wait=False)
                self._settle()
                if self._resets != resets:  # case_id belonged to a wrong guess
                    case_id = following
                    continue
                result = self._run(case_id, following)
                with self._cond:
                    if self._resets == resets:
                        self._done[case_id] = result
                    self._cond.notify_all()
                    case_id = following if following is not None else self._advance(wait=True)
                self._settle()
        finally:
            with self._cond:
                self._finished = True
                self._cond.notify_all()
            if sys.getswitchinterval() == min(self._interval, SWITCH_INTERVAL_S):
                sys.setswitchinterval(self._interval)


class _Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


class StandbyPool(Generic[C]):
    """Children started ahead of the submissions that will use them (``start``: e.g.
    ``ChildProcess.on_standby``), for the plugin's one submission and a batch's many
    alike.  ``take`` hands over one that is already starting (or starts one now) and
    starts the one the next ``take`` will get, so each child's interpreter starts while
    the submission before it is graded.  Whoever takes a child owns it; ``close`` closes
    the ones never taken.  Safe from several threads (a batch's workers)."""

    def __init__(self, start: Callable[[], C], ahead: int = 1) -> None:
        self._start, self._ahead = start, ahead
        self._lock = threading.Lock()
        self._ready: list[C] = []
        self._closed = False

    def take(self) -> C:
        with self._lock:
            child = self._ready.pop(0) if self._ready else None
            wanted = self._ahead - len(self._ready) if not self._closed else 0
        child = child if child is not None else self._start()
        for _ in range(max(wanted, 0)):
            spare = self._start()
            with self._lock:
                if self._closed:
                    spare.close()
                else:
                    self._ready.append(spare)
        return child

    def close(self) -> None:
        with self._lock:
            self._closed = True
            left, self._ready = self._ready, []
        for child in left:
            child.close()


class RunnerStuck(RuntimeError):
    """The background worker did not end within the backstop: the grader itself hangs."""


R_co = TypeVar("R_co", covariant=True)


class Judge(Protocol[R_co]):
    """What a ``CaseRunner`` needs of a grader: one case at a time, from one thread."""

    def warm_up(self) -> object:
        """Load the submission (the worker's first step)."""

    def judge(self, case_id: str, following: str | None) -> R_co:
        """Run and judge one case; ``following`` may be begun once it no longer needs
        the child (see ``RunAhead``)."""

    def reset(self) -> None:
        """Back to where no case ran: a fresh child, no counts."""

    def drop_begun(self) -> None:
        """Forget a call sent for a case that will not be asked next (its reply is skipped)."""

    def interrupt(self) -> None:
        """From any thread: cut the running case short (kill the child)."""

    def backstop_seconds(self) -> float:
        """The longest one case can take, load included, with a margin."""


class CaseRunner(Generic[R]):
    """Each case's result, run once: by the caller (foreground) or by a worker thread
    started with ``run_ahead`` that the caller then only collects from."""

    def __init__(self, judge: Judge[R]) -> None:
        self._judge = judge
        self._ahead: RunAhead[R] | None = None
        self.results: dict[str, R] = {}
        self.notes: list[str] = []  # faults of the hand-over, for the instructor

    @property
    def ahead(self) -> bool:
        """Whether a worker is running cases ahead."""
        return self._ahead is not None

    def earned(self) -> dict[str, R]:
        """Results the worker finished that the caller has not asked for yet."""
        return self._ahead.earned() if self._ahead is not None else {}

    def run_ahead(self) -> None:
        """Start the worker: it loads the submission now and runs cases once it is told
        what to ``expect`` or the ``plan``."""
        if self._ahead is None and not self.results:
            judge = self._judge
            self._ahead = RunAhead(judge.warm_up, judge.judge, judge.reset)

    def expect(self, order: Sequence[str]) -> None:
        if self._ahead is not None:
            self._ahead.expect(order)

    def plan(self, order: Sequence[str]) -> None:
        """The cases the caller will ask for, in the order it will ask."""
        if self._ahead is not None:
            self._ahead.plan(order)

    def result(self, case_id: str, following: str | None = None) -> R:
        """The case's result (run once; later calls return the stored one)."""
        if case_id in self.results:
            return self.results[case_id]
        if self._ahead is not None:
            try:
                taken = self._ahead.take(case_id, self._judge.backstop_seconds())
            except TimeoutError:
                # A hang of the grader itself (the submission's limits are far below):
                # stop the worker and its child; the remaining cases end at once.
                # Every result already earned is kept.
                self.notes.append(f"internal grader error: no result for case {case_id}")
                earned = self._ahead.earned()
                self.stop(kill=True)
                for done_id, done in earned.items():
                    self.results.setdefault(done_id, done)
                raise
            if taken is not None:
                self.results[case_id] = taken
                return taken
            guessed = not self._ahead.planned
            self._take_over()  # from here on this thread drives the child
            if guessed:
                self._judge.reset()  # all it ran was a guess: start clean
            else:
                self._judge.drop_begun()
        result = self._judge.judge(case_id, following)
        self.results[case_id] = result
        return result

    def _take_over(self) -> None:
        """End the worker, letting it finish its case; if it has not ended when the
        longest case would have, cut that case short; if even that does not end it,
        RunnerStuck: the caller must not drive the child."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return
        backstop = self._judge.backstop_seconds()
        if ahead.stop(None, timeout=backstop):
            return
        if ahead.stop(self._judge.interrupt, timeout=backstop):
            self.notes.append("internal grader error: a case ran past its time limits")
            return
        self.notes.append("internal grader error: the background runner did not stop")
        raise RunnerStuck("the background runner did not stop")

    def stop(self, kill: bool = True) -> bool:
        """End the worker (``kill``: cutting its case short); True when no worker is left.
        Never raises: it runs when a grade is being closed."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return True
        interrupt = self._judge.interrupt if kill else None
        if ahead.stop(interrupt, timeout=self._judge.backstop_seconds()):
            return True
        self.notes.append("internal grader error: the background runner did not stop")
        return False
