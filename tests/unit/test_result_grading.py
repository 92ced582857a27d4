"""Grading a result file's checks from its own evidence."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_rlsys.resources import schema_dir
from pytest_rlsys.resultfile import checks as closure_checks
from pytest_rlsys.resultfile.checks import CHECK_NAMES, config_sha256
from pytest_rlsys.resultfile.grade import (
    FINDINGS,
    CheckOutcome,
    ResultGrade,
    grade_document,
    grade_result_file,
    interpretation_notes,
)

EXAMPLE = schema_dir() / "examples" / "pt-verl-closure.example.json"
UNPAIRED = schema_dir() / "examples" / "pt-verl-closure.v1-unpaired.example.json"
CORPUS = Path(__file__).parents[1] / "corpora" / "result_corpus"
EXAMPLE_DOC: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))


def example() -> dict[str, Any]:
    return copy.deepcopy(EXAMPLE_DOC)


def write(tmp_path: Path, doc: dict[str, Any], name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def case(grade: Any, name: str) -> Any:
    (found,) = [c for c in grade.cases if c.id == f"gpu_result.{name}"]
    return found


# --------------------------------------------------------------------------- the examples


def test_example_scores_full_marks() -> None:
    grade = grade_result_file(EXAMPLE)
    assert grade.gradable and grade.errors == ()
    assert [c.id for c in grade.cases] == [f"gpu_result.{n}" for n in CHECK_NAMES]
    assert all(c.status == "passed" for c in grade.cases), grade.cases
    assert grade.score == grade.max_score == 40.0


def test_example_reproduces_the_chapter_figures() -> None:
    m = EXAMPLE_DOC["system_decision"]["measurements"]
    release, retain = m["release"], m["retain"]
    assert release["phases"]["update"] == {
        "duration_s": 1.367,
        "sample_count": 5,
        "sampled_gpu_peak_mb": 6392,
    }
    assert retain["phases"]["update"] == {
        "duration_s": 1.345,
        "sample_count": 6,
        "sampled_gpu_peak_mb": 10489,
    }
    assert (release["sampled_gpu_peak_mb"], release["sampled_gpu_peak_phase"]) == (
        10086,
        "initial_sync",
    )
    assert retain["sampled_gpu_peak_mb"] == 10489
    for phase in (
        "rollout_before_update",
        "score_before_update",
        "rollout_after_update",
        "score_after_update",
    ):
        entry = EXAMPLE_DOC["groups"]["release"]["phases"][phase]
        assert entry["sample_count"] == 0 and entry["sampled_gpu_peak_mb"] is None
    # The file's measurements are exactly what the evidence gives.
    assert closure_checks.derive_measurements(EXAMPLE_DOC) == m


def test_example_notes_explain_the_peaks_without_warnings() -> None:
    notes = grade_result_file(EXAMPLE).notes
    assert any("whole-run sampled peak (10086 MiB) is in initial_sync" in n for n in notes)
    assert any("peak is null, not zero" in n for n in notes)
    assert not any("KV-cache size" in n or "speed-up" in n for n in notes)


def test_unpaired_example_is_honest_and_loses_the_pairing_checks() -> None:
    grade = grade_result_file(UNPAIRED)
    assert grade.gradable
    failed = {c.id.split(".", 1)[1] for c in grade.cases if c.status == "failed"}
    assert failed == {"initial_lora_match", "updated_lora_match", "config_paired"}
    for name in failed:
        assert case(grade, name).message.startswith("reported as failed, and the evidence agrees")
    assert "gpu_memory_utilization" in case(grade, "config_paired").message
    assert grade.score == 25.0 and grade.max_score == 40.0


def test_points_per_check_scales_the_fixed_maximum() -> None:
    grade = grade_result_file(EXAMPLE, points_per_check=2.5)
    assert grade.max_score == 20.0 and grade.score == 20.0
    assert grade_result_file(CORPUS / "nan.json", points_per_check=2.5).max_score == 20.0


# --------------------------------------------------------------------------- tampering


def _set_sample(group: str, t: float, value: float) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        for sample in doc["groups"][group]["resource_samples"]:
            if sample["t_s"] == t:
                sample["gpu_used_mb"] = value

    return mutate


def _retain_config_change(doc: dict[str, Any]) -> None:
    retain = doc["groups"]["retain"]
    retain["config"]["actor_rollout_ref"]["rollout"]["gpu_memory_utilization"] = 0.6
    retain["config_sha256"] = config_sha256(retain["config"])


def _swap_events(doc: dict[str, Any]) -> None:
    events = doc["groups"]["retain"]["events"]
    events[2], events[3] = events[3], events[2]


def _drop_phase(doc: dict[str, Any]) -> None:
    retain = doc["groups"]["retain"]
    retain["events"] = [e for e in retain["events"] if e["phase"] != "score_after_update"]
    del retain["phases"]["score_after_update"]
    del doc["system_decision"]["measurements"]["retain"]["phases"]["score_after_update"]


def _flip(group: str, flag: str) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["groups"][group].update({flag: False})


# (name, mutation, check that must fail, fragment of its message)
TAMPERING: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    (
        "changed-initial-hash",
        lambda d: d["groups"]["retain"].update(initial_lora_sha256="1" * 64),
        "initial_lora_match",
        "false claim: claimed passed but the evidence shows initial LoRA hashes differ",
    ),
    (
        "changed-updated-hash",
        lambda d: d["groups"]["release"].update(updated_lora_sha256="2" * 64),
        "updated_lora_match",
        "updated LoRA hashes differ",
    ),
    (
        "update-left-lora-unchanged",
        lambda d: [
            g.update(updated_lora_sha256=g["initial_lora_sha256"]) for g in d["groups"].values()
        ],
        "updated_lora_match",
        "LoRA hash did not change in the update",
    ),
    (
        "unpaired-configs",
        _retain_config_change,
        "config_paired",
        "configs also differ at actor_rollout_ref.rollout.gpu_memory_utilization",
    ),
    (
        "config-hash-stale",
        lambda d: d["groups"]["retain"]["config"].update(extra=1),
        "config_paired",
        "retain's config_sha256",
    ),
    (
        "free-cache-flag-swapped",
        lambda d: d["groups"]["release"].update(free_cache_engine=False),
        "config_paired",
        "release has free_cache_engine=False, expected True",
    ),
    (
        "rollout-source-differs",
        lambda d: d["groups"]["retain"].update(rollout_source_sha256="3" * 64),
        "rollout_source_match",
        "retain read rollout source 333333333333",
    ),
    (
        "update-not-completed",
        _flip("retain", "update_completed"),
        "update_and_sync",
        "retain reports update_completed=False",
    ),
    (
        "sync-not-completed",
        _flip("release", "sync_completed"),
        "update_and_sync",
        "release reports sync_completed=False",
    ),
    ("events-out-of-order", _swap_events, "phase_events", "earlier than the one before it"),
    ("missing-phase", _drop_phase, "phase_events", "retain is missing phases score_after_update"),
    (
        "phase-duration-wrong",
        lambda d: d["groups"]["release"]["phases"]["update"].update(duration_s=1.0),
        "phase_events",
        "release's phases.update.duration_s is 1.0, the events give 1.367 s",
    ),
    (
        "missing-resume-calls",
        lambda d: d["groups"]["release"].update(resume_calls=[]),
        "resume_calls",
        "release's sync resumes nothing; a released vllm engine wakes weights, then kv_cache",
    ),
    (
        "kv-resume-missing",
        lambda d: d["groups"]["release"]["resume_calls"].pop(),
        "resume_calls",
        "release's sync resumes weights; a released vllm engine wakes weights, then kv_cache",
    ),
    (
        "retain-resumed",
        lambda d: d["groups"]["retain"]["resume_calls"].append({"t_s": 21.5, "tags": ["weights"]}),
        "resume_calls",
        "retain (free_cache_engine false) made 1 resume call(s); expected none",
    ),
    (
        "zero-peak-without-sample",
        lambda d: d["groups"]["release"]["phases"]["rollout_before_update"].update(
            sampled_gpu_peak_mb=0
        ),
        "resource_sampling",
        "release's rollout_before_update has peak 0 MiB but no sample in its window: "
        "it must be null",
    ),
    (
        "peak-contradicted",
        lambda d: d["groups"]["release"]["phases"]["update"].update(sampled_gpu_peak_mb=6000),
        "resource_sampling",
        "release's update claims peak 6000 MiB; its samples peak at 6392 MiB",
    ),
    (
        "sample-raised",
        _set_sample("retain", 20.5, 11000),
        "resource_sampling",
        "retain's update claims peak 10489 MiB; its samples peak at 11000 MiB",
    ),
    (
        "sample-count-wrong",
        lambda d: d["groups"]["release"]["phases"]["update"].update(sample_count=4),
        "resource_sampling",
        "release's update claims 4 samples; 5 lie in its window",
    ),
    (
        "peak-phase-wrong",
        lambda d: d["groups"]["release"].update(sampled_gpu_peak_phase="update"),
        "resource_sampling",
        "release puts the peak in update; the peak sample is in initial_sync",
    ),
    (
        "measurement-contradicted",
        lambda d: d["system_decision"]["measurements"]["retain"]["phases"]["update"].update(
            sample_count=3
        ),
        "resource_sampling",
        "measurements.retain.phases.update says 3 samples",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "check", "fragment"),
    [t[1:] for t in TAMPERING],
    ids=[t[0] for t in TAMPERING],
)
def test_tampering_loses_the_check_with_a_clear_message(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], check: str, fragment: str
) -> None:
    doc = example()
    mutate(doc)
    grade = grade_result_file(write(tmp_path, doc))
    assert grade.gradable, grade.errors
    outcome = case(grade, check)
    assert outcome.status == "failed" and outcome.score == 0
    assert outcome.message.startswith("false claim: claimed passed but the evidence shows")
    assert fragment in outcome.message
    assert grade.score < grade.max_score


def test_a_false_claim_of_failure_also_fails(tmp_path: Path) -> None:
    doc = example()
    doc["system_decision"]["checks"]["resume_calls"]["passed"] = False
    outcome = case(grade_result_file(write(tmp_path, doc)), "resume_calls")
    assert (outcome.status, outcome.finding) == ("failed", "wrong_failure")
    assert outcome.message.startswith("claimed failed but the evidence shows it passes")


def test_the_verdict_reads_the_typed_finding_never_the_message() -> None:
    # A message that happens to open with the false-claim wording changes nothing:
    # the verdict comes from each outcome's finding.
    honest = CheckOutcome(
        "gpu_result.x", 0.0, 5.0, "failed", "false claim: (quoted)", "honest_failure"
    )
    passed = CheckOutcome("gpu_result.y", 5.0, 5.0, "passed", "fine", "confirmed")
    refuted = CheckOutcome("gpu_result.z", 0.0, 5.0, "failed", "reported as failed", "false_claim")
    assert ResultGrade("f", True, (honest, passed), (), (), 10.0).verdict == "failed"
    assert ResultGrade("f", True, (passed,), (), (), 5.0).verdict == "passed"
    assert ResultGrade("f", True, (honest, refuted), (), (), 10.0).verdict == "contradicted"
    assert set(FINDINGS) >= {"confirmed", "false_claim", "wrong_failure", "honest_failure"}


def test_a_failed_run_keeps_what_it_has_and_fails_honestly(tmp_path: Path) -> None:
    doc = example()
    doc["status"] = "failed"
    doc["failure"] = {"group": "retain", "phase": "sync", "type": "RuntimeError", "message": "x"}
    retain = doc["groups"]["retain"]
    retain["sync_completed"] = False
    # The sync raised: its start is recorded (the driver writes a start before the phase
    # runs, runner_states), its end never was.
    retain["events"] = [e for e in retain["events"] if e["t_s"] <= 21.4]
    retain["resource_samples"] = [s for s in retain["resource_samples"] if s["t_s"] < 21.4]
    kept = {e["phase"] for e in retain["events"] if e["kind"] == "end"}
    retain["phases"] = {k: v for k, v in retain["phases"].items() if k in kept}
    doc["system_decision"]["measurements"] = closure_checks.derive_measurements(doc)
    retain["sampled_gpu_peak_mb"] = doc["system_decision"]["measurements"]["retain"][
        "sampled_gpu_peak_mb"
    ]
    derived = closure_checks.derive_checks(doc)
    doc["system_decision"]["checks"] = {k: v.as_dict() for k, v in derived.items()}
    grade = grade_result_file(write(tmp_path, doc))
    assert grade.gradable, grade.errors
    statuses = {c.id.split(".", 1)[1]: c.status for c in grade.cases}
    assert statuses["update_and_sync"] == statuses["phase_events"] == "failed"
    assert statuses["resource_sampling"] == statuses["initial_lora_match"] == "passed"
    assert any("the run is marked failed (retain, sync: RuntimeError)" in n for n in grade.notes)
    assert grade.verdict == "failed"
    # Claiming failed a check the partial evidence passes hides nothing in a failed run:
    # it scores 0 and stays an honest failure; in a completed run it contradicts the file.
    doc["system_decision"]["checks"]["resource_sampling"]["passed"] = False
    pessimistic = grade_result_file(write(tmp_path, doc))
    outcome = case(pessimistic, "resource_sampling")
    assert (outcome.finding, outcome.score, pessimistic.verdict) == ("honest_failure", 0, "failed")
    completed = example()
    completed["system_decision"]["checks"]["resource_sampling"]["passed"] = False
    assert grade_result_file(write(tmp_path, completed)).verdict == "contradicted"


# --------------------------------------------------------------------------- not gradable

CORPUS_CASES: dict[str, str] = json.loads((CORPUS / "expected.json").read_text("utf-8"))["cases"]


@pytest.mark.parametrize("name", sorted(CORPUS_CASES))
def test_corpus_file_is_not_gradable_and_says_what_to_fix(name: str) -> None:
    grade = grade_result_file(CORPUS / name)
    assert not grade.gradable
    assert any(CORPUS_CASES[name] in e for e in grade.errors), grade.errors
    assert grade.score == 0 and grade.max_score == 40.0
    assert len(grade.cases) == 8
    for outcome in grade.cases:
        assert outcome.status == "error" and outcome.score == 0
        assert outcome.message.startswith("not gradable: the result file")
        assert "listed once with the grade" in outcome.message
        assert CORPUS_CASES[name] not in outcome.message  # the error itself is said once


def test_oversized_file_is_not_gradable(tmp_path: Path) -> None:
    grade = grade_result_file(EXAMPLE, max_bytes=4096)
    assert not grade.gradable
    assert grade.errors[0].startswith("$: the file is over the size limit of 4096 bytes")


def test_missing_file_is_not_gradable(tmp_path: Path) -> None:
    grade = grade_result_file(tmp_path / "absent.json")
    assert not grade.gradable and grade.errors == ("$: no such file",)


# --------------------------------------------------------------------------- notes


@pytest.mark.parametrize(
    ("where", "value", "fragment"),
    [
        (("interpretation", "kv_cache_mb_from_peak_difference"), 4097, "not a KV-cache size"),
        (
            ("interpretation", "summary"),
            "Retain keeps the KV cache: its size is 4097 MiB (the peak difference).",
            "not a KV-cache size",
        ),
        (("interpretation", "speedup"), 1.02, "cannot establish a speed-up"),
        (("interpretation", "summary"), "Retain is 1.6% faster in the update.", "speed-up"),
        (("interpretation", "summary"), "保留组更新阶段加速 1.6%", "speed-up"),
    ],
)
def test_unsupported_readings_get_a_note(
    tmp_path: Path, where: tuple[str, str], value: Any, fragment: str
) -> None:
    doc = example()
    doc["system_decision"].setdefault(where[0], {})[where[1]] = value
    grade = grade_result_file(write(tmp_path, doc))
    assert grade.gradable, grade.errors
    assert grade.score == grade.max_score  # notes never cost points
    assert any(
        fragment in n and f"$.system_decision.{where[0]}.{where[1]}" in n for n in grade.notes
    )


def test_an_unknown_measurement_gets_the_note_and_fails_resource_sampling(
    tmp_path: Path,
) -> None:
    # measurements holds only figures the grader re-derives; a KV-cache size read
    # off the peaks is noted as a misreading and cannot pass as a measurement.
    doc = example()
    doc["system_decision"]["measurements"]["kv_cache_size_mb"] = 4097
    grade = grade_result_file(write(tmp_path, doc))
    assert any(
        "not a KV-cache size" in n and "$.system_decision.measurements.kv_cache_size_mb" in n
        for n in grade.notes
    )
    outcome = case(grade, "resource_sampling")
    assert outcome.status == "failed" and "measurements.kv_cache_size_mb" in outcome.message
    assert grade.score == 35.0 and grade.verdict == "contradicted"


def test_negated_statements_and_config_keys_are_not_flagged() -> None:
    doc = example()
    doc["system_decision"]["interpretation"]["summary"] = (
        "The difference is not a KV-cache size. One pair establishes no speed-up."
    )
    doc["groups"]["release"]["config"]["kv_cache_memory_bytes"] = 123
    assert interpretation_notes(doc) == []


def test_grade_document_matches_grade_result_file() -> None:
    assert grade_document(example(), path=str(EXAMPLE)) == grade_result_file(EXAMPLE)


# --------------------------------------------------------------------------- property


TOLERANCE_S = closure_checks.TIME_TOLERANCE_S


def _independent_oracle(doc: dict[str, Any]) -> bool:
    """Whether every claimed peak and count still matches the samples (computed here),
    and every sample is within the GPU's total memory."""
    for group in doc["groups"].values():
        samples = group["resource_samples"]
        if any(s["gpu_used_mb"] > doc["environment"]["gpu_total_mb"] for s in samples):
            return False
        starts = [p["start_s"] for p in group["phases"].values()]
        ends = [p["end_s"] for p in group["phases"].values()]
        in_run = [s["gpu_used_mb"] for s in samples if min(starts) <= s["t_s"] <= max(ends)]
        if max(in_run) != group["sampled_gpu_peak_mb"]:
            return False
        for name, phase in group["phases"].items():
            inside = [
                s["gpu_used_mb"] for s in samples if phase["start_s"] <= s["t_s"] <= phase["end_s"]
            ]
            if len(inside) != phase["sample_count"]:
                return False
            if (max(inside) if inside else None) != phase["sampled_gpu_peak_mb"]:
                return False
            if (
                name == group["sampled_gpu_peak_phase"]
                and group["sampled_gpu_peak_mb"] not in inside
            ):
                return False
            # The actor's memory is part of the whole GPU's: never above the whole-GPU
            # sample(s) at its boundary, or else the ones just before and after it.
            for key, when in (
                ("actor_memory_start_mb", "start_s"),
                ("actor_memory_end_mb", "end_s"),
            ):
                actor, at = phase.get(key), phase.get(when)
                if actor is None or at is None:
                    continue
                near = [s["gpu_used_mb"] for s in samples if abs(s["t_s"] - at) <= TOLERANCE_S]
                if not near:
                    before = [s["gpu_used_mb"] for s in samples if s["t_s"] < at][-1:]
                    after = [s["gpu_used_mb"] for s in samples if s["t_s"] > at][:1]
                    near = before + after
                if near and actor > max(near) + 1e-6:
                    return False
            # Inside a phase the GPU never holds less than half the actor's edge memory.
            edges = [phase.get("actor_memory_start_mb"), phase.get("actor_memory_end_mb")]
            if None not in edges and min(edges) > 0 and any(v < 0.5 * min(edges) for v in inside):
                return False
    return True


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    group=st.sampled_from(["release", "retain"]),
    index=st.integers(min_value=0, max_value=89),
    value=st.one_of(
        st.integers(min_value=-100, max_value=20000),
        st.floats(min_value=-1e6, max_value=1e12, allow_nan=False, allow_infinity=False),
        st.sampled_from([None, "6392", True, [], {}]),
    ),
)
def test_tampering_a_sample_never_crashes_and_is_caught(
    tmp_path: Path, group: str, index: int, value: Any
) -> None:
    doc = example()
    doc["groups"][group]["resource_samples"][index]["gpu_used_mb"] = value
    grade = grade_result_file(write(tmp_path, doc, "tampered.json"))
    assert len(grade.cases) == 8
    if not grade.gradable:
        assert grade.errors
        prefix = f"$.groups.{group}.resource_samples[{index}].gpu_used_mb: "
        assert all(e.startswith(prefix) for e in grade.errors), grade.errors
        return
    sampling = case(grade, "resource_sampling")
    assert sampling.status == ("passed" if _independent_oracle(doc) else "failed"), sampling
    untouched = [c for c in grade.cases if c.id != "gpu_result.resource_sampling"]
    assert all(c.status == "passed" for c in untouched)


# --------------------------------------------------------------------------- messages


def test_hashes_differing_in_the_last_digit_are_shown_where_they_differ(tmp_path: Path) -> None:
    doc = example()
    initial = doc["groups"]["release"]["initial_lora_sha256"]
    last = "1" if initial[-1] != "1" else "2"
    doc["groups"]["retain"]["initial_lora_sha256"] = initial[:-1] + last
    message = case(grade_result_file(write(tmp_path, doc)), "initial_lora_match").message
    assert f"release 0b25c1ad…{initial[-5:]}, retain 0b25c1ad…{initial[-5:-1]}{last}" in message
    assert "the first 63 characters agree; they differ at 64" in message


@pytest.mark.parametrize("index", [0, 5, 11, 12, 30, 63])
def test_hash_pair_never_prints_two_different_hashes_alike(index: int) -> None:
    a = "0123456789abcdef" * 4
    b = a[:index] + ("f" if a[index] != "f" else "e") + a[index + 1 :]
    shown_a, shown_b, _ = closure_checks.hash_pair(a, b)
    assert shown_a != shown_b
    assert closure_checks.hash_pair(a, a)[0] == closure_checks.hash_pair(a, a)[1]


# --------------------------------------------------------------------------- rules, honest edges


def test_a_resume_logged_just_before_its_sub_phase_opens_is_inside_it(tmp_path: Path) -> None:
    # The probe logs the call, then opens resume_weights; between them the thread may
    # be switched out (5 ms interval): up to RESUME_LEAD_S (50 ms) before still counts.
    doc = example()
    for t in (21.7049, 21.702, 21.66):
        doc["groups"]["release"]["resume_calls"][2]["t_s"] = t
        assert case(grade_result_file(write(tmp_path, doc)), "resume_calls").status == "passed"
    doc["groups"]["release"]["resume_calls"][2]["t_s"] = 21.64
    assert case(grade_result_file(write(tmp_path, doc)), "resume_calls").status == "failed"


def test_coverage_allows_exactly_three_intervals_and_the_stall_slack(tmp_path: Path) -> None:
    # 3 x 0.25 s + 1.0 s = 1.75 s: six dropped readings in a row still pass, seven do not.
    doc = example()
    samples = doc["groups"]["retain"]["resource_samples"]
    dropped = (5.25, 5.5, 5.75, 6.0, 6.25, 6.5)
    doc["groups"]["retain"]["resource_samples"] = [s for s in samples if s["t_s"] not in dropped]
    assert case(grade_result_file(write(tmp_path, doc)), "resource_sampling").status == "passed"
    doc["groups"]["retain"]["resource_samples"] = [
        s for s in samples if s["t_s"] not in (*dropped, 6.75)
    ]
    outcome = case(grade_result_file(write(tmp_path, doc)), "resource_sampling")
    assert "retain's periodic samples leave a 2.000 s gap" in outcome.message
    assert "from 5.000 s to 7.000 s" in outcome.message


def test_notes_never_explain_away_a_sampler_gap(tmp_path: Path) -> None:
    doc = example()
    release = doc["groups"]["release"]
    release["resource_samples"] = [s for s in release["resource_samples"] if s["t_s"] <= 20.5]
    grade = grade_result_file(write(tmp_path, doc))
    # sync (0.48 s) lost its samples because the sampler stopped: no "shorter than" note for it.
    assert not any("sync" in n and "shorter than" in n for n in grade.notes if "release" in n)
    assert "release's periodic samples leave a" in case(grade, "resource_sampling").message


@settings(max_examples=30, deadline=None)
@given(
    group=st.sampled_from(["release", "retain"]),
    index=st.integers(min_value=1, max_value=80),
    run=st.integers(min_value=1, max_value=8),
)
def test_coverage_flags_exactly_the_gaps_over_the_limit(group: str, index: int, run: int) -> None:
    # Removing `run` consecutive periodic samples inside the run leaves a gap of
    # (run + 1) x 0.25 s: allowed up to 3 x 0.25 + 1.0 = 1.75 s (run 6), a failure beyond.
    doc = example()
    samples = doc["groups"][group]["resource_samples"]
    del samples[index : index + run]
    derived = closure_checks.check_resource_sampling(doc)
    gap_problem = f"{group}'s periodic samples leave a" in derived.detail
    assert gap_problem == (run >= 7), derived.detail


def test_a_long_account_is_shortened_at_a_problems_end() -> None:
    from pytest_rlsys.resultfile.grade import whole_problems

    message = "; ".join(f"problem {i} " + "x" * 40 for i in range(30))
    assert whole_problems(message, len(message)) == message
    short = whole_problems(message, 300)
    assert len(short) <= 300 and short.endswith("more (rlsys result FILE lists all)")
    kept = short.split("; and ")[0].split("; ")
    assert kept == message.split("; ")[: len(kept)]  # whole problems, in order
    assert f"; and {30 - len(kept)} more" in short
    assert whole_problems("y" * 500, 100) == "y" * 99 + "…"  # one problem: no end to keep
