"""The eight checks of a pt-verl-closure result, re-derived from its evidence.

Pure functions, no I/O. The runner (``gpu/rlsys_closure``) calls them to write
``system_decision`` and the grader calls them to check it, so both compute every
check the same way. Input is a document that is valid against its schema
(``pt-verl-closure/1``); the functions tolerate missing pieces of a failed run
by failing the check that needed them, not by raising.

Besides the claims, each check holds the evidence to rules a careful reader
would apply (docs/result-files.md lists them, and which check each belongs to):
sampling coverage and physical bounds (resource_sampling), phase order and
bounds and a plausible created_at (phase_events), retain never sleeping or
resuming and release resuming only inside the syncs (resume_calls), workload
equal to the configs (config_paired), a status that agrees with the evidence
(update_and_sync). Every message names the group, the phase and the numbers.

Public API::

    CHECK_NAMES, PHASE_NAMES, REQUIRED_PHASE_ORDER, SYNC_SUB_PHASES, FREE_CACHE_ENGINE_PATH
    TOP_LEVEL_ORDER, and the rules' limits (GAP_FACTOR, MEDIAN_TOLERANCE, BOUNDARY_REACH,
    RESUME_LEAD_S, GPU_CEILING_MB, HOST_CEILING_MB, SLEEP_DROP_MB, CLOCK_SKEW_S, EARLIEST_RUN)
    CheckResult(passed: bool, detail: str)
    derive_checks(doc) -> dict[str, CheckResult]        # never raises
    hash_pair(a, b) -> (a shown, b shown, where they differ)
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

import datetime as _dt
import hashlib
import json
import math
import re
import statistics
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

# Top-level phases in the order a group runs them; none may overlap the next.
TOP_LEVEL_ORDER: tuple[str, ...] = (
    "initial_sync",
    "rollout_before_update",
    "engine_sleep",
    "score_before_update",
    "update",
    "sync",
    "rollout_after_update",
    "score_after_update",
)
RESUME_PHASES: tuple[str, ...] = ("resume_weights", "resume_kv_cache")
# Phases inside which a released engine may be resumed.
RESUME_ALLOWED_IN: tuple[str, ...] = ("initial_sync", "sync")

# Sampling coverage: the largest gap between periodic samples over the run is
# at most GAP_FACTOR x interval_s; their median spacing is within
# MEDIAN_TOLERANCE (relative) of interval_s; with boundary samples, one lies
# within BOUNDARY_REACH x interval_s of each phase's start and end (the
# sampler takes it just after a start and just before an end).
GAP_FACTOR = 2.0
MEDIAN_TOLERANCE = 0.25
BOUNDARY_REACH = 0.5
# The probe logs a resume call just before it opens the resume sub-phase.
RESUME_LEAD_S = 1e-3
# Physical ceilings used when the file does not record a total: no GPU has
# 1 TiB of memory, and a GPU host with 8 TiB is beyond any the runner targets;
# a reading above them is a unit slip (KiB or bytes written as MiB).
GPU_CEILING_MB = float(2**20)
HOST_CEILING_MB = float(2**23)
# A retained engine that "sleeps" frees its KV cache: whole-GPU memory falling
# by more than this much (and this fraction) across engine_sleep says it slept.
SLEEP_DROP_MB = 512.0
SLEEP_DROP_FRACTION = 0.1
# created_at: not later than the grader's clock plus this skew, and the run it
# closes (created_at minus the run's length) not before verl existed.
CLOCK_SKEW_S = 3600.0
EARLIEST_RUN = _dt.datetime(2024, 1, 1, tzinfo=_dt.UTC)
# Keys system_decision.measurements may hold: the grader re-derives each.
MEASUREMENT_KEYS: tuple[str, ...] = GROUP_NAMES

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


def _first_difference(a: str, b: str) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def hash_pair(a: object, b: object) -> tuple[str, str, str]:
    """Two digests as a reader needs them to see where they differ.

    Equal digests, non-strings, and digests that already differ within their
    first 12 characters print as 12-character prefixes. Digests sharing a
    longer start print that start, then the characters around the first
    difference; the third item says where it is (empty when not needed).
    Two hashes differing only in the last digit thus never print alike.
    """
    if not (isinstance(a, str) and isinstance(b, str)) or a == b:
        return _short(a), _short(b), ""
    index = _first_difference(a, b)
    if index < 12:
        return _short(a), _short(b), ""

    def cut(digest: str) -> str:
        more = "…" if index + 8 < len(digest) else ""
        return f"{digest[:8]}…{digest[index - 4 : index + 8]}{more}"

    return cut(a), cut(b), f" (the first {index} characters agree; they differ at {index + 1})"


def _mb(value: object) -> str:
    if not isinstance(value, (int, float)):
        return "null"
    try:
        return f"{value:g} MiB"
    except OverflowError:  # an integer too large for a float
        return "a number too large for a float (MiB)"


def _s(value: float) -> str:
    try:
        return f"{value:.3f} s"
    except OverflowError:
        return "a time too large for a float (s)"


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
    kind = type(value)
    if kind is float:  # the common case first: a one-hour file has ~60,000 numbers
        return cast(float, value)
    if kind is bool or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float is beyond every bound
        return math.inf if cast(int, value) > 0 else -math.inf


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
        times: list[float] = []
        values: list[float] = []
        number = (int, float)
        for sample in samples:
            raw, used = sample.get("t_s"), sample.get("gpu_used_mb")
            t = raw if type(raw) is float else _num(raw)
            if t is None or type(used) not in number:  # bool, null, text: not a reading
                continue
            times.append(t)
            # Keep the value as written (an int stays an int in the output).
            values.append(cast(float, used))
        if any(b < a for a, b in pairwise(times)):
            order = sorted(range(len(times)), key=times.__getitem__)
            times = [times[i] for i in order]
            values = [values[i] for i in order]
        self.times = times
        self.values = values

    def inside(self, start: float, end: float) -> list[float]:
        """gpu_used_mb of the samples with start <= t_s <= end."""
        return self.values[bisect_left(self.times, start) : bisect_right(self.times, end)]


SamplesLike = Sequence[Mapping[str, Any]] | _Series


def _as_series(samples: SamplesLike) -> _Series:
    return samples if isinstance(samples, _Series) else _Series(samples)


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
    series = _as_series(samples)
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
        # Compared directly (exact for int and float alike, never overflowing).
        low, high = value - MEMORY_TOLERANCE_MB, value + MEMORY_TOLERANCE_MB
        if any(low <= v <= high for v in series.inside(start, end)):
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


# --------------------------------------------------------------------------- evidence helpers


def _window_text(window: tuple[float, float]) -> str:
    return f"{window[0]:.3f}–{window[1]:.3f} s"


def _phase_at(t: float, windows: Mapping[str, tuple[float, float]]) -> str:
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


def _end_details(events: Sequence[Mapping[str, Any]], phase: str) -> list[Mapping[str, Any]]:
    return [
        detail
        for event in events
        if event.get("phase") == phase and isinstance(detail := event.get("detail"), Mapping)
    ]


def _closed_as_failed(events: Sequence[Mapping[str, Any]], phase: str) -> bool:
    return any(
        event.get("phase") == phase
        and event.get("kind") == "end"
        and isinstance(event.get("detail"), Mapping)
        and event["detail"].get("failed") is True
        for event in events
    )


def _required_phases(group: Mapping[str, Any]) -> list[str]:
    required = list(REQUIRED_PHASE_ORDER) + list(ALWAYS_SUB_PHASES)
    if group.get("free_cache_engine") is True:
        required += list(RELEASE_ONLY_PHASES)
    return [phase for phase in PHASE_NAMES if phase in required]


def _incomplete(group: Mapping[str, Any]) -> list[str]:
    """What a group's evidence lacks for a completed run (empty when complete)."""
    events = _list(group.get("events"))
    windows = phase_windows(events)
    lacks: list[str] = []
    missing = [phase for phase in _required_phases(group) if phase not in windows]
    if missing:
        lacks.append(f"no {_listing(missing)}")
    failed = [phase for phase in windows if _closed_as_failed(events, phase)]
    if failed:
        lacks.append(f"{_listing(failed)} ended as failed")
    for step in ("update", "sync"):
        if group.get(f"{step}_completed") is not True:
            lacks.append(f"{step}_completed is not true")
    return lacks


def _run_span(group: Mapping[str, Any]) -> tuple[float, float] | None:
    """A group's run on its clock: from init's start (or the first event) to the last event."""
    times = [t for e in _list(group.get("events")) if (t := _num(e.get("t_s"))) is not None]
    init = group.get("init")
    if isinstance(init, Mapping):
        start, end = _num(init.get("start_s")), _num(init.get("end_s"))
        # An empty init ({0, 0, no steps}) is a placeholder, not a recorded span.
        if start is not None and end is not None and (end > start or init.get("steps")):
            times += [start, end]
    if not times:
        return None
    return min(times), max(times)


# --------------------------------------------------------------------------- the checks


def check_initial_lora_match(doc: Doc) -> CheckResult:
    """Both groups start from the same LoRA adapter (equal initial hashes)."""
    rel = _group(doc, "release").get("initial_lora_sha256")
    ret = _group(doc, "retain").get("initial_lora_sha256")
    if isinstance(rel, str) and rel == ret:
        return CheckResult(True, f"both groups start from LoRA {_short(rel)}")
    a, b, where = hash_pair(rel, ret)
    return CheckResult(
        False,
        f"initial LoRA hashes differ: release {a}, retain {b}{where}; "
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
        a, b, where = hash_pair(rel, ret)
        problems.append(f"updated LoRA hashes differ: release {a}, retain {b}{where}")
    return _result(problems, f"both updates give LoRA {_short(rel)}, changed from the initial")


_HF_CACHE = re.compile(r"models--([^/\\]+?)--([^/\\]+)")
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _model_identity(text: str) -> tuple[str, str] | None:
    """("hub", "org/name") or ("path", normalised path); None when neither can be told."""
    cached = _HF_CACHE.search(text)
    if cached:
        return "hub", f"{cached.group(1)}/{cached.group(2)}"
    if _REPO_ID.match(text):
        return "hub", text
    if text.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", text):
        return "path", text.rstrip("/\\")
    return None


def _same_number(a: object, b: object) -> bool:
    x, y = _num(a), _num(b)
    return x is not None and x == y


def _merged(found: dict[tuple[str, str], list[str]]) -> list[str]:
    """(template with {who}, noun) -> groups; groups saying the same are named once."""
    return [
        template.format(who=f"{names[0]}'s {noun}" if len(names) == 1 else f"both {noun}s")
        for (template, noun), names in found.items()
    ]


def _workload_problems(doc: Doc, configs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The workload block must say what both configs say (model, LoRA, update count)."""
    workload = doc.get("workload")
    if not isinstance(workload, Mapping):
        return []
    found: dict[tuple[str, str], list[str]] = {}
    model = workload.get("model")
    for name, config in configs.items():
        present, path = _lookup(config, "actor_rollout_ref.model.path")
        if present and isinstance(path, str) and isinstance(model, str):
            mine, theirs = _model_identity(model), _model_identity(path)
            # Compare what can be compared: two hub ids, or two local paths.
            if mine and theirs and mine[0] == theirs[0] and mine[1] != theirs[1]:
                template = (
                    f"the workload names model {model!r} but the model path is {path!r} in {{who}}"
                )
                found.setdefault((template, "config"), []).append(name)
        for key, dotted in (
            ("lora_rank", "actor_rollout_ref.model.lora_rank"),
            ("lora_alpha", "actor_rollout_ref.model.lora_alpha"),
            ("update_count", "actor_rollout_ref.actor.optim.total_training_steps"),
            ("update_count", "trainer.total_training_steps"),
            ("prompt_count", "data.train_batch_size"),
        ):
            present, value = _lookup(config, dotted)
            if (
                present
                and key in workload
                and value is not None
                and not _same_number(workload[key], value)
            ):
                template = (
                    f"the workload's {key} is {workload[key]!r} but {dotted}={value!r} in {{who}}"
                )
                found.setdefault((template, "config"), []).append(name)
    count = _num(workload.get("update_count"))
    if count is not None:
        for name in GROUP_NAMES:
            group = _group(doc, name)
            updates = sum(
                1
                for e in _list(group.get("events"))
                if e.get("phase") == "update" and e.get("kind") == "start"
            )
            if updates and updates != count:
                template = (
                    f"the workload's update_count is {workload.get('update_count')!r} but "
                    f"there are {updates} update phase(s) in {{who}}"
                )
                found.setdefault((template, "event list"), []).append(name)
    return _merged(found)


def check_config_paired(doc: Doc) -> CheckResult:
    """The configs differ only in free_cache_engine, set as each group says, and agree
    with the workload block (model, LoRA rank and alpha, update and prompt counts)."""
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
                a, b, where = hash_pair(group.get("config_sha256"), digest)
                problems.append(
                    f"{name}'s config_sha256 {a} is not the hash of its config ({b}){where}"
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
    problems += _workload_problems(doc, configs)
    return _result(
        problems,
        f"configs differ only at {FREE_CACHE_ENGINE_PATH} and agree with the workload",
    )


def check_rollout_source_match(doc: Doc) -> CheckResult:
    """Both groups read the frozen rollout source named in the workload."""
    workload = doc.get("workload")
    expected = workload.get("rollout_source_sha256") if isinstance(workload, Mapping) else None
    problems: list[str] = []
    for name in GROUP_NAMES:
        got = _group(doc, name).get("rollout_source_sha256")
        if got != expected or got is None:
            a, b, where = hash_pair(got, expected)
            problems.append(f"{name} read rollout source {a}, the workload names {b}{where}")
    return _result(problems, f"both groups read rollout source {_short(expected)}")


def _status_problems(doc: Doc) -> list[str]:
    """The run's status and failure record must agree with the evidence."""
    status = doc.get("status")
    lacks = {name: _incomplete(_group(doc, name)) for name in GROUP_NAMES}
    problems: list[str] = []
    if status == "completed":
        for name, missing in lacks.items():
            if missing:
                problems.append(
                    f"the run is marked completed but {name}'s evidence is incomplete "
                    f"({'; '.join(missing)})"
                )
        return problems
    if status != "failed":
        return problems
    failure = doc.get("failure")
    failure = failure if isinstance(failure, Mapping) else {}
    where, phase = failure.get("group"), failure.get("phase")
    if where not in GROUP_NAMES:
        if not any(lacks.values()):
            problems.append(
                "the run is marked failed but both groups' evidence is complete "
                "(every phase ended, update and sync completed)"
            )
        return problems
    group = _group(doc, str(where))
    events = _list(group.get("events"))
    windows = phase_windows(events)
    named = f"{where}" + (f", phase {phase}" if phase else "")
    if not lacks[str(where)]:
        problems.append(
            f"the run is marked failed in {named}, but {where}'s evidence is complete "
            "(every phase ended, update and sync completed)"
        )
        return problems
    if phase == "init":
        cycle = sorted(windows, key=lambda p: windows[p][0])
        if cycle:
            problems.append(
                f"the run is marked failed in {where}'s init, but {where} went on to "
                f"{_listing(cycle)}"
            )
    elif isinstance(phase, str):
        if phase in windows and not _closed_as_failed(events, phase):
            problems.append(
                f"the run is marked failed in {named}, but {where}'s {phase} "
                f"({_window_text(windows[phase])}) ended normally"
            )
        start = windows[phase][0] if phase in windows else None
        if start is None:
            starts = [_num(e.get("t_s")) for e in events if e.get("phase") == phase]
            start = min((t for t in starts if t is not None), default=None)
        if start is not None:
            later = [
                p for p in TOP_LEVEL_ORDER if p in windows and p != phase and windows[p][0] > start
            ]
            if later:
                problems.append(
                    f"the run is marked failed in {named}, but {where} went on to "
                    f"{_listing(later)} after it"
                )
        else:
            # The named phase never started: every phase before it must have ended well,
            # or the run stopped earlier than the record says.
            anchor = "sync" if phase in SYNC_SUB_PHASES else phase
            needed = [p for p in TOP_LEVEL_ORDER if p in _required_phases(group)]
            before = needed[: needed.index(anchor)] if anchor in needed else []
            short = [p for p in before if p not in windows or _closed_as_failed(events, p)]
            if short:
                problems.append(
                    f"the run is marked failed in {named}, which never started, but {where}'s "
                    f"evidence stops earlier: {_listing(short)} did not end normally"
                )
    return problems


def check_update_and_sync(doc: Doc) -> CheckResult:
    """Both groups completed the update and the weight sync, with events to show it,
    and the run's status (and failure record) agrees with that evidence."""
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
            elif _closed_as_failed(_list(group.get("events")), step):
                problems.append(
                    f"{name} claims the {step} completed but its {step} ended as failed"
                )
        if group.get("update_completed") is True and group.get("updated_lora_sha256") is None:
            problems.append(f"{name} completed its update but has no updated LoRA hash")
    problems += _status_problems(doc)
    return _result(problems, "both groups completed the update and the sync")


def _init_problems(name: str, group: Mapping[str, Any], first: float | None) -> list[str]:
    init = group.get("init")
    if not isinstance(init, Mapping):
        return []
    problems: list[str] = []
    start, end = _num(init.get("start_s")), _num(init.get("end_s"))
    if start is not None and end is not None and end < start:
        problems.append(f"{name}'s init ends ({end:.3f} s) before it starts ({start:.3f} s)")
    if end is not None and first is not None and first < end:
        problems.append(
            f"{name}'s first phase starts at {first:.3f} s, before init ends at {end:.3f} s"
        )
    for index, step in enumerate(_list(init.get("steps"))):
        label = f"{name}'s init step {index} ({step.get('name')})"
        s0, s1 = _num(step.get("start_s")), _num(step.get("end_s"))
        if s0 is None or s1 is None:
            continue
        if s1 < s0:
            problems.append(f"{label} ends at {s1:.3f} s, before it starts at {s0:.3f} s")
        if start is not None and end is not None and (s0 < start or s1 > end):
            problems.append(
                f"{label} ({s0:.3f}–{s1:.3f} s) lies outside init ({start:.3f}–{end:.3f} s)"
            )
    return problems


def _event_problems(name: str, group: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    events = _list(group.get("events"))
    previous: float | None = None
    for index, event in enumerate(events):
        t = _num(event.get("t_s"))
        if t is not None and previous is not None and t < previous:
            problems.append(
                f"{name} event {index} ({event.get('phase')} {event.get('kind')}) at {_s(t)} "
                f"is earlier than the one before it ({_s(previous)})"
            )
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
            problems.append(f"{name}'s {phase} ends ({_s(end)}) before it starts ({_s(start)})")
        elif end == start:
            problems.append(f"{name}'s {phase} has zero duration (starts and ends at {_s(start)})")

    missing = [phase for phase in _required_phases(group) if phase not in windows]
    if missing:
        problems.append(f"{name} is missing phases {_listing(missing)}")

    # Top-level phases in their order, none overlapping the next (engine_sleep included).
    sequence = [phase for phase in TOP_LEVEL_ORDER if phase in windows]
    for before, after in pairwise(sequence):
        if windows[after][0] < windows[before][1]:
            problems.append(
                f"{name}'s {after} starts at {_s(windows[after][0])}, before {before} "
                f"ends at {_s(windows[before][1])}"
            )
    subs = [phase for phase in SYNC_SUB_PHASES if phase in windows]
    sync = windows.get("sync")
    for phase in subs:
        start, end = windows[phase]
        if sync is None:
            problems.append(
                f"{name}'s {phase} ({_window_text((start, end))}) has no sync to lie in"
            )
        elif start < sync[0] or end > sync[1]:
            problems.append(
                f"{name}'s {phase} ({_window_text((start, end))}) lies outside the sync window "
                f"({_window_text(sync)})"
            )
    for before, after in pairwise(subs):
        if windows[after][0] < windows[before][1]:
            problems.append(
                f"{name}'s {after} starts at {_s(windows[after][0])}, before {before} "
                f"ends at {_s(windows[before][1])}"
            )

    first = min((w[0] for w in windows.values()), default=None)
    problems += _init_problems(name, group, first)

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
            problems.append(
                f"{name}'s phases.{phase} window ({entry.get('start_s')}–{entry.get('end_s')} s) "
                f"disagrees with its events ({_window_text((start, end))})"
            )
        elif not _same_s(entry.get("duration_s"), end - start):
            problems.append(
                f"{name}'s phases.{phase}.duration_s is {entry.get('duration_s')}, "
                f"the events give {_s(end - start)}"
            )
    return problems


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
    spans = [span for name in GROUP_NAMES if (span := _run_span(_group(doc, name)))]
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
        problems += _event_problems(name, _group(doc, name))
    problems += _created_at_problems(doc)
    return _result(
        problems,
        "every required phase started and ended once, in order, and the phase tables match",
    )


def _inside(t: float, window: tuple[float, float] | None, lead: float = 0.0) -> bool:
    return window is not None and window[0] - lead <= t <= window[1]


_RESUME_WORD = re.compile(r"resum|wake", re.IGNORECASE)


def _retain_resume_problems(name: str, group: Mapping[str, Any]) -> list[str]:
    """A retained engine never sleeps and never resumes, however it is recorded."""
    problems: list[str] = []
    calls = _list(group.get("resume_calls"))
    events = _list(group.get("events"))
    windows = phase_windows(events)
    if calls:
        times = ", ".join(
            f"{t:.3f} s {_phase_at(t, windows)}"
            for c in calls[:_MAX_LISTED]
            if (t := _num(c.get("t_s"))) is not None
        )
        problems.append(
            f"{name} (free_cache_engine false) made {len(calls)} resume call(s); expected none"
            + (f" (at {times})" if times else "")
        )
    for phase in RESUME_PHASES:
        found = [e for e in events if e.get("phase") == phase]
        if found:
            t = _num(found[0].get("t_s"))
            problems.append(
                f"{name} (free_cache_engine false) records {len(found)} {phase} event(s)"
                + (f", the first at {_s(t)}" if t is not None else "")
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
    steps = _list(
        group.get("init", {}).get("steps") if isinstance(group.get("init"), Mapping) else []
    )
    for step in steps:
        label = str(step.get("name", ""))
        if _RESUME_WORD.search(label):
            problems.append(f"{name}'s init step {label!r} resumes the engine: retain never does")
    if "engine_sleep" in windows or any(e.get("phase") == "engine_sleep" for e in events):
        details = _end_details(events, "engine_sleep")
        effective = [d.get("effective") for d in details if "effective" in d]
        window = windows.get("engine_sleep")
        where = f" ({_window_text(window)})" if window else ""
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
    series = _Series(_list(group.get("resource_samples")))
    before_index = bisect_right(series.times, window[0]) - 1
    if before_index < 0:
        return []
    level = _num(series.values[before_index])
    # A freed KV cache stays freed until something resumes it: look up to the update.
    until = max(window[1], windows["update"][0]) if "update" in windows else window[1]
    inside = [v for x in series.inside(window[0], until) if (v := _num(x)) is not None]
    if level is None or not inside:
        return []
    low = min(inside)
    drop = level - low
    if drop > SLEEP_DROP_MB and drop > SLEEP_DROP_FRACTION * level:
        return [
            f"{name}'s whole-GPU memory falls from {level:g} MiB to {low:g} MiB from its "
            f"no-op engine_sleep ({_window_text(window)}) to the update: the retained engine "
            "released memory"
        ]
    return []


def _release_resume_problems(name: str, group: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    calls = _list(group.get("resume_calls"))
    events = _list(group.get("events"))
    windows = phase_windows(events)
    effective = [
        d.get("effective") for d in _end_details(events, "engine_sleep") if "effective" in d
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
        t = _num(call.get("t_s"))
        tags = call.get("tags")
        tags = [str(tag) for tag in tags] if isinstance(tags, list) else []
        if t is None:
            continue
        label = f"{name}'s resume call {'+'.join(tags) or '(no tags)'} at {_s(t)}"
        if _inside(t, windows.get("initial_sync")):
            continue
        if not _inside(t, sync):
            allowed = " or ".join(
                f"{p} ({_window_text(windows[p])})" for p in RESUME_ALLOWED_IN if p in windows
            )
            problems.append(
                f"{label} happens {_phase_at(t, windows)}; a released engine is resumed only "
                f"inside {allowed or 'the initial sync or the sync'}"
            )
            continue
        if "weights" in tags:
            if _inside(t, weights_window, RESUME_LEAD_S):
                weights_ok += 1
            else:
                room = f" ({_window_text(weights_window)})" if weights_window else " (not recorded)"
                problems.append(f"{label} lies outside resume_weights{room}")
        if "kv_cache" in tags:
            if not _inside(t, kv_window, RESUME_LEAD_S):
                room = f" ({_window_text(kv_window)})" if kv_window else " (not recorded)"
                problems.append(f"{label} lies outside resume_kv_cache{room}")
            elif transfer is not None and t < transfer[1]:
                problems.append(
                    f"{label} comes before the weight transfer ends ({_s(transfer[1])})"
                )
            else:
                kv_ok += 1
    if sync is not None:
        if not weights_ok and not any(
            "weights" in (c.get("tags") or []) and _inside(_num(c.get("t_s")) or -1.0, sync)
            for c in calls
        ):
            problems.append(f"{name} made no resume call tagged 'weights' during sync")
        if not kv_ok and not any(
            "kv_cache" in (c.get("tags") or []) and _inside(_num(c.get("t_s")) or -1.0, sync)
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
        group = _group(doc, name)
        if group.get("free_cache_engine") is not True:
            problems += _retain_resume_problems(name, group)
        else:
            problems += _release_resume_problems(name, group)
    return _result(
        problems,
        "release resumed weights and KV cache only inside the syncs, in order; "
        "retain never slept or resumed",
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


def _duplicate_problems(name: str, samples: Sequence[Mapping[str, Any]]) -> list[str]:
    """Sample times strictly increase. The one exception: a boundary sample may share its
    time with another sample (the boundary hook and the sampler thread read the clock
    independently); two periodic samples never do."""
    problems: list[str] = []
    previous: Mapping[str, Any] | None = None
    for index, sample in enumerate(samples):
        t = _num(sample.get("t_s"))
        before = _num(previous.get("t_s")) if previous is not None else None
        if previous is not None and t is not None and before is not None:
            if t < before:
                problems.append(
                    f"{name}'s resource samples are not in time order: sample {index} at "
                    f"{_s(t)} follows one at {_s(before)}"
                )
                break
            periodic = (
                previous.get("reason", "periodic") == "periodic"
                and sample.get("reason", "periodic") == "periodic"
            )
            if t == before and periodic:
                problems.append(
                    f"{name} has two periodic samples at {_s(t)} (samples {index - 1} and "
                    f"{index}: {_mb(previous.get('gpu_used_mb'))} and "
                    f"{_mb(sample.get('gpu_used_mb'))}); sample times must strictly increase"
                )
                break
        previous = sample
    return problems


def _coverage_problems(
    name: str,
    group: Mapping[str, Any],
    samples: Sequence[Mapping[str, Any]],
    interval: float | None,
    boundary: bool,
) -> list[str]:
    """Periodic samples cover the whole run at the recorded interval; with boundary
    samples, one at every phase start and end."""
    span = _run_span(group)
    if span is None or interval is None or not interval > 0:
        return []
    windows = phase_windows(_list(group.get("events")))
    periodic = sorted(
        t
        for s in samples
        if s.get("reason") != "boundary" and (t := _num(s.get("t_s"))) is not None
    )
    problems: list[str] = []
    limit = GAP_FACTOR * interval
    inside = [t for t in periodic if span[0] <= t <= span[1]]
    edges = [span[0], *inside, span[1]]
    gap, at = max(((b - a, (a, b)) for a, b in pairwise(edges)), default=(0.0, (0.0, 0.0)))
    if gap > limit + TIME_TOLERANCE_S:
        if not inside:
            where = f"none of its {len(periodic)} periodic samples lies in the run"
        else:
            where = f"from {_s(at[0])} to {_s(at[1])}, {_phase_at((at[0] + at[1]) / 2, windows)}"
        problems.append(
            f"{name}'s periodic samples leave a {gap:.3f} s gap in its run "
            f"({_window_text(span)}): {where}; at most {GAP_FACTOR:g} x the {interval:g} s "
            "interval is allowed (a sampler that stopped or ran on another clock)"
        )
    spacings = [b - a for a, b in pairwise(inside)]
    if spacings:
        median = statistics.median(spacings)
        if abs(median - interval) > MEDIAN_TOLERANCE * interval:
            problems.append(
                f"{name}'s periodic samples are {median:.4g} s apart (median of "
                f"{len(spacings)} spacings); the file records an interval of {interval:g} s"
            )
    if boundary:
        capable = sorted(
            t
            for s in samples
            if s.get("reason") in (None, "boundary") and (t := _num(s.get("t_s"))) is not None
        )
        reach = BOUNDARY_REACH * interval
        missing: list[str] = []
        for phase, (start, end) in windows.items():
            near_start = capable[bisect_left(capable, start) : bisect_right(capable, start + reach)]
            near_end = capable[bisect_left(capable, end - reach) : bisect_right(capable, end)]
            if not any(t <= end for t in near_start):
                missing.append(f"{phase} start ({_s(start)})")
            if not any(t >= start for t in near_end):
                missing.append(f"{phase} end ({_s(end)})")
        if missing:
            problems.append(
                f"{name} has no boundary sample at {_listing(missing)} although boundary "
                "samples are recorded as on"
            )
    return problems


def _neighbours(series: _Series, t: float) -> list[tuple[float, float]]:
    """The samples at t, or else the one just before and the one just after it."""
    lo = bisect_left(series.times, t - TIME_TOLERANCE_S)
    hi = bisect_right(series.times, t + TIME_TOLERANCE_S)
    if hi > lo:
        return list(zip(series.times[lo:hi], series.values[lo:hi], strict=True))
    return [(series.times[i], series.values[i]) for i in (lo - 1, lo) if 0 <= i < len(series.times)]


def _physical_problems(
    doc: Doc,
    name: str,
    group: Mapping[str, Any],
    samples: Sequence[Mapping[str, Any]],
    series: _Series,
) -> list[str]:
    environment = doc.get("environment")
    environment = environment if isinstance(environment, Mapping) else {}
    total = _num(environment.get("gpu_total_mb"))
    host_total = _num(environment.get("host_total_mb"))
    problems: list[str] = []
    if total is not None and total > GPU_CEILING_MB:
        if name == GROUP_NAMES[0]:  # a fact of the environment: said once
            problems.append(
                f"environment.gpu_total_mb is {total:g} MiB, more than any GPU has "
                f"({GPU_CEILING_MB:.0f} MiB; a unit slip?)"
            )
        total = None
    gpu_limit, gpu_what = (total, "the GPU's total") if total else (GPU_CEILING_MB, "any GPU's")
    host_limit, host_what = (
        (host_total, "the host's total") if host_total else (HOST_CEILING_MB, "any host's")
    )
    for key, kind, limit, what in (
        ("gpu_used_mb", "whole-GPU", gpu_limit, gpu_what),
        ("host_used_mb", "host", host_limit, host_what),
    ):
        over = [
            (t, v)
            for s in samples
            if (v := _num(s.get(key))) is not None
            and v > limit + MEMORY_TOLERANCE_MB
            and (t := _num(s.get("t_s"))) is not None
        ]
        if over:
            t, v = max(over, key=lambda pair: pair[1])
            problems.append(
                f"{name} has {len(over)} {kind} sample(s) above {what} memory of "
                f"{limit:.0f} MiB (the highest {v:g} MiB at {_s(t)})"
            )
    table = group.get("phases")
    table = table if isinstance(table, Mapping) else {}
    for phase, entry in table.items():
        if not isinstance(entry, Mapping):
            continue
        for edge, key, when in (
            ("start", "actor_memory_start_mb", "start_s"),
            ("end", "actor_memory_end_mb", "end_s"),
        ):
            actor, t = _num(entry.get(key)), _num(entry.get(when))
            if actor is None or t is None:
                continue
            if actor > gpu_limit + MEMORY_TOLERANCE_MB:
                problems.append(
                    f"{name}'s actor memory at the {edge} of {phase} is {actor:g} MiB, above "
                    f"{gpu_what} memory of {gpu_limit:.0f} MiB"
                )
                continue
            near = _neighbours(series, t)
            values = [n for _, v in near if (n := _num(v)) is not None]
            if values and actor > max(values) + MEMORY_TOLERANCE_MB:
                shown = ", ".join(f"{_num(v):g} MiB at {_s(x)}" for x, v in near)
                problems.append(
                    f"{name}'s actor memory at the {edge} of {phase} ({_s(t)}) is {actor:g} MiB, "
                    f"above the whole-GPU sample(s) next to it ({shown}); the actor's memory "
                    "is part of the whole GPU's"
                )
    return problems


def check_resource_sampling(doc: Doc) -> CheckResult:
    """The samples cover the run and are physically possible, and every figure drawn
    from them (per-phase counts and peaks, whole-run peaks, measurements) is theirs.

    A phase's samples are those with ``start_s <= t_s <= end_s`` of its window
    in the phases table; its peak is null exactly when it has none. Sample
    times strictly increase; periodic samples leave no gap over the run (init
    included) longer than 2 x the interval and are spaced at the interval; with
    boundary samples, one lies at each phase start and end. Memory stays within
    the GPU's (and host's) total, and actor memory within the whole-GPU reading
    next to it. The measurements section repeats the same figures and nothing
    the grader cannot re-derive.
    """
    problems: list[str] = []
    sampling = doc.get("sampling")
    sampling = sampling if isinstance(sampling, Mapping) else {}
    boundary = sampling.get("boundary_samples") is True
    interval = _num(sampling.get("interval_s"))
    decision = doc.get("system_decision")
    measurements = decision.get("measurements") if isinstance(decision, Mapping) else None
    for name in GROUP_NAMES:
        group = _group(doc, name)
        samples = _list(group.get("resource_samples"))
        series = _Series(samples)
        problems += _duplicate_problems(name, samples)
        problems += _coverage_problems(name, group, samples, interval, boundary)
        problems += _physical_problems(doc, name, group, samples, series)
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
        derived = _group_measurement(group, series)
        problems += _measurement_problems(name, claimed, derived, series, event_windows)
    if isinstance(measurements, Mapping):
        unknown = sorted(str(key) for key in measurements if key not in MEASUREMENT_KEYS)
        if unknown:
            problems.append(
                f"measurements holds {_listing([f'measurements.{k}' for k in unknown])}, which "
                "the grader cannot re-derive from the samples and events; every figure in "
                "measurements must be (readings belong in system_decision.interpretation)"
            )
    return _result(
        problems,
        "the samples cover the run at the recorded interval within physical bounds, and every "
        "phase's sample count and peak, and each whole-run peak, match them",
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
    results: dict[str, CheckResult] = {}
    for name in CHECK_NAMES:
        try:
            results[name] = CHECK_FUNCTIONS[name](doc)
        except Exception as exc:  # a check that cannot be derived is not passed
            results[name] = CheckResult(False, f"could not re-derive this check: {exc!r}")
    return results


def derive_measurements(doc: Doc) -> dict[str, Any]:
    """What ``system_decision.measurements`` should hold, from the events and samples.

    Per group: ``free_cache_engine``, ``phases`` (phase → ``duration_s``,
    ``sample_count``, ``sampled_gpu_peak_mb``), and the whole-run
    ``sampled_gpu_peak_mb`` with its ``sampled_gpu_peak_phase``.
    """
    out: dict[str, Any] = {}
    for name in GROUP_NAMES:
        group = _group(doc, name)
        out[name] = _group_measurement(group, _Series(_list(group.get("resource_samples"))))
    return out


def _group_measurement(group: Mapping[str, Any], series: _Series) -> dict[str, Any]:
    table = summarize_phases(_list(group.get("events")), series)
    peak, phase = whole_run_peak(series, table)
    return {
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
