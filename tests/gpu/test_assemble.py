"""A synthetic pair, assembled into a result file that validates and grades full."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import LORA1, assemble_kwargs, paired_configs, simulate_group
from rlsys_closure.assemble import ResultExistsError, assemble, write_result

from pytest_rlsys.resultfile import checks as cc
from pytest_rlsys.resultfile.loading import load_result_file, validate_document


def test_synthetic_pair_validates_and_passes_every_check(tmp_path: Path) -> None:
    doc = assemble(**assemble_kwargs())
    loaded = validate_document(doc)
    assert loaded.ok, loaded.errors
    assert doc["status"] == "completed" and "failure" not in doc
    checks = doc["system_decision"]["checks"]
    assert list(checks) == list(cc.CHECK_NAMES)
    assert all(c["passed"] for c in checks.values()), checks
    # What the file claims is exactly what the grader re-derives.
    assert checks == {n: r.as_dict() for n, r in cc.derive_checks(doc).items()}
    assert doc["system_decision"]["measurements"] == cc.derive_measurements(doc)
    release = doc["groups"]["release"]
    assert release["phases"]["update"]["actor_memory_start_mb"] == 4100.0
    assert release["sampled_gpu_peak_phase"] == "initial_sync"
    assert [c["tags"] for c in release["resume_calls"]] == [["weights"], ["kv_cache"]] * 2
    assert doc["groups"]["retain"]["resume_calls"] == []


def test_written_file_grades_full_marks(tmp_path: Path) -> None:
    result_grading = pytest.importorskip("pytest_rlsys.resultfile.grade")
    path = tmp_path / "cpu_synthetic_pair_v1.json"
    write_result(path, assemble(**assemble_kwargs()))
    assert load_result_file(path).ok
    grade = result_grading.grade_result_file(path)
    assert grade.gradable
    assert grade.max_score > 0
    assert grade.score == grade.max_score, [c.message for c in grade.cases if c.score == 0]


def test_run_that_fails_mid_way_writes_what_it_has(tmp_path: Path) -> None:
    configs = paired_configs()
    records = {
        "release": simulate_group("release", fail_in="update", config=configs["release"]),
        "retain": None,
    }
    doc = assemble(**assemble_kwargs(records=records))
    assert validate_document(doc).ok, validate_document(doc).errors
    assert doc["status"] == "failed"
    assert doc["failure"]["group"] == "release" and doc["failure"]["phase"] == "update"
    assert "simulated failure" in doc["failure"]["message"]
    release = doc["groups"]["release"]
    # The phases up to the failure are kept, the failed one closed.
    assert {"initial_sync", "rollout_before_update", "update"} <= set(release["phases"])
    assert release["update_completed"] is False and release["updated_lora_sha256"] is None
    checks = doc["system_decision"]["checks"]
    assert checks["update_and_sync"]["passed"] is False
    assert checks["phase_events"]["passed"] is False
    path = tmp_path / "failed.json"
    write_result(path, doc)
    assert load_result_file(path).ok


def test_differing_updates_fail_the_updated_lora_check() -> None:
    configs = paired_configs()
    records = {
        "release": simulate_group("release", config=configs["release"]),
        "retain": simulate_group("retain", config=configs["retain"], updated_lora=LORA1[::-1]),
    }
    doc = assemble(**assemble_kwargs(records=records))
    assert doc["status"] == "completed"
    assert doc["system_decision"]["checks"]["updated_lora_match"]["passed"] is False


def test_unpaired_config_fails_config_paired() -> None:
    configs = paired_configs()
    configs["retain"]["actor_rollout_ref"]["rollout"]["gpu_memory_utilization"] = 0.5
    records = {g: simulate_group(g, config=configs[g]) for g in ("release", "retain")}
    doc = assemble(**assemble_kwargs(records=records, configs=configs))
    check = doc["system_decision"]["checks"]["config_paired"]
    assert check["passed"] is False and "gpu_memory_utilization" in check["detail"]


def test_write_result_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "label.json"
    path.write_text('{"old": true}\n')
    with pytest.raises(ResultExistsError):
        write_result(path, assemble(**assemble_kwargs()))
    assert json.loads(path.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["label.json"]  # no temp file left


def test_samples_without_a_gpu_reading_are_left_out() -> None:
    configs = paired_configs()
    release = simulate_group("release", config=configs["release"])
    release["samples"].append(
        {"t_s": 1.0, "gpu_used_mb": None, "host_used_mb": 5.0, "reason": "periodic"}
    )
    records = {"release": release, "retain": simulate_group("retain", config=configs["retain"])}
    doc = assemble(**assemble_kwargs(records=records))
    assert validate_document(doc).ok
    assert all(s["gpu_used_mb"] is not None for s in doc["groups"]["release"]["resource_samples"])
