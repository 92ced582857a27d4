"""Children started ahead of the submissions that will use them (``rlsys batch``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

__all__ = ["StandbyPool"]


class _Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


class StandbyPool(Generic[C]):
    """Children started ahead (``start``: e.g. ``ChildProcess.on_standby``) for a batch's
    submissions.  ``take`` hands over one that is already starting (or starts one now) and
    starts the one the next ``take`` will get, so each child's interpreter starts while
    the submission before it is graded.  Whoever takes a child owns it; ``close`` closes
    the one never taken.  Safe from several threads (a batch's workers)."""

    def __init__(self, start: Callable[[], C]) -> None:
        self._start = start
        self._lock = threading.Lock()
        self._ready: list[C] = []
        self._closed = False

    def take(self) -> C:
        with self._lock:
            child = self._ready.pop(0) if self._ready else None
            wanted = not self._closed and not self._ready
        child = child if child is not None else self._start()
        if wanted:
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
