"""The runner keeps its own order (pytest_rlsys/resultfile/runner_states.py): the driver
refuses a step out of it, and an attempt of a label never hands on what an earlier one
left (its step note), so every file it writes is one the grader's state machine accepts."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from fakes import LORA0
from rlsys_closure import driver, runner
from rlsys_closure import preflight as pf
from rlsys_closure.config import RunSettings, nested_from_overrides, pair_overrides

from pytest_rlsys.resultfile.loading import load_result_file
from pytest_rlsys.resultfile.runner_states import OrderError


def _spec(tmp: Path) -> dict[str, Any]:
    return {
        "group": "release",
        "free_cache_engine": True,
        "overrides": [],
        "rollout_source_sha256": "0" * 64,
        "initial_lora_sha256": LORA0,
        "sample_interval_s": 0.1,
        "boundary_samples": True,
        "periodic_sampler": "thread",
    }


class _BackwardsDriver(driver.GroupDriver):
    def _shutdown(self) -> None:
        return None

    def _run(self) -> None:
        with self.phase("update"):
            pass
        with self.recorder.phase("init_ray"):  # an init step after the cycle began
            pass


def test_the_driver_refuses_a_step_out_of_the_runners_order(tmp_path: Path) -> None:
    record = driver.GroupRecord(tmp_path / "rec.json", _spec(tmp_path))
    d = _BackwardsDriver(_spec(tmp_path), record, nvml=None)
    with pytest.raises(OrderError, match="init_ray"):
        d.run()
    assert record.data["status"] == "failed"
    assert record.data["failure"]["type"] == "OrderError"


def test_an_earlier_attempts_step_note_is_not_this_attempts(tmp_path: Path) -> None:
    """Attempt 1 left a note (in sync); attempt 2 is interrupted before its driver wrote
    one: the failure must not name attempt 1's phase."""
    model = tmp_path / "model"
    checks = [
        pf.CheckResult("python", "pass", "3.11", {"version": "3.11"}),
        pf.CheckResult("model_cache", "pass", "model", {"path": str(model)}),
    ]

    def compose(settings: RunSettings) -> dict[str, dict[str, Any]]:
        return {g: nested_from_overrides(ov) for g, ov in pair_overrides(settings).items()}

    def interrupted(spec_path: Path, record_path: Path, log: Path, timeout_s: float) -> int:
        raise KeyboardInterrupt

    opts = runner.RunOptions(run_label="again", output=tmp_path / "again.json")
    opts.work_dir.mkdir(parents=True)
    note = driver.phase_file(opts.work_dir / "release.record.json")
    note.write_text(json.dumps({"step": "sync", "phase": "sync", "edge": "start", "t_s": 1.0}))
    steps = runner.Steps(
        preflight=lambda o: checks,
        make_adapter=lambda s, p: LORA0,
        compose_pair=compose,
        run_group=interrupted,
        gpu_used_mb=lambda: None,
        versions=lambda: {"verl": "0.9.1"},
    )
    assert runner.run(opts, steps, io.StringIO()) == pf.EXIT_RUN_FAILED
    loaded = load_result_file(opts.output)
    assert loaded.ok and loaded.doc is not None, loaded.errors
    assert loaded.doc["failure"]["type"] == "Interrupted"
    assert loaded.doc["failure"]["phase"] == "init"

    from pytest_rlsys.cli import main as rlsys_main

    assert rlsys_main(["result", str(opts.output)]) == 4
