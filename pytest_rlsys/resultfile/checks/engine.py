"""The resume_calls check: the rollout engine's sleep and wake against free_cache_engine."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_rlsys.resultfile.checks.cards import gpu_total
from pytest_rlsys.resultfile.checks.evidence import as_number, group_of, mappings, outcome, secs
from pytest_rlsys.resultfile.checks.identity import lookup
from pytest_rlsys.resultfile.checks.machine import (
    KNOWN_ENGINES,
    SLEEP_MODE_PATH,
    EngineMachine,
    engine_name,
    kv_cache_bytes,
    machine_for,
)
from pytest_rlsys.resultfile.checks.sequence import init_steps
from pytest_rlsys.resultfile.checks.timeline import (
    Series,
    end_details,
    failed_in,
    open_windows,
    phase_at,
    phase_windows,
    series_of,
    window_text,
    within,
)
from pytest_rlsys.resultfile.checks.vocabulary import (
    CUDA_GRAPH_SHARE,
    DEFAULT_UTILIZATION,
    ENFORCE_EAGER_PATH,
    GROUP_NAMES,
    MAX_LISTED,
    RELEASE_FREE_MB,
    RELEASE_FREE_SHARE,
    RESUME_ALLOWED_IN,
    RESUME_LEAD_S,
    RESUME_PHASES,
    RETAIN_SHED_FRACTION,
    RETAIN_SHED_MB,
    RETAIN_SLACK_MB,
    RETAIN_SLACK_SHARE,
    RETAIN_UTILIZATION_FLOOR,
    SLEEP_DROP_FRACTION,
    SLEEP_DROP_MB,
    UTILIZATION_PATH,
    CheckResult,
    Doc,
)

_RESUME_WORD = re.compile(r"resum|wake", re.IGNORECASE)
Events = Sequence[Mapping[str, Any]]
Windows = Mapping[str, tuple[float, float]]


def _retain_resume_problems(name: str, group: Mapping[str, Any], series: Series) -> list[str]:
    """A retained engine never sleeps and never resumes, however it is recorded."""
    events = mappings(group.get("events"))
    windows = phase_windows(events)
    return [
        *_retain_calls(name, mappings(group.get("resume_calls")), windows),
        *_retain_phases(name, events),
        *_retain_tags(name, events),
        *_retain_init_steps(name, group),
        *_retain_sleep(name, events, windows, series),
    ]


def _retain_calls(name: str, calls: Events, windows: Windows) -> Iterator[str]:
    if calls:
        times = ", ".join(
            f"{t:.3f} s {phase_at(t, windows)}"
            for c in calls[:MAX_LISTED]
            if (t := as_number(c.get("t_s"))) is not None
        )
        yield (
            f"{name} (free_cache_engine false) made {len(calls)} resume call(s); expected none"
            + (f" (at {times})" if times else "")
        )


def _retain_phases(name: str, events: Events) -> Iterator[str]:
    for phase in RESUME_PHASES:
        if found := [e for e in events if e.get("phase") == phase]:
            t = as_number(found[0].get("t_s"))
            yield (
                f"{name} (free_cache_engine false) records {len(found)} {phase} event(s)"
                + (f", the first at {secs(t)}" if t is not None else "")
                + ": a retained engine is never resumed"
            )


def _retain_tags(name: str, events: Events) -> Iterator[str]:
    for e in events:
        if e.get("phase") in RESUME_PHASES or not isinstance(e.get("detail"), Mapping):
            continue
        for key, value in e["detail"].items():
            if value not in (None, False, [], "", 0) and (
                key == "tags" or _RESUME_WORD.search(str(key))
            ):
                yield (
                    f"{name}'s {e.get('phase')} {e.get('kind')} event at {e.get('t_s')} s records "
                    f"a resume (detail.{key} = {value!r}): a retained engine is never resumed"
                )
                return  # the first says it


def _retain_init_steps(name: str, group: Mapping[str, Any]) -> Iterator[str]:
    for step in init_steps(group):
        if _RESUME_WORD.search(label := str(step.get("name", ""))):
            yield f"{name}'s init step {label!r} resumes the engine: retain never does"


def _retain_sleep(name: str, events: Events, windows: Windows, series: Series) -> list[str]:
    if "engine_sleep" not in windows and not any(e.get("phase") == "engine_sleep" for e in events):
        return []
    details = end_details(events, "engine_sleep")
    effective = [d.get("effective") for d in details if "effective" in d]
    window = windows.get("engine_sleep")
    where = f" ({window_text(window)})" if window else ""
    if True in effective or False not in effective:
        return [
            f"{name} (free_cache_engine false) records an engine_sleep phase{where} that is "
            "not marked as a no-op (detail.effective false): a retained engine never sleeps"
        ]
    return _sleep_drop(name, series, window, windows) if window is not None else []


def _sleep_drop(
    name: str, series: Series, window: tuple[float, float], windows: Windows
) -> list[str]:
    before_index = bisect_right(series.times, window[0]) - 1
    if before_index < 0:
        return []
    level = series.values[before_index]
    # A freed KV cache stays freed until something resumes it: look up to the update.
    until = max(window[1], windows["update"][0]) if "update" in windows else window[1]
    inside = series.inside(window[0], until)
    if not inside:
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


def _sequence_text(sequence: Sequence[tuple[str, ...]]) -> str:
    return ", then ".join("+".join(tags) or "(no tags)" for tags in sequence) or "nothing"


@dataclass(frozen=True)
class _Released:
    """What the released group's passes read: its calls placed in its (open) windows."""

    name: str
    config: object
    events: list[Mapping[str, Any]]
    windows: dict[str, tuple[float, float]]
    machine: EngineMachine | None
    # (time, tags, label, the sync it lies in or None, detail) of each timed call, in order
    calls: list[tuple[float, tuple[str, ...], str, str | None, Mapping[str, Any]]]

    @classmethod
    def of(cls, name: str, group: Mapping[str, Any]) -> _Released:
        calls = mappings(group.get("resume_calls"))
        events = mappings(group.get("events"))
        # A failed run's last phase never ended: its calls are still placed inside it.
        windows = open_windows(events, calls)
        placed = []
        for call in calls:
            if (t := as_number(call.get("t_s"))) is None:
                continue
            raw = call.get("tags")
            tags = tuple(str(tag) for tag in raw) if isinstance(raw, list) else ()
            label = f"{name}'s resume call {'+'.join(tags) or '(no tags)'} at {secs(t)}"
            where = next(
                (
                    p
                    for p in RESUME_ALLOWED_IN
                    if within(t, windows.get(p), RESUME_LEAD_S, RESUME_LEAD_S)
                ),
                None,
            )
            detail = call.get("detail")
            placed.append((t, tags, label, where, detail if isinstance(detail, Mapping) else {}))
        config = group.get("config")
        return cls(name, config, events, windows, machine_for(config), placed)


def _slept(g: _Released) -> list[str]:
    """The engine really slept, and a vLLM engine in sleep mode."""
    problems = []
    if False in [
        d.get("effective") for d in end_details(g.events, "engine_sleep") if "effective" in d
    ]:
        problems.append(
            f"{g.name}'s engine_sleep is recorded as a no-op (detail.effective false): "
            "the released engine never slept"
        )
    sleep_mode = lookup(g.config, SLEEP_MODE_PATH)[1]  # a config that is no object: None
    if g.machine is not None and g.machine.needs_sleep_mode and sleep_mode is False:
        problems.append(
            f"{g.name} sleeps its vLLM engine (free_cache_engine true) although its config "
            f"sets {SLEEP_MODE_PATH}=false: vLLM can sleep only in sleep mode (verl "
            "passes the flag to vLLM at vllm_async_server.py:337)"
        )
    return problems


def _has_sync(g: _Released) -> list[str]:
    """A group that stopped before its sync (a failed run) lacks it honestly: phase_events
    says so. One that went on past the sync point without one cannot have woken."""
    later = [p for p in ("rollout_after_update", "score_after_update") if p in g.windows]
    if "sync" in g.windows or not later:
        return []
    return [
        f"{g.name} has no sync window to match its resume calls to, yet it went on to "
        f"{', '.join(later)}"
    ]


def _placed(g: _Released) -> list[str]:
    """Each call lies in a sync, and its detail (when recorded) agrees."""
    problems = []
    allowed = " or ".join(
        f"{p} ({window_text(g.windows[p])})" for p in RESUME_ALLOWED_IN if p in g.windows
    )
    for t, _, label, where, detail in g.calls:
        if where is None:
            problems.append(
                f"{label} happens {phase_at(t, g.windows)}; a released engine is resumed only "
                f"inside {allowed or 'the initial sync or the sync'}"
            )
            continue
        if detail.get("free_cache_engine") is False:
            problems.append(
                f"{label} records free_cache_engine false (the probe writes the actor's own "
                "config flag), but the group released its engine"
            )
        during = detail.get("during")
        if isinstance(during, str) and during != where:
            problems.append(
                f"{label} lies in {where} ({window_text(g.windows[where])}) but records that it "
                f"was made during {during}"
            )
    return problems


def _in_sub_phases(g: _Released) -> list[str]:
    """In the cycle's sync, weights inside resume_weights, the KV cache inside
    resume_kv_cache and after the weight transfer."""
    problems = []
    transfer = g.windows.get("weight_transfer")
    for t, tags, label, where, _ in g.calls:
        for tag in (tag for tag in ("weights", "kv_cache") if where == "sync" and tag in tags):
            window = g.windows.get(f"resume_{tag}")
            if not within(t, window, RESUME_LEAD_S):
                room = f" ({window_text(window)})" if window else " (not recorded)"
                problems.append(f"{label} lies outside resume_{tag}{room}")
            elif tag == "kv_cache" and transfer is not None and t < transfer[1]:
                problems.append(
                    f"{label} comes before the weight transfer ends ({secs(transfer[1])})"
                )
    return problems


def _sequences(g: _Released) -> list[str]:
    """Each sync wakes exactly its engine's tags, in order; no resume_weights phase for an
    engine that never resumes its weights."""
    if g.machine is None:
        return []
    problems, want = [], [(tag,) for tag in g.machine.wakes]
    for where in RESUME_ALLOWED_IN:
        if where not in g.windows or failed_in(g.events, where):
            continue
        got = [tags for _, tags, _, at, _ in sorted(g.calls, key=lambda c: c[0]) if at == where]
        if got != want:
            problems.append(
                f"{g.name}'s {where} resumes {_sequence_text(got)}; a released "
                f"{g.machine.engine} engine wakes {_sequence_text(want)} in each sync "
                f"({g.machine.source})"
            )
    weights = g.windows.get("resume_weights")
    if not g.machine.wakes_weights and weights is not None:
        problems.append(
            f"{g.name}'s sync records a resume_weights phase ({window_text(weights)}), but "
            f"a released {g.machine.engine} engine serving a LoRA adapter never resumes its "
            f"weights ({g.machine.source})"
        )
    return problems


# A released group against its engine's machine (checks.machine), in the order told.
RELEASE_PASSES = (_slept, _has_sync, _placed, _in_sub_phases, _sequences)


def _release_resume_problems(name: str, group: Mapping[str, Any]) -> list[str]:
    released = _Released.of(name, group)
    return [p for check in RELEASE_PASSES for p in check(released)]


def _held_high(values: list[float]) -> float | None:
    """The highest level two readings reach (the second highest), from at least three:
    one stray reading, high or low, can neither set it nor hide it."""
    return _second(values, max) if len(values) >= 3 else None


def _held_low(values: list[float]) -> float | None:
    """The lowest level two readings stay at or below (the second lowest), from three."""
    return _second(values, min) if len(values) >= 3 else None


def _second(values: list[float], pick: Callable[[list[float]], float]) -> float:
    """The second highest (``max``) or lowest (``min``) value: ``pick`` again without
    one instance of the first (a few C-speed passes, not a sort of an hour's readings)."""
    at = values.index(pick(values))
    return pick(values[:at] + values[at + 1 :])


def _release_floor(group: Mapping[str, Any], environment: Mapping[str, Any]) -> float:
    """What a released engine's sleep frees at the least: RELEASE_FREE_MB, or, where the
    sleep also releases the weights (checks.machine) and the card's total is known,
    RELEASE_FREE_SHARE of the engine's share (KV cache + weights fill most of it)."""
    config = group.get("config")
    machine = machine_for(config)
    total = gpu_total(environment)
    if not isinstance(config, Mapping) or machine is None:
        return RELEASE_FREE_MB
    sized = kv_cache_bytes(config, machine.engine)
    if sized is not None:
        # vLLM ignores the share: the sleep frees at least the pool it was told to make.
        return min(RELEASE_FREE_MB, sized / 2**20)
    if not machine.wakes_weights or total is None:
        return RELEASE_FREE_MB
    present, util = lookup(config, UTILIZATION_PATH)
    fraction = as_number(util) if present else DEFAULT_UTILIZATION
    if fraction is None or not 0 < fraction <= 1:
        return RELEASE_FREE_MB
    return max(RELEASE_FREE_MB, RELEASE_FREE_SHARE * fraction * total)


def _release_frees(
    name: str, group: Mapping[str, Any], series: Series, environment: Mapping[str, Any]
) -> list[str]:
    """A released engine's sleep frees memory: at least _release_floor between its level
    just before the sleep (the higher of the last two readings) and the lowest level held
    from the sleep's end to the sync; and its KV cache comes back after resume_kv_cache."""
    windows = phase_windows(mappings(group.get("events")))
    sleep = windows.get("engine_sleep")
    if sleep is None:
        return []
    since = windows["initial_sync"][0] if "initial_sync" in windows else sleep[0]
    # The awake spell just before the sleep can be a single reading at a coarse interval:
    # the highest of the last two readings and those inside the sleep, which can predate
    # the free (at 0.5 s an honest run's only rollout-level reading came 2 ms after its
    # engine_sleep began; a stray high one can only hide a fault).
    awake = series.inside(since, sleep[0])[-2:]
    level = max([*awake, *series.inside(*sleep)]) if len(awake) == 2 else None
    until = windows["sync"][0] if "sync" in windows else sleep[1]
    # The engine stays asleep until the sync wakes it: memory freed inside the sleep and
    # back before the sync was not freed by it. From the sleep's start where its end has
    # too few readings after it.
    low = _held_low(series.inside(sleep[1], until))
    low = low if low is not None else _held_low(series.inside(sleep[0], until))
    if level is None or low is None:
        return []
    kv = windows.get("resume_kv_cache")
    last = max(w[1] for w in windows.values())
    # From the KV wake on: its second-highest reading is the re-allocated level.
    woken = series.inside(kv[0], last) if kv else []
    back = max(woken) if len(woken) >= 2 else None
    # Here a stray high reading before the sleep could make a fault: the lower of the two.
    before = min(awake)
    if back is not None and before - back > max(RETAIN_SHED_MB, RETAIN_SHED_FRACTION * before):
        return [
            f"{name}'s whole-GPU memory after resume_kv_cache holds at most {back:g} MiB, far "
            f"below its {before:g} MiB awake before the sleep: the woken engine re-allocates "
            "its KV cache (and the actor only grew in the update), yet none came back"
        ]
    floor = _release_floor(group, environment)
    if level - low < floor:
        return [
            f"{name}'s whole-GPU memory goes from {level:g} MiB awake before its engine_sleep "
            f"({window_text(sleep)}) to no lower than {low:g} MiB until the sync: the released "
            f"engine's sleep freed less than {floor:.0f} MiB (its KV cache, and the weights "
            f"where they are released, fill most of its share; at least {RELEASE_FREE_SHARE:g} "
            f"of it or {RELEASE_FREE_MB:g} MiB)"
        ]
    return []


def _retain_holds(
    name: str, group: Mapping[str, Any], series: Series, environment: Mapping[str, Any]
) -> list[str]:
    """A retained engine keeps its memory: whole-GPU memory after the initial sync never
    falls far below its level before the update, and the engine holds at least
    RETAIN_UTILIZATION_FLOOR x gpu_memory_utilization x the card's memory."""
    problems: list[str] = []
    windows = phase_windows(mappings(group.get("events")))
    start = windows.get("initial_sync")
    if start is None:
        return []
    last = max(w[1] for w in windows.values())
    after = series.inside(start[1], last)
    update = windows.get("update")
    level = _held_high(series.inside(start[0], update[0] if update else last))
    low = _held_low(after)
    shed = (
        level is not None
        and low is not None
        and level - low > max(RETAIN_SHED_MB, RETAIN_SHED_FRACTION * level)
    )
    if shed:
        problems.append(
            f"{name}'s whole-GPU memory falls from {level:g} MiB (held before the update) "
            f"to {low:g} MiB (held after its initial sync), with no sleep: a retained engine "
            "keeps its weights and KV cache resident"
        )
    config = group.get("config")
    machine = machine_for(config)
    total = gpu_total(environment)
    if machine is None or total is None or not isinstance(config, Mapping):
        return problems
    # An explicit KV size in the engine's own kwargs (vllm_async_server.py:349) overrides
    # the fraction: the share rule then says nothing.
    if kv_cache_bytes(config, machine.engine) is not None:
        return problems
    present, util = lookup(config, UTILIZATION_PATH)
    fraction = as_number(util) if present else DEFAULT_UTILIZATION
    if fraction is None or not 0 < fraction <= 1:
        return problems
    problems += _retain_ceiling(name, group, series, config, fraction, total)
    floor = RETAIN_UTILIZATION_FLOOR * fraction * total
    awake = _awake_stretch(group, series)
    engine: float | None
    if awake is not None:
        # The engine's own level: whole-GPU memory less what the actor holds (the actor
        # is outside the engine's share; counting it would hide a small engine).
        held, actor = awake
        engine = held - actor
        said = f"holds at most {held:g} MiB before its update, less the actor's {actor:g} MiB"
    else:
        engine = _held_high(after)
        said = f"holds at most {engine} MiB after its initial sync"  # unused when None
    if engine is not None and engine < floor:
        problems.append(
            f"{name}'s whole-GPU memory {said}: its engine holds {engine:g} MiB, "
            f"below {RETAIN_UTILIZATION_FLOOR:g} x gpu_memory_utilization {fraction:g} x "
            f"{total:.0f} MiB = {floor:.0f} MiB: a retained engine holds its share of "
            f"the card ({machine.engine} sizes its KV cache so the engine fills "
            "gpu_memory_utilization x total memory)"
        )
    return problems


def _awake_stretch(group: Mapping[str, Any], series: Series) -> tuple[float, float] | None:
    """From the initial sync's end to the update's start (the engine awake and idle, the
    actor holding only its model): the highest whole-GPU level held, and the actor's
    largest memory recorded at those phases' edges; None without either."""
    windows = phase_windows(mappings(group.get("events")))
    start, update = windows.get("initial_sync"), windows.get("update")
    table = group.get("phases")
    if start is None or update is None or not isinstance(table, Mapping):
        return None
    stretch = [p for p, (a, b) in windows.items() if a >= start[1] and b <= update[0]]
    actor = [
        v
        for p in stretch
        if isinstance(table.get(p), Mapping)
        for key in ("actor_memory_start_mb", "actor_memory_end_mb")
        if (v := as_number(table[p].get(key))) is not None
    ]
    held = _held_high(series.inside(start[1], update[0]))
    if not actor or held is None:
        return None
    return held, max(actor)


def _retain_ceiling(
    name: str,
    group: Mapping[str, Any],
    series: Series,
    config: Mapping[str, Any],
    share: float,
    total: float,
) -> list[str]:
    """From the initial sync's end to the update's start, whole-GPU memory holds no more
    than the engine's share + the actor's recorded memory + the allowance."""
    awake = _awake_stretch(group, series)
    if awake is None:
        return []
    held, actor = awake
    eager = lookup(config, ENFORCE_EAGER_PATH)[1] is True
    allowance = max(RETAIN_SLACK_MB, RETAIN_SLACK_SHARE * total) + (
        0.0 if eager else CUDA_GRAPH_SHARE * total
    )
    ceiling = share * total + actor + allowance
    if held <= ceiling:
        return []
    return [
        f"{name}'s whole-GPU memory holds {held:g} MiB between its initial sync and its "
        f"update, above gpu_memory_utilization {share:g} x {total:.0f} MiB + the actor's "
        f"{actor:g} MiB + {allowance:.0f} MiB for CUDA contexts, allocator slack"
        f"{'' if eager else ' and CUDA graphs'} = {ceiling:.0f} MiB: the retained engine "
        "holds more than the share its config gives it"
    ]


def check_resume_calls(doc: Doc) -> CheckResult:
    """Resume calls and memory match free_cache_engine and the engine's machine.

    A released engine sleeps (and frees memory), and is resumed only inside the
    initial sync or the sync, each time with exactly its engine's wake sequence
    (checks.machine); in the sync, the weights inside resume_weights and the KV
    cache inside resume_kv_cache, after the weight transfer has ended. A retained
    engine never sleeps and never resumes: no resume call, no resume sub-phase or
    resume-tagged event, an engine_sleep phase only as a recorded no-op
    (detail.effective false), and its memory stays where it is.
    """
    problems: list[str] = []
    environment = doc.get("environment")
    environment = environment if isinstance(environment, Mapping) else {}
    for name in GROUP_NAMES:
        group = group_of(doc, name)
        # One time-sorted series per group, read by every memory rule below.
        series = series_of(group)
        if group.get("free_cache_engine") is not True:
            problems += _retain_resume_problems(name, group, series)
            problems += _retain_holds(name, group, series, environment)
        else:
            problems += _release_resume_problems(name, group)
            problems += _release_frees(name, group, series, environment)
    engines = sorted({engine_name(group_of(doc, name).get("config")) for name in GROUP_NAMES})
    unknown = [e for e in engines if e not in KNOWN_ENGINES]
    if unknown and not problems:
        return CheckResult(
            True,
            f"rollout engine {', '.join(unknown)} has no known sleep/wake machine in verl 0.9.1: "
            "only the engine-independent rules were checked (resumes only inside the syncs, "
            "retain never sleeps or resumes)",
        )
    return outcome(
        problems,
        f"release ({'/'.join(engines)}) slept and woke as its engine does, only inside the "
        "syncs, in order; retain never slept or resumed",
    )
