"""The runner's state machine (pytest_rlsys/resultfile/runner_states.py) as the grader holds
result files to it: what the runner cannot write is refuted, whatever the file claims, and
every shape an honest run leaves (a teardown crash, a kill) keeps its honest verdict."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.resultfile import checks as cc
from pytest_rlsys.resultfile.grade import grade_document
from pytest_rlsys.resultfile.runner_states import (
    CYCLE,
    FLUSHED_AFTER,
    INIT_STEPS,
    OrderError,
    StepOrder,
    lost_to_a_kill,
)

REALISTIC = (
    Path(__file__).resolve().parents[2]
    / "schemas"
    / "examples"
    / "pt-verl-closure.v1-realistic.example.json"
)
Doc = dict[str, Any]


def runner_file() -> Doc:
    """The realistic example: written through the runner's own recorder and assemble."""
    doc: Doc = json.loads(REALISTIC.read_text(encoding="utf-8"))
    return doc


def as_written(doc: Doc) -> Doc:
    """Tables, measurements and claims re-derived as the runner's assemble writes them."""
    for group in doc["groups"].values():
        group["phases"] = cc.summarize_phases(group["events"], group["resource_samples"])
        group["sampled_gpu_peak_mb"], group["sampled_gpu_peak_phase"] = cc.whole_run_peak(
            group["resource_samples"], group["phases"]
        )
    decision = doc["system_decision"]
    decision["measurements"] = cc.derive_measurements(doc)
    decision["checks"] = {n: r.as_dict() for n, r in cc.derive_checks(doc).items()}
    return doc


def verdict(doc: Doc) -> str:
    return grade_document(as_written(doc)).verdict


def record_message(doc: Doc) -> str:
    (case,) = [c for c in grade_document(doc).cases if c.id == "gpu_result.update_and_sync"]
    return case.message


def never_ran(doc: Doc, name: str) -> None:
    """A group as assemble writes one that never ran (an empty record)."""
    doc["groups"][name].update(
        updated_lora_sha256=None,
        update_completed=False,
        sync_completed=False,
        init={"start_s": 0.0, "end_s": 0.0, "steps": []},
        events=[],
        resume_calls=[],
        resource_samples=[],
    )


def fail(doc: Doc, group: str, phase: str | None, kind: str) -> None:
    doc["status"] = "failed"
    doc["failure"] = {"group": group, "phase": phase, "type": kind, "message": "x"}


def cut(doc: Doc, name: str, after: str, *, failed: bool = False) -> None:
    """``name``'s record as the driver leaves it when it stops in (or right after) ``after``:
    the cycle up to that phase's end (closed as failed when ``failed``), nothing later."""
    group = doc["groups"][name]
    end = next(e["t_s"] for e in group["events"] if e["phase"] == after and e["kind"] == "end")
    group["events"] = [e for e in group["events"] if e["t_s"] <= end]
    if failed:
        group["events"][-1].setdefault("detail", {})["failed"] = True
    group["resume_calls"] = [c for c in group["resume_calls"] if c["t_s"] <= end]
    group["resource_samples"] = [s for s in group["resource_samples"] if s["t_s"] <= end + 0.3]
    done = CYCLE.index(after) + (0 if failed else 1)
    group["update_completed"] = "update" in CYCLE[:done]
    group["sync_completed"] = "sync" in CYCLE[:done]
    if not group["update_completed"]:
        group["updated_lora_sha256"] = None


def test_the_runners_own_file_passes() -> None:
    assert verdict(runner_file()) == "passed"


# -------------------------------------------------------------------- the driver's side
def test_the_driver_order_is_the_machines_and_refuses_any_other() -> None:
    order = StepOrder()
    for step in (*INIT_STEPS, *CYCLE):
        order.hook(step, "start")
        order.hook(step, "end")
    with pytest.raises(OrderError):  # once only
        order.hook("score_after_update", "start")
    early = StepOrder()
    early.hook("init_ray", "start")
    with pytest.raises(OrderError):  # none while another is open
        early.hook("init_actor", "start")
    back = StepOrder()
    for step in ("init_ray", "init_sleep"):
        back.hook(step, "start")
        back.hook(step, "end")
    with pytest.raises(OrderError):  # the engine sleeps only once launched
        back.hook("init_rollout_server", "start")


def test_a_kill_loses_at_most_the_phases_up_to_the_next_flush() -> None:
    assert lost_to_a_kill(None) == ("initial_sync",)
    assert lost_to_a_kill("initial_sync") == (
        "rollout_before_update",
        "engine_sleep",
        "score_before_update",
    )
    assert lost_to_a_kill("sync") == ("rollout_after_update", "score_after_update")
    assert set(FLUSHED_AFTER) <= set(CYCLE)
    assert tuple(cc.REQUIRED_PHASE_ORDER) == tuple(p for p in CYCLE if p != "engine_sleep")


# -------------------------------------------------------------------- init
def test_overlapping_init_steps_are_refuted() -> None:
    doc = runner_file()
    steps = doc["groups"]["retain"]["init"]["steps"]
    steps[2]["start_s"] = steps[1]["end_s"] - 1.0
    assert verdict(doc) == "contradicted"
    assert "init steps init_actor" in record_message(doc)


def test_the_engines_first_sleep_before_its_launch_is_refuted() -> None:
    doc = runner_file()
    steps = doc["groups"]["release"]["init"]["steps"]
    names = [s["name"] for s in steps]
    a, b = names.index("init_rollout_server"), names.index("init_sleep")
    steps[a]["name"], steps[b]["name"] = "init_sleep", "init_rollout_server"
    assert verdict(doc) == "contradicted"
    assert "comes after init_sleep" in record_message(doc)


# -------------------------------------------------------------------- the two groups
def test_groups_overlapping_on_one_clock_are_refuted() -> None:
    doc = runner_file()
    release_end = doc["groups"]["release"]["events"][-1]["t_s"]
    retain = doc["groups"]["retain"]
    shift = retain["init"]["start_s"] - (release_end - 5.0)
    for key in ("events", "resume_calls", "resource_samples"):
        for item in retain[key]:
            item["t_s"] -= shift
    for step in retain["init"]["steps"]:
        step["start_s"] -= shift
        step["end_s"] -= shift
    retain["init"]["start_s"] -= shift
    retain["init"]["end_s"] -= shift
    assert verdict(doc) == "contradicted"
    assert "the runner starts retain only after release's process has exited" in (
        record_message(doc)
    )


def _start_check(doc: Doc, name: str, **check: Any) -> None:
    event = doc["groups"][name]["events"][0]
    assert (event["phase"], event["kind"]) == ("initial_sync", "start")
    event.setdefault("detail", {})["gpu_memory_at_start"] = {
        "baseline_mb": 1200.0,
        "used_mb": 1200.0,
        "tolerance_mb": 256.0,
        "waited_s": 0.0,
        "ok": True,
        **check,
    }


def test_a_group_that_ran_though_its_start_check_failed_is_refuted() -> None:
    doc = runner_file()
    _start_check(doc, "release")
    _start_check(doc, "retain", used_mb=1300.0, waited_s=1.0)
    assert verdict(copy.deepcopy(doc)) == "passed"
    for check in ({"ok": False}, {"used_mb": 9000.0}, {"baseline_mb": 800.0}):
        edited = copy.deepcopy(doc)
        _start_check(edited, "retain", **{"used_mb": 1300.0, **check})
        assert verdict(edited) == "contradicted", check


# -------------------------------------------------------------------- failures
def test_a_teardown_crash_is_an_honest_failure_in_either_group() -> None:
    # The group completed, then its process exited non-zero: the runner writes
    # GroupProcessFailed with no phase and stops (runner.run).
    first = runner_file()
    never_ran(first, "retain")
    fail(first, "release", None, "GroupProcessFailed")
    second = runner_file()
    fail(second, "retain", None, "GroupProcessFailed")
    assert verdict(first) == verdict(second) == "failed"


def test_a_group_spliced_in_after_a_failed_one_is_refuted() -> None:
    doc = runner_file()
    cut(doc, "release", "sync", failed=True)
    fail(doc, "release", "sync", "OutOfMemoryError")
    honest = copy.deepcopy(doc)
    never_ran(honest, "retain")
    assert verdict(honest) == "failed"
    assert verdict(doc) == "contradicted"
    assert "retain ran although release did not complete" in record_message(doc)
    completed_first = runner_file()  # release complete; the record names it, retain ran
    fail(completed_first, "release", None, "GroupProcessFailed")
    cut(completed_first, "retain", "update", failed=True)
    assert verdict(completed_first) == "contradicted"


def test_a_failure_moved_to_another_phase_with_its_flag_stripped_is_refuted() -> None:
    doc = runner_file()
    never_ran(doc, "retain")
    cut(doc, "release", "update", failed=True)
    fail(doc, "release", "update", "OutOfMemoryError")
    assert verdict(copy.deepcopy(doc)) == "failed"
    for phase in ("sync", "score_before_update"):
        moved = copy.deepcopy(doc)
        del moved["groups"]["release"]["events"][-1]["detail"]["failed"]
        moved["groups"]["release"]["update_completed"] = True
        moved["failure"]["phase"] = phase
        assert verdict(moved) == "contradicted", phase


def test_a_group_killed_from_outside_names_a_phase_its_record_never_reached() -> None:
    # Killed in engine_sleep: the record is the flush after initial_sync, and the runner
    # names the phase of the driver's last step note (runner.stuck_step).
    doc = runner_file()
    never_ran(doc, "retain")
    cut(doc, "release", "initial_sync")
    for kind in ("Interrupted", "GroupTimeout"):
        fail(doc, "release", "engine_sleep", kind)
        assert verdict(copy.deepcopy(doc)) == "failed", kind
    fail(doc, "release", "update", "GroupTimeout")  # beyond the next flush
    assert verdict(copy.deepcopy(doc)) == "contradicted"
    fail(doc, "release", "engine_sleep", "OutOfMemoryError")  # a raise is recorded
    assert verdict(doc) == "contradicted"


def test_a_failure_in_the_work_after_a_phase_names_that_phase() -> None:
    # _check_streamed / _require_global_steps raise after their phase ended normally.
    doc = runner_file()
    never_ran(doc, "retain")
    cut(doc, "release", "rollout_before_update")
    fail(doc, "release", "rollout_before_update", "RuntimeError")
    assert verdict(doc) == "failed"


# -------------------------------------------------------------------- update numbers
def _update_end(doc: Doc, name: str) -> dict[str, Any]:
    group = doc["groups"][name]
    event = next(e for e in group["events"] if e["phase"] == "update" and e["kind"] == "end")
    detail: dict[str, Any] = event.setdefault("detail", {})
    return detail


@pytest.mark.parametrize(("key", "value"), [("loss", -0.4), ("grad_norm", -1.5), ("lr", -1e-4)])
def test_an_update_number_that_cannot_be_is_refuted_even_in_a_failed_run(
    key: str, value: float
) -> None:
    doc = runner_file()
    _update_end(doc, "release")[key] = value
    assert verdict(copy.deepcopy(doc)) == "contradicted"
    never_ran(doc, "retain")
    cut(doc, "release", "sync", failed=True)
    fail(doc, "release", "sync", "OutOfMemoryError")
    assert verdict(doc) == "contradicted"
    assert f"{key} {value:g}" in record_message(doc)


def test_a_zero_or_positive_update_number_and_another_updates_loss_pass() -> None:
    doc = runner_file()
    _update_end(doc, "retain").update(loss=0.0, grad_norm=0.0, lr=0.0)
    assert verdict(copy.deepcopy(doc)) == "passed"
    # A policy-gradient loss can be negative: the sign rule is the supervised loss's.
    doc["workload"]["update_kind"] = "ppo"
    _update_end(doc, "retain")["loss"] = -0.2
    assert "loss -0.2" not in record_message(as_written(doc))


def test_a_first_group_whose_actor_events_were_lost_still_let_the_second_run() -> None:
    # The sync's sub-phases are drained from the actor at the end (driver._collect); a
    # failed drain loses them from a release that completed, and retain then runs.
    doc = runner_file()
    group = doc["groups"]["release"]
    group["events"] = [e for e in group["events"] if e.get("source") != "actor"]
    fail(doc, "retain", "sync", "RuntimeError")
    cut(doc, "retain", "sync", failed=True)
    assert "retain ran although release did not complete" not in record_message(as_written(doc))
