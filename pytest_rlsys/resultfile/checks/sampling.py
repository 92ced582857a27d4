"""The resource_sampling check, and the measurements derived from the samples."""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from operator import lt
from typing import Any

from pytest_rlsys.resultfile.checks.cards import gpu_bound, reader_problems
from pytest_rlsys.resultfile.checks.evidence import (
    as_number,
    group_of,
    listing,
    mappings,
    mib,
    outcome,
    same_mb,
    same_s,
    secs,
)
from pytest_rlsys.resultfile.checks.identity import lookup
from pytest_rlsys.resultfile.checks.series import Sampled, coverage_problems
from pytest_rlsys.resultfile.checks.timeline import (
    SamplesLike,
    Series,
    column,
    phase_windows,
    phases_holding,
    run_span,
    run_window,
    summarize_phases,
    whole_run_peak,
    windows_of,
)
from pytest_rlsys.resultfile.checks.vocabulary import (
    GROUP_NAMES,
    HOLLOW_FRACTION,
    HOST_CEILING_MB,
    MAX_INTERVAL_S,
    MEASUREMENT_KEYS,
    MEMORY_TOLERANCE_MB,
    MODEL_FIT_FRACTION,
    TIME_TOLERANCE_S,
    CheckResult,
    Doc,
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
        if got.get("sample_count") != want["sample_count"] or not same_mb(
            got.get("sampled_gpu_peak_mb"), want["sampled_gpu_peak_mb"]
        ):
            problems.append(
                f"measurements.{name}.phases.{phase} says {got.get('sample_count')} samples, "
                f"peak {mib(got.get('sampled_gpu_peak_mb'))}; the samples give "
                f"{want['sample_count']}, {mib(want['sampled_gpu_peak_mb'])}"
            )
        elif not same_s(got.get("duration_s"), want["duration_s"]):
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
    if not same_mb(claimed_peak, peak):
        return [
            f"{where} claims a whole-run peak of {mib(claimed_peak)}; the samples give {mib(peak)}"
        ]
    if peak is None:
        if claimed_phase is not None:
            return [f"{where} names peak phase {claimed_phase} but there is no peak"]
        return []
    holding = phases_holding(peak, samples, windows)
    if claimed_phase is None and holding:
        return [f"{where} gives no peak phase; the peak sample is in {listing(holding)}"]
    if claimed_phase is not None and claimed_phase not in holding:
        found = listing(holding) if holding else "no phase"
        return [f"{where} puts the peak in {claimed_phase}; the peak sample is in {found}"]
    return []


def _duplicate_problems(name: str, samples: Sequence[Mapping[str, Any]]) -> list[str]:
    """Sample times strictly increase. The one exception: a boundary sample may share its
    time with another sample (the boundary hook and the sampler thread read the clock
    independently); two periodic samples never do."""
    times = column(samples, "t_s")
    if set(map(type, times)) <= {float} and all(map(lt, times, times[1:])):
        return []  # strictly increasing: neither fault below can be (issue 40)
    problems: list[str] = []
    previous: Mapping[str, Any] | None = None
    for index, sample in enumerate(samples):
        t = as_number(sample.get("t_s"))
        before = as_number(previous.get("t_s")) if previous is not None else None
        if previous is not None and t is not None and before is not None:
            if t < before:
                problems.append(
                    f"{name}'s resource samples are not in time order: sample {index} at "
                    f"{secs(t)} follows one at {secs(before)}"
                )
                break
            periodic = (
                previous.get("reason", "periodic") == "periodic"
                and sample.get("reason", "periodic") == "periodic"
            )
            if t == before and periodic:
                problems.append(
                    f"{name} has two periodic samples at {secs(t)} (samples {index - 1} and "
                    f"{index}: {mib(previous.get('gpu_used_mb'))} and "
                    f"{mib(sample.get('gpu_used_mb'))}); sample times must strictly increase"
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
    """The sampler's series against its own algorithm (checks.series): it covers the run
    from before init, one reading per tick of one schedule; boundary samples as recorded."""
    span = run_span(group)
    if span is None or interval is None or not interval > 0:
        return []
    windows = phase_windows(mappings(group.get("events")))
    return coverage_problems(Sampled(name, samples, interval, boundary, span, windows))


def _neighbours(series: Series, t: float) -> list[tuple[float, float]]:
    """The samples at t, or else the one just before and the one just after it."""
    lo = bisect_left(series.times, t - TIME_TOLERANCE_S)
    hi = bisect_right(series.times, t + TIME_TOLERANCE_S)
    if hi > lo:
        return list(zip(series.times[lo:hi], series.values[lo:hi], strict=True))
    return [(series.times[i], series.values[i]) for i in (lo - 1, lo) if 0 <= i < len(series.times)]


def _beyond(
    samples: Sequence[Mapping[str, Any]],
    key: str,
    low: float = -math.inf,
    high: float = math.inf,
) -> bool:
    """Whether some sample's reading of ``key`` may be at or below ``low`` or above
    ``high``: one C-speed pass that spares the careful per-sample scan an honest file."""
    values = column(samples, key)
    if not set(map(type, values)) <= {int, float}:
        values = [v for v in values if type(v) is int or type(v) is float]
    return bool(values) and (min(values) <= low or max(values) > high)


def _physical_problems(
    doc: Doc,
    name: str,
    group: Mapping[str, Any],
    samples: Sequence[Mapping[str, Any]],
    series: Series,
) -> list[str]:
    environment = doc.get("environment")
    environment = environment if isinstance(environment, Mapping) else {}
    host_total = as_number(environment.get("host_total_mb"))
    gpu_limit, gpu_what, card_problems = gpu_bound(environment)
    problems: list[str] = []
    if name == GROUP_NAMES[0]:  # facts of the environment: said once
        problems += card_problems + reader_problems(environment, doc.get("sampling"))
    host_limit, host_what = (
        (host_total, "the host's total") if host_total else (HOST_CEILING_MB, "any host's")
    )
    zero_host = [
        t
        for s in (samples if _beyond(samples, "host_used_mb", low=0) else ())
        if (v := as_number(s.get("host_used_mb"))) is not None
        and v <= 0
        and (t := as_number(s.get("t_s"))) is not None
    ]
    if zero_host:
        problems.append(
            f"{name} has {len(zero_host)} host sample(s) at 0 MiB or below (the first at "
            f"{secs(zero_host[0])}): a host running Python, CUDA and the run uses memory"
        )
    for key, kind, limit, what in (
        ("gpu_used_mb", "whole-GPU", gpu_limit, gpu_what),
        ("host_used_mb", "host", host_limit, host_what),
    ):
        over = [
            (t, v)
            for s in (samples if _beyond(samples, key, high=limit + MEMORY_TOLERANCE_MB) else ())
            if (v := as_number(s.get(key))) is not None
            and v > limit + MEMORY_TOLERANCE_MB
            and (t := as_number(s.get("t_s"))) is not None
        ]
        if over:
            t, v = max(over, key=lambda pair: pair[1])
            problems.append(
                f"{name} has {len(over)} {kind} sample(s) above {what} memory of "
                f"{limit:.0f} MiB (the highest {v:g} MiB at {secs(t)})"
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
            actor, t = as_number(entry.get(key)), as_number(entry.get(when))
            if actor is None or t is None:
                continue
            if actor > gpu_limit + MEMORY_TOLERANCE_MB:
                problems.append(
                    f"{name}'s actor memory at the {edge} of {phase} is {actor:g} MiB, above "
                    f"{gpu_what} memory of {gpu_limit:.0f} MiB"
                )
                continue
            near = _neighbours(series, t)
            values = [n for _, v in near if (n := as_number(v)) is not None]
            if values and actor > max(values) + MEMORY_TOLERANCE_MB:
                shown = ", ".join(f"{as_number(v):g} MiB at {secs(x)}" for x, v in near)
                problems.append(
                    f"{name}'s actor memory at the {edge} of {phase} ({secs(t)}) is {actor:g} MiB, "
                    f"above the whole-GPU sample(s) next to it ({shown}); the actor's memory "
                    "is part of the whole GPU's"
                )
    problems += _hollow_phase_problems(name, table, series)
    return problems


# A quantized checkpoint holds fewer than 2 bytes a parameter: its name fixes no bound.
_QUANTIZED = re.compile(r"awq|gptq|int4|int8|4bit|8bit|bnb|fp8|gguf|nf4", re.IGNORECASE)
_BILLIONS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[Bb](?![A-Za-z])")


def model_billions(name: object) -> float | None:
    """Parameters (billions) a model's name states (``Qwen2.5-0.5B-Instruct`` -> 0.5)."""
    if not isinstance(name, str) or _QUANTIZED.search(name):
        return None
    last = re.split(r"[/\\]", name.rstrip("/\\"))[-1].split("--")[-1]
    found = _BILLIONS.search(last.replace("_", "-"))
    return float(found.group(1)) if found else None


def _model_fits_problems(doc: Doc, name: str, group: Mapping[str, Any]) -> list[str]:
    """The actor holds the whole base model on the GPU (FSDP on one card, no parameter
    offload): its memory is at least the weights' bytes, 2 per parameter (bf16)."""
    config = group.get("config")
    if not isinstance(config, Mapping):
        return []
    present, offload = lookup(config, "actor_rollout_ref.actor.fsdp_config.param_offload")
    if present and offload is True:
        return []
    workload = doc.get("workload")
    model = workload.get("model") if isinstance(workload, Mapping) else None
    billions = model_billions(model) or model_billions(
        lookup(config, "actor_rollout_ref.model.path")[1]
    )
    table = group.get("phases")
    if billions is None or not isinstance(table, Mapping):
        return []
    actor = [
        v
        for entry in table.values()
        if isinstance(entry, Mapping)
        for key in ("actor_memory_start_mb", "actor_memory_end_mb")
        if (v := as_number(entry.get(key))) is not None
    ]
    need = MODEL_FIT_FRACTION * billions * 1e9 * 2 / 2**20
    if actor and max(actor) < need:
        return [
            f"{name}'s actor holds at most {max(actor):g} MiB, but a {billions:g}B-parameter "
            f"model's weights alone take {billions * 1e9 * 2 / 2**20:.0f} MiB in bf16 (the actor "
            "keeps the whole base model on the GPU unless param_offload is on)"
        ]
    return []


def _hollow_phase_problems(name: str, table: Mapping[str, Any], series: Series) -> list[str]:
    """Whole-GPU memory inside a phase is never below half the actor's own memory at
    both its edges (the actor's memory is part of the GPU's; the caching allocator
    does not hand memory back inside a phase but at empty_cache, hence the half)."""
    found: list[str] = []
    empty = bool(series.values) and min(series.values) <= 0
    zero = [
        (phase, t)
        for phase, entry in (table.items() if empty else ())
        if isinstance(entry, Mapping)
        and (start := as_number(entry.get("start_s"))) is not None
        and (end := as_number(entry.get("end_s"))) is not None
        for t, v in zip(series.times, series.values, strict=True)
        if start <= t <= end and (n := as_number(v)) is not None and n <= 0
    ]
    if zero:
        phase, t = zero[0]
        found.append(
            f"{name}'s whole-GPU memory reads 0 MiB at {secs(t)} inside {phase}: with the "
            "actor's model and the engine loaded the card is never empty"
        )
        return found
    for phase, entry in table.items():
        if not isinstance(entry, Mapping):
            continue
        a0, a1 = (
            as_number(entry.get("actor_memory_start_mb")),
            as_number(entry.get("actor_memory_end_mb")),
        )
        start, end = as_number(entry.get("start_s")), as_number(entry.get("end_s"))
        if a0 is None or a1 is None or start is None or end is None or min(a0, a1) <= 0:
            continue
        floor = HOLLOW_FRACTION * min(a0, a1)
        inside = series.inside(start, end)
        low = [
            v
            for x in (inside if inside and min(inside) < floor else ())
            if (v := as_number(x)) is not None and v < floor
        ]
        if low:
            found.append(
                f"{name}'s whole-GPU memory reads {min(low):g} MiB inside {phase} while its actor "
                f"holds {min(a0, a1):g} MiB or more at both edges: the GPU cannot hold less than "
                "the actor on it"
            )
    return found


def check_resource_sampling(doc: Doc) -> CheckResult:
    """The samples cover the run and are physically possible, and every figure drawn
    from them (per-phase counts and peaks, whole-run peaks, measurements) is theirs.

    A phase's samples are those with ``start_s <= t_s <= end_s`` of its window
    in the phases table; its peak is null exactly when it has none. Sample
    times strictly increase; periodic samples leave no gap over the run (init
    included) longer than GAP_FACTOR x the interval + STALL_SLACK_S and are spaced
    at the interval; with boundary samples, one lies at each phase start and end.
    Memory stays within the GPU's (and host's) total, and actor memory within the
    whole-GPU reading next to it. The measurements section repeats the same figures and nothing
    the grader cannot re-derive.
    """
    problems: list[str] = []
    sampling = doc.get("sampling")
    sampling = sampling if isinstance(sampling, Mapping) else {}
    boundary = sampling.get("boundary_samples") is True
    interval = as_number(sampling.get("interval_s"))
    if interval is not None and interval > MAX_INTERVAL_S:
        problems.append(
            f"sampling.interval_s is {interval:g} s; a sampler that can see a phase reads at "
            f"most every {MAX_INTERVAL_S:g} s (times written in milliseconds?)"
        )
    decision = doc.get("system_decision")
    measurements = decision.get("measurements") if isinstance(decision, Mapping) else None
    for name in GROUP_NAMES:
        group = group_of(doc, name)
        samples = mappings(group.get("resource_samples"))
        series = Series(samples)
        problems += _duplicate_problems(name, samples)
        problems += _coverage_problems(name, group, samples, interval, boundary)
        problems += _physical_problems(doc, name, group, samples, series)
        problems += _model_fits_problems(doc, name, group)
        table = group.get("phases")
        table = table if isinstance(table, Mapping) else {}
        for phase, (start, end) in windows_of(table).items():
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
                    f"{name}'s {phase} has peak {mib(peak)} but no sample in its window: "
                    "it must be null (no sample is not zero)"
                )
            elif not same_mb(peak, want_peak):
                problems.append(
                    f"{name}'s {phase} claims peak {mib(peak)}; "
                    f"its samples peak at {mib(want_peak)}"
                )
            if boundary and not inside:
                problems.append(
                    f"{name}'s {phase} has no sample although boundary samples are claimed"
                )
        windows = windows_of(table)
        span = run_window(windows)
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
        event_windows = phase_windows(mappings(group.get("events")))
        derived = _group_measurement(group, series)
        problems += _measurement_problems(name, claimed, derived, series, event_windows)
    if isinstance(measurements, Mapping):
        unknown = sorted(str(key) for key in measurements if key not in MEASUREMENT_KEYS)
        if unknown:
            problems.append(
                f"measurements holds {listing([f'measurements.{k}' for k in unknown])}, which "
                "the grader cannot re-derive from the samples and events; every figure in "
                "measurements must be (readings belong in system_decision.interpretation)"
            )
    return outcome(
        problems,
        "the samples cover the run at the recorded interval within physical bounds, and every "
        "phase's sample count and peak, and each whole-run peak, match them",
    )


def derive_measurements(doc: Doc) -> dict[str, Any]:
    """What ``system_decision.measurements`` should hold, from the events and samples.

    Per group: ``free_cache_engine``, ``phases`` (phase → ``duration_s``,
    ``sample_count``, ``sampled_gpu_peak_mb``), and the whole-run
    ``sampled_gpu_peak_mb`` with its ``sampled_gpu_peak_phase``.
    """
    out: dict[str, Any] = {}
    for name in GROUP_NAMES:
        group = group_of(doc, name)
        out[name] = _group_measurement(group, Series(mappings(group.get("resource_samples"))))
    return out


def _group_measurement(group: Mapping[str, Any], series: Series) -> dict[str, Any]:
    table = summarize_phases(mappings(group.get("events")), series)
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
