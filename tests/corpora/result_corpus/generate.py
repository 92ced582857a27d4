"""Write the result-file corpus: one faulty file per rule, and honest controls.

    python tests/corpora/result_corpus/generate.py          # (re)write the files
    python tests/corpora/result_corpus/generate.py --check  # exit 1 if any file is stale

Every file starts from ``schemas/examples/pt-verl-closure.example.json``. A
faulty file breaks exactly one rule and is otherwise made consistent: the
phase tables, whole-run peaks and measurements are recomputed from its
(faulty) evidence and every check is still claimed passed, as a buggy runner
or a careless hand would write it. An honest control claims what the
evidence shows. ``manifest.json`` records, per file, the verdict the grader
must reach and, for a faulty file, the check that must fail and a fragment of
its message (tests/corpora/test_result_corpus.py grades every file against it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pytest_rlsys.resultfile import checks as cc  # noqa: E402

EXAMPLE = ROOT / "schemas" / "examples" / "pt-verl-closure.example.json"
Doc = dict[str, Any]


def base() -> Doc:
    doc: Doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return doc


def recompute(doc: Doc, *, honest: bool = False) -> Doc:
    """Phase tables, peaks and measurements from the evidence; claims honest or all passed."""
    for group in doc["groups"].values():
        old = group["phases"]
        memory = {p: (e["actor_memory_start_mb"], e["actor_memory_end_mb"]) for p, e in old.items()}
        group["phases"] = cc.summarize_phases(group["events"], group["resource_samples"], memory)
        group["sampled_gpu_peak_mb"], group["sampled_gpu_peak_phase"] = cc.whole_run_peak(
            group["resource_samples"], group["phases"]
        )
        group["config_sha256"] = cc.config_sha256(group["config"])
    decision = doc["system_decision"]
    extra = {k: v for k, v in decision["measurements"].items() if k not in cc.GROUP_NAMES}
    decision["measurements"] = {**cc.derive_measurements(doc), **extra}
    derived = cc.derive_checks(doc)
    decision["checks"] = {
        name: (
            result.as_dict()
            if honest
            else {"passed": True, "detail": decision["checks"][name]["detail"]}
        )
        for name, result in derived.items()
    }
    return doc


def events(doc: Doc, group: str) -> list[dict[str, Any]]:
    return list(doc["groups"][group]["events"])


def set_event(doc: Doc, group: str, phase: str, kind: str, t: float) -> None:
    for event in doc["groups"][group]["events"]:
        if event["phase"] == phase and event["kind"] == kind:
            event["t_s"] = t
    doc["groups"][group]["events"].sort(key=lambda e: e["t_s"])


def add_phase(doc: Doc, group: str, phase: str, start: float, end: float, **detail: Any) -> None:
    ev = doc["groups"][group]["events"]
    ev.append({"t_s": start, "phase": phase, "kind": "start", "source": "driver"})
    end_event: dict[str, Any] = {"t_s": end, "phase": phase, "kind": "end", "source": "driver"}
    if detail:
        end_event["detail"] = detail
    ev.append(end_event)
    ev.sort(key=lambda e: e["t_s"])
    doc["groups"][group]["phases"][phase] = {
        "start_s": start,
        "end_s": end,
        "duration_s": end - start,
        "sample_count": 0,
        "sampled_gpu_peak_mb": None,
        "actor_memory_start_mb": None,
        "actor_memory_end_mb": None,
    }


def sample(doc: Doc, group: str, t: float) -> dict[str, Any]:
    (found,) = [s for s in doc["groups"][group]["resource_samples"] if s["t_s"] == t]
    return found


def truncate(doc: Doc, group: str, before: float) -> None:
    """The group's evidence as a run that died at ``before``."""
    g = doc["groups"][group]
    started = {e["phase"] for e in g["events"] if e["t_s"] < before}
    g["events"] = [e for e in g["events"] if e["t_s"] < before]
    # The recorder closes the phase that raised, marked failed.
    open_phases = [
        p for p in started if not any(e["phase"] == p and e["kind"] == "end" for e in g["events"])
    ]
    for phase in sorted(open_phases):
        g["events"].append(
            {
                "t_s": before,
                "phase": phase,
                "kind": "end",
                "source": "driver",
                "detail": {"failed": True, "error": "RuntimeError: simulated"},
            }
        )
    g["events"].sort(key=lambda e: e["t_s"])
    g["resource_samples"] = [s for s in g["resource_samples"] if s["t_s"] <= before + 0.25]
    g["resume_calls"] = [c for c in g["resume_calls"] if c["t_s"] < before]


def never_ran(doc: Doc, group: str) -> None:
    """``group`` as the runner's assemble writes a group that never ran: the runner stops at
    the first group that fails (pytest_rlsys/resultfile/runner_states.py)."""
    g = doc["groups"][group]
    g.update(
        updated_lora_sha256=None,
        update_completed=False,
        sync_completed=False,
        init={"start_s": 0.0, "end_s": 0.0, "steps": []},
        events=[],
        resume_calls=[],
        resource_samples=[],
    )


def failed(
    doc: Doc, group: str, phase: str, kind: str = "RuntimeError", message: str = "x"
) -> None:
    """Mark the run failed in ``group``'s ``phase``, as the runner's failure record says it."""
    doc["status"] = "failed"
    doc["failure"] = {"group": group, "phase": phase, "type": kind, "message": message}


# --------------------------------------------------------------------------- faulty files
# name -> (mutation, check that must fail, fragment of its message)
Faulty = tuple[Callable[[Doc], None], str, str]
FAULTY: dict[str, Faulty] = {}


def faulty(name: str, check: str, fragment: str) -> Callable[[Callable[[Doc], None]], None]:
    def register(mutate: Callable[[Doc], None]) -> None:
        FAULTY[name] = (mutate, check, fragment)

    return register


@faulty("sampling_stopped_early", "resource_sampling", "release's periodic samples leave a")
def _(doc: Doc) -> None:
    g = doc["groups"]["release"]
    g["resource_samples"] = [s for s in g["resource_samples"] if s["t_s"] <= 20.0]


@faulty("sampling_other_clock", "resource_sampling", "none of its 91 periodic samples lies in")
def _(doc: Doc) -> None:
    for s in doc["groups"]["retain"]["resource_samples"]:
        s["t_s"] = round(s["t_s"] + 1000.0, 6)


@faulty(
    "sampling_duplicate_time", "resource_sampling", "retain has two periodic samples at 21.000 s"
)
def _(doc: Doc) -> None:
    samples = doc["groups"]["retain"]["resource_samples"]
    index = samples.index(sample(doc, "retain", 21.0))
    samples.insert(index + 1, dict(samples[index], gpu_used_mb=10480))


@faulty("sampling_out_of_order", "resource_sampling", "release's resource samples are not in")
def _(doc: Doc) -> None:
    samples = doc["groups"]["release"]["resource_samples"]
    samples[40], samples[41] = samples[41], samples[40]


@faulty(
    "sampling_interval_misrecorded", "resource_sampling", "the file records an interval of 0.5 s"
)
def _(doc: Doc) -> None:
    doc["sampling"]["interval_s"] = 0.5


@faulty("sampling_boundary_missing", "resource_sampling", "has no boundary sample at")
def _(doc: Doc) -> None:
    doc["sampling"]["boundary_samples"] = True


@faulty("phase_overlap", "phase_events", "retain's score_before_update starts at 19.500 s, before")
def _(doc: Doc) -> None:
    set_event(doc, "retain", "score_before_update", "start", 19.5)


@faulty("engine_sleep_overlaps_score", "phase_events", "release's score_before_update starts at")
def _(doc: Doc) -> None:
    set_event(doc, "release", "engine_sleep", "end", 20.2)


@faulty("phase_zero_duration", "phase_events", "release's weight_transfer has zero duration")
def _(doc: Doc) -> None:
    set_event(doc, "release", "weight_transfer", "end", 21.8)


@faulty("init_step_outside_init", "phase_events", "lies outside init")
def _(doc: Doc) -> None:
    doc["groups"]["release"]["init"]["steps"][2]["end_s"] = 19.0


@faulty("init_step_reversed", "phase_events", "retain's init step 1 (actor_model) ends at")
def _(doc: Doc) -> None:
    step = doc["groups"]["retain"]["init"]["steps"][1]
    step["start_s"], step["end_s"] = step["end_s"], step["start_s"]


@faulty("subphase_outside_sync", "phase_events", "release's resume_kv_cache (21.970–22.200 s) lies")
def _(doc: Doc) -> None:
    set_event(doc, "release", "resume_kv_cache", "end", 22.2)


@faulty("retain_resume_subphases", "resume_calls", "retain (free_cache_engine false) records 2")
def _(doc: Doc) -> None:
    # The resume recorded as sub-phase events instead of resume calls.
    set_event(doc, "retain", "weight_transfer", "start", 21.5)
    add_phase(doc, "retain", "resume_weights", 21.41, 21.48)
    add_phase(doc, "retain", "resume_kv_cache", 21.705, 21.715)


@faulty("retain_engine_sleep", "resume_calls", "records an engine_sleep phase (19.630–19.640 s)")
def _(doc: Doc) -> None:
    add_phase(doc, "retain", "engine_sleep", 19.63, 19.64)


@faulty("retain_sleep_flag_not_honoured", "resume_calls", "falls from 10046 MiB to 3020 MiB")
def _(doc: Doc) -> None:
    # Recorded as a no-op, but whole-GPU memory shows the engine released its cache.
    add_phase(doc, "retain", "engine_sleep", 19.63, 19.645, effective=False)
    sample(doc, "retain", 19.75)["gpu_used_mb"] = 3020


@faulty("retain_resume_call", "resume_calls", "retain (free_cache_engine false) made 1 resume call")
def _(doc: Doc) -> None:
    doc["groups"]["retain"]["resume_calls"].append({"t_s": 18.9, "tags": ["kv_cache"]})


@faulty("release_resume_during_update", "resume_calls", "happens during update")
def _(doc: Doc) -> None:
    doc["groups"]["release"]["resume_calls"].append({"t_s": 21.0, "tags": ["weights"]})


@faulty("release_resume_between_sleep_and_sync", "resume_calls", "happens during score_before")
def _(doc: Doc) -> None:
    doc["groups"]["release"]["resume_calls"].insert(2, {"t_s": 20.2, "tags": ["kv_cache"]})


@faulty("release_kv_before_transfer_end", "resume_calls", "comes before the weight transfer ends")
def _(doc: Doc) -> None:
    doc["groups"]["release"]["resume_calls"][3]["t_s"] = 21.95


@faulty("release_weights_outside_resume_weights", "resume_calls", "lies outside resume_weights")
def _(doc: Doc) -> None:
    doc["groups"]["release"]["resume_calls"][2]["t_s"] = 21.795


@faulty("release_sleep_noop", "resume_calls", "the released engine never slept")
def _(doc: Doc) -> None:
    for event in doc["groups"]["release"]["events"]:
        if event["phase"] == "engine_sleep" and event["kind"] == "end":
            event["detail"] = {"effective": False}


@faulty("gpu_above_total", "resource_sampling", "above the GPU's total memory of 16303 MiB")
def _(doc: Doc) -> None:
    sample(doc, "retain", 21.0)["gpu_used_mb"] = 17000


@faulty("actor_above_gpu_sample", "resource_sampling", "above the whole-GPU sample(s) next to it")
def _(doc: Doc) -> None:
    doc["groups"]["release"]["phases"]["update"]["actor_memory_end_mb"] = 8000.0


@faulty("actor_above_total", "resource_sampling", "actor memory at the end of update is 20000")
def _(doc: Doc) -> None:
    doc["groups"]["retain"]["phases"]["update"]["actor_memory_end_mb"] = 20000.0


@faulty("host_unit_slip", "resource_sampling", "host sample(s) above any host's memory")
def _(doc: Doc) -> None:
    for s in doc["groups"]["release"]["resource_samples"]:
        s["host_used_mb"] = s["host_used_mb"] * 1048576  # bytes written as MiB


@faulty("gpu_total_unit_slip", "resource_sampling", "more than any GPU has")
def _(doc: Doc) -> None:
    doc["environment"]["gpu_total_mb"] = 16303 * 1048576


@faulty("workload_model_differs", "config_paired", "the workload names model")
def _(doc: Doc) -> None:
    doc["workload"]["model"] = "Qwen/Qwen2.5-1.5B-Instruct"


@faulty("workload_rank_differs", "config_paired", "the workload's lora_rank is 8")
def _(doc: Doc) -> None:
    doc["workload"]["lora_rank"] = 8


@faulty("workload_alpha_differs", "config_paired", "the workload's lora_alpha is 16")
def _(doc: Doc) -> None:
    doc["workload"]["lora_alpha"] = 16


@faulty("workload_update_count", "config_paired", "the workload's update_count is 3")
def _(doc: Doc) -> None:
    doc["workload"]["update_count"] = 3


@faulty("failed_but_complete", "update_and_sync", "but retain's evidence is complete")
def _(doc: Doc) -> None:
    failed(doc, "retain", "update")


@faulty("failed_names_wrong_phase", "update_and_sync", "retain's update (19.990–21.335 s) ended")
def _(doc: Doc) -> None:
    # Retain really died in the sync; the failure record names the update.
    truncate(doc, "retain", 21.5)
    doc["groups"]["retain"]["sync_completed"] = False
    failed(doc, "retain", "update")


@faulty("failed_names_unstarted_phase", "update_and_sync", "which never started, but retain's")
def _(doc: Doc) -> None:
    # Retain died in the sync; the record names a later phase that never started.
    truncate(doc, "retain", 21.5)
    doc["groups"]["retain"]["sync_completed"] = False
    failed(doc, "retain", "score_after_update")


@faulty("retain_resume_in_event_detail", "resume_calls", "records a resume (detail.resumed")
def _(doc: Doc) -> None:
    for event in doc["groups"]["retain"]["events"]:
        if event["phase"] == "sync" and event["kind"] == "end":
            event["detail"] = {"resumed": ["weights", "kv_cache"]}


@faulty("sampling_interval_in_ms", "resource_sampling", "records an interval of 250 s")
def _(doc: Doc) -> None:
    doc["sampling"]["interval_s"] = 250


@faulty("gpu_samples_in_gib", "resource_sampling", "above the whole-GPU sample(s) next to it")
def _(doc: Doc) -> None:
    for s in doc["groups"]["retain"]["resource_samples"]:
        s["gpu_used_mb"] = round(s["gpu_used_mb"] / 1024, 3)


@faulty("completed_but_incomplete", "update_and_sync", "the run is marked completed but retain")
def _(doc: Doc) -> None:
    g = doc["groups"]["retain"]
    g["events"] = [e for e in g["events"] if e["phase"] != "score_after_update"]


@faulty("created_in_future", "phase_events", "is in the future")
def _(doc: Doc) -> None:
    doc["created_at"] = "2999-01-01T00:00:00Z"


@faulty("created_before_verl", "phase_events", "before verl existed")
def _(doc: Doc) -> None:
    doc["created_at"] = "1970-01-01T00:00:00Z"


@faulty("measurement_unknown_key", "resource_sampling", "measurements.update_peak_difference_mb")
def _(doc: Doc) -> None:
    doc["system_decision"]["measurements"]["update_peak_difference_mb"] = 4097


@faulty("measurement_number_wrong", "resource_sampling", "measurements.retain claims a whole-run")
def _(doc: Doc) -> None:
    doc["system_decision"]["measurements"]["retain"]["sampled_gpu_peak_mb"] = 10000


# ----- round 3: the engine's machine, memory that must move, physics, coherence


def _sglang(doc: Doc, *, adapter: bool = True) -> None:
    """Both groups on SGLang; with a LoRA adapter the released engine never wakes weights."""
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["rollout"]["name"] = "sglang"
        group["config"]["actor_rollout_ref"]["model"]["lora"] = {"merge": not adapter}
    if adapter:
        release = doc["groups"]["release"]
        release["events"] = [e for e in release["events"] if e["phase"] != "resume_weights"]
        release["resume_calls"] = [c for c in release["resume_calls"] if c["tags"] != ["weights"]]


@faulty("vllm_sleeps_without_sleep_mode", "resume_calls", "enable_sleep_mode=false")
def _(doc: Doc) -> None:
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["rollout"]["enable_sleep_mode"] = False


@faulty("resume_recorded_in_other_phase", "resume_calls", "records that it was made during")
def _(doc: Doc) -> None:
    doc["groups"]["release"]["resume_calls"][2]["detail"] = {"during": "initial_sync"}


@faulty("initial_sync_never_wakes", "resume_calls", "release's initial_sync resumes nothing")
def _(doc: Doc) -> None:
    release = doc["groups"]["release"]
    release["resume_calls"] = release["resume_calls"][2:]


@faulty("initial_sync_kv_first", "resume_calls", "initial_sync resumes kv_cache, then weights")
def _(doc: Doc) -> None:
    calls = doc["groups"]["release"]["resume_calls"]
    calls[0]["tags"], calls[1]["tags"] = ["kv_cache"], ["weights"]


@faulty("sglang_adapter_resumes_weights", "resume_calls", "never resumes its weights")
def _(doc: Doc) -> None:
    _sglang(doc, adapter=False)  # configs say merge: false below, phases keep resume_weights
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["model"]["lora"] = {"merge": False}


@faulty("release_sleep_frees_nothing", "resume_calls", "the released engine's sleep freed less")
def _(doc: Doc) -> None:
    for s in doc["groups"]["release"]["resource_samples"]:
        if 19.8 <= s["t_s"] <= 21.7:
            s["gpu_used_mb"] = 9700


@faulty("retain_sheds_without_sleep", "resume_calls", "with no sleep: a retained engine keeps")
def _(doc: Doc) -> None:
    for s in doc["groups"]["retain"]["resource_samples"]:
        if 19.8 <= s["t_s"] <= 21.3:
            s["gpu_used_mb"] = s["gpu_used_mb"] - 6000


@faulty("retained_vllm_below_utilization", "resume_calls", "below 0.8 x gpu_memory_utilization")
def _(doc: Doc) -> None:
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["rollout"]["gpu_memory_utilization"] = 0.9


def _utilization(value: object) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        for group in doc["groups"].values():
            group["config"]["actor_rollout_ref"]["rollout"]["gpu_memory_utilization"] = value

    return mutate


# vLLM refuses these (CacheConfig: gt=0, le=1); a retained engine's floor and ceiling
# then say nothing, so only the engine's own range catches them.
for _name, _value in (("above_one", 1.5), ("forty", 40), ("zero", 0)):
    faulty(
        f"gpu_memory_utilization_{_name}",
        "config_paired",
        f"gpu_memory_utilization={_value!r}, which the engine refuses",
    )(_utilization(_value))

# The retained engine holds ~10 GiB of the 16 GB card; 0.1 allows 1.6 GiB + the actor's
# 2.3 GiB + 2 GiB.
faulty("retained_above_its_share", "resume_calls", "holds more than the share its config")(
    _utilization(0.1)
)


@faulty("amd_card_read_with_nvml", "resource_sampling", "which reads NVIDIA GPUs only")
def _(doc: Doc) -> None:
    doc["environment"]["gpu_name"] = "AMD Instinct MI300X"


@faulty("gpu_total_not_the_card", "resource_sampling", "which NVML reports as 16303 MiB")
def _(doc: Doc) -> None:
    doc["environment"]["gpu_total_mb"] = 24564


@faulty("gpu_total_null_above_the_card", "resource_sampling", "above the RTX 5070 Ti (16 GB)'s")
def _(doc: Doc) -> None:
    doc["environment"]["gpu_total_mb"] = None
    sample(doc, "retain", 21.0)["gpu_used_mb"] = 20000


@faulty("gpu_below_the_actor_in_a_phase", "resource_sampling", "reads 500 MiB inside update while")
def _(doc: Doc) -> None:
    sample(doc, "release", 21.0)["gpu_used_mb"] = 500


@faulty("gpu_zero_inside_a_phase", "resource_sampling", "reads 0 MiB at 20.750 s inside update")
def _(doc: Doc) -> None:
    sample(doc, "retain", 20.75)["gpu_used_mb"] = 0


@faulty("host_memory_zero", "resource_sampling", "host sample(s) at 0 MiB or below")
def _(doc: Doc) -> None:
    for s in doc["groups"]["retain"]["resource_samples"]:
        s["host_used_mb"] = 0.0


@faulty("samples_faster_than_interval", "resource_sampling", "periodic samples within 0.01 s")
def _(doc: Doc) -> None:
    # A burst read every 5 ms while the file says 0.25 s (a sampler loop without its wait).
    samples = doc["groups"]["release"]["resource_samples"]
    base = sample(doc, "release", 5.0)
    samples += [dict(base, t_s=round(5.0 + 0.005 * k, 6)) for k in range(1, 40)]
    samples.sort(key=lambda s: s["t_s"])


@faulty("boundary_samples_while_off", "resource_sampling", "although boundary samples are recorded")
def _(doc: Doc) -> None:
    samples = doc["groups"]["retain"]["resource_samples"]
    samples.append(dict(sample(doc, "retain", 20.0), t_s=19.995, reason="boundary"))
    samples.sort(key=lambda s: s["t_s"])


@faulty("interval_no_sampler_uses", "resource_sampling", "a sampler that can see a phase")
def _(doc: Doc) -> None:
    doc["sampling"]["interval_s"] = 250.0


@faulty("streamed_lora_differs", "update_and_sync", "not the updated adapter")
def _(doc: Doc) -> None:
    for event in doc["groups"]["retain"]["events"]:
        if event["phase"] == "sync" and event["kind"] == "end":
            event["detail"] = {"streamed_lora_sha256": "5" * 8 + "0123456789abcdef" * 3 + "7" * 8}


@faulty("streamed_lora_null", "update_and_sync", "streamed no adapter")
def _(doc: Doc) -> None:
    for event in doc["groups"]["release"]["events"]:
        if event["phase"] == "sync" and event["kind"] == "end":
            event["detail"] = {"streamed_lora_sha256": None}


@faulty("global_steps_not_advanced", "update_and_sync", "reports global_steps [0.0]")
def _(doc: Doc) -> None:
    for event in doc["groups"]["release"]["events"]:
        if event["phase"].startswith("rollout_") and event["kind"] == "end":
            event["detail"] = {"responses": 8, "global_steps": [0]}


@faulty("lr_zero_adapter_changed", "update_and_sync", "learning rate is 0 but its adapter")
def _(doc: Doc) -> None:
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["actor"]["optim"]["lr"] = 0.0


@faulty("nan_loss_step_applied", "update_and_sync", "non-finite loss ('nan')")
def _(doc: Doc) -> None:
    for event in doc["groups"]["retain"]["events"]:
        if event["phase"] == "update" and event["kind"] == "end":
            event["detail"] = {"loss": "nan"}


@faulty("fewer_responses_than_prompts", "update_and_sync", "records 5 responses for 8 prompts")
def _(doc: Doc) -> None:
    for event in doc["groups"]["retain"]["events"]:
        if event["phase"] == "rollout_after_update" and event["kind"] == "end":
            event["detail"] = {"responses": 5, "global_steps": [1]}


@faulty("placeholder_initial_hash", "initial_lora_match", "sha256 of empty input")
def _(doc: Doc) -> None:
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    for group in doc["groups"].values():
        group["initial_lora_sha256"] = empty


@faulty("placeholder_updated_hash", "updated_lora_match", "1 distinct hex digits")
def _(doc: Doc) -> None:
    for group in doc["groups"].values():
        group["updated_lora_sha256"] = "0" * 64


@faulty("configs_stripped", "config_paired", "config lacks actor_rollout_ref.model.path")
def _(doc: Doc) -> None:
    for name, group in doc["groups"].items():
        flag = name == "release"
        group["config"] = {"actor_rollout_ref": {"rollout": {"free_cache_engine": flag}}}


@faulty("config_snapshot_other_revision", "config_paired", "loads the cache snapshot")
def _(doc: Doc) -> None:
    path = "/root/.cache/huggingface/hub/models--Qwen--Qwen2.5-0.5B-Instruct/snapshots/" + (
        "a8b602d9dafd3a75d382e62757d83d89fca3be54"
    )
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["model"]["path"] = path


@faulty("created_before_its_verl", "phase_events", "is before verl 0.9.1 existed")
def _(doc: Doc) -> None:
    doc["created_at"] = "2025-06-01T10:00:00+00:00"


@faulty("kv_cache_never_reallocated", "resume_calls", "yet none came back")
def _(doc: Doc) -> None:
    for s in doc["groups"]["release"]["resource_samples"]:
        if s["t_s"] >= 22.0:
            s["gpu_used_mb"] = 3400


@faulty("seven_billion_in_a_small_actor", "resource_sampling", "a 7B-parameter model's weights")
def _(doc: Doc) -> None:
    doc["workload"]["model"] = "Qwen/Qwen2.5-7B-Instruct"
    for group in doc["groups"].values():
        group["config"]["actor_rollout_ref"]["model"]["path"] = "Qwen/Qwen2.5-7B-Instruct"


@faulty("host_memory_4_tib", "resource_sampling", "above any host's memory of 2097152 MiB")
def _(doc: Doc) -> None:
    for s in doc["groups"]["release"]["resource_samples"]:
        s["host_used_mb"] = 4.0 * 2**20


@faulty("equal_adapters_apart", "updated_lora_match", "an L2 distance of 0.0213 between")
def _(doc: Doc) -> None:
    for event in doc["groups"]["release"]["events"]:
        if event["phase"] == "update" and event["kind"] == "end":
            event["detail"] = {"updated_lora_l2_between_groups": 0.0213}


@faulty("resume_call_flag_disagrees", "resume_calls", "records free_cache_engine false")
def _(doc: Doc) -> None:
    doc["groups"]["release"]["resume_calls"][3]["detail"] = {
        "during": "sync",
        "free_cache_engine": False,
    }


def _write_faulty(name: str, mutate: Callable[[Doc], None]) -> Doc:
    doc = base()
    mutate(doc)
    doc = recompute(doc)
    if name == "measurement_number_wrong":  # the fault is in the figures recompute() rewrites
        doc["system_decision"]["measurements"]["retain"]["sampled_gpu_peak_mb"] = 10000
    return doc


# --------------------------------------------------------------------------- honest controls


def honest_failed_run() -> Doc:
    """Retain died in its sync; the file says so and claims what the evidence shows."""
    doc = base()
    truncate(doc, "retain", 21.5)
    doc["groups"]["retain"]["sync_completed"] = False
    failed(doc, "retain", "sync", "RuntimeError", "simulated failure in sync")
    return recompute(doc, honest=True)


def honest_failed_in_init() -> Doc:
    """Retain died while initialising: no cycle at all; init and its samples kept."""
    doc = base()
    g = doc["groups"]["retain"]
    g["events"], g["resume_calls"] = [], []
    g["init"] = {"start_s": 0.0, "end_s": 9.8, "steps": g["init"]["steps"][:2]}
    g["resource_samples"] = [s for s in g["resource_samples"] if s["t_s"] <= 10.0]
    g["updated_lora_sha256"] = None
    g["update_completed"] = g["sync_completed"] = False
    failed(
        doc,
        "retain",
        "init",
        "OutOfMemoryError",
        "CUDA out of memory while loading the rollout engine",
    )
    return recompute(doc, honest=True)


def honest_retain_noop_sleep() -> Doc:
    """Retain calls sleep as verl's trainer does; the call is a recorded no-op."""
    doc = base()
    add_phase(doc, "retain", "engine_sleep", 19.63, 19.64, effective=False)
    return recompute(doc, honest=True)


def honest_boundary_samples() -> Doc:
    """boundary_samples on, with a sample just inside every phase start and end."""
    doc = base()
    doc["sampling"]["boundary_samples"] = True
    for group in doc["groups"].values():
        samples = group["resource_samples"]
        extra = []
        for phase in group["phases"].values():
            for t in (phase["start_s"] + 0.0005, phase["end_s"] - 0.0005):
                before = max((s for s in samples if s["t_s"] <= t), key=lambda s: s["t_s"])
                extra.append(dict(before, t_s=round(t, 6), reason="boundary"))
        group["resource_samples"] = sorted(samples + extra, key=lambda s: s["t_s"])
    return recompute(doc, honest=True)


def honest_sglang_adapter() -> Doc:
    """SGLang serving a LoRA adapter: the released engine wakes only its KV cache."""
    doc = base()
    _sglang(doc, adapter=True)
    return recompute(doc, honest=True)


def honest_sglang_merged() -> Doc:
    """SGLang with the adapter merged (sleep level 2): it wakes weights then KV, as vLLM."""
    doc = base()
    _sglang(doc, adapter=False)
    return recompute(doc, honest=True)


def honest_resume_3ms_early() -> Doc:
    """The probe logs the call, is switched out, then opens the sub-phase 3 ms later."""
    doc = base()
    doc["groups"]["release"]["resume_calls"][2]["t_s"] = 21.702
    doc["groups"]["release"]["resume_calls"][3]["t_s"] = 21.967
    return recompute(doc, honest=True)


def honest_dropped_readings() -> Doc:
    """One reading dropped in release, two in a row in retain (an NVML read that failed)."""
    doc = base()
    for name, drop in (("release", (5.25,)), ("retain", (7.25, 7.5))):
        g = doc["groups"][name]
        g["resource_samples"] = [s for s in g["resource_samples"] if s["t_s"] not in drop]
    return recompute(doc, honest=True)


def honest_fast_sampler_with_stall() -> Doc:
    """smoke.sh's 0.1 s interval, with a 0.33 s stall (an import holding the GIL) in init."""
    doc = base()
    doc["sampling"]["interval_s"] = 0.1
    for g in doc["groups"].values():
        samples = g["resource_samples"]
        # A reading every 0.1 s plus 3 ms of read time, each the level of the last 0.25 s one.
        times = [round(x * 0.103, 6) for x in range(int(samples[-1]["t_s"] / 0.103) + 1)]
        stalled = [t for t in times if not 3.0 < t < 3.33]
        by_time = sorted(samples, key=lambda s: s["t_s"])
        out = []
        j = 0
        for t in stalled:
            while j + 1 < len(by_time) and by_time[j + 1]["t_s"] <= t:
                j += 1
            out.append(dict(by_time[j], t_s=t))
        g["resource_samples"] = out
    return recompute(doc, honest=True)


def honest_unknown_card() -> Doc:
    """A card the table does not know, with no recorded total: bounded by 1 TiB only."""
    doc = base()
    doc["environment"]["gpu_name"] = "NVIDIA Experimental X1"
    doc["environment"]["gpu_total_mb"] = None
    return recompute(doc, honest=True)


def honest_known_card_null_total() -> Doc:
    """NVML gave no total, but the name is a card the table knows."""
    doc = base()
    doc["environment"]["gpu_total_mb"] = None
    return recompute(doc, honest=True)


def honest_actor_probe_samples_while_boundary_off() -> Doc:
    """boundary_samples off, yet the actor's probes sample at the sync sub-phase edges."""
    doc = base()
    g = doc["groups"]["release"]
    edges = [e["t_s"] for e in g["events"] if e["phase"] in cc.SYNC_SUB_PHASES]
    extra = [
        dict(sample(doc, "release", 21.75), t_s=round(t + 0.0004, 6), reason="boundary")
        for t in edges
    ]
    g["resource_samples"] = sorted(g["resource_samples"] + extra, key=lambda s: s["t_s"])
    return recompute(doc, honest=True)


def honest_oom_in_resume_kv_cache() -> Doc:
    """Release ran out of memory re-allocating its KV cache: the sync never ended, and
    retain never ran."""
    doc = base()
    g = doc["groups"]["release"]
    g["events"] = [
        e
        for e in g["events"]
        if e["t_s"] < 21.97 or (e["phase"] == "resume_kv_cache" and e["kind"] == "start")
    ]
    g["resume_calls"] = g["resume_calls"][:4]
    g["resource_samples"] = [s for s in g["resource_samples"] if s["t_s"] <= 22.0]
    g["sync_completed"] = False
    never_ran(doc, "retain")
    failed(
        doc,
        "release",
        "resume_kv_cache",
        "RuntimeError",
        "CUDA Error: out of memory at cumem_allocator.cpp:62",
    )
    return recompute(doc, honest=True)


def honest_oom_in_initial_sync() -> Doc:
    """Release ran out of memory waking its KV cache in the initial sync: one wake only;
    retain never ran."""
    doc = base()
    g = doc["groups"]["release"]
    g["events"] = [e for e in g["events"] if e["t_s"] < 19.0]
    g["resume_calls"] = g["resume_calls"][:1]
    g["resource_samples"] = [s for s in g["resource_samples"] if s["t_s"] <= 19.25]
    g["updated_lora_sha256"] = None
    g["update_completed"] = g["sync_completed"] = False
    never_ran(doc, "retain")
    failed(
        doc,
        "release",
        "initial_sync",
        "RuntimeError",
        "CUDA Error: out of memory at cumem_allocator.cpp:62",
    )
    return recompute(doc, honest=True)


HONEST: dict[str, tuple[Callable[[], Doc], str, float]] = {
    # name -> (builder, verdict, score out of 40)
    "failed_in_sync": (honest_failed_run, "failed", 30.0),
    "failed_in_init": (honest_failed_in_init, "failed", 25.0),
    "retain_noop_sleep": (honest_retain_noop_sleep, "passed", 40.0),
    "boundary_samples": (honest_boundary_samples, "passed", 40.0),
    "sglang_adapter": (honest_sglang_adapter, "passed", 40.0),
    "sglang_merged": (honest_sglang_merged, "passed", 40.0),
    "resume_3ms_early": (honest_resume_3ms_early, "passed", 40.0),
    "dropped_readings": (honest_dropped_readings, "passed", 40.0),
    "fast_sampler_with_stall": (honest_fast_sampler_with_stall, "passed", 40.0),
    "unknown_card": (honest_unknown_card, "passed", 40.0),
    "known_card_null_total": (honest_known_card_null_total, "passed", 40.0),
    "actor_probe_samples": (honest_actor_probe_samples_while_boundary_off, "passed", 40.0),
    "oom_in_resume_kv_cache": (honest_oom_in_resume_kv_cache, "failed", 25.0),
    "oom_in_initial_sync": (honest_oom_in_initial_sync, "failed", 25.0),
}


def reformatted(doc: Doc) -> str:
    """The same document as another writer would save it: other key order, indent, escapes."""

    def reverse(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reverse(value[k]) for k in reversed(list(value))}
        if isinstance(value, list):
            return [reverse(v) for v in value]
        return value

    return json.dumps(reverse(doc), indent="\t", ensure_ascii=True) + "\r\n"


def _compact(doc: Doc) -> str:
    # One line per file keeps the corpus small; generate.py is what to read.
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def render() -> dict[Path, str]:
    """Every corpus file's path and text."""
    files: dict[Path, str] = {}
    manifest: dict[str, Any] = {
        "$comment": "Written by generate.py; graded by tests/corpora/test_result_corpus.py.",
        "faulty": {},
        "honest": {},
    }
    for name, (mutate, check, fragment) in FAULTY.items():
        files[HERE / "faulty" / f"{name}.json"] = _compact(_write_faulty(name, mutate))
        manifest["faulty"][f"{name}.json"] = {
            "verdict": "contradicted",
            "check": check,
            "fragment": fragment,
        }
    huge = base()
    files[HERE / "faulty" / "integer_too_large.json"] = _compact(huge).replace(
        '"gpu_used_mb":6392', '"gpu_used_mb":' + "9" * 400, 1
    )
    manifest["faulty"]["integer_too_large.json"] = {"verdict": "not_gradable"}
    for name, (build, verdict, score) in HONEST.items():
        files[HERE / "honest" / f"{name}.json"] = _compact(build())
        manifest["honest"][f"{name}.json"] = {"verdict": verdict, "score": score}
    files[HERE / "honest" / "example_reformatted.json"] = reformatted(base())
    manifest["honest"]["example_reformatted.json"] = {"verdict": "passed", "score": 40.0}
    files[HERE / "manifest.json"] = json.dumps(manifest, indent=2) + "\n"
    return {path: text if text.endswith("\n") else text + "\n" for path, text in files.items()}


def main(argv: list[str]) -> int:
    files = render()
    if "--check" in argv:
        stale = [
            p for p, text in files.items() if not p.is_file() or p.read_bytes() != text.encode()
        ]
        for path in stale:
            print(f"stale: {path.relative_to(ROOT)}")
        return 1 if stale else 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    print(f"wrote {len(files)} files under {HERE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
