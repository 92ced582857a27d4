"""Issue 40, round 5: every summary figure is the one the runner's own assembly derives
from the raw records (``whole_run_peak``, ``derive_measurements``, ``_init``), so a
hand-edited summary is refuted, while the runner's own output always passes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.resultfile.checks import (
    check_phase_events,
    check_resource_sampling,
    derive_checks,
    derive_measurements,
    summarize_phases,
    whole_run_peak,
)
from pytest_rlsys.resultfile.checks.timeline import phases_holding, windows_of

REALISTIC = (
    Path(__file__).resolve().parents[2]
    / "schemas"
    / "examples"
    / "pt-verl-closure.v1-realistic.example.json"
)
BASE: dict[str, Any] = json.loads(REALISTIC.read_text(encoding="utf-8"))
GROUPS = ("release", "retain")


def _assembled(doc: dict[str, Any]) -> dict[str, Any]:
    """The summaries as the runner writes them (checks/__init__.py, assemble.py)."""
    for name in GROUPS:
        g = doc["groups"][name]
        memory = {
            p: (e.get("actor_memory_start_mb"), e.get("actor_memory_end_mb"))
            for p, e in g["phases"].items()
        }
        g["phases"] = summarize_phases(g["events"], g["resource_samples"], memory)
        g["sampled_gpu_peak_mb"], g["sampled_gpu_peak_phase"] = whole_run_peak(
            g["resource_samples"], g["phases"]
        )
    doc["system_decision"] = {"checks": {}, "measurements": derive_measurements(doc)}
    doc["system_decision"]["checks"] = {n: r.as_dict() for n, r in derive_checks(doc).items()}
    return doc


def _peak_in(doc: dict[str, Any], name: str, phase: str) -> dict[str, Any]:
    """A copy whose group reaches a new whole-run peak inside ``phase`` (and so inside
    every phase nesting it or nested around that sample)."""
    doc = copy.deepcopy(doc)
    g = doc["groups"][name]
    start, end = g["phases"][phase]["start_s"], g["phases"][phase]["end_s"]
    inside = [s for s in g["resource_samples"] if start <= s["t_s"] <= end]
    top = max(s["gpu_used_mb"] for s in g["resource_samples"])
    inside[0]["gpu_used_mb"] = top + 1.0
    return _assembled(doc)


TIES = [
    (name, phase)
    for name in GROUPS
    for phase, entry in BASE["groups"][name]["phases"].items()
    if entry["sample_count"]
]


@pytest.mark.parametrize(("name", "phase"), TIES)
def test_the_peak_phase_is_the_runners_and_no_other_phase_holding_the_peak(
    name: str, phase: str
) -> None:
    doc = _peak_in(BASE, name, phase)
    assert check_resource_sampling(doc).passed, check_resource_sampling(doc).detail
    g = doc["groups"][name]
    holding = phases_holding(
        g["sampled_gpu_peak_mb"], g["resource_samples"], windows_of(g["phases"])
    )
    first = g["phases"][holding[0]]["start_s"]
    later = [p for p in holding if g["phases"][p]["start_s"] > first]
    for other in later:
        for where in ("group", "measurements"):
            edited = copy.deepcopy(doc)
            target = (
                edited["groups"][name]
                if where == "group"
                else edited["system_decision"]["measurements"][name]
            )
            target["sampled_gpu_peak_phase"] = other
            result = check_resource_sampling(edited)
            assert not result.passed and "earliest phase" in result.detail


def test_a_peak_reached_in_nested_phases_is_a_tie_the_tests_cover() -> None:
    g = _peak_in(BASE, "release", "resume_kv_cache")["groups"]["release"]
    holding = phases_holding(
        g["sampled_gpu_peak_mb"], g["resource_samples"], windows_of(g["phases"])
    )
    starts = [g["phases"][p]["start_s"] for p in holding]
    assert len(set(starts)) >= 2 and g["sampled_gpu_peak_phase"] == holding[0]


def test_phases_starting_at_one_instant_may_either_hold_the_peak() -> None:
    # A sync and its first sub-phase opened at the same clock reading: "the earliest by
    # start" names both, so either is the runner's (a clean-room honest file names the sync).
    doc = _peak_in(BASE, "release", "resume_weights")
    g = doc["groups"]["release"]
    g["phases"]["sync"]["start_s"] = g["phases"]["resume_weights"]["start_s"]
    for event in g["events"]:
        if event["phase"] == "sync" and event["kind"] == "start":
            event["t_s"] = g["phases"]["resume_weights"]["start_s"]
    doc = _assembled(doc)
    for phase in ("sync", "resume_weights"):
        for block in (doc["groups"]["release"], doc["system_decision"]["measurements"]["release"]):
            block["sampled_gpu_peak_phase"] = phase
        assert check_resource_sampling(doc).passed, check_resource_sampling(doc).detail


@pytest.mark.parametrize("level", ["group", "phase"])
@pytest.mark.parametrize("name", GROUPS)
def test_a_measurement_figure_the_runner_does_not_derive_is_refuted(level: str, name: str) -> None:
    doc = copy.deepcopy(BASE)
    assert check_resource_sampling(doc).passed
    block = doc["system_decision"]["measurements"][name]
    target = block if level == "group" else next(iter(block["phases"].values()))
    target["host_peak_mb"] = 1234.0
    result = check_resource_sampling(doc)
    assert not result.passed and "host_peak_mb" in result.detail


@pytest.mark.parametrize("edge", ["start_s", "end_s"])
@pytest.mark.parametrize("shift", [-0.5, 0.5])
@pytest.mark.parametrize("name", GROUPS)
def test_an_init_span_other_than_its_steps_is_refuted(name: str, edge: str, shift: float) -> None:
    doc = copy.deepcopy(BASE)
    assert check_phase_events(doc).passed
    init = doc["groups"][name]["init"]
    if shift > 0 and edge == "end_s":
        shift = -shift  # an init ending later than its last step would also overrun phase 1
    init[edge] += shift
    result = check_phase_events(doc)
    assert not result.passed and "_init" in result.detail


@pytest.mark.parametrize("name", GROUPS)
def test_the_runners_own_summaries_pass(name: str) -> None:
    doc = _assembled(copy.deepcopy(BASE))
    assert check_resource_sampling(doc).passed and check_phase_events(doc).passed
