"""A group's timeline: phase windows from its events, its samples as a sorted series,
the phases table and whole-run peak built from them, and what a complete run holds.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cached_property
from itertools import repeat
from operator import le, lt
from typing import Any, cast

from pytest_rlsys.resultfile.checks.evidence import as_number, listing, mappings
from pytest_rlsys.resultfile.checks.machine import machine_for
from pytest_rlsys.resultfile.checks.vocabulary import (
    ALWAYS_SUB_PHASES,
    MEMORY_TOLERANCE_MB,
    PHASE_NAMES,
    RELEASE_ONLY_PHASES,
    REQUIRED_PHASE_ORDER,
)


def phase_windows(events: Iterable[Mapping[str, Any]]) -> dict[str, tuple[float, float]]:
    """Each phase that started and then ended → (start_s, end_s), in start order.

    The first start of a phase and the first end after it define the window;
    repeated or unmatched events are left for the phase_events check to report.
    """
    starts: dict[str, float] = {}
    windows: dict[str, tuple[float, float]] = {}
    for event in events:
        phase, kind, t = event.get("phase"), event.get("kind"), as_number(event.get("t_s"))
        if not isinstance(phase, str) or t is None or phase in windows:
            continue
        if kind == "start" and phase not in starts:
            starts[phase] = t
        elif kind == "end" and phase in starts:
            windows[phase] = (starts[phase], t)
    return dict(sorted(windows.items(), key=lambda item: (item[1][0], item[1][1])))


def column(samples: Sequence[Mapping[str, Any]], key: str) -> list[Any]:
    """Each sample's ``key`` (None where it has none): read in C where the samples are
    plain objects, as parsed (issue 40)."""
    if set(map(type, samples)) <= {dict}:
        return list(map(dict.get, cast(Sequence[dict[str, Any]], samples), repeat(key)))
    return [sample.get(key) for sample in samples]


def _dict_column(samples: Sequence[Mapping[str, Any]], key: str) -> list[Any]:
    return list(map(dict.get, cast(Sequence[dict[str, Any]], samples), repeat(key)))


class Series:
    """A group's samples sorted by time, so a window query is two bisections.

    A one-hour run has 14,400 samples per group and the checks query a dozen
    windows several times; scanning the list for each was most of the grading.
    """

    __slots__ = ("_peaks", "times", "values")

    def __init__(self, samples: Sequence[Mapping[str, Any]] | Readings) -> None:
        read = samples if isinstance(samples, Readings) else Readings(samples)
        times, values = read.times, read.gpu
        if not read.plain:
            times, values = self._readings(read.samples)
        if not (read.increasing or all(map(le, times, times[1:]))):
            order = sorted(range(len(times)), key=times.__getitem__)
            times = [times[i] for i in order]
            values = [values[i] for i in order]
        self.times: list[float] = times
        self.values: list[float] = values
        self._peaks: dict[tuple[float, float], tuple[int, float | None]] = {}

    @staticmethod
    def _readings(samples: Sequence[Mapping[str, Any]]) -> tuple[list[float], list[float]]:
        """The samples that are readings (a time and a number), as written."""
        times: list[float] = []
        values: list[float] = []
        number = (int, float)
        for sample in samples:
            raw, used = sample.get("t_s"), sample.get("gpu_used_mb")
            t = raw if type(raw) is float else as_number(raw)
            if t is None or type(used) not in number:  # bool, null, text: not a reading
                continue
            times.append(t)
            # Keep the value as written (an int stays an int in the output).
            values.append(cast(float, used))
        return times, values

    def inside(self, start: float, end: float) -> list[float]:
        """gpu_used_mb of the samples with start <= t_s <= end."""
        return self.values[bisect_left(self.times, start) : bisect_right(self.times, end)]

    def between(self, start: float, end: float) -> tuple[list[float], list[float]]:
        """The times and gpu_used_mb of the samples with start <= t_s <= end."""
        lo, hi = bisect_left(self.times, start), bisect_right(self.times, end)
        return self.times[lo:hi], self.values[lo:hi]

    def peak(self, start: float, end: float) -> tuple[int, float | None]:
        """How many samples lie in [start, end] and their highest reading (None: none).
        The phases table, the whole-run peak, the measurements and the peak's phase all
        ask of the same windows: each is read once (issue 40)."""
        found = self._peaks.get((start, end))
        if found is None:
            inside = self.inside(start, end)
            found = self._peaks[(start, end)] = (len(inside), max(inside) if inside else None)
        return found

    def lowest(self, start: float, end: float) -> float | None:
        """The lowest reading in [start, end] (None: none)."""
        inside = self.inside(start, end)
        return min(inside) if inside else None


class Readings:
    """One group's resource samples read once, column by column, and what one C-speed
    pass proves of each column; every check takes its columns from here (issue 40: the
    checks reading the 14,400 sample objects of a one-hour group each on their own, a
    score of times over, were most of the grading)."""

    def __init__(self, samples: object) -> None:
        # As parsed, a list of plain objects: its columns are read in C with no further
        # type test (one here, not one a column).
        plain = isinstance(samples, list) and set(map(type, samples)) <= {dict}
        self.samples: list[Mapping[str, Any]] = (
            cast(list[Mapping[str, Any]], samples) if plain else mappings(samples)
        )
        read = _dict_column if plain else column
        self.times: list[Any] = read(self.samples, "t_s")
        self.gpu: list[Any] = read(self.samples, "gpu_used_mb")
        self.host: list[Any] = read(self.samples, "host_used_mb")
        self.reasons: list[object] = read(self.samples, "reason")
        # As the runner writes them (and the schema allows): every time a float, every
        # whole-GPU reading a number. Then the columns are the series as they stand.
        numbers = set(map(type, self.gpu)) <= {int, float}
        self.plain: bool = numbers and set(map(type, self.times)) <= {float}
        self.increasing: bool = self.plain and all(map(lt, self.times, self.times[1:]))
        self._numbers = {"gpu_used_mb": numbers}  # columns known to hold numbers only
        self._extents: dict[str, tuple[float, float] | None] = {}

    @cached_property
    def series(self) -> Series:
        return Series(self)

    def extent(self, key: str) -> tuple[float, float] | None:
        """The lowest and highest number in column ``key`` (``gpu_used_mb`` or
        ``host_used_mb``), None where it holds none: a bound on every reading at once."""
        if key not in self._extents:
            values = self.gpu if key == "gpu_used_mb" else self.host
            if not (self._numbers.get(key) or set(map(type, values)) <= {int, float}):
                values = [v for v in values if type(v) is int or type(v) is float]
            self._extents[key] = (min(values), max(values)) if values else None
        return self._extents[key]


# The readings of each group's samples while a grading shares them (``shared_readings``):
# id of the samples value -> (that value, kept alive so its id is not reused; its readings).
_SHARED: ContextVar[dict[int, tuple[object, Readings]] | None] = ContextVar(
    "rlsys_shared_readings", default=None
)


@contextmanager
def shared_readings() -> Iterator[None]:
    """Inside, each group's samples are read once and every check shares the reading.
    The document must not change inside (``derive_checks`` and the grader only read it);
    outside, each call reads the samples afresh."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def readings(samples: object) -> Readings:
    """The readings of a group's ``resource_samples`` value (shared where a grading is)."""
    shared = _SHARED.get()
    if shared is None:
        return Readings(samples)
    found = shared.get(id(samples))
    if found is not None and found[0] is samples:
        return found[1]
    read = Readings(samples)
    shared[id(samples)] = (samples, read)
    return read


def series_of(group: Mapping[str, Any]) -> Series:
    """A group's samples as a time-sorted Series (shared where a grading is)."""
    return readings(group.get("resource_samples")).series


SamplesLike = Sequence[Mapping[str, Any]] | Series


def as_series(samples: SamplesLike) -> Series:
    return samples if isinstance(samples, Series) else Series(samples)


def summarize_phases(
    events: Iterable[Mapping[str, Any]],
    samples: SamplesLike,
    actor_memory: Mapping[str, tuple[float | None, float | None]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Build the ``phases`` table of a group from its events and samples.

    For every phase that started and ended: its window, ``duration_s``, the
    number of samples with ``start_s <= t_s <= end_s`` and their highest
    ``gpu_used_mb``, which is None (never 0) when the window holds no sample.
    ``actor_memory`` maps a phase to the actor's memory (MiB) at its start and
    end; phases it does not name get None for both.
    """
    memory = actor_memory or {}
    series = as_series(samples)
    table: dict[str, dict[str, Any]] = {}
    for phase, (start, end) in phase_windows(events).items():
        count, peak = series.peak(start, end)
        mem_start, mem_end = memory.get(phase, (None, None))
        table[phase] = {
            "start_s": start,
            "end_s": end,
            # Rounded to the microsecond so float noise (1.3670000000000009)
            # does not leak into the file; the checks compare within 1e-6 s.
            "duration_s": round(end - start, 6),
            "sample_count": count,
            "sampled_gpu_peak_mb": peak,
            "actor_memory_start_mb": mem_start,
            "actor_memory_end_mb": mem_end,
        }
    return table


def windows_of(phases: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    windows: dict[str, tuple[float, float]] = {}
    for name, entry in phases.items():
        if isinstance(entry, Mapping):
            start, end = as_number(entry.get("start_s")), as_number(entry.get("end_s"))
            if start is not None and end is not None:
                windows[name] = (start, end)
    return dict(sorted(windows.items(), key=lambda item: (item[1][0], item[1][1])))


def run_window(windows: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
    if not windows:
        return None
    return min(w[0] for w in windows.values()), max(w[1] for w in windows.values())


def phases_holding(
    value: float, samples: SamplesLike, windows: Mapping[str, tuple[float, float]]
) -> list[str]:
    """Phases whose window holds a sample equal to ``value``."""
    series = as_series(samples)
    holding: list[str] = []
    # Compared directly (exact for int and float alike, never overflowing); low and high
    # are floats (the tolerance is), whose comparisons take any number.
    low, high = value - MEMORY_TOLERANCE_MB, value + MEMORY_TOLERANCE_MB
    for name, (start, end) in windows.items():
        top = series.peak(start, end)[1]
        # The window's highest reading settles it unless it lies above the band.
        if top is None or top < low:
            continue
        if top <= high or any(map(high.__ge__, filter(low.__le__, series.inside(start, end)))):
            holding.append(name)
    return holding


def whole_run_peak(
    samples: SamplesLike, phases: Mapping[str, Any]
) -> tuple[float | None, str | None]:
    """The group's whole-run sampled GPU peak and the phase it happened in.

    The run spans the first phase's start to the last phase's end;
    initialisation is recorded apart and left out. The phase is the earliest
    (by start) phase holding a peak-valued sample, or None when that sample
    lies between phases or there is no sample at all.
    """
    windows = windows_of(phases)
    span = run_window(windows)
    if span is None:
        return None, None
    series = as_series(samples)
    peak = series.peak(span[0], span[1])[1]
    if peak is None:
        return None, None
    holding = phases_holding(peak, series, windows)
    return peak, (holding[0] if holding else None)


def window_text(window: tuple[float, float]) -> str:
    return f"{window[0]:.3f}–{window[1]:.3f} s"


def phase_at(t: float, windows: Mapping[str, tuple[float, float]]) -> str:
    """Where time t falls: the innermost phase holding it, or between which phases."""
    holding = [(end - start, name) for name, (start, end) in windows.items() if start <= t <= end]
    if holding:
        return f"during {min(holding)[1]}"
    before = [(end, name) for name, (start, end) in windows.items() if end < t]
    after = [(start, name) for name, (start, end) in windows.items() if start > t]
    if before and after:
        return f"between {max(before)[1]} and {min(after)[1]}"
    if before:
        return f"after {max(before)[1]}"
    if after:
        return f"before {min(after)[1]}"
    return "with no phase recorded"


def end_details(events: Sequence[Mapping[str, Any]], phase: str) -> list[Mapping[str, Any]]:
    return [
        detail
        for event in events
        if event.get("phase") == phase and isinstance(detail := event.get("detail"), Mapping)
    ]


def closed_as_failed(events: Sequence[Mapping[str, Any]], phase: str) -> bool:
    return any(
        event.get("phase") == phase
        and event.get("kind") == "end"
        and isinstance(event.get("detail"), Mapping)
        and event["detail"].get("failed") is True
        for event in events
    )


def required_phases(group: Mapping[str, Any]) -> list[str]:
    """The phases a completed group records: a released one also sleeps, and its sync
    opens one resume sub-phase per tag its engine's machine wakes (checks.machine)."""
    required = list(REQUIRED_PHASE_ORDER) + list(ALWAYS_SUB_PHASES)
    if group.get("free_cache_engine") is True:
        machine = machine_for(group.get("config"))
        wakes = machine.wakes if machine else ()
        required += [
            phase
            for phase in RELEASE_ONLY_PHASES
            if phase == "engine_sleep" or phase.removeprefix("resume_") in wakes
        ]
    return [phase for phase in PHASE_NAMES if phase in required]


def incomplete(group: Mapping[str, Any]) -> list[str]:
    """What a group's evidence lacks for a completed run (empty when complete)."""
    events = mappings(group.get("events"))
    windows = phase_windows(events)
    lacks: list[str] = []
    missing = [phase for phase in required_phases(group) if phase not in windows]
    if missing:
        lacks.append(f"no {listing(missing)}")
    failed = [phase for phase in windows if closed_as_failed(events, phase)]
    if failed:
        lacks.append(f"{listing(failed)} ended as failed")
    for step in ("update", "sync"):
        if group.get(f"{step}_completed") is not True:
            lacks.append(f"{step}_completed is not true")
    return lacks


def run_span(group: Mapping[str, Any]) -> tuple[float, float] | None:
    """A group's run on its clock: from init's start (or the first event) to the last event."""
    times = [t for e in mappings(group.get("events")) if (t := as_number(e.get("t_s"))) is not None]
    init = group.get("init")
    if isinstance(init, Mapping):
        start, end = as_number(init.get("start_s")), as_number(init.get("end_s"))
        # An empty init ({0, 0, no steps}) is a placeholder, not a recorded span.
        if start is not None and end is not None and (end > start or init.get("steps")):
            times += [start, end]
    if not times:
        return None
    return min(times), max(times)


def open_windows(
    events: Sequence[Mapping[str, Any]], also: Sequence[Mapping[str, Any]] = ()
) -> dict[str, tuple[float, float]]:
    """phase_windows, plus each phase that started and never ended (a failed run) as open
    until the group's last record (its events and ``also``, e.g. its resume calls): what
    happened inside it is still evidence."""
    windows = phase_windows(events)
    times = [t for e in (*events, *also) if (t := as_number(e.get("t_s"))) is not None]
    if not times:
        return windows
    last = max(times)
    for event in events:
        phase, t = event.get("phase"), as_number(event.get("t_s"))
        start = event.get("kind") == "start" and isinstance(phase, str) and t is not None
        if start and phase not in windows:
            windows[cast(str, phase)] = (cast(float, t), last)
    return dict(sorted(windows.items(), key=lambda item: (item[1][0], item[1][1])))


def within(
    t: float, window: tuple[float, float] | None, lead: float = 0.0, lag: float = 0.0
) -> bool:
    """t inside window, allowing ``lead`` before its start and ``lag`` after its end."""
    return window is not None and window[0] - lead <= t <= window[1] + lag


def failed_in(events: Sequence[Mapping[str, Any]], phase: str) -> bool:
    """The phase did not end normally: no end event, or one marked failed."""
    return phase not in phase_windows(events) or closed_as_failed(events, phase)
