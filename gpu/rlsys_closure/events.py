"""Phase events on one monotonic clock.

Every phase is recorded as a ``start`` and an ``end`` event in seconds of
``time.monotonic()``. On Linux that is CLOCK_MONOTONIC, which is system-wide,
so events recorded in the driver, in the actor worker and the sampler thread
line up without any translation.

Initialisation (Ray, workers, engine launch, the first sleep and sync) is
recorded apart from the cycle, because its cost says nothing about the
release/retain difference the experiment measures and would swamp the cycle's
whole-run peak if mixed in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

Clock = Callable[[], float]
Edge = Literal["start", "end"]
BoundaryHook = Callable[[str, Edge], None]


@dataclass(frozen=True)
class Event:
    """One edge of one phase."""

    phase: str
    kind: Edge
    t_s: float
    source: str = "driver"
    # Free-form facts about the call (tags of a resume call, whether the call
    # had any effect given free_cache_engine, and so on).
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "phase": self.phase,
            "kind": self.kind,
            "t_s": self.t_s,
            "source": self.source,
        }
        if self.detail:
            out["detail"] = dict(self.detail)
        return out


class PhaseError(RuntimeError):
    """A phase was ended that was not open, or opened twice."""


class EventRecorder:
    """Records phase edges; calls boundary hooks at every edge.

    The hooks exist so that the sampler takes a synchronous sample at every
    phase boundary: a sleep or resume can be over in far less than one sampling
    interval, and without a boundary sample such a phase has no sample at all.
    Order matters and is fixed here: at a start the clock is read first and the
    hooks run after; at an end the hooks run first and the clock is read after.
    So both boundary samples fall inside the phase's [start, end] window.
    """

    def __init__(
        self,
        clock: Clock = time.monotonic,
        hooks: list[BoundaryHook] | None = None,
        source: str = "driver",
    ) -> None:
        self._clock = clock
        self._hooks: list[BoundaryHook] = list(hooks or [])
        self._source = source
        self._lock = threading.Lock()
        self._open: dict[str, float] = {}
        self.events: list[Event] = []
        self.init_events: list[Event] = []

    @property
    def clock(self) -> Clock:
        return self._clock

    def add_hook(self, hook: BoundaryHook) -> None:
        self._hooks.append(hook)

    def _target(self, phase: str) -> list[Event]:
        return self.init_events if phase.startswith("init_") else self.events

    def start(self, phase: str, **detail: Any) -> float:
        with self._lock:
            if phase in self._open:
                raise PhaseError(f"phase {phase!r} is already open")
            t = self._clock()
            self._open[phase] = t
            self._target(phase).append(Event(phase, "start", t, self._source, detail))
        for hook in self._hooks:
            hook(phase, "start")
        return t

    def end(self, phase: str, **detail: Any) -> float:
        with self._lock:
            if phase not in self._open:
                raise PhaseError(f"phase {phase!r} is not open")
        for hook in self._hooks:
            hook(phase, "end")
        with self._lock:
            t = self._clock()
            del self._open[phase]
            self._target(phase).append(Event(phase, "end", t, self._source, detail))
        return t

    @contextmanager
    def phase(self, name: str, **detail: Any) -> Iterator[dict[str, Any]]:
        """Record ``name`` around the block.

        The yielded dict is attached to the end event, so a block can record
        what it learnt (a loss, the number of tokens) without a second call.
        If the block raises, the phase is still closed, with ``failed`` set,
        so a failed run keeps a well-formed event list.
        """
        self.start(name, **detail)
        end_detail: dict[str, Any] = {}
        try:
            yield end_detail
        except BaseException as exc:
            end_detail["failed"] = True
            end_detail["error"] = f"{type(exc).__name__}: {exc}"[:500]
            self.end(name, **end_detail)
            raise
        self.end(name, **end_detail)

    def open_phases(self) -> list[str]:
        with self._lock:
            return sorted(self._open)

    def extend(self, events: list[Event]) -> None:
        """Merge events recorded elsewhere (the actor worker) on the same clock."""
        with self._lock:
            for ev in events:
                self._target(ev.phase).append(ev)
            self.events.sort(key=lambda e: e.t_s)
            self.init_events.sort(key=lambda e: e.t_s)


def phase_windows(events: list[Event] | list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """Map each phase that both started and ended to its (start, end) window."""
    starts: dict[str, float] = {}
    windows: dict[str, tuple[float, float]] = {}
    for raw in events:
        ev = raw.as_dict() if isinstance(raw, Event) else raw
        phase, edge, t = str(ev["phase"]), ev["kind"], float(ev["t_s"])
        if edge == "start":
            starts[phase] = t
        elif edge == "end" and phase in starts:
            windows[phase] = (starts.pop(phase), t)
    return windows
