"""The eight checks of a pt-verl-closure result, re-derived from its evidence.

Pure functions, no I/O. The runner (``gpu/rlsys_closure``) calls them to write
``system_decision`` and the grader calls them to check it, so both compute every
check the same way. Input is a document that is valid against its schema
(``pt-verl-closure/1``); the functions tolerate missing pieces of a failed run
by failing the check that needed them, not by raising.

Public API::

    CHECK_NAMES, PHASE_NAMES, REQUIRED_PHASE_ORDER, SYNC_SUB_PHASES, FREE_CACHE_ENGINE_PATH
    CheckResult(passed: bool, detail: str)
    derive_checks(doc) -> dict[str, CheckResult]
    derive_measurements(doc) -> dict
    CHECK_FUNCTIONS: dict[str, Callable[[doc], CheckResult]]   # one per check
    config_sha256(config) -> str
    config_diff(a, b) -> list[str]
    phase_windows(events) -> dict[str, tuple[float, float]]
    summarize_phases(events, samples, actor_memory=None) -> dict[str, dict]
    whole_run_peak(samples, phases) -> tuple[float | None, str | None]

Writing a result (the runner), per group then for the pair::

    group["phases"] = summarize_phases(group["events"], group["resource_samples"], actor_mem)
    group["sampled_gpu_peak_mb"], group["sampled_gpu_peak_phase"] = whole_run_peak(
        group["resource_samples"], group["phases"])
    doc["system_decision"] = {"checks": {}, "measurements": derive_measurements(doc)}
    doc["system_decision"]["checks"] = {n: r.as_dict() for n, r in derive_checks(doc).items()}

Events are ``{"t_s", "phase", "kind": "start" | "end"}`` with phase names from
``PHASE_NAMES``; initialisation goes in ``group["init"]``, not in the events.
"""

from __future__ import annotations

import hashlib
import json
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, cast

CHECK_NAMES: tuple[str, ...] = (
    "initial_lora_match",
    "updated_lora_match",
    "config_paired",
    "rollout_source_match",
    "update_and_sync",
    "phase_events",
    "resume_calls",
    "resource_sampling",
)

# Must equal the enum of rlsys-common.v1.json#/$defs/phase_name (a test checks it).
PHASE_NAMES: tuple[str, ...] = (
    "initial_sync",
    "rollout_before_update",
    "engine_sleep",
    "score_before_update",
    "update",
    "sync",
    "resume_weights",
    "weight_transfer",
    "resume_kv_cache",
    "rollout_after_update",
    "score_after_update",
)

# The top-level phases every group runs, one after the other, in this order.
REQUIRED_PHASE_ORDER: tuple[str, ...] = (
    "initial_sync",
    "rollout_before_update",
    "score_before_update",
    "update",
    "sync",
    "rollout_after_update",
    "score_after_update",
)
# Sub-phases inside the sync window, in this order when present.
SYNC_SUB_PHASES: tuple[str, ...] = ("resume_weights", "weight_transfer", "resume_kv_cache")
# Phases required only when the engine is released (free_cache_engine true).
RELEASE_ONLY_PHASES: tuple[str, ...] = ("engine_sleep", "resume_weights", "resume_kv_cache")
# Required in both groups: the retained engine still receives the new weights.
ALWAYS_SUB_PHASES: tuple[str, ...] = ("weight_transfer",)

FREE_CACHE_ENGINE_PATH = "actor_rollout_ref.rollout.free_cache_engine"
GROUP_NAMES: tuple[str, ...] = ("release", "retain")
EXPECTED_FREE_CACHE_ENGINE: dict[str, bool] = {"release": True, "retain": False}

# Times are written as floats in seconds; allow for rounding when a writer
# stores a difference it computed itself (duration_s) rather than ours.
TIME_TOLERANCE_S = 1e-6
MEMORY_TOLERANCE_MB = 1e-6
_MAX_LISTED = 8

Doc = Mapping[str, Any]


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome and a one-line explanation naming the evidence."""

    passed: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """The form stored in ``system_decision.checks.<name>``."""
        return {"passed": self.passed, "detail": self.detail}


# --------------------------------------------------------------------------- helpers


def _short(digest: object) -> str:
    return f"{digest[:12]}…" if isinstance(digest, str) else "null"


def _mb(value: object) -> str:
    return f"{value:g} MiB" if isinstance(value, (int, float)) else "null"


def _s(value: float) -> str:
    return f"{value:.3f} s"


def _listing(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_MAX_LISTED])
    more = len(items) - _MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def _group(doc: Doc, name: str) -> Mapping[str, Any]:
    groups = doc.get("groups")
    group = groups.get(name) if isinstance(groups, Mapping) else None
    return group if isinstance(group, Mapping) else {}


def _list(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _same_mb(a: object, b: object) -> bool:
    x, y = _num(a), _num(b)
    if x is None or y is None:
        return a is None and b is None
    return abs(x - y) <= MEMORY_TOLERANCE_MB


def _same_s(a: object, b: object) -> bool:
    x, y = _num(a), _num(b)
    return x is not None and y is not None and abs(x - y) <= TIME_TOLERANCE_S


def _result(problems: list[str], ok_detail: str) -> CheckResult:
    if problems:
        return CheckResult(False, "; ".join(problems))
    return CheckResult(True, ok_detail)


# --------------------------------------------------------------------------- building blocks


def config_sha256(config: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a resolved config.

    Canonical: keys sorted, no whitespace, UTF-8, NaN/Infinity refused. Key
    order and formatting therefore never change the hash.
    """
    text = json.dumps(
        config, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _same_leaf(a: object, b: object) -> bool:
    # JSON-typed comparison: true is not 1, but 1 and 1.0 are the same number.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def config_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Dotted paths (``x.y[2].z``) where two resolved configs differ, sorted.

    A key present on one side only counts as a difference at that key.
    Iterative, so a deeply nested config cannot exhaust the stack.
    """
    found: list[str] = []
    stack: list[tuple[str, object, object]] = [("", a, b)]
    while stack:
        path, x, y = stack.pop()
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            for key in set(x) | set(y):
                sub = f"{path}.{key}" if path else str(key)
                if key not in x or key not in y:
                    found.append(sub)
                else:
                    stack.append((sub, x[key], y[key]))
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                found.append(path or "(root)")
            else:
                stack.extend(
                    (f"{path}[{i}]", u, v) for i, (u, v) in enumerate(zip(x, y, strict=True))
                )
        elif not _same_leaf(x, y):
            found.append(path or "(root)")
    return sorted(found)


def _lookup(config: Mapping[str, Any], dotted: str) -> tuple[bool, object]:
    node: object = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def phase_windows(events: Iterable[Mapping[str, Any]]) -> dict[str, tuple[float, float]]:
    """Each phase that started and then ended → (start_s, end_s), in start order.

    The first start of a phase and the first end after it define the window;
    repeated or unmatched events are left for the phase_events check to report.
    """
    starts: dict[str, float] = {}
    windows: dict[str, tuple[float, float]] = {}
    for event in events:
        phase, kind, t = event.get("phase"), event.get("kind"), _num(event.get("t_s"))
        if not isinstance(phase, str) or t is None or phase in windows:
            continue
        if kind == "start" and phase not in starts:
            starts[phase] = t
        elif kind == "end" and phase in starts:
            windows[phase] = (starts[phase], t)
    return dict(sorted(windows.items(), key=lambda item: (item[1][0], item[1][1])))


class _Series:
    """A group's samples sorted by time, so a window query is two bisections.

    A one-hour run has 14,400 samples per group and the checks query a dozen
    windows several times; scanning the list for each was most of the grading.
    """

    __slots__ = ("times", "values")

    def __init__(self, samples: Sequence[Mapping[str, Any]]) -> None:
        pairs: list[tuple[float, float]] = []
        for sample in samples:
            t, used = _num(sample.get("t_s")), sample.get("gpu_used_mb")
            if t is not None and _num(used) is not None:
                # Keep the value as written (an int stays an int in the output).
                pairs.append((t, cast(float, used)))
        pairs.sort(key=lambda pair: pair[0])
        self.times = [pair[0] for pair in pairs]
        self.values = [pair[1] for pair in pairs]

    def inside(self, start: float, end: float) -> list[float]:
        """gpu_used_mb of the samples with start <= t_s <= end."""
        return self.values[bisect_left(self.times, start) : bisect_right(self.times, end)]


SamplesLike = Sequence[Mapping[str, Any]] | _Series


def _as_series(samples: SamplesLike) -> _Series:
    return samples if isinstance(samples, _Series) else _Series(samples)


def summarize_phases(
    events: Iterable[Mapping[str, Any]],
    samples: Sequence[Mapping[str, Any]],
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
    series = _Series(samples)
    table: dict[str, dict[str, Any]] = {}
    for phase, (start, end) in phase_windows(events).items():
        inside = series.inside(start, end)
        mem_start, mem_end = memory.get(phase, (None, None))
        table[phase] = {
            "start_s": start,
            "end_s": end,
            # Rounded to the microsecond so float noise (1.3670000000000009)
            # does not leak into the file; the checks compare within 1e-6 s.
            "duration_s": round(end - start, 6),
            "sample_count": len(inside),
            "sampled_gpu_peak_mb": max(inside) if inside else None,
            "actor_memory_start_mb": mem_start,
            "actor_memory_end_mb": mem_end,
        }
    return table


def _windows_of(phases: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    windows: dict[str, tuple[float, float]] = {}
    for name, entry in phases.items():
        if isinstance(entry, Mapping):
            start, end = _num(entry.get("start_s")), _num(entry.get("end_s"))
            if start is not None and end is not None:
                windows[name] = (start, end)
    return dict(sorted(windows.items(), key=lambda item: (item[1][0], item[1][1])))


def _run_window(windows: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
    if not windows:
        return None
    return min(w[0] for w in windows.values()), max(w[1] for w in windows.values())


def _phases_holding(
    value: float, samples: SamplesLike, windows: Mapping[str, tuple[float, float]]
) -> list[str]:
    """Phases whose window holds a sample equal to ``value``."""
    series = _as_series(samples)
    holding: list[str] = []
    for name, (start, end) in windows.items():
        if any(_same_mb(v, value) for v in series.inside(start, end)):
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
    windows = _windows_of(phases)
    span = _run_window(windows)
    if span is None:
        return None, None
    series = _as_series(samples)
    inside = series.inside(span[0], span[1])
    if not inside:
        return None, None
    peak = max(inside)
    holding = _phases_holding(peak, series, windows)
    return peak, (holding[0] if holding else None)


# --------------------------------------------------------------------------- the checks


def check_initial_lora_match(doc: Doc) -> CheckResult:
    """Both groups start from the same LoRA adapter (equal initial hashes)."""
    rel = _group(doc, "release").get("initial_lora_sha256")
    ret = _group(doc, "retain").get("initial_lora_sha256")
    if isinstance(rel, str) and rel == ret:
        return CheckResult(True, f"both groups start from LoRA {_short(rel)}")
    return CheckResult(
        False,
        f"initial LoRA hashes differ: release {_short(rel)}, retain {_short(ret)}; "
        "the groups did not start from the same adapter",
    )


def check_updated_lora_match(doc: Doc) -> CheckResult:
    """Both updates produced the same adapter, and it differs from the initial one."""
    problems: list[str] = []
    updated: dict[str, object] = {}
    for name in GROUP_NAMES:
        group = _group(doc, name)
        after, before = group.get("updated_lora_sha256"), group.get("initial_lora_sha256")
        updated[name] = after
        if not isinstance(after, str):
            problems.append(f"{name} has no updated LoRA hash (null)")
        elif after == before:
            problems.append(f"{name}'s LoRA hash did not change in the update ({_short(after)})")
    rel, ret = updated["release"], updated["retain"]
    if isinstance(rel, str) and isinstance(ret, str) and rel != ret:
        problems.append(f"updated LoRA hashes differ: release {_short(rel)}, retain {_short(ret)}")
    return _result(problems, f"both updates give LoRA {_short(rel)}, changed from the initial")


def check_config_paired(doc: Doc) -> CheckResult:
    """The resolved configs differ only in free_cache_engine, set as each group says."""
    problems: list[str] = []
    configs: dict[str, Mapping[str, Any]] = {}
    for name in GROUP_NAMES:
        group = _group(doc, name)
        config = group.get("config")
        if not isinstance(config, Mapping):
            problems.append(f"{name} has no config")
            continue
        configs[name] = config
        try:
            digest = config_sha256(config)
        except (TypeError, ValueError) as exc:
            problems.append(f"{name}'s config cannot be hashed: {exc}")
        else:
            if digest != group.get("config_sha256"):
                problems.append(
                    f"{name}'s config_sha256 {_short(group.get('config_sha256'))} is not the "
                    f"hash of its config ({_short(digest)})"
                )
        flag = group.get("free_cache_engine")
        expected = EXPECTED_FREE_CACHE_ENGINE[name]
        if flag is not expected:
            problems.append(f"{name} has free_cache_engine={flag}, expected {expected}")
        present, value = _lookup(config, FREE_CACHE_ENGINE_PATH)
        if not present:
            problems.append(f"{name}'s config has no {FREE_CACHE_ENGINE_PATH}")
        elif value is not flag:
            problems.append(
                f"{name}'s config sets {FREE_CACHE_ENGINE_PATH}={value} but the group says {flag}"
            )
    if len(configs) == 2:
        diff = config_diff(configs["release"], configs["retain"])
        other = [path for path in diff if path != FREE_CACHE_ENGINE_PATH]
        if other:
            problems.append(f"configs also differ at {_listing(other)}")
        if FREE_CACHE_ENGINE_PATH not in diff and not problems:
            problems.append(f"configs do not differ at {FREE_CACHE_ENGINE_PATH}")
    return _result(problems, f"configs differ only at {FREE_CACHE_ENGINE_PATH}")


def check_rollout_source_match(doc: Doc) -> CheckResult:
    """Both groups read the frozen rollout source named in the workload."""
    workload = doc.get("workload")
    expected = workload.get("rollout_source_sha256") if isinstance(workload, Mapping) else None
    problems = [
        f"{name} read rollout source {_short(got)}, the workload names {_short(expected)}"
        for name in GROUP_NAMES
        if (got := _group(doc, name).get("rollout_source_sha256")) != expected or got is None
    ]
    return _result(problems, f"both groups read rollout source {_short(expected)}")


def check_update_and_sync(doc: Doc) -> CheckResult:
    """Both groups completed the update and the weight sync, with events to show it."""
    problems: list[str] = []
    for name in GROUP_NAMES:
        group = _group(doc, name)
        windows = phase_windows(_list(group.get("events")))
        for step in ("update", "sync"):
            if group.get(f"{step}_completed") is not True:
                problems.append(f"{name} reports {step}_completed={group.get(f'{step}_completed')}")
            elif step not in windows:
                problems.append(
                    f"{name} claims the {step} completed but has no {step} start/end events"
                )
        if group.get("update_completed") is True and group.get("updated_lora_sha256") is None:
            problems.append(f"{name} completed its update but has no updated LoRA hash")
    return _result(problems, "both groups completed the update and the sync")


def _event_problems(name: str, group: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    events = _list(group.get("events"))
    previous: float | None = None
    for index, event in enumerate(events):
        t = _num(event.get("t_s"))
        if t is not None and previous is not None and t < previous:
            problems.append(f"{name} event {index} at {_s(t)} is earlier than the one before it")
            break
        previous = t if t is not None else previous
    counts: dict[tuple[str, str], int] = {}
    for event in events:
        key = (str(event.get("phase")), str(event.get("kind")))
        counts[key] = counts.get(key, 0) + 1
    for (phase, kind), n in sorted(counts.items()):
        if n > 1:
            problems.append(f"{name} has {n} {kind} events for {phase}")
    windows = phase_windows(events)
    started = {phase for phase, kind in counts if kind == "start"}
    for phase in sorted(started - set(windows)):
        problems.append(f"{name}'s {phase} started but never ended")
    for phase, (start, end) in windows.items():
        if end < start:
            problems.append(f"{name}'s {phase} ends before it starts")

    required = list(REQUIRED_PHASE_ORDER) + list(ALWAYS_SUB_PHASES)
    if group.get("free_cache_engine") is True:
        required += list(RELEASE_ONLY_PHASES)
    missing = [phase for phase in PHASE_NAMES if phase in required and phase not in windows]
    if missing:
        problems.append(f"{name} is missing phases {_listing(missing)}")

    sequence = [phase for phase in REQUIRED_PHASE_ORDER if phase in windows]
    for before, after in pairwise(sequence):
        if windows[after][0] < windows[before][1]:
            problems.append(f"{name}'s {after} starts before {before} ends")
    if "engine_sleep" in windows:
        sleep = windows["engine_sleep"]
        if "rollout_before_update" in windows and sleep[0] < windows["rollout_before_update"][1]:
            problems.append(f"{name}'s engine_sleep starts before rollout_before_update ends")
        if "update" in windows and sleep[1] > windows["update"][0]:
            problems.append(f"{name}'s engine_sleep ends after update starts")
    subs = [phase for phase in SYNC_SUB_PHASES if phase in windows]
    if "sync" in windows:
        sync_start, sync_end = windows["sync"]
        for phase in subs:
            start, end = windows[phase]
            if start < sync_start or end > sync_end:
                problems.append(f"{name}'s {phase} lies outside the sync window")
    for before, after in pairwise(subs):
        if windows[after][0] < windows[before][1]:
            problems.append(f"{name}'s {after} starts before {before} ends")

    init = group.get("init")
    if isinstance(init, Mapping):
        init_start, init_end = _num(init.get("start_s")), _num(init.get("end_s"))
        if init_start is not None and init_end is not None and init_end < init_start:
            problems.append(f"{name}'s init ends before it starts")
        first = min((w[0] for w in windows.values()), default=None)
        if init_end is not None and first is not None and first < init_end:
            problems.append(f"{name}'s first phase starts before init ends")

    table = group.get("phases")
    table = table if isinstance(table, Mapping) else {}
    extra = sorted(set(table) - set(windows))
    absent = sorted(set(windows) - set(table))
    if extra:
        problems.append(f"{name}'s phases table lists {_listing(extra)} without start/end events")
    if absent:
        problems.append(f"{name}'s phases table lacks {_listing(absent)}")
    for phase, (start, end) in windows.items():
        entry = table.get(phase)
        if not isinstance(entry, Mapping):
            continue
        if not (_same_s(entry.get("start_s"), start) and _same_s(entry.get("end_s"), end)):
            problems.append(f"{name}'s phases.{phase} window disagrees with its events")
        elif not _same_s(entry.get("duration_s"), end - start):
            problems.append(
                f"{name}'s phases.{phase}.duration_s is {entry.get('duration_s')}, "
                f"the events give {_s(end - start)}"
            )
    return problems


def check_phase_events(doc: Doc) -> CheckResult:
    """Every required phase started and ended once, in order, on a monotonic clock."""
    problems: list[str] = []
    for name in GROUP_NAMES:
        problems += _event_problems(name, _group(doc, name))
    return _result(
        problems,
        "every required phase started and ended once, in order, and the phase tables match",
    )


def _calls_tagged(
    calls: Sequence[Mapping[str, Any]], tag: str, window: tuple[float, float]
) -> list[float]:
    times: list[float] = []
    for call in calls:
        t, tags = _num(call.get("t_s")), call.get("tags")
        if t is not None and isinstance(tags, list) and tag in tags and window[0] <= t <= window[1]:
            times.append(t)
    return sorted(times)


def check_resume_calls(doc: Doc) -> CheckResult:
    """Resume calls match free_cache_engine.

    A released engine must be woken after the update: inside the sync window,
    a call tagged ``weights`` (at or before the weight transfer starts) and one
    tagged ``kv_cache`` (not before the weights). A retained engine is never
    put to sleep, so it must make no resume call at all.
    """
    problems: list[str] = []
    for name in GROUP_NAMES:
        group = _group(doc, name)
        calls = _list(group.get("resume_calls"))
        if group.get("free_cache_engine") is not True:
            if calls:
                problems.append(
                    f"{name} (free_cache_engine false) made {len(calls)} resume call(s); "
                    "expected none"
                )
            continue
        windows = phase_windows(_list(group.get("events")))
        if "sync" not in windows:
            problems.append(f"{name} has no sync window to match its resume calls to")
            continue
        weights = _calls_tagged(calls, "weights", windows["sync"])
        kv = _calls_tagged(calls, "kv_cache", windows["sync"])
        if not weights:
            problems.append(f"{name} made no resume call tagged 'weights' during sync")
        if not kv:
            problems.append(f"{name} made no resume call tagged 'kv_cache' during sync")
        if weights and kv and kv[-1] < weights[0]:
            problems.append(f"{name} resumed the KV cache before the weights")
        transfer = windows.get("weight_transfer")
        if weights and transfer is not None and weights[0] > transfer[0]:
            problems.append(f"{name} resumed the weights only after the weight transfer started")
    return _result(
        problems,
        "release resumed weights and KV cache during sync; retain made no resume call",
    )


def _measurement_problems(
    name: str,
    claimed: object,
    derived: Mapping[str, Any],
    samples: SamplesLike,
    windows: Mapping[str, tuple[float, float]],
) -> list[str]:
    if not isinstance(claimed, Mapping):
        return [f"measurements.{name} is missing"]
    problems: list[str] = []
    if claimed.get("free_cache_engine") is not derived["free_cache_engine"]:
        problems.append(f"measurements.{name}.free_cache_engine disagrees with the group")
    phases = claimed.get("phases")
    phases = phases if isinstance(phases, Mapping) else {}
    if set(phases) != set(derived["phases"]):
        problems.append(f"measurements.{name}.phases does not list the group's phases")
    for phase, want in derived["phases"].items():
        got = phases.get(phase)
        if not isinstance(got, Mapping):
            continue
        if got.get("sample_count") != want["sample_count"] or not _same_mb(
            got.get("sampled_gpu_peak_mb"), want["sampled_gpu_peak_mb"]
        ):
            problems.append(
                f"measurements.{name}.phases.{phase} says {got.get('sample_count')} samples, "
                f"peak {_mb(got.get('sampled_gpu_peak_mb'))}; the samples give "
                f"{want['sample_count']}, {_mb(want['sampled_gpu_peak_mb'])}"
            )
        elif not _same_s(got.get("duration_s"), want["duration_s"]):
            problems.append(
                f"measurements.{name}.phases.{phase}.duration_s disagrees with the events"
            )
    problems += _peak_problems(
        f"measurements.{name}",
        claimed.get("sampled_gpu_peak_mb"),
        claimed.get("sampled_gpu_peak_phase"),
        derived["sampled_gpu_peak_mb"],
        samples,
        windows,
    )
    return problems


def _peak_problems(
    where: str,
    claimed_peak: object,
    claimed_phase: object,
    peak: float | None,
    samples: SamplesLike,
    windows: Mapping[str, tuple[float, float]],
) -> list[str]:
    if not _same_mb(claimed_peak, peak):
        return [
            f"{where} claims a whole-run peak of {_mb(claimed_peak)}; the samples give {_mb(peak)}"
        ]
    if peak is None:
        if claimed_phase is not None:
            return [f"{where} names peak phase {claimed_phase} but there is no peak"]
        return []
    holding = _phases_holding(peak, samples, windows)
    if claimed_phase is None and holding:
        return [f"{where} gives no peak phase; the peak sample is in {_listing(holding)}"]
    if claimed_phase is not None and claimed_phase not in holding:
        found = _listing(holding) if holding else "no phase"
        return [f"{where} puts the peak in {claimed_phase}; the peak sample is in {found}"]
    return []


def check_resource_sampling(doc: Doc) -> CheckResult:
    """Per-phase sample counts and peaks, and the whole-run peak, agree with the samples.

    A phase's samples are those with ``start_s <= t_s <= end_s`` of its window
    in the phases table; its peak is null exactly when it has none. The
    measurements section must repeat the same figures.
    """
    problems: list[str] = []
    sampling = doc.get("sampling")
    boundary = isinstance(sampling, Mapping) and sampling.get("boundary_samples") is True
    decision = doc.get("system_decision")
    measurements = decision.get("measurements") if isinstance(decision, Mapping) else None
    derived_all = derive_measurements(doc)
    for name in GROUP_NAMES:
        group = _group(doc, name)
        samples = _list(group.get("resource_samples"))
        times = [_num(s.get("t_s")) for s in samples]
        if any(a is not None and b is not None and b < a for a, b in pairwise(times)):
            problems.append(f"{name}'s resource samples are not in time order")
        series = _Series(samples)
        table = group.get("phases")
        table = table if isinstance(table, Mapping) else {}
        for phase, (start, end) in _windows_of(table).items():
            entry = table[phase]
            inside = series.inside(start, end)
            count, peak = entry.get("sample_count"), entry.get("sampled_gpu_peak_mb")
            want_peak = max(inside) if inside else None
            if count != len(inside):
                problems.append(
                    f"{name}'s {phase} claims {count} samples; {len(inside)} lie in its window"
                )
            if not inside and peak is not None:
                problems.append(
                    f"{name}'s {phase} has peak {_mb(peak)} but no sample in its window: "
                    "it must be null (no sample is not zero)"
                )
            elif not _same_mb(peak, want_peak):
                problems.append(
                    f"{name}'s {phase} claims peak {_mb(peak)}; "
                    f"its samples peak at {_mb(want_peak)}"
                )
            if boundary and not inside:
                problems.append(
                    f"{name}'s {phase} has no sample although boundary samples are claimed"
                )
        windows = _windows_of(table)
        span = _run_window(windows)
        inside_run = series.inside(span[0], span[1]) if span else []
        problems += _peak_problems(
            name,
            group.get("sampled_gpu_peak_mb"),
            group.get("sampled_gpu_peak_phase"),
            max(inside_run) if inside_run else None,
            series,
            windows,
        )
        claimed = measurements.get(name) if isinstance(measurements, Mapping) else None
        event_windows = phase_windows(_list(group.get("events")))
        problems += _measurement_problems(name, claimed, derived_all[name], series, event_windows)
    return _result(
        problems,
        "every phase's sample count and peak, and each whole-run peak, match the samples",
    )


CHECK_FUNCTIONS: dict[str, Callable[[Doc], CheckResult]] = {
    "initial_lora_match": check_initial_lora_match,
    "updated_lora_match": check_updated_lora_match,
    "config_paired": check_config_paired,
    "rollout_source_match": check_rollout_source_match,
    "update_and_sync": check_update_and_sync,
    "phase_events": check_phase_events,
    "resume_calls": check_resume_calls,
    "resource_sampling": check_resource_sampling,
}


def derive_checks(doc: Doc) -> dict[str, CheckResult]:
    """All eight checks, in ``CHECK_NAMES`` order, re-derived from the evidence.

    Write them into a result with
    ``{name: r.as_dict() for name, r in derive_checks(doc).items()}``.
    """
    return {name: CHECK_FUNCTIONS[name](doc) for name in CHECK_NAMES}


def derive_measurements(doc: Doc) -> dict[str, Any]:
    """What ``system_decision.measurements`` should hold, from the events and samples.

    Per group: ``free_cache_engine``, ``phases`` (phase → ``duration_s``,
    ``sample_count``, ``sampled_gpu_peak_mb``), and the whole-run
    ``sampled_gpu_peak_mb`` with its ``sampled_gpu_peak_phase``.
    """
    out: dict[str, Any] = {}
    for name in GROUP_NAMES:
        group = _group(doc, name)
        samples = _list(group.get("resource_samples"))
        table = summarize_phases(_list(group.get("events")), samples)
        peak, phase = whole_run_peak(samples, table)
        out[name] = {
            "free_cache_engine": group.get("free_cache_engine") is True,
            "phases": {
                phase_name: {
                    "duration_s": entry["duration_s"],
                    "sample_count": entry["sample_count"],
                    "sampled_gpu_peak_mb": entry["sampled_gpu_peak_mb"],
                }
                for phase_name, entry in table.items()
            },
            "sampled_gpu_peak_mb": peak,
            "sampled_gpu_peak_phase": phase,
        }
    return out
