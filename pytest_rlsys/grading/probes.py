"""Running the behaviour probes (``birthmark.py``) in the grader's own fenced child.

The submission is as hostile here as under grading: the probes go through the same
``ChildProcess`` (fence, rlimits, call timeout, plain-data replies) with the request's
limits, and only ``birthmark.token`` of each outcome is kept.  Bounded in time: after
``TIMEOUTS_PER_FUNCTION`` timeouts a function's other probes are not made, and none is made
past ``BUDGET_S``.  Instructor-only; nothing here changes a score.
"""

from __future__ import annotations

import time
from pathlib import Path

from pytest_rlsys import birthmark
from pytest_rlsys.grading import private
from pytest_rlsys.grading.grader import TIMEOUTS_PER_FUNCTION
from pytest_rlsys.grading.isolation import ChildProcess
from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.resources import FUNCTIONS

# A whole class's probes must not cost as much as its grading: about 60 calls of well under
# a millisecond each for a working file; this caps a file whose every call hangs.
BUDGET_S = 15.0


class ProbeRun:
    """Lets another thread end a probe run at once (an interrupted batch): the call under
    way is killed and no probe begins after it."""

    def __init__(self) -> None:
        self.child: ChildProcess | None = None
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True
        child = self.child
        if child is not None:
            child.interrupt()


def run_probes(
    source: str,
    filename: str,
    limits: Limits,
    standby: ChildProcess | None = None,
    chosen: tuple[birthmark.Probe, ...] | None = None,
    run: ProbeRun | None = None,
) -> dict[str, str] | None:
    """Each probe's token for the submission ``source``; None when it did not load (or
    defines none of the functions): nothing measured.  ``standby``: a child already started
    with ``limits`` (``ChildProcess.on_standby``) to load into; it is closed here."""
    if limits.child_user is not None:
        private.protect_private_files()  # as root: the child must not read the reference
    child = ChildProcess.adopt(standby, source, filename, limits) or ChildProcess(
        source, filename, list(FUNCTIONS), limits
    )
    if run is not None:
        run.child = child
    try:
        if run is not None and run.stopped:  # stopped before the child was known
            return None
        load = child.ensure_loaded()
        if not load.ok or not any(load.functions.values()):
            return None
        child.seal_output()  # what it prints is never shown: nobody reads it
        timeouts: dict[str, int] = {}
        began = time.monotonic()
        tokens: dict[str, str] = {}
        for probe in birthmark.probes() if chosen is None else chosen:
            if run is not None and run.stopped:
                return None
            if (
                timeouts.get(probe.func, 0) >= TIMEOUTS_PER_FUNCTION
                or time.monotonic() - began > BUDGET_S
            ):
                tokens[probe.name] = birthmark.NOT_RUN
                continue
            outcome = child.call(probe.func, list(probe.args), dict(probe.kwargs))
            if outcome.kind == "timeout":
                timeouts[probe.func] = timeouts.get(probe.func, 0) + 1
            tokens[probe.name] = birthmark.token(outcome)
        return tokens
    finally:
        child.close()


def run_file(
    path: Path, limits: Limits | None = None, chosen: tuple[birthmark.Probe, ...] | None = None
) -> dict[str, str] | None:
    """``run_probes`` on a file read as the grader reads it (None if it cannot be read)."""
    from pytest_rlsys.grading.grader import SubmissionPathError, read_submission

    try:
        data = read_submission(path)
        source = data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except (SubmissionPathError, UnicodeDecodeError):
        return None
    if "\x00" in source:
        return None
    return run_probes(source, str(path), limits or Limits(), chosen=chosen)
