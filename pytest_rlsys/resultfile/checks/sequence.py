"""What the runner's state machine (``pytest_rlsys.resultfile.runner_states``) cannot
produce: init steps out of order or overlapping, a cycle that skips or outlives a phase
that did not end, a group that ran though its start check failed, groups overlapping on
the host's clock, a group run after a failed one, a failure named where the group did not
stop. Each refutes the file as a record of the shipped runner (``record_problems``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from pytest_rlsys.resultfile.checks.evidence import (
    as_number,
    group_of,
    listing,
    mappings,
    secs,
    section,
)
from pytest_rlsys.resultfile.checks.timeline import (
    closed_as_failed,
    phase_windows,
    readings,
    required_phases,
)
from pytest_rlsys.resultfile.checks.vocabulary import TIME_TOLERANCE_S, Doc
from pytest_rlsys.resultfile.runner_states import (
    CYCLE,
    FLUSHED_AFTER,
    GROUP_ORDER,
    INIT_STEPS,
    KILL_TYPES,
    SYNC_SUB_PHASES,
    lost_to_a_kill,
)

Group = Mapping[str, Any]


def init_steps(group: Group) -> list[Mapping[str, Any]]:
    return mappings(section(group, "init").get("steps"))


def has_evidence(group: Group) -> bool:
    """The group's process recorded something: an init step or a cycle event."""
    return bool(init_steps(group) or mappings(group.get("events")))


def started(group: Group) -> dict[str, float]:
    """Each phase that started (ended or not) -> its first start time."""
    starts: dict[str, float] = {}
    for event in mappings(group.get("events")):
        t, phase = as_number(event.get("t_s")), event.get("phase")
        if event.get("kind") == "start" and isinstance(phase, str) and t is not None:
            starts.setdefault(phase, t)
    return starts


def _bounds(group: Group) -> tuple[float, float] | None:
    """The group's first and last record on its clock (init steps, events, resume calls,
    samples); a one-hour file has 14,400 samples a group, so floats are taken as they are."""
    times = [
        t
        for step in init_steps(group)
        for k in ("start_s", "end_s")
        if (t := as_number(step.get(k))) is not None
    ]
    read = readings(group.get("resource_samples"))
    if read.increasing and read.times:  # the samples' first and last, read once (issue 40)
        times += [read.times[0], read.times[-1]]
    for key in (
        ("events", "resume_calls")
        if read.increasing
        else ("events", "resume_calls", "resource_samples")
    ):
        value = group.get(key)
        if not isinstance(value, list) or not value:
            continue
        try:  # a schema-valid file: every item a mapping with a float t_s
            raw = [i["t_s"] for i in value]
            low, high = min(raw), max(raw)
            if type(low) not in (float, int) or type(high) not in (float, int):
                raise TypeError("not a number")
            times += [float(low), float(high)]
        except (KeyError, TypeError, ValueError, OverflowError):
            found = [t for i in mappings(value) if (t := as_number(i.get("t_s"))) is not None]
            times += [min(found), max(found)] if found else []
    return (min(times), max(times)) if times else None


def _init_order(name: str, group: Group) -> list[str]:
    """Init steps one after the other; the runner's own steps in its order, each once."""
    steps = [
        (s0, s1, str(step.get("name")))
        for step in init_steps(group)
        if (s0 := as_number(step.get("start_s"))) is not None
        and (s1 := as_number(step.get("end_s"))) is not None
    ]
    steps.sort()
    problems: list[str] = []
    for (a0, a1, a), (b0, _, b) in itertools.pairwise(steps):
        if b0 < a1 - TIME_TOLERANCE_S:
            problems.append(
                f"{name}'s init steps {a} ({secs(a0)}–{secs(a1)}) and {b} (from {secs(b0)}) "
                "overlap: the driver runs them one after the other"
            )
    known = [label for _, _, label in steps if label in INIT_STEPS]
    repeated = sorted({label for label in known if known.count(label) > 1})
    if repeated:
        problems.append(f"{name} records init step {listing(repeated)} more than once")
    order = [INIT_STEPS.index(label) for label in known]
    for x, y in itertools.pairwise(order):
        if y < x:
            problems.append(
                f"{name}'s init step {INIT_STEPS[y]} comes after {INIT_STEPS[x]}; the driver "
                f"runs {', '.join(INIT_STEPS)} in that order (the engine sleeps only once "
                "launched)"
            )
            break
    return problems


def _cycle_prefix(name: str, group: Group) -> list[str]:
    """A phase starts only after every phase before it ended normally."""
    events = mappings(group.get("events"))
    windows, starts = phase_windows(events), started(group)
    needed = [p for p in CYCLE if p in required_phases(group)]
    for phase in (p for p in needed if p in starts):
        before = needed[: needed.index(phase)]
        short = [p for p in before if p not in windows or closed_as_failed(events, p)]
        if short:
            return [
                f"{name}'s {phase} started although {listing(short)} before it did not end "
                "normally: the driver runs the cycle one phase after the other and stops at "
                "the first that fails"
            ]
    return []


def _start_checks(doc: Doc) -> list[str]:
    """The whole-GPU memory check before each group (runner.wait_for_baseline)."""
    problems: list[str] = []
    baselines: list[float | None] = []
    for name in GROUP_ORDER:
        group = group_of(doc, name)
        check: Mapping[str, Any] = {}
        for event in mappings(group.get("events")):
            detail = event.get("detail")
            if event.get("phase") == "initial_sync" and isinstance(detail, Mapping):
                found = detail.get("gpu_memory_at_start")
                check = found if isinstance(found, Mapping) else check
                break
        if not check:
            continue
        used, base = as_number(check.get("used_mb")), as_number(check.get("baseline_mb"))
        tolerance = as_number(check.get("tolerance_mb"))
        ok = check.get("ok")
        baselines.append(base)
        if ok is False or (
            ok is True and None not in (used, base, tolerance) and used > base + tolerance  # type: ignore[operator]
        ):
            problems.append(
                f"{name} ran although its start check did not pass (gpu_memory_at_start: "
                f"{used} MiB used against a baseline of {base} MiB + {tolerance}, ok {ok}): "
                "the runner starts a group only once memory is back at the baseline"
            )
    if len(baselines) == 2 and None not in baselines and baselines[0] != baselines[1]:
        problems.append(
            f"the groups' start checks have baselines {baselines[0]:g} and {baselines[1]:g} "
            "MiB: the second group is held to the first group's baseline"
        )
    return problems


def _one_clock(doc: Doc) -> list[str]:
    """The second group's records all follow the first's, on the host's clock."""
    first, second = (_bounds(group_of(doc, name)) for name in GROUP_ORDER)
    # A group whose clock starts at 0 was rebased by its writer (the runner never
    # rebases CLOCK_MONOTONIC): the two clocks cannot be compared.
    if first is None or second is None or 0 in (first[0], second[0]) or second[0] > first[1]:
        return []
    a, b = first, second
    return [
        f"{GROUP_ORDER[1]}'s records begin at {secs(b[0])}, before {GROUP_ORDER[0]}'s end "
        f"at {secs(a[1])}: the runner starts {GROUP_ORDER[1]} only after "
        f"{GROUP_ORDER[0]}'s process has exited, on the same clock"
    ]


def driver_lacks(group: Group) -> list[str]:
    """What the group's own record lacks for its driver to have completed: a cycle phase
    that did not end normally, an update or sync not completed. (The sync's sub-phases are
    the actor's, drained into the record at the end: a failed drain loses them from a run
    that completed.)"""
    events = mappings(group.get("events"))
    windows = phase_windows(events)
    needed = [p for p in CYCLE if p in required_phases(group)]
    short = [p for p in needed if p not in windows or closed_as_failed(events, p)]
    lacks = [f"{listing(short)} did not end normally"] if short else []
    return lacks + [
        f"{step}_completed is not true"
        for step in ("update", "sync")
        if group.get(f"{step}_completed") is not True
    ]


def _first_failure_stops(doc: Doc, where: object) -> list[str]:
    """The second group runs only after the first completed (a failure ends the run)."""
    first, second = GROUP_ORDER
    a, b = group_of(doc, first), group_of(doc, second)
    if not has_evidence(a):
        return []  # the first group left no record: nothing to hold the second to
    lacks = driver_lacks(a)
    if has_evidence(b) and lacks:
        return [
            f"{second} ran although {first} did not complete ({'; '.join(lacks)}): the "
            "runner stops at the first group that fails"
        ]
    if has_evidence(b) and where == first:
        return [
            f"the run is marked failed in {first}, yet {second} ran after it: the runner "
            "stops at the first group that fails"
        ]
    if where == second and not has_evidence(b) and lacks:
        return [
            f"the run is marked failed in {second}, which never ran, but {first} did not "
            f"complete ({'; '.join(lacks)}): the runner stops at the first group that fails"
        ]
    return []


def _failure_phase(doc: Doc, failure: Mapping[str, Any]) -> list[str]:
    """The failure names the phase the group stopped in: the last it started, or (a
    group killed from outside) one it may have reached after its record's last flush."""
    where, phase, kind = failure.get("group"), failure.get("phase"), failure.get("type")
    if where not in GROUP_ORDER or not isinstance(phase, str):
        return []
    group = group_of(doc, str(where))
    starts = started(group)
    last = max((p for p in CYCLE if p in starts), key=CYCLE.index, default=None)
    if phase == "init":
        return (
            [f"the run is marked failed in {where}'s init, but {where} went on to {last}"]
            if last
            else []
        )
    anchor = "sync" if phase in SYNC_SUB_PHASES else phase
    if anchor not in CYCLE or anchor == last:
        return []
    named = f"{where}, phase {phase}"
    if last is not None and CYCLE.index(anchor) < CYCLE.index(last):
        return [f"the run is marked failed in {named}, but {where} went on to {last} after it"]
    events = mappings(group.get("events"))
    # A kill leaves the record of the last flush: it ends on a flush point that ended
    # normally (or holds no cycle phase at all).
    flushed = last is None or (
        last in FLUSHED_AFTER
        and last in phase_windows(events)
        and not closed_as_failed(events, last)
    )
    if kind in KILL_TYPES and flushed and anchor in lost_to_a_kill(last):
        return []
    return [
        f"the run is marked failed in {named}, which never started, but {where}'s record "
        f"stops at {last or 'init'}: a phase that raised is recorded with its failure, and only a "
        f"group killed from outside ({' or '.join(KILL_TYPES)}) loses the phases after its "
        f"record's last flush (after {', '.join(FLUSHED_AFTER)})"
    ]


def sequence_problems(doc: Doc) -> list[str]:
    """Every record of the file the runner's state machine cannot produce."""
    problems: list[str] = []
    for name in GROUP_ORDER:
        group = group_of(doc, name)
        problems += _init_order(name, group) + _cycle_prefix(name, group)
    problems += _start_checks(doc) + _one_clock(doc)
    failure = section(doc, "failure")  # a failed run's record, or nothing to go by
    if doc.get("status") == "failed":
        problems += _first_failure_stops(doc, failure.get("group"))
        problems += _failure_phase(doc, failure)
    return problems
