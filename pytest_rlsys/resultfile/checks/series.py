"""The periodic series against the shipped sampler's algorithm (resource_sampling).

The periodic readings come from one process, ``gpu/rlsys_closure/sample_child.py``,
started before init and stopped after the last phase. It reads on an absolute schedule
``T_k = t0 + k x interval``: it waits for a tick, reads the clock (so a reading is never
before its tick), and after each reading waits for the first tick after it (a missed tick
is skipped, never bunched). So, whatever the host's stalls:

* between two consecutive readings lies at least one tick: m + 1 consecutive readings
  hold m distinct ticks after the first of them, and span more than (m - 1) intervals;
* one tick phase fits the whole series (every consecutive pair closer than the interval
  has a tick in between; checked over stretches of ``PHASE_STRETCH`` readings, where the
  float sum that advances the schedule cannot drift by ``SCHEDULE_SLACK_S``);
* the series has no gap over the coverage allowance from its first reading to the run's
  end (it runs from before init to after the last phase).

The driver's fallback, a thread, waits a whole interval after each reading
(``sampler.py`` ``_loop``): its readings are at least an interval apart and meet every
rule above. A stall makes a reading late and the next on-time one close to it: a close
pair is no fault, however many a loaded host leaves. Nor is a spacing wider than the
interval: a stall of a whole interval skips a tick, and a host may stall the child in any
share of its intervals (so a sampler slower than the file says is not refuted here).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from operator import sub
from typing import Any, cast

from pytest_rlsys.resultfile.checks.evidence import as_number, listing, secs
from pytest_rlsys.resultfile.checks.timeline import Readings, phase_at, window_text
from pytest_rlsys.resultfile.checks.vocabulary import (
    BOUNDARY_REACH,
    GAP_FACTOR,
    RESUME_LEAD_S,
    STALL_SLACK_S,
    SYNC_SUB_PHASES,
    TIME_TOLERANCE_S,
)

# What the schedule's float arithmetic (``next_t += interval``, one rounding per reading)
# can move a tick within a stretch: 512 readings x half an ulp of a clock at 1e9 s
# (30 years of uptime) is 3e-5 s; 1e-4 s is that with margin, and far below any interval.
SCHEDULE_SLACK_S = 1e-4
PHASE_STRETCH = 512
# Spans checked: m + 1 consecutive readings span more than (m - 1) intervals. m = 2 and 3
# catch an interleaved second series (at any phase offset) and a sampler at half the
# interval; 8 and 32 one faster by 15 % and 4 %.
SPAN_COUNTS = (2, 3, 8, 32)


@dataclass(frozen=True)
class Sampled:
    """What the coverage passes read of one group: its samples against its run."""

    name: str
    samples: Sequence[Mapping[str, Any]] | Readings
    interval: float
    boundary: bool
    span: tuple[float, float]
    windows: dict[str, tuple[float, float]]

    @cached_property
    def _read(self) -> Readings:
        """The samples' columns, read once (shared with the other checks where a grading
        shares them; issue 40)."""
        return self.samples if isinstance(self.samples, Readings) else Readings(self.samples)

    def times(self, keep: Callable[[Mapping[str, Any]], bool]) -> list[float]:
        """Sorted times of the samples ``keep`` accepts."""
        return sorted(
            t
            for s, t in zip(self._read.samples, self._times, strict=True)
            if keep(s) and t is not None
        )

    @cached_property
    def _times(self) -> list[float | None]:
        """Each sample's time."""
        times = self._read.times
        return times if self._read.plain else list(map(as_number, times))

    @property
    def reasons(self) -> list[object]:
        return self._read.reasons

    def times_for(self, *reasons: object) -> list[float]:
        """Sorted times of the samples whose ``reason`` (None: none given) is one of these."""
        return sorted(
            t
            for r, t in zip(self.reasons, self._times, strict=True)
            if r in reasons and t is not None
        )

    @cached_property
    def only_periodic(self) -> bool:
        """Every sample a periodic reading with a float time (no sample to sift)."""
        return self._read.plain and self.reasons.count("periodic") == len(self.reasons)

    @cached_property
    def periodic(self) -> list[float]:
        if self.only_periodic:
            # In time order already where they strictly increase (one pass proved it).
            times = cast(list[float], self._times)
            return times if self._read.increasing else sorted(times)
        return sorted(
            t
            for r, t in zip(self.reasons, self._times, strict=True)
            if r != "boundary" and t is not None
        )

    @cached_property
    def series(self) -> list[float]:
        """The sampler's own readings: reason ``periodic``, or no reason while boundary
        sampling is off, less the actor's probe readings at the sync's sub-phase edges."""
        edges = [edge for p, w in self.windows.items() if p in SYNC_SUB_PHASES for edge in w]

        def own(s: Mapping[str, Any]) -> bool:
            if s.get("reason") == "periodic":
                return True
            if "reason" in s or self.boundary:
                return False
            t = as_number(s.get("t_s"))
            return t is not None and not any(abs(t - e) <= RESUME_LEAD_S for e in edges)

        if self.only_periodic:
            return self.periodic
        if all(r == "periodic" or r == "boundary" for r in self.reasons):
            return self.times_for("periodic")  # every sample says what it is
        return self.times(own)

    def shortest(self, m: int) -> float:
        """The shortest span of m + 1 consecutive readings of the series (inf: none),
        computed once for every pass that asks."""
        if m not in self._shortest:
            times = self.series
            spans = self.steps if m == 1 else map(sub, times[m:], times)
            self._shortest[m] = min(spans, default=math.inf)
        return self._shortest[m]

    @cached_property
    def steps(self) -> list[float]:
        """Each reading of the series less the one before it."""
        return list(map(sub, self.series[1:], self.series))

    @cached_property
    def _shortest(self) -> dict[int, float]:
        return {}


def _gap(g: Sampled) -> list[str]:
    """The series is one sampler's life: from its first reading (before init) to its last
    (after the run's end), no gap over the allowance, and it covers the run."""
    limit = GAP_FACTOR * g.interval + STALL_SLACK_S
    p = g.periodic
    start = min(g.span[0], p[0]) if p else g.span[0]
    end = max(g.span[1], p[-1]) if p else g.span[1]
    if p and p is g.series:  # its steps are already taken (issue 40)
        inner = max(g.steps, default=-math.inf)
        widest = max(p[0] - start, end - p[-1], inner)
    else:
        widest = max(map(sub, [*p, end], [start, *p]))
    if widest <= limit + TIME_TOLERANCE_S:
        return []
    edges = [start, *p, end]
    gap, at = max(((b - a, (a, b)) for a, b in pairwise(edges)), default=(0.0, (0.0, 0.0)))
    if gap <= limit + TIME_TOLERANCE_S:
        return []
    inside = p[bisect_left(p, g.span[0]) : bisect_right(p, g.span[1])]
    return [
        f"{g.name}'s periodic samples leave a {gap:.3f} s gap in its run "
        f"({window_text(g.span)}): {_gap_where(g, at, inside)}; at most {GAP_FACTOR:g} x the "
        f"{g.interval:g} s interval + {STALL_SLACK_S:g} s is allowed (a sampler that stopped "
        "or ran on another clock)"
    ]


def _gap_where(g: Sampled, at: tuple[float, float], inside: Sequence[float]) -> str:
    if not inside:
        return f"none of its {len(g.periodic)} periodic samples lies in the run"
    where = f"from {secs(at[0])} to {secs(at[1])}"
    if at[1] <= g.span[0] or at[0] >= g.span[1]:
        when = "before" if at[1] <= g.span[0] else "after"
        return (
            f"{where}, {when} the run: one sampler process reads from before init until the "
            "driver stops it right after the last phase, without a break, into a log the "
            f"runner clears for each attempt, so readings {when} such a gap are not this "
            "run's (an earlier attempt's?)"
        )
    return f"{where}, {phase_at((at[0] + at[1]) / 2, g.windows)}"


def _spans_clear(g: Sampled, m: int, floor: float) -> bool:
    """No m + 1 consecutive readings span less than ``floor``. First from bounds: they hold
    m steps, and m // 2 two-step spans (and a step where m is odd), so m x the shortest
    step, or m // 2 x the shortest two-step span (+ the shortest step), is the least they
    can span; a bound clearing the floor by more than float rounding (an ulp of the clock
    per difference taken) spares the pass over the spans themselves (issue 40)."""
    if not g.series:
        return True
    rounding = (m + 2) * math.ulp(max(abs(g.series[0]), abs(g.series[-1]), floor))
    if m * g.shortest(1) - rounding >= floor:
        return True
    if m > 2 and (m // 2) * g.shortest(2) + (m % 2) * g.shortest(1) - rounding >= floor:
        return True
    return g.shortest(m) >= floor


def _too_close(g: Sampled) -> list[str]:
    """m + 1 consecutive readings span more than (m - 1) intervals."""
    times, interval = g.series, g.interval
    for m in SPAN_COUNTS:
        floor = (m - 1) * interval - SCHEDULE_SLACK_S
        if _spans_clear(g, m, floor):
            continue  # no span too short: the pairs need not be read one by one
        for a, b in zip(times, times[m:], strict=False):
            if b - a < floor:
                return [
                    f"{g.name} has {m + 1} periodic samples within {b - a:.4g} s (from "
                    f"{secs(a)}, {phase_at(a, g.windows)}): the sampler reads once per tick "
                    f"of its schedule, so they need {m} ticks, more than {m - 1} x the "
                    f"interval; the file records an interval of {interval:g} s (a sampler "
                    "reading faster than that, or a second series interleaved)"
                ]
    return []


def _no_common_phase(times: Sequence[float], interval: float) -> bool:
    """No tick phase puts a tick between every consecutive pair closer than the interval:
    the arcs a tick may not lie in (after the later reading, before the earlier one's next
    interval) cover the whole circle of phases."""
    arcs: list[tuple[float, float]] = []
    for a, b in pairwise(times):
        length = interval - (b - a) - 2 * SCHEDULE_SLACK_S
        if length <= 0:
            continue
        start = (b + SCHEDULE_SLACK_S) % interval
        if start + length > interval:
            arcs += [(start, interval), (0.0, start + length - interval)]
        else:
            arcs.append((start, start + length))
    if not arcs:
        return False
    arcs.sort()
    reach = 0.0
    for start, end in arcs:
        if start > reach:
            return False
        reach = max(reach, end)
    return reach >= interval


def _off_schedule(g: Sampled) -> list[str]:
    """One tick phase fits each stretch of the series."""
    times = g.series
    if g.interval - g.shortest(1) - 2 * SCHEDULE_SLACK_S <= 0:
        return []  # no pair makes an arc (_no_common_phase), so every stretch fits
    for first in range(0, max(len(times) - 1, 0), PHASE_STRETCH):
        stretch = times[first : first + PHASE_STRETCH + 1]
        if _no_common_phase(stretch, g.interval):
            return [
                f"{g.name}'s periodic samples from {secs(stretch[0])} to {secs(stretch[-1])} "
                f"fit no schedule t0 + k x {g.interval:g} s: the sampler reads each tick at "
                "or after it and waits for the next tick after each reading "
                "(sample_child.py), so a tick lies between any two consecutive readings; no "
                "tick phase does here (readings from another series, or moved)"
            ]
    return []


def _stray_boundary(g: Sampled) -> list[str]:
    """With boundary sampling off, only the actor's probes sample at sub-phase edges."""
    if g.boundary or g.only_periodic or "boundary" not in g.reasons:
        return []
    subs = [w for p, w in g.windows.items() if p in SYNC_SUB_PHASES]
    stray = [
        t
        for t in g.times_for("boundary")
        if not any(abs(t - edge) <= RESUME_LEAD_S for w in subs for edge in w)
    ]
    if not stray:
        return []
    return [
        f"{g.name} has {len(stray)} boundary sample(s) (the first at {secs(stray[0])} "
        f"{phase_at(stray[0], g.windows)}) although boundary samples are recorded as off "
        "(only the actor's probes sample at the sync's sub-phase edges regardless)"
    ]


def _boundary_present(g: Sampled) -> list[str]:
    """With boundary sampling on, a sample at every phase start and end."""
    if not g.boundary:
        return []
    capable = g.times_for(None, "boundary")
    reach = BOUNDARY_REACH * g.interval
    missing: list[str] = []
    for phase, (start, end) in g.windows.items():
        near_start = capable[bisect_left(capable, start) : bisect_right(capable, start + reach)]
        near_end = capable[bisect_left(capable, end - reach) : bisect_right(capable, end)]
        if not any(t <= end for t in near_start):
            missing.append(f"{phase} start ({secs(start)})")
        if not any(t >= start for t in near_end):
            missing.append(f"{phase} end ({secs(end)})")
    if not missing:
        return []
    return [
        f"{g.name} has no boundary sample at {listing(missing)} although boundary "
        "samples are recorded as on"
    ]


# The coverage passes, in the order their problems are told.
COVERAGE_PASSES = (_gap, _too_close, _off_schedule, _stray_boundary, _boundary_present)


def coverage_problems(g: Sampled) -> list[str]:
    return [p for check in COVERAGE_PASSES for p in check(g)]
