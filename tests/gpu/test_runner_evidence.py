"""The runner's evidence on a CPU: memory baseline between groups, raw artefacts,
records that survive NaN metrics and drain errors, and device selection by UUID."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeNvml
from rlsys_closure import assemble, driver, runner, verl_calls
from rlsys_closure import preflight as pf
from rlsys_closure.sampler import DeviceSelectionError, cuda_device_index
from test_run import Fakes, _opts

from pytest_rlsys.resultfile.loading import load_result_file


# -- memory must return to the baseline before the second group (prediction 5) -------
def _memory_steps(fakes: Fakes, readings: list[float]) -> runner.Steps:
    steps = fakes.steps()
    queue = list(readings)
    clock = {"t": 0.0}
    steps.gpu_used_mb = lambda: queue.pop(0) if len(queue) > 1 else queue[0]
    steps.sleep = lambda s: clock.__setitem__("t", clock["t"] + s)
    steps.clock = lambda: clock["t"]
    return steps


def test_second_group_waits_for_the_baseline_and_records_it(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    opts = _opts(tmp_path, "mem_ok")
    # Before release: 1000. Before retain: still 6000 twice, then back to 1100.
    steps = _memory_steps(fakes, [1000.0, 6000.0, 6000.0, 1100.0])
    assert runner.run(opts, steps, io.StringIO()) == pf.EXIT_OK
    doc = load_result_file(opts.output).doc
    assert doc is not None
    for group, used in (("release", 1000.0), ("retain", 1100.0)):
        start = next(
            e
            for e in doc["groups"][group]["events"]
            if e["phase"] == "initial_sync" and e["kind"] == "start"
        )
        memory = start["detail"]["gpu_memory_at_start"]
        assert memory["baseline_mb"] == 1000.0 and memory["used_mb"] == used
        assert memory["tolerance_mb"] == opts.memory_tolerance_mb
    assert fakes.groups_run == ["release", "retain"]


def test_memory_that_never_returns_stops_the_pair_with_a_clear_failure(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    opts = _opts(tmp_path, "mem_stuck")
    out = io.StringIO()
    steps = _memory_steps(fakes, [1000.0, 9000.0])
    assert runner.run(opts, steps, out) == pf.EXIT_RUN_FAILED
    assert fakes.groups_run == ["release"], "retain never starts on a dirty GPU"
    loaded = load_result_file(opts.output)
    assert loaded.ok, loaded.errors
    assert loaded.doc is not None
    failure = loaded.doc["failure"]
    assert failure["group"] == "retain" and failure["type"] == "GpuMemoryNotReleased"
    assert "9000 MiB" in failure["message"] and "1000 MiB" in failure["message"]
    assert "did not return" in out.getvalue()


def test_without_nvml_the_run_does_not_wait(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    steps = fakes.steps()
    steps.gpu_used_mb = lambda: None
    steps.sleep = lambda s: pytest.fail("waited without a reading")
    assert runner.run(_opts(tmp_path, "no_nvml"), steps, io.StringIO()) == pf.EXIT_OK


# -- raw artefacts (issue 17's stronger path) ------------------------------------------
def test_samples_jsonl_holds_exactly_the_result_files_samples(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    opts = _opts(tmp_path, "artefacts")
    assert runner.run(opts, fakes.steps(), io.StringIO()) == pf.EXIT_OK
    doc = load_result_file(opts.output).doc
    assert doc is not None
    assert opts.artefacts_dir == opts.output.with_name("artefacts.artefacts")
    for group in ("release", "retain"):
        path = opts.artefacts_dir / group / "samples.jsonl"
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert lines == doc["groups"][group]["resource_samples"]
        assert all(set(x) == {"t_s", "gpu_used_mb", "host_used_mb", "reason"} for x in lines)


def test_updated_adapters_l2_is_recorded(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    from rlsys_closure.lora import adapter_sha256, save_lora_tensors

    base = {
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": torch.ones(2, 4),
        "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight": torch.zeros(4, 2),
    }
    fakes = Fakes(tmp_path)
    original = fakes.run_group

    def run_group(spec_path: Path, record_path: Path, log: Path, timeout: float) -> int:
        rc = original(spec_path, record_path, log, timeout)
        spec = json.loads(spec_path.read_text())
        shift = 0.0 if spec["group"] == "release" else 3.0  # differ by 3 in one element
        tensors = {k: v.clone() for k, v in base.items()}
        next(iter(tensors.values()))[0, 0] += shift
        folder = Path(spec["artefacts_dir"]) / spec["group"] / "adapters"
        save_lora_tensors(base.items(), folder / "initial")
        sha = save_lora_tensors(tensors.items(), folder / "updated")
        assert adapter_sha256(folder / "updated") == sha
        return rc

    steps = fakes.steps()
    steps.run_group = run_group
    opts = _opts(tmp_path, "l2")
    out = io.StringIO()
    assert runner.run(opts, steps, out) == pf.EXIT_OK
    doc = load_result_file(opts.output).doc
    assert doc is not None
    update_end = next(
        e
        for e in doc["groups"]["retain"]["events"]
        if e["phase"] == "update" and e["kind"] == "end"
    )
    assert math.isclose(update_end["detail"]["updated_lora_l2_between_groups"], 3.0)
    assert "L2 distance" in out.getvalue()


# -- records that survive what a real run throws at them (prediction 6) -----------------
def test_a_nan_metric_does_not_stop_the_failure_record(tmp_path: Path) -> None:
    spec = {
        "group": "release",
        "free_cache_engine": True,
        "overrides": [],
        "rollout_source_sha256": "0" * 64,
        "initial_lora_sha256": "1" * 64,
    }
    record = driver.GroupRecord(tmp_path / "rec.json", spec)
    record.data["update"] = {"grad_norm": float("nan"), "loss": float("inf"), "lr": 1e-4}
    record.data["status"] = "failed"
    record.data["failure"] = {"type": "RuntimeError", "message": "boom", "phase": "update"}
    record.flush()
    saved = json.loads((tmp_path / "rec.json").read_text())
    assert saved["update"] == {"grad_norm": None, "loss": None, "lr": 1e-4}
    assert saved["failure"]["phase"] == "update"
    assert verl_calls.plain_metrics(
        {"actor/grad_norm": [1.0, float("nan")], "x": "text", "actor/loss": 0.5}
    ) == {"actor/grad_norm": None, "actor/loss": 0.5}


class _BrokenWorkers:
    def closure_drain(self) -> Any:
        raise ConnectionError("actor died")

    def closure_actor_memory_mb(self) -> Any:
        return [None]


def test_a_drain_error_does_not_replace_the_samplers_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    spec = {
        "group": "retain",
        "free_cache_engine": False,
        "overrides": [],
        "rollout_source_sha256": "0" * 64,
        "initial_lora_sha256": "1" * 64,
        "sample_interval_s": 0.25,
        "boundary_samples": True,
    }
    record = driver.GroupRecord(tmp_path / "rec.json", spec)
    d = driver.GroupDriver(spec, record, nvml=FakeNvml(lambda: 1.0, fail_reads=True))
    d.sampler.sample("periodic")  # the failing read leaves a sampler error
    d.wg = _BrokenWorkers()
    d._collect()
    d._collect()
    errors = json.loads((tmp_path / "rec.json").read_text())["sampler_errors"]
    assert any("NVML read failed" in e for e in errors)
    assert sum("drain: ConnectionError: actor died" in e for e in errors) == 2


def test_a_group_that_never_read_its_actor_hash_does_not_claim_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = {"status": "failed", "failure": {"phase": None}}
    monkeypatch.setattr(assemble, "INITIAL_HASH_NULLABLE", True)
    group = assemble.assemble_group(raw, {}, "a" * 64, "b" * 64, "retain")
    assert group["initial_lora_sha256"] is None
    raw_read = {"initial_lora_sha256": "c" * 64}
    assert (
        assemble.assemble_group(raw_read, {}, "a" * 64, "b" * 64, "retain")["initial_lora_sha256"]
        == "c" * 64
    )


# -- CUDA_VISIBLE_DEVICES given as UUIDs ---------------------------------------------------
def test_cuda_visible_devices_by_index_or_uuid() -> None:
    nvml = FakeNvml(lambda: 1.0)
    assert cuda_device_index(nvml, "") == 0
    assert cuda_device_index(nvml, "1,0") == 1
    assert cuda_device_index(nvml, nvml.uuids[1]) == 1
    assert cuda_device_index(nvml, "GPU-9f8e7d6c,GPU-0a1b") == 1  # CUDA accepts unique prefixes
    with pytest.raises(DeviceSelectionError, match="no GPU with UUID"):
        cuda_device_index(nvml, "GPU-ffffffff")
    with pytest.raises(DeviceSelectionError, match="MIG"):
        cuda_device_index(nvml, "MIG-1234")
    with pytest.raises(DeviceSelectionError, match="without NVML"):
        cuda_device_index(None, nvml.uuids[0])
