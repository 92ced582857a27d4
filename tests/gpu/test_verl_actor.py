"""verl 0.9.1's own actor code on the CPU (tox -e verl-actor), with the runner's probes.

What runs is verl's: ``ActorRolloutRefWorker.init_model`` (HF model, PEFT from
the shared adapter, FSDP1 wrapping with one unit per LoRA Linear, optimizer),
``update_actor`` with ``sft_loss``, and ``update_weights`` (resume / gather /
stream / resume). Two things are substituted, both at a boundary:

* the device: ``verl_cpu_platform`` registers a CPU platform through verl's own
  plugin hook (gloo collectives);
* the rollout engine: ``verl_fake_rollout`` stands in for vLLM's server adapter
  and server, recording what verl sends.

Skipped unless verl is installed and the CPU platform is selected (the tox env
sets VERL_USE_EXTERNAL_MODULES, VERL_PLATFORM and VERL_ENGINE_DEVICE).
"""

from __future__ import annotations

import ast
import asyncio
import functools
import inspect
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("VERL_PLATFORM") != "cpu":
    pytest.skip("needs the CPU platform of tox -e verl-actor", allow_module_level=True)
verl = pytest.importorskip("verl", reason="verl is not installed (tox -e verl-actor runs this)")
torch = pytest.importorskip("torch")

import verl_fake_rollout as fake  # noqa: E402
from rlsys_closure import driver, verl_calls  # noqa: E402
from rlsys_closure.config import RunSettings, compose_verl_config, group_overrides  # noqa: E402
from rlsys_closure.lora import adapter_sha256, create_initial_adapter, lora_tensors_sha256  # noqa: E402

RANK, ALPHA = 8, 16


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from rlsys_closure.tiny_model import TinySpec, build_tiny_model

    root = tmp_path_factory.mktemp("verl_actor")
    build_tiny_model(root / "tiny", TinySpec())
    create_initial_adapter(
        str(root / "tiny"),
        root / "adapter",
        rank=RANK,
        alpha=ALPHA,
        target_modules="all-linear",
        seed=7,
    )
    return {"root": root, "model": root / "tiny", "adapter": root / "adapter"}


def _settings(dirs: dict[str, Path]) -> RunSettings:
    return RunSettings(
        model_path=str(dirs["model"]),
        adapter_path=str(dirs["adapter"]),
        lora_rank=RANK,
        lora_alpha=ALPHA,
        attn_implementation="sdpa",
        n_prompts=2,
        micro_batch_size=2,
    )


@pytest.fixture(scope="module")
def worker(model_dirs: dict[str, Path]) -> Any:
    """The runner's worker subclass, built in this process by verl's init_model."""
    import torch.distributed as dist

    fake.install()
    from rlsys_closure.verl_worker import ClosureActorRolloutRefWorker

    os.environ.update(
        WORLD_SIZE="1",
        RANK="0",
        LOCAL_RANK="0",
        RAY_LOCAL_WORLD_SIZE="1",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT="29517",
    )
    if not dist.is_initialized():
        # verl asks for "cpu:gloo,<device>:<backend>", which torch refuses when the
        # device is the CPU; a gloo group made first is used as is.
        dist.init_process_group("gloo", rank=0, world_size=1)
    cfg = compose_verl_config(group_overrides(_settings(model_dirs), True))
    w = ClosureActorRolloutRefWorker(config=cfg.actor_rollout_ref, role="actor_rollout")
    w.init_model()
    server = fake.FakeServer(free_cache_engine=True)
    w.rollout.server = server
    assert w.closure_install_probes(0) is True
    w.fake_server = server
    return w


def _sync(w: Any, label: str, steps: int) -> None:
    w.closure_set_label(label)
    asyncio.run(w.update_weights(global_steps=steps, mode="naive"))
    w.closure_set_label(None)


# -- prediction 1: the actor's parameters under verl's FSDP -------------------------
def test_verl_wraps_lora_in_flat_parameters_whose_hash_is_not_the_files(
    worker: Any, model_dirs: dict[str, Path]
) -> None:
    module = worker.actor.engine.module
    lora = [(n, p) for n, p in module.named_parameters() if "lora_" in n]
    assert lora, "verl built no LoRA parameters"
    assert all(n.endswith("_flat_param") and p.dim() == 1 for n, p in lora)
    assert lora_tensors_sha256(lora) != adapter_sha256(model_dirs["adapter"])


def test_initial_hash_is_the_adapter_files_and_saves_a_loadable_copy(
    worker: Any, model_dirs: dict[str, Path]
) -> None:
    out = worker.closure_lora(str(model_dirs["root"] / "saved_initial"))
    assert out["sha256"] == adapter_sha256(model_dirs["adapter"])
    assert out["n_tensors"] == 2 * 7 * 2  # A and B, 7 linears, 2 layers
    assert adapter_sha256(model_dirs["root"] / "saved_initial") == out["sha256"]


# -- the probes are what verl's update_weights looks up -------------------------------
def test_probed_names_are_the_rollout_calls_of_verls_update_weights(worker: Any) -> None:
    from rlsys_closure.verl_worker import PROBED_ROLLOUT_METHODS
    from verl.workers.engine_workers import ActorRolloutRefWorker

    src = textwrap.dedent(inspect.getsource(ActorRolloutRefWorker.update_weights))
    called = {
        node.func.attr
        for node in ast.walk(ast.parse(src))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "rollout"
        and isinstance(node.func.value.value, ast.Name)
        and node.func.value.value.id == "self"
    }
    assert set(PROBED_ROLLOUT_METHODS) == called
    # Installed as instance attributes, so they shadow the adapter's methods.
    assert set(PROBED_ROLLOUT_METHODS) <= set(vars(worker.rollout))


# -- the initial sync, the update and the sync, through verl's code ----------------------
def test_release_cycle_streams_exactly_the_actors_adapter(
    worker: Any, model_dirs: dict[str, Path]
) -> None:
    initial = worker.closure_lora()["sha256"]
    _sync(worker, "initial_sync", 0)
    assert worker.closure_streamed_lora("initial_sync")["sha256"] == initial
    assert worker.fake_server.received[-1]["sha256"] == initial
    worker.closure_drain()  # the initial sync records no sub-phases

    from rlsys_closure.workload import sft_batch, verl_sft_tensordict
    from verl.workers.utils.losses import sft_loss

    batch = sft_batch([[5, 6, 7], [8, 9]], [[10, 11, 3], [12, 13, 14, 3]], pad_id=0)
    worker.set_loss_fn(functools.partial(sft_loss, config=None))
    out = worker.update_actor(verl_sft_tensordict(batch, seed=1))
    metrics = verl_calls.plain_metrics(out["metrics"])
    assert "loss" in " ".join(metrics)
    updated = worker.closure_lora(str(model_dirs["root"] / "saved_updated"))
    assert updated["sha256"] != initial
    assert adapter_sha256(model_dirs["root"] / "saved_updated") == updated["sha256"]

    _sync(worker, "sync", 1)
    streamed = worker.closure_streamed_lora("sync")
    assert streamed["sha256"] == updated["sha256"] == worker.fake_server.received[-1]["sha256"]
    assert worker.fake_server.global_steps == 1
    drained = worker.closure_drain()
    order = [(e["phase"], e["kind"]) for e in drained["events"]]
    assert order == [
        ("resume_weights", "start"),
        ("resume_weights", "end"),
        ("weight_transfer", "start"),
        ("weight_transfer", "end"),
        ("resume_kv_cache", "start"),
        ("resume_kv_cache", "end"),
    ]
    assert [c["tags"] for c in drained["resume_calls"]] == [["weights"], ["kv_cache"]]
    wakes = [c for c in worker.fake_server.calls() if c[0] == "wake_up"]
    assert wakes[-2:] == [("wake_up", ["weights"]), ("wake_up", ["kv_cache"])]


def test_retain_makes_no_resume_call_but_still_transfers(worker: Any) -> None:
    # verl reads free_cache_engine on every update_weights (engine_workers.py:775-781, :818).
    def flag(value: bool) -> None:
        worker.config.rollout.free_cache_engine = value
        object.__setattr__(worker.rollout.config, "free_cache_engine", value)  # a frozen dataclass

    flag(False)
    try:
        _sync(worker, "sync", 2)
    finally:
        flag(True)
    drained = worker.closure_drain()
    assert drained["resume_calls"] == []
    assert [e["phase"] for e in drained["events"]] == ["weight_transfer", "weight_transfer"]
    assert worker.closure_streamed_lora("sync")["sha256"] == worker.closure_lora()["sha256"]


# -- prediction 2: the checkpoint manager, built by the runner's code --------------------
class _Replica:
    def __init__(self) -> None:
        self.sleeps = 0

    async def sleep(self) -> None:
        self.sleeps += 1


def test_checkpoint_manager_is_verls_class_built_the_runners_way(
    model_dirs: dict[str, Path],
) -> None:
    from verl.checkpoint_engine import CheckpointEngineManager

    cfg = compose_verl_config(group_overrides(_settings(model_dirs), True))
    replicas = [_Replica()]
    wg = object()
    manager = verl_calls.checkpoint_manager(CheckpointEngineManager, cfg, wg, replicas)
    assert type(manager) is CheckpointEngineManager
    assert manager.actor_wg is wg and manager.replicas == replicas and manager.backend == "naive"
    manager.sleep_replicas()  # auto-awaited from sync code, as the driver calls it
    assert replicas[0].sleeps == 1
    # The keyword the runner used before: verl 0.9.1 refuses it.
    with pytest.raises(TypeError):
        CheckpointEngineManager(config=manager.config, trainer=wg, replicas=replicas)


# -- prediction 6: the driver does not create a CUDA context ------------------------------
def test_runtime_env_does_not_query_the_device(
    monkeypatch: pytest.MonkeyPatch, model_dirs: dict[str, Path]
) -> None:
    import verl.utils.device as vdev

    def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("the driver queried the GPU")

    monkeypatch.setattr(vdev, "get_device_capability", boom)
    monkeypatch.setattr(torch.cuda, "get_device_capability", boom)
    monkeypatch.delitem(sys.modules, "verl.trainer.constants_ppo", raising=False)
    cfg = compose_verl_config(group_overrides(_settings(model_dirs), True))
    env = driver.runtime_env_without_cuda(cfg)
    assert "env_vars" in env
    assert vdev.get_device_capability is boom  # restored after the import


# -- the runner's whole path: each group in its own process, every phase -------------------
@pytest.mark.slow  # both groups through verl's own actor on the CPU: about 45 s
def test_the_runner_on_cpu_writes_a_result_that_validates_and_grades(
    model_dirs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rlsys closure run's whole path, both groups, each through every phase with Ray,
    verl's worker group, LLMServerManager and CheckpointEngineManager; only the device
    and the vLLM server are stand-ins."""
    import ray

    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join(
            [
                str(Path(__file__).parent),
                str(Path(driver.__file__).parent.parent),
                os.environ.get("PYTHONPATH", ""),
            ]
        ),
    )
    for attempt in range(3):  # Ray waits a fixed 30 s for its raylet; CI boxes can be slower
        try:
            ray.init(num_cpus=4, include_dashboard=False)
            break
        except Exception:
            ray.shutdown()
            if attempt == 2:
                raise
    monkeypatch.setenv("RAY_ADDRESS", ray.get_runtime_context().gcs_address)
    orphans = tmp_path / "orphans"
    orphans.mkdir()
    monkeypatch.setenv("RLSYS_TEST_ORPHAN_DIR", str(orphans))
    try:
        _run_pair(model_dirs, tmp_path)
    finally:
        ray.shutdown()
    # Each group's fake engine started a non-daemon child in its own session (as vLLM's
    # EngineCore is); the runner's sweep of the group's marker must have ended both.
    engines = [int(f.read_text()) for f in orphans.iterdir()]
    assert len(engines) == 2
    alive = [pid for pid in engines if _alive(pid)]
    assert alive == [], f"engine children outlived their groups: {alive}"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


@pytest.mark.slow  # waits out a phase deadline: about 16 s
def test_verls_weight_sender_without_a_receiver_ends_by_the_phase_deadline(
    tmp_path: Path,
) -> None:
    """verl's own BucketedWeightSender, whose receiver (vLLM) never connects, inside the
    real group driver's initial_sync: the group ends by its deadline, naming the phase."""
    import time

    from rlsys_closure import runner

    spec = {
        "group": "release",
        "free_cache_engine": True,
        "overrides": [],
        "rollout_source_sha256": "0" * 64,
        "initial_lora_sha256": "1" * 64,
        "sample_interval_s": 0.1,
        "boundary_samples": True,
        "fake_mode": "verl_sender_no_receiver",
        "phase_timeout_s": 5.0,
        "timeout_grace_s": 10.0,
    }
    spec_path, record = tmp_path / "release.spec.json", tmp_path / "release.record.json"
    spec_path.write_text(json.dumps(spec))
    t0 = time.monotonic()
    rc = runner.run_group_process(
        spec_path, record, tmp_path / "release.log", 300.0, module="hang_driver"
    )
    took = time.monotonic() - t0
    log = (tmp_path / "release.log").read_text()
    assert rc == driver.EXIT_TIMED_OUT, log[-4000:]
    assert took < 120, log[-2000:]
    # Ended by the ordinary failure path (the interrupt, repeated if asyncio absorbed the
    # first), not by the hard stop 10 s later.
    assert "hard stop" not in log, log[-2000:]
    rec = json.loads(record.read_text())
    assert rec["failure"]["type"] == "PhaseTimeout" and rec["failure"]["phase"] == "initial_sync"
    assert "verl sender blocked" in log


def _run_pair(model_dirs: dict[str, Path], tmp_path: Path) -> None:
    from rlsys_closure import preflight as pf
    from rlsys_closure import runner

    from pytest_rlsys.resultfile.loading import load_result_file

    checks = [
        pf.CheckResult("python", "pass", "3.11", {"version": "3.11"}),
        pf.CheckResult("attention", "warn", "sdpa", {}),
        pf.CheckResult("model_cache", "pass", "model", {"path": str(model_dirs["model"])}),
    ]
    steps = runner.Steps(
        preflight=lambda o: checks,
        gpu_used_mb=lambda: None,
        run_group=functools.partial(runner.run_group_process, module="verl_cpu_driver"),
    )
    opts = runner.RunOptions(
        run_label="cpu_dry_pair",
        output=tmp_path / "cpu_dry_pair.json",
        model_path=model_dirs["model"],
        n_prompts=4,
        max_new_tokens=4,
        # smoke.sh's interval: the sampler process must keep it through the
        # driver's imports (verl, the worker, the engine) and Ray's start.
        sample_interval_s=0.1,
        seed=3,
    )
    rc = runner.run(opts, steps, sys.stdout)
    for group in ("release", "retain"):
        log = opts.log_path(group)
        if rc != pf.EXIT_OK and log.is_file():
            print(log.read_text()[-6000:])
    assert rc == pf.EXIT_OK
    loaded = load_result_file(opts.output)
    assert loaded.ok, loaded.errors
    doc = loaded.doc
    assert doc is not None and doc["status"] == "completed"
    checks = doc["system_decision"]["checks"]
    # The CPU platform's "device memory" is the host's (tests/gpu/cpu_nvml.py): no engine
    # frees a KV pool there, so resume_calls' rule that a released engine's sleep frees
    # memory is the one claim this path may honestly report as failed.  Everything else
    # passes, and the grader agrees with every claim (an honest record, never a
    # contradiction).
    failing = {n for n, c in checks.items() if not c["passed"]}
    assert failing <= {"resume_calls"}, failing
    if failing:
        assert "sleep freed less than" in checks["resume_calls"]["detail"], checks
    from pytest_rlsys.resultfile.grade import grade_document

    assert grade_document(doc).verdict == ("failed" if failing else "passed")

    rel = json.loads((opts.work_dir / "release.record.json").read_text())
    ret = json.loads((opts.work_dir / "retain.record.json").read_text())
    phases = [e["phase"] for e in rel["events"] if e["kind"] == "start"]
    assert phases == [
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
    ]
    for rec in (rel, ret):
        assert rec["periodic_sampler"] == "process", rec["sampler_errors"]
        assert rec["actor_determinism"]["enable_math_sdp"] is True
        assert rec["streamed_lora"]["initial_sync"]["sha256"] == rec["initial_lora_sha256"]
        assert rec["streamed_lora"]["sync"]["sha256"] == rec["updated_lora_sha256"]
        assert rec["rollout_after_update_global_steps"] == [1]
    assert [c["tags"] for c in rel["resume_calls"]] == [["weights"], ["kv_cache"]] * 2
    assert ret["resume_calls"] == []
    # full_determinism in both groups: the two updates are the same bytes.
    assert rel["updated_lora_sha256"] == ret["updated_lora_sha256"]
    for group, rec in (("release", rel), ("retain", ret)):
        art = opts.artefacts_dir / group
        assert adapter_sha256(art / "adapters" / "initial") == rec["initial_lora_sha256"]
        assert adapter_sha256(art / "adapters" / "updated") == rec["updated_lora_sha256"]
        lines = [json.loads(x) for x in (art / "samples.jsonl").read_text().splitlines()]
        assert lines == doc["groups"][group]["resource_samples"]

    from pytest_rlsys.cli import main as rlsys_main

    # 0 when every check passes, 4 (an honest record of a failed check) when only the
    # CPU platform's memory rule above failed; never 1 (a claim the evidence refutes).
    assert rlsys_main(["result", str(opts.output)]) == (4 if failing else 0)
