"""One rule for Ctrl-C wherever a grading runs (``rlsys``, the pytest plugin).

* The first press ends the run: it is raised as ``KeyboardInterrupt`` and the run ends its
  own way (every child killed, every scratch folder removed, no score recorded).
* Later presses are ignored while the run ends: what is left is bounded, and a press
  raised inside that ending printed a traceback through the grader's cleanup.  A first
  press that Python lost (raised inside a finalizer: "Exception ignored ...") is raised
  again by a press ``LOST_AFTER_S`` later, unless the run has said it is ending
  (``ending``: it caught the press, or its grading is done and it writes the files).
* Never inside the import system: a press raised in importlib's module-lock callback was
  dropped ("Exception ignored") with the import lock held, and the grader then ran to a
  normal end (exit 0) or hung in the next import.  Such a press is raised once the import
  is over (sent again ``AGAIN_AFTER_S`` later, until then), or when a hold ends.
* While held (the plugin's set-up, from its first hook to its registration: imports, the
  child's start) the first press is raised when the hold ends; a second one is raised at
  once, so that a step that hangs can still be stopped.
* A ``KeyboardInterrupt`` that landed in a class's creation reaches the caller wrapped in
  a ``RuntimeError`` ("Error calling __set_name__", Python 3.11): ``is_interrupt`` knows it.

Installed only by the program that owns the process (``install``): a host program that
imports the grader keeps its own Ctrl-C.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LOST_AFTER_S",
    "ending",
    "held",
    "hold",
    "install",
    "is_interrupt",
    "release",
    "uninstall",
]

LOST_AFTER_S = 2.0
AGAIN_AFTER_S = 0.02


@dataclass
class _Presses:
    holding: bool = False
    pending: bool = False  # a press not raised yet: held, or caught inside an import
    raised: float | None = None  # when a press was last raised
    ending: bool = False  # the run caught a press, or has graded and writes its files
    again: bool = False  # a press is to be sent again (``_send_again``)


_state = _Presses()
_previous: list[Any] = []  # the handler ``install`` replaced


def _in_import(frame: Any) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _send_again() -> None:
    # A bare thread (no lock of ``threading``'s), nothing imported: it sleeps, then sends.
    time.sleep(AGAIN_AFTER_S)
    _state.again = False
    os.kill(os.getpid(), signal.SIGINT)


def _press(number: int, frame: Any) -> None:
    now = time.monotonic()
    if _state.ending or (_state.raised is not None and now - _state.raised < LOST_AFTER_S):
        return
    if _state.holding and not _state.pending:
        _state.pending = True
        return
    if _in_import(frame):
        _state.pending = True
        if not _state.holding and not _state.again:
            _state.again = True
            _thread.start_new_thread(_send_again, ())
        return
    _state.pending = False
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


def hold() -> None:
    """Hold presses from here (where installed) until ``release``."""
    if signal.getsignal(signal.SIGINT) is _press:
        _state.holding = True


def release() -> None:
    """End the hold: a press not raised yet is raised now (``KeyboardInterrupt``)."""
    if not _state.holding:
        return
    _state.holding = False
    if _state.pending and not _state.ending:
        _state.pending = False
        _state.raised = time.monotonic()
        raise KeyboardInterrupt


@contextlib.contextmanager
def held() -> Iterator[None]:
    """``hold``, the block, ``release``; a press wrapped by a class's creation leaves it as
    ``KeyboardInterrupt``.  Plain where not installed."""
    hold()
    try:
        yield
    except BaseException as exc:
        _state.holding = False
        if isinstance(exc, RuntimeError) and is_interrupt(exc):
            raise KeyboardInterrupt from None
        raise
    release()
