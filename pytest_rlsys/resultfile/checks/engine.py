"""The resume_calls check: the rollout engine's sleep and wake against free_cache_engine."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from typing import Any

from pytest_rlsys.resultfile.checks.evidence import as_number, group_of, mappings, outcome, secs
from pytest_rlsys.resultfile.checks.timeline import (
    Series,
    end_details,
    phase_at,
    phase_windows,
    window_text,
    within,
)
from pytest_rlsys.resultfile.checks.vocabulary import (
    GROUP_NAMES,
    MAX_LISTED,
    RESUME_ALLOWED_IN,
    RESUME_LEAD_S,
    RESUME_PHASES,
    SLEEP_DROP_FRACTION,
    SLEEP_DROP_MB,
    CheckResult,
    Doc,
)

_RESUME_WORD = re.compile(r"resum|wake", re.IGNORECASE)


def _retain_resume_problems(name: str, group: Mapping[str, Any]) -> list[str]:
    """A retained engine never sleeps and never resumes, however it is recorded."""
    problems: list[str] = []
    calls = mappings(group.get("resume_calls"))
    events = mappings(group.get("events"))
    windows = phase_windows(events)
    if calls:
        times = ", ".join(
            f"{t:.3f} s {phase_at(t, windows)}"
            for c in calls[:MAX_LISTED]
            if (t := as_number(c.get("t_s"))) is not None
        )
        problems.append(
            f"{name} (free_cache_engine false) made {len(calls)} resume call(s); expected none"
            + (f" (at {times})" if times else "")
        )
    for phase in RESUME_PHASES:
        found = [e for e in events if e.get("phase") == phase]
        if found:
            t = as_number(found[0].get("t_s"))
            problems.append(
                f"{name} (free_cache_engine false) records {len(found)} {phase} event(s)"
                + (f", the first at {secs(t)}" if t is not None else "")
                + ": a retained engine is never resumed"
            )
    tagged = [
        (e, key)
        for e in events
        if e.get("phase") not in RESUME_PHASES and isinstance(e.get("detail"), Mapping)
        for key, value in e["detail"].items()
        if value not in (None, False, [], "", 0)
        and (key == "tags" or _RESUME_WORD.search(str(key)))
    ]
    if tagged:
        e, key = tagged[0]
        problems.append(
            f"{name}'s {e.get('phase')} {e.get('kind')} event at {e.get('t_s')} s records a "
            f"resume (detail.{key} = {e['detail'][key]!r}): a retained engine is never resumed"
        )
    steps = mappings(
        group.get("init", {}).get("steps") if isinstance(group.get("init"), Mapping) else []
    )
    for step in steps:
        label = str(step.get("name", ""))
        if _RESUME_WORD.search(label):
            problems.append(f"{name}'s init step {label!r} resumes the engine: retain never does")
    if "engine_sleep" in windows or any(e.get("phase") == "engine_sleep" for e in events):
        details = end_details(events, "engine_sleep")
        effective = [d.get("effective") for d in details if "effective" in d]
        window = windows.get("engine_sleep")
        where = f" ({window_text(window)})" if window else ""
        if True in effective or False not in effective:
            problems.append(
                f"{name} (free_cache_engine false) records an engine_sleep phase{where} that is "
                "not marked as a no-op (detail.effective false): a retained engine never sleeps"
            )
        elif window is not None:
            problems += _sleep_drop(name, group, window, windows)
    return problems


def _sleep_drop(
    name: str,
    group: Mapping[str, Any],
    window: tuple[float, float],
    windows: Mapping[str, tuple[float, float]],
) -> list[str]:
    series = Series(mappings(group.get("resource_samples")))
    before_index = bisect_right(series.times, window[0]) - 1
    if before_index < 0:
        return []
    level = as_number(series.values[before_index])
    # A freed KV cache stays freed until something resumes it: look up to the update.
    until = max(window[1], windows["update"][0]) if "update" in windows else window[1]
    inside = [v for x in series.inside(window[0], until) if (v := as_number(x)) is not None]
    if level is None or not inside:
        return []
    low = min(inside)
    drop = level - low
    if drop > SLEEP_DROP_MB and drop > SLEEP_DROP_FRACTION * level:
        return [
            f"{name}'s whole-GPU memory falls from {level:g} MiB to {low:g} MiB from its "
            f"no-op engine_sleep ({window_text(window)}) to the update: the retained engine "
            "released memory"
        ]
    return []


def _release_resume_problems(name: str, group: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    calls = mappings(group.get("resume_calls"))
    events = mappings(group.get("events"))
    windows = phase_windows(events)
    effective = [
        d.get("effective") for d in end_details(events, "engine_sleep") if "effective" in d
    ]
    if False in effective:
        problems.append(
            f"{name}'s engine_sleep is recorded as a no-op (detail.effective false): "
            "the released engine never slept"
        )
    sync = windows.get("sync")
    if sync is None:
        problems.append(f"{name} has no sync window to match its resume calls to")
    weights_window = windows.get("resume_weights")
    kv_window = windows.get("resume_kv_cache")
    transfer = windows.get("weight_transfer")
    weights_ok = kv_ok = 0
    for call in calls:
        t = as_number(call.get("t_s"))
        tags = call.get("tags")
        tags = [str(tag) for tag in tags] if isinstance(tags, list) else []
        if t is None:
            continue
        label = f"{name}'s resume call {'+'.join(tags) or '(no tags)'} at {secs(t)}"
        if within(t, windows.get("initial_sync")):
            continue
        if not within(t, sync):
            allowed = " or ".join(
                f"{p} ({window_text(windows[p])})" for p in RESUME_ALLOWED_IN if p in windows
            )
            problems.append(
                f"{label} happens {phase_at(t, windows)}; a released engine is resumed only "
                f"inside {allowed or 'the initial sync or the sync'}"
            )
            continue
        if "weights" in tags:
            if within(t, weights_window, RESUME_LEAD_S):
                weights_ok += 1
            else:
                room = f" ({window_text(weights_window)})" if weights_window else " (not recorded)"
                problems.append(f"{label} lies outside resume_weights{room}")
        if "kv_cache" in tags:
            if not within(t, kv_window, RESUME_LEAD_S):
                room = f" ({window_text(kv_window)})" if kv_window else " (not recorded)"
                problems.append(f"{label} lies outside resume_kv_cache{room}")
            elif transfer is not None and t < transfer[1]:
                problems.append(
                    f"{label} comes before the weight transfer ends ({secs(transfer[1])})"
                )
            else:
                kv_ok += 1
    if sync is not None:
        if not weights_ok and not any(
            "weights" in (c.get("tags") or []) and within(as_number(c.get("t_s")) or -1.0, sync)
            for c in calls
        ):
            problems.append(f"{name} made no resume call tagged 'weights' during sync")
        if not kv_ok and not any(
            "kv_cache" in (c.get("tags") or []) and within(as_number(c.get("t_s")) or -1.0, sync)
            for c in calls
        ):
            problems.append(f"{name} made no resume call tagged 'kv_cache' during sync")
    return problems


def check_resume_calls(doc: Doc) -> CheckResult:
    """Resume calls match free_cache_engine.

    A released engine is resumed only inside the initial sync or the sync; in
    the sync, the weights inside resume_weights and the KV cache inside
    resume_kv_cache, after the weight transfer has ended. A retained engine
    never sleeps and never resumes: no resume call, no resume sub-phase or
    resume-tagged event, and an engine_sleep phase only as a recorded no-op
    (detail.effective false) across which whole-GPU memory does not fall.
    """
    problems: list[str] = []
    for name in GROUP_NAMES:
        group = group_of(doc, name)
        if group.get("free_cache_engine") is not True:
            problems += _retain_resume_problems(name, group)
        else:
            problems += _release_resume_problems(name, group)
    return outcome(
        problems,
        "release resumed weights and KV cache only inside the syncs, in order; "
        "retain never slept or resumed",
    )
