"""The resource_sampling check, and the measurements derived from the samples."""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping
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
    section,
)
from pytest_rlsys.resultfile.checks.identity import lookup
from pytest_rlsys.resultfile.checks.series import Sampled, coverage_problems
from pytest_rlsys.resultfile.checks.timeline import (
    Readings,
    SamplesLike,
    Series,
    phase_windows,
    phases_holding,
    readings,
    run_span,
    run_window,
    series_of,
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
    phases = section(claimed, "phases")
    problems += _underived(f"measurements.{name}", claimed, derived)
    for phase, want in derived["phases"].items():
        got = phases.get(phase)
        if isinstance(got, Mapping):
            problems += _underived(f"measurements.{name}.phases.{phase}", got, want)
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


def _underived(where: str, claimed: Mapping[str, Any], derived: Mapping[str, Any]) -> list[str]:
    """Keys the runner's derive_measurements does not write: figures no one re-derives."""
    extra = sorted(str(key) for key in claimed if key not in derived)
    if not extra:
        return []
    return [
        f"{where} holds {listing(extra)}, which the grader cannot re-derive from the samples "
        "and events (derive_measurements writes no such figure)"
    ]


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
    # The runner names the earliest phase (by start) holding a peak-valued sample
    # (whole_run_peak): a later one is never its choice (issue 40). Phases that start at
    # the same instant (a sync and its first sub-phase, on a coarse clock) are not told
    # apart: the docs say "by start", and nothing is gained by naming either.
    holding = sorted(phases_holding(peak, samples, windows), key=windows.__getitem__)
    if claimed_phase is None and holding:
        return [f"{where} gives no peak phase; the peak sample is in {listing(holding)}"]
    if claimed_phase is not None and claimed_phase not in holding:
        found = listing(holding) if holding else "no phase"
        return [f"{where} puts the peak in {claimed_phase}; the peak sample is in {found}"]
    if holding and windows[str(claimed_phase)][0] > windows[holding[0]][0]:
        return [
            f"{where} puts the peak in {claimed_phase}; the peak value is also reached in "
            f"{holding[0]}, which starts earlier, and the runner names the earliest phase "
            "holding it (whole_run_peak)"
        ]
    return []


def _duplicate_problems(name: str, read: Readings) -> list[str]:
    """Sample times strictly increase. The one exception: a boundary sample may share its
    time with another sample (the boundary hook and the sampler thread read the clock
    independently); two periodic samples never do."""
    if read.increasing:
        return []  # strictly increasing (one C-speed pass): neither fault below can be
    problems: list[str] = []
    previous: Mapping[str, Any] | None = None
    for index, sample in enumerate(read.samples):
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
    name: str, group: Mapping[str, Any], read: Readings, interval: float | None, boundary: bool
) -> list[str]:
    """The sampler's series against its own algorithm (checks.series): it covers the run
    from before init, one reading per tick of one schedule; boundary samples as recorded."""
    span = run_span(group)
    if span is None or interval is None or not interval > 0:
        return []
    windows = phase_windows(mappings(group.get("events")))
    return coverage_problems(Sampled(name, read, interval, boundary, span, windows))


def _neighbours(series: Series, t: float) -> list[tuple[float, float]]:
    """The samples at t, or else the one just before and the one just after it."""
    lo = bisect_left(series.times, t - TIME_TOLERANCE_S)
    hi = bisect_right(series.times, t + TIME_TOLERANCE_S)
    if hi > lo:
        return list(zip(series.times[lo:hi], series.values[lo:hi], strict=True))
    return [(series.times[i], series.values[i]) for i in (lo - 1, lo) if 0 <= i < len(series.times)]


def _beyond(read: Readings, key: str, low: float = -math.inf, high: float = math.inf) -> bool:
    """Whether some sample's reading of ``key`` may be at or below ``low`` or above
    ``high``: the column's extent spares an honest file the careful per-sample scan."""
    extent = read.extent(key)
    return extent is not None and (extent[0] <= low or extent[1] > high)


def _at(read: Readings, key: str, hit: Callable[[float], bool]) -> list[tuple[float, float]]:
    """(time, reading) of each sample whose ``key`` reading ``hit`` accepts."""
    return [
        (t, v)
        for s in read.samples
        if (v := as_number(s.get(key))) is not None
        and hit(v)
        and (t := as_number(s.get("t_s"))) is not None
    ]


def _bound_problems(doc: Doc, name: str, read: Readings, gpu: tuple[float, str]) -> list[str]:
    """Whole-GPU and host readings within their memory, host readings above zero."""
    environment = section(doc, "environment")
    host_total = as_number(environment.get("host_total_mb"))
    host = (host_total, "the host's total") if host_total else (HOST_CEILING_MB, "any host's")
    problems: list[str] = []
    zero_host = _at(read, "host_used_mb", (0.0).__ge__) if _beyond(read, "host_used_mb", 0) else []
    if zero_host:
        problems.append(
            f"{name} has {len(zero_host)} host sample(s) at 0 MiB or below (the first at "
            f"{secs(zero_host[0][0])}): a host running Python, CUDA and the run uses memory"
        )
    for key, kind, (limit, what) in (
        ("gpu_used_mb", "whole-GPU", gpu),
        ("host_used_mb", "host", host),
    ):
        ceiling = limit + MEMORY_TOLERANCE_MB
        over = _at(read, key, ceiling.__lt__) if _beyond(read, key, high=ceiling) else []
        if over:
            t, v = max(over, key=lambda pair: pair[1])
            problems.append(
                f"{name} has {len(over)} {kind} sample(s) above {what} memory of "
                f"{limit:.0f} MiB (the highest {v:g} MiB at {secs(t)})"
            )
    return problems


def _actor_edges(table: Mapping[str, Any]) -> Iterator[tuple[str, str, float, float]]:
    """(phase, edge, time, actor MiB) of each actor reading the phases table records."""
    for phase, entry in table.items():
        if not isinstance(entry, Mapping):
            continue
        for edge, key, when in (
            ("start", "actor_memory_start_mb", "start_s"),
            ("end", "actor_memory_end_mb", "end_s"),
        ):
            actor, t = as_number(entry.get(key)), as_number(entry.get(when))
            if actor is not None and t is not None:
                yield phase, edge, t, actor


def _actor_problems(
    name: str, table: Mapping[str, Any], series: Series, gpu: tuple[float, str]
) -> list[str]:
    """The actor's memory is part of the whole GPU's: within the card, and within the
    whole-GPU readings next to it."""
    limit, what = gpu
    problems: list[str] = []
    for phase, edge, t, actor in _actor_edges(table):
        if actor > limit + MEMORY_TOLERANCE_MB:
            problems.append(
                f"{name}'s actor memory at the {edge} of {phase} is {actor:g} MiB, above "
                f"{what} memory of {limit:.0f} MiB"
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
    return problems


def _physical_problems(doc: Doc, name: str, group: Mapping[str, Any], read: Readings) -> list[str]:
    environment = section(doc, "environment")
    gpu_limit, gpu_what, card_problems = gpu_bound(environment)
    problems: list[str] = []
    if name == GROUP_NAMES[0]:  # facts of the environment: said once
        problems += card_problems + reader_problems(environment, doc.get("sampling"))
    gpu = (gpu_limit, gpu_what)
    problems += _bound_problems(doc, name, read, gpu)
    table = section(group, "phases")
    problems += _actor_problems(name, table, read.series, gpu)
    problems += _hollow_phase_problems(name, table, read)
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
    if lookup(config, "actor_rollout_ref.actor.fsdp_config.param_offload")[1] is True:
        return []
    model = section(doc, "workload").get("model")
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


def _zero_inside(name: str, table: Mapping[str, Any], series: Series) -> list[str]:
    """No whole-GPU reading of 0 MiB (or below) inside a phase."""
    for phase, entry in table.items():
        if not isinstance(entry, Mapping):
            continue
        start, end = as_number(entry.get("start_s")), as_number(entry.get("end_s"))
        if start is None or end is None:
            continue
        for t, v in zip(*series.between(start, end), strict=True):
            if v <= 0:
                return [
                    f"{name}'s whole-GPU memory reads 0 MiB at {secs(t)} inside {phase}: with "
                    "the actor's model and the engine loaded the card is never empty"
                ]
    return []


def _hollow_phase_problems(name: str, table: Mapping[str, Any], read: Readings) -> list[str]:
    """Whole-GPU memory inside a phase is never below half the actor's own memory at
    both its edges (the actor's memory is part of the GPU's; the caching allocator
    does not hand memory back inside a phase but at empty_cache, hence the half)."""
    series = read.series
    extent = read.extent("gpu_used_mb")
    if extent is not None and extent[0] <= 0 and (zero := _zero_inside(name, table, series)):
        return zero
    found: list[str] = []
    for phase, entry in table.items():
        if not isinstance(entry, Mapping):
            continue
        a0, a1, start, end = (
            as_number(entry.get(key))
            for key in ("actor_memory_start_mb", "actor_memory_end_mb", "start_s", "end_s")
        )
        if a0 is None or a1 is None or start is None or end is None or min(a0, a1) <= 0:
            continue
        floor = HOLLOW_FRACTION * min(a0, a1)
        low = series.lowest(start, end)
        if low is not None and low < floor:
            found.append(
                f"{name}'s whole-GPU memory reads {low:g} MiB inside {phase} while its actor "
                f"holds {min(a0, a1):g} MiB or more at both edges: the GPU cannot hold less than "
                "the actor on it"
            )
    return found


def _table_problems(
    name: str, group: Mapping[str, Any], series: Series, boundary: bool
) -> list[str]:
    """Each phase's sample count and peak, and the group's whole-run peak, are the
    samples'."""
    problems: list[str] = []
    table = section(group, "phases")
    windows = windows_of(table)
    for phase, (start, end) in windows.items():
        entry = table[phase]
        count, peak = entry.get("sample_count"), entry.get("sampled_gpu_peak_mb")
        held, want_peak = series.peak(start, end)
        if count != held:
            problems.append(f"{name}'s {phase} claims {count} samples; {held} lie in its window")
        if not held and peak is not None:
            problems.append(
                f"{name}'s {phase} has peak {mib(peak)} but no sample in its window: "
                "it must be null (no sample is not zero)"
            )
        elif not same_mb(peak, want_peak):
            problems.append(
                f"{name}'s {phase} claims peak {mib(peak)}; its samples peak at {mib(want_peak)}"
            )
        if boundary and not held:
            problems.append(f"{name}'s {phase} has no sample although boundary samples are claimed")
    span = run_window(windows)
    return problems + _peak_problems(
        name,
        group.get("sampled_gpu_peak_mb"),
        group.get("sampled_gpu_peak_phase"),
        series.peak(span[0], span[1])[1] if span else None,
        series,
        windows,
    )


def _interval_problems(interval: float | None) -> list[str]:
    if interval is not None and interval > MAX_INTERVAL_S:
        return [
            f"sampling.interval_s is {interval:g} s; a sampler that can see a phase reads at "
            f"most every {MAX_INTERVAL_S:g} s (times written in milliseconds?)"
        ]
    return []


def _unknown_measurements(measurements: object) -> list[str]:
    if not isinstance(measurements, Mapping):
        return []
    unknown = sorted(str(key) for key in measurements if key not in MEASUREMENT_KEYS)
    if not unknown:
        return []
    return [
        f"measurements holds {listing([f'measurements.{k}' for k in unknown])}, which "
        "the grader cannot re-derive from the samples and events; every figure in "
        "measurements must be (readings belong in system_decision.interpretation)"
    ]


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
    sampling = section(doc, "sampling")
    boundary = sampling.get("boundary_samples") is True
    interval = as_number(sampling.get("interval_s"))
    problems = _interval_problems(interval)
    measurements = section(doc, "system_decision").get("measurements")
    for name in GROUP_NAMES:
        group = group_of(doc, name)
        read = readings(group.get("resource_samples"))
        problems += _duplicate_problems(name, read)
        problems += _coverage_problems(name, group, read, interval, boundary)
        problems += _physical_problems(doc, name, group, read)
        problems += _model_fits_problems(doc, name, group)
        problems += _table_problems(name, group, read.series, boundary)
        claimed = measurements.get(name) if isinstance(measurements, Mapping) else None
        event_windows = phase_windows(mappings(group.get("events")))
        derived = _group_measurement(group, read.series)
        problems += _measurement_problems(name, claimed, derived, read.series, event_windows)
    problems += _unknown_measurements(measurements)
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
        out[name] = _group_measurement(group, series_of(group))
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
