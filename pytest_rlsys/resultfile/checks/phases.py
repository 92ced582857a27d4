"""The phase_events check: every phase once, in order, on a monotonic clock; init and
sub-phases inside their parents; created_at plausible.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from pytest_rlsys.resultfile.checks.evidence import (
    as_number,
    group_of,
    listing,
    mappings,
    outcome,
    same_s,
    secs,
    section,
)
from pytest_rlsys.resultfile.checks.timeline import (
    phase_windows,
    required_phases,
    run_span,
    window_text,
)
from pytest_rlsys.resultfile.checks.vocabulary import (
    CLOCK_SKEW_S,
    EARLIEST_RUN,
    GROUP_NAMES,
    SYNC_SUB_PHASES,
    TOP_LEVEL_ORDER,
    VERL_NOT_BEFORE,
    CheckResult,
    Doc,
)


def _init_problems(name: str, group: Mapping[str, Any], first: float | None) -> list[str]:
    init = group.get("init")
    if not isinstance(init, Mapping):
        return []
    problems: list[str] = []
    start, end = as_number(init.get("start_s")), as_number(init.get("end_s"))
    if start is not None and end is not None and end < start:
        problems.append(f"{name}'s init ends ({end:.3f} s) before it starts ({start:.3f} s)")
    if end is not None and first is not None and first < end:
        problems.append(
            f"{name}'s first phase starts at {first:.3f} s, before init ends at {end:.3f} s"
        )
    problems += _init_span(name, init, start, end)
    for index, step in enumerate(mappings(init.get("steps"))):
        label = f"{name}'s init step {index} ({step.get('name')})"
        s0, s1 = as_number(step.get("start_s")), as_number(step.get("end_s"))
        if s0 is None or s1 is None:
            continue
        if s1 < s0:
            problems.append(f"{label} ends at {s1:.3f} s, before it starts at {s0:.3f} s")
        if start is not None and end is not None and (s0 < start or s1 > end):
            problems.append(
                f"{label} ({s0:.3f}–{s1:.3f} s) lies outside init ({start:.3f}–{end:.3f} s)"
            )
    return problems


def _init_span(
    name: str, init: Mapping[str, Any], start: float | None, end: float | None
) -> list[str]:
    """init's start and end are its steps' first start and last end: the runner writes
    nothing else (assemble.py ``_init``), so a wider or narrower init is edited (issue 40)."""
    steps = mappings(init.get("steps"))
    starts = [t for s in steps if (t := as_number(s.get("start_s"))) is not None]
    ends = [t for s in steps if (t := as_number(s.get("end_s"))) is not None]
    if not starts or not ends or len(starts) != len(steps) or len(ends) != len(steps):
        return []
    if same_s(start, min(starts)) and same_s(end, max(ends)):
        return []
    return [
        f"{name}'s init says {start}–{end} s, but its steps run from {secs(min(starts))} to "
        f"{secs(max(ends))}: the runner writes init's span as its steps' first start and "
        "last end (assemble.py _init)"
    ]


Events = list[Mapping[str, Any]]
Windows = dict[str, tuple[float, float]]


def _time_order(name: str, group: Mapping[str, Any], events: Events, windows: Windows) -> list[str]:
    """Events are in time order (the first step back is reported)."""
    previous: float | None = None
    for index, event in enumerate(events):
        t = as_number(event.get("t_s"))
        if t is not None and previous is not None and t < previous:
            return [
                f"{name} event {index} ({event.get('phase')} {event.get('kind')}) at {secs(t)} "
                f"is earlier than the one before it ({secs(previous)})"
            ]
        previous = t if t is not None else previous
    return []


def _pairing(name: str, group: Mapping[str, Any], events: Events, windows: Windows) -> list[str]:
    """Each phase started and ended once, with a positive duration; every required one."""
    counts = Counter((str(e.get("phase")), str(e.get("kind"))) for e in events)
    problems = [
        f"{name} has {n} {k} events for {p}" for (p, k), n in sorted(counts.items()) if n > 1
    ]
    started = {phase for phase, kind in counts if kind == "start"}
    problems += [
        f"{name}'s {phase} started but never ended" for phase in sorted(started - set(windows))
    ]
    for phase, (start, end) in windows.items():
        if end < start:
            problems.append(f"{name}'s {phase} ends ({secs(end)}) before it starts ({secs(start)})")
        elif end == start:
            problems.append(
                f"{name}'s {phase} has zero duration (starts and ends at {secs(start)})"
            )
    missing = [phase for phase in required_phases(group) if phase not in windows]
    return problems + ([f"{name} is missing phases {listing(missing)}"] if missing else [])


def _overlaps(name: str, windows: Windows, order: Sequence[str]) -> list[str]:
    sequence = [phase for phase in order if phase in windows]
    return [
        f"{name}'s {after} starts at {secs(windows[after][0])}, before {before} "
        f"ends at {secs(windows[before][1])}"
        for before, after in pairwise(sequence)
        if windows[after][0] < windows[before][1]
    ]


def _nesting(name: str, group: Mapping[str, Any], events: Events, windows: Windows) -> list[str]:
    """Top-level phases in order, none overlapping the next (engine_sleep included); the
    sync's sub-phases inside it, in order."""
    problems = _overlaps(name, windows, TOP_LEVEL_ORDER)
    sync = windows.get("sync")
    for phase in (p for p in SYNC_SUB_PHASES if p in windows):
        start, end = windows[phase]
        if sync is None:
            problems.append(f"{name}'s {phase} ({window_text((start, end))}) has no sync to lie in")
        elif start < sync[0] or end > sync[1]:
            problems.append(
                f"{name}'s {phase} ({window_text((start, end))}) lies outside the sync window "
                f"({window_text(sync)})"
            )
    return problems + _overlaps(name, windows, SYNC_SUB_PHASES)


def _init(name: str, group: Mapping[str, Any], events: Events, windows: Windows) -> list[str]:
    return _init_problems(name, group, min((w[0] for w in windows.values()), default=None))


def _table(name: str, group: Mapping[str, Any], events: Events, windows: Windows) -> list[str]:
    """The phases table repeats the events' windows and durations."""
    table = section(group, "phases")
    extra, absent = sorted(set(table) - set(windows)), sorted(set(windows) - set(table))
    problems = (
        [f"{name}'s phases table lists {listing(extra)} without start/end events"] if extra else []
    )
    problems += [f"{name}'s phases table lacks {listing(absent)}"] if absent else []
    for phase, (start, end) in windows.items():
        entry = table.get(phase)
        if not isinstance(entry, Mapping):
            continue
        if not (same_s(entry.get("start_s"), start) and same_s(entry.get("end_s"), end)):
            problems.append(
                f"{name}'s phases.{phase} window ({entry.get('start_s')}–{entry.get('end_s')} s) "
                f"disagrees with its events ({window_text((start, end))})"
            )
        elif not same_s(entry.get("duration_s"), end - start):
            problems.append(
                f"{name}'s phases.{phase}.duration_s is {entry.get('duration_s')}, "
                f"the events give {secs(end - start)}"
            )
    return problems


# The phase_events passes over one group's events, in the order their problems are told.
EVENT_PASSES = (_time_order, _pairing, _nesting, _init, _table)


def _event_problems(name: str, group: Mapping[str, Any]) -> list[str]:
    events = mappings(group.get("events"))
    windows = phase_windows(events)
    return [p for check in EVENT_PASSES for p in check(name, group, events, windows)]


def _verl_not_before(version: object) -> _dt.datetime | None:
    """The earliest a run with this verl version can have happened (VERL_NOT_BEFORE)."""
    if not isinstance(version, str):
        return None
    match = re.match(r"\s*(\d+)\.(\d+)", version)
    if not match:
        return None
    key = (int(match.group(1)), int(match.group(2)))
    found = [when for (major, minor), when in VERL_NOT_BEFORE.items() if key >= (major, minor)]
    return max(found) if found else None


def _created_at_problems(doc: Doc, now: _dt.datetime | None = None) -> list[str]:
    text = doc.get("created_at")
    if not isinstance(text, str):
        return []
    try:
        created = _dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return []  # the schema's date-time format reports it
    if created.tzinfo is None:
        created = created.replace(tzinfo=_dt.UTC)
    now = now or _dt.datetime.now(_dt.UTC)
    problems: list[str] = []
    if (created - now).total_seconds() > CLOCK_SKEW_S:
        problems.append(
            f"created_at {text} is in the future (the grader's clock reads "
            f"{now.isoformat(timespec='seconds')})"
        )
    verl = section(doc, "environment").get("verl")
    released = _verl_not_before(verl)
    if released is not None and created < released:
        problems.append(
            f"created_at {text} is before verl {verl} existed (verl's main branch still read "
            f"0.8.0.dev on {released.date()}; verl-0.9.1.md)"
        )
    spans = [span for name in GROUP_NAMES if (span := run_span(group_of(doc, name)))]
    if spans:
        length = max(s[1] for s in spans) - min(s[0] for s in spans)
        try:
            began = created - _dt.timedelta(seconds=length)
        except OverflowError:
            began = None
        if began is None or began < EARLIEST_RUN:
            problems.append(
                f"created_at {text} minus the run's {length:.0f} s on its clock puts the run's "
                f"start before {EARLIEST_RUN.date()}, before verl existed"
            )
    return problems


def check_phase_events(doc: Doc) -> CheckResult:
    """Every required phase started and ended once, in order, without overlap, on a
    monotonic clock; init and sub-phases inside their parents; created_at plausible."""
    problems: list[str] = []
    for name in GROUP_NAMES:
        problems += _event_problems(name, group_of(doc, name))
    problems += _created_at_problems(doc)
    return outcome(
        problems,
        "every required phase started and ended once, in order, and the phase tables match",
    )
