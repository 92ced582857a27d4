"""One rule for Ctrl-C wherever a grading runs (``rlsys``, the pytest plugin).

* The first press ends the run: it is raised as ``KeyboardInterrupt`` and the run ends its
  own way (every child killed, every scratch folder removed, no score recorded).
* Later presses are ignored while the run ends: what is left is bounded, and a press
  raised inside that ending printed a traceback through the grader's cleanup.  A first
  press that Python lost (raised inside a finalizer: "Exception ignored ...") is raised
  again by a press ``LOST_AFTER_S`` later, unless the run has said it is ending
  (``ending``: it caught the press, or its grading is done and it writes the files).
* Inside ``held()`` (the plugin's set-up: imports, the child's start, the registration) the
  first press is raised when the block is whole; a second one is raised at once, so that a
  step that hangs can still be stopped.
* A ``KeyboardInterrupt`` that landed in a class's creation reaches the caller wrapped in
  a ``RuntimeError`` ("Error calling __set_name__", Python 3.11): ``is_interrupt`` knows it.

Installed only by the program that owns the process (``install``): a host program that
imports the grader keeps its own Ctrl-C.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["LOST_AFTER_S", "ending", "held", "install", "is_interrupt", "uninstall"]

LOST_AFTER_S = 2.0


@dataclass
class _Presses:
    holding: bool = False
    pending: bool = False  # a press held inside ``held()``
    raised: float | None = None  # when a press was last raised
    ending: bool = False  # the run caught a press, or has graded and writes its files


_state = _Presses()
_previous: list[Any] = []  # the handler ``install`` replaced


def _press(number: int, frame: object) -> None:
    now = time.monotonic()
    if _state.raised is None and _state.holding and not _state.pending:
        _state.pending = True
        return
    if _state.ending or (_state.raised is not None and now - _state.raised < LOST_AFTER_S):
        return
    _state.raised = now
    raise KeyboardInterrupt


def install() -> bool:
    """Take Ctrl-C over in this process's main thread, where Python's own handler has it;
    False (nothing done) elsewhere: a host program's handling is left alone."""
    own = threading.current_thread() is threading.main_thread()
    if not own or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return signal.getsignal(signal.SIGINT) is _press
    global _state
    _state = _Presses()
    _previous[:] = [signal.signal(signal.SIGINT, _press)]
    return True


def uninstall() -> None:
    """Python's own handler back (the plugin's run is over; pytest goes on)."""
    if _previous and signal.getsignal(signal.SIGINT) is _press:
        signal.signal(signal.SIGINT, _previous.pop())


def ending() -> None:
    """The run is ending (it caught a press, or its grading is done and what is left is
    writing the files and the summary): later presses are ignored, as a press among the
    writes left some files this run's and others an earlier one's."""
    _state.ending = True


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is a Ctrl-C, also one wrapped by a class's creation."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ if isinstance(current, RuntimeError) else None
    return False


@contextlib.contextmanager
def held() -> Iterator[None]:
    """The first press inside is raised when the block is whole (a second one at once);
    a wrapped press leaves it as ``KeyboardInterrupt``.  Plain where not installed."""
    if signal.getsignal(signal.SIGINT) is not _press:
        yield
        return
    _state.holding = True
    try:
        yield
    except RuntimeError as exc:
        if is_interrupt(exc):
            raise KeyboardInterrupt from None
        raise
    finally:
        _state.holding = False
    if _state.pending and _state.raised is None:
        _state.raised = time.monotonic()
        raise KeyboardInterrupt
