"""One group of the pair, in its own process: init, then one cycle.

    python -m rlsys_closure.driver SPEC.json RECORD.json

SPEC is written by the runner (same for both groups except the group name, the
flag and the overrides that carry it). RECORD is this group's raw evidence; it
is rewritten after every phase, so a group that dies mid-way leaves what it
recorded, and the runner marks the pair failed.

The cycle mirrors verl's own v1 sync trainer around one step, without its
PPO loss: initial sleep and sync (as the trainer does at init), generate,
engine sleep, score, a supervised update through ``set_loss_fn(sft_loss)``,
weight sync, then generate and score again with the updated adapter.

Everything verl-, Ray- and torch-related is imported inside functions: this
module must import on a CPU box for the CLI and the tests.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_rlsys.resultfile.runner_states import FLUSHED_AFTER, OrderError, StepOrder
from rlsys_closure.deadline import MARKER_ENV, Watchdog, interrupt_main_thread
from rlsys_closure.determinism import DETERMINISM_ENV
from rlsys_closure.events import EventRecorder
from rlsys_closure.group_record import GroupRecord, init_steps, merge_samples, write_json_atomic
from rlsys_closure.machine_probes import installed_versions
from rlsys_closure.optional import optional_module
from rlsys_closure.sampler import (
    ChildSampling,
    MemorySampler,
    cuda_device_index,
    host_used_mb,
    load_nvml,
)
from rlsys_closure.verl_calls import (
    chat_ids,
    checkpoint_manager,
    first,
    generate,
    gpu_processes,
    load_tokenizer,
    require_global_steps,
    scored,
    sft_update,
)

_UNSET: Any = object()

# Defaults of the spec's deadlines (the runner's --phase-timeout sets them).
DEFAULT_PHASE_TIMEOUT_S = 900.0
# After the watchdog interrupts a stuck step, the ordinary failure path has this
# long to record it and shut Ray down before the hard stop.
TIMEOUT_GRACE_S = 30.0
# A blocking wait inside asyncio.run (verl's weight sync: ray.get in an auto-awaited
# coroutine) survives the first SIGINT: asyncio's Runner turns it into a task cancel
# and the wait resumes; its second SIGINT raises KeyboardInterrupt. So if the main
# thread has not started unwinding this long after the first, the watchdog sends one more.
ESCALATE_AFTER_S = 2.0
EXIT_TIMED_OUT = 124


class PhaseTimeout(TimeoutError):
    """A step of the group ran past its deadline."""


def phase_file(record_path: Path) -> Path:
    """Where the driver notes the step it is in (read by the runner after a kill)."""
    return record_path.with_name(record_path.name.removesuffix(".json") + ".phase.json")


def runtime_env_without_cuda(cfg: Any) -> dict[str, Any]:
    """verl's PPO Ray runtime env, computed without touching the GPU.

    Importing ``verl.trainer.constants_ppo`` calls ``get_device_capability()``
    at import time (verl 0.9.1 ``trainer/constants_ppo.py:26``), which creates
    a CUDA context in the driver: hundreds of MiB on the GPU for the whole run,
    in both groups' samples. The capability only selects settings for Megatron
    on Hopper/Ampere and for GB200 NVLS, neither of which this run uses, so the
    import sees "no capability" instead.
    """
    import verl.utils.device as vdev

    real = vdev.get_device_capability
    vdev.get_device_capability = lambda device_id=0: (None, None)
    try:
        constants = importlib.import_module("verl.trainer.constants_ppo")
    finally:
        vdev.get_device_capability = real
    env: dict[str, Any] = constants.get_ppo_ray_runtime_env(cfg)
    return env


def closure_runtime_env(cfg: Any) -> dict[str, Any]:
    """verl's runtime env (without a device query) plus the determinism settings,
    and the group's marker: every Ray worker of the group's job, and everything it
    starts (the vLLM engine's children), carries it, even on a Ray cluster the
    group did not start, so the runner's sweep finds them all."""
    env = runtime_env_without_cuda(cfg)
    env_vars = env.setdefault("env_vars", {})
    env_vars.update(DETERMINISM_ENV)
    if MARKER_ENV in os.environ:
        env_vars[MARKER_ENV] = os.environ[MARKER_ENV]
    return env


class GroupDriver:
    """One group: verl's worker, rollout servers and checkpoint manager, then one cycle.

    The steps that touch a device are methods (:meth:`resource_pool`,
    :meth:`worker_class`, :meth:`server_manager`) so a CPU test can subclass
    the driver and replace only the rollout engine and the GPU resource.
    """

    # What the periodic sampler process loads as NVML ("module:attr", called; or
    # "none"). It must name the same NVML as ``nvml`` (a CPU test names its own).
    sampler_nvml = "rlsys_closure.sampler:load_nvml"

    def __init__(self, spec: dict[str, Any], record: GroupRecord, nvml: Any = _UNSET) -> None:
        self.spec = spec
        self.record = record
        self.nvml: Any = load_nvml() if nvml is _UNSET else nvml
        self.device_index = cuda_device_index(self.nvml)
        # Periodic samples come from a child process: this interpreter imports
        # verl, vLLM and torch while it runs, and a single native import holds
        # the GIL longer than two sampling intervals (see sample_child).
        child = (
            ChildSampling(
                nvml=self.sampler_nvml if self.nvml is not None else "none",
                out=record.path.with_name(f"{spec['group']}.periodic.jsonl"),
            )
            if spec.get("periodic_sampler", "process") == "process"
            else None
        )
        self.sampler = MemorySampler(
            self.nvml,
            device_index=self.device_index,
            interval_s=float(spec["sample_interval_s"]),
            host_probe=host_used_mb,
            boundary_samples=bool(spec["boundary_samples"]),
            child=child,
        )
        self.recorder = EventRecorder(hooks=[self.sampler.boundary_hook])
        self.wg: Any = None  # actor/rollout worker group, once spawned
        self.recorder.add_hook(self._actor_memory_hook)
        self.recorder.add_hook(self._deadline_hook)
        self.current_phase: str | None = None
        self.step: str = "start"
        self.watchdog = Watchdog(
            float(spec.get("phase_timeout_s") or DEFAULT_PHASE_TIMEOUT_S), self._on_timeout
        )
        self.timed_out: str | None = None
        self.grace_s = TIMEOUT_GRACE_S
        self._finished = threading.Event()
        self._unwinding = threading.Event()  # the main thread left the step (or never hung)
        self.drain_errors: list[str] = []
        root = spec.get("artefacts_dir")
        self.artefacts: Path | None = Path(root) / spec["group"] if root else None

    # -- device-facing steps (overridden by the CPU test) -----------------------
    def resource_pool(self) -> Any:
        from verl.single_controller.ray import RayResourcePool

        return RayResourcePool(
            process_on_nodes=[1],
            use_gpu=True,
            max_colocate_count=3,
            name_prefix=f"closure_{self.spec['group']}",
        )

    def worker_class(self) -> type:
        from rlsys_closure.verl_worker import ClosureActorRolloutRefWorker

        return ClosureActorRolloutRefWorker

    def server_manager(self, cfg: Any, wg: Any) -> Any:
        from verl.workers.rollout.llm_server import LLMServerManager

        # create() is auto-awaited: called from sync code it runs to completion.
        return LLMServerManager.create(config=cfg, worker_group=wg)

    def ray_init(self, cfg: Any) -> None:
        ray = optional_module("ray")
        ray.init(runtime_env=closure_runtime_env(cfg), include_dashboard=False)

    # -- deadlines ------------------------------------------------------------------
    def _deadline_hook(self, phase: str, edge: str) -> None:
        # Each phase, and the work after it up to the next one (hashing, drains,
        # the tokenizer), gets the same deadline: nothing waits unbounded.
        self.step = phase if edge == "start" else f"after {phase}"
        self.watchdog.arm(self.step)
        self._note_step(edge)

    def _note_step(self, edge: str) -> None:
        # A note for the runner (read after a kill); the record says the rest.
        with contextlib.suppress(OSError):
            write_json_atomic(
                phase_file(self.record.path),
                {
                    "step": self.step,
                    "phase": self.current_phase,
                    "edge": edge,
                    "t_s": time.monotonic(),
                },
            )

    def _on_timeout(self, step: str, timeout_s: float) -> None:
        """Called from the watchdog thread: interrupt, then (if need be) stop hard."""
        self.timed_out = step
        sys.stderr.write(
            f"driver: {step!r} did not finish within {timeout_s:g} s (--phase-timeout); "
            "interrupting the group\n"
        )
        interrupt_main_thread()
        if not self._unwinding.wait(min(ESCALATE_AFTER_S, self.grace_s)):
            sys.stderr.write("driver: still waiting after the interrupt; interrupting again\n")
            interrupt_main_thread()
        if not self._finished.wait(self.grace_s):
            self._hard_stop(step, timeout_s)

    def _timeout_failure(self, step: str, timeout_s: float) -> dict[str, Any]:
        phase = self.current_phase or "init"
        return {
            "type": "PhaseTimeout",
            "message": (
                f"{step!r} did not finish within {timeout_s:g} s (--phase-timeout) in phase "
                f"{phase!r}; a wait on the rollout engine or the weight sync never returned "
                "(see the group log)"
            ),
            "phase": self.current_phase,
            "step": step,
            "traceback": "",
        }

    def _hard_stop(self, step: str, timeout_s: float) -> None:
        """The main thread did not unwind: record the failure without any remote call,
        stop the sampler and exit; the runner kills what the group started."""
        d = self.record.data
        d["status"] = "failed"
        d["failure"] = self._timeout_failure(step, timeout_s)
        try:
            d["events"].extend(e.as_dict() for e in list(self.recorder.events))
            d["events"].sort(key=lambda e: e["t_s"])
            self.sampler.stop()
            d["samples"] = merge_samples(
                d["samples"], [s.as_dict() for s in self.sampler.snapshot()]
            )
            d["sampler_errors"] = [*self.sampler.errors, *self.drain_errors]
            self.record.flush()
        finally:
            sys.stderr.write(f"driver: hard stop after {step!r} timed out\n")
            sys.stderr.flush()
            os._exit(EXIT_TIMED_OUT)

    # -- evidence ---------------------------------------------------------------
    def _actor_memory_hook(self, phase: str, edge: str) -> None:
        if self.wg is None or phase.startswith("init_") or self.timed_out is not None:
            return
        try:
            mb = first(self.wg.closure_actor_memory_mb())
        except Exception:
            mb = None
        self.record.data["actor_memory"].setdefault(phase, [None, None])[
            0 if edge == "start" else 1
        ] = mb

    def _collect(self) -> None:
        d = self.record.data
        if self.wg is not None and self.timed_out is not None:
            # The actor may be the one stuck (verl's sender inside update_weights): a
            # call to it would queue behind that call for good.
            note = "drain skipped: the group timed out (the actor may be what is stuck)"
            if note not in self.drain_errors:
                self.drain_errors.append(note)
        elif self.wg is not None:
            try:
                drained = first(self.wg.closure_drain())
                d["resume_calls"].extend(drained.get("resume_calls", []))
                d["events"].extend(drained.get("events", []))
                d["samples"].extend(drained.get("samples", []))
                d["actor_memory"].update(drained.get("actor_memory", {}))
                if drained.get("determinism") is not None:
                    d["actor_determinism"] = drained["determinism"]
            except Exception as exc:
                self.drain_errors.append(f"drain: {type(exc).__name__}: {exc}")
        d["events"].extend(e.as_dict() for e in self.recorder.events)
        self.recorder.events.clear()
        d["events"].sort(key=lambda e: e["t_s"])
        d["init_steps"] = init_steps(self.recorder.init_events)
        d["samples"] = merge_samples(d["samples"], [s.as_dict() for s in self.sampler.snapshot()])
        d["periodic_sampler_priority"] = self.sampler.child_priority
        # Both sources, in order: a drain error never hides the sampler's own.
        d["sampler_errors"] = [*self.sampler.errors, *self.drain_errors]
        self.record.flush()

    def _flush_after(self, phase: str) -> None:
        """Write the record after ``phase`` and its follow-up work: only at the runner's
        flush points (runner_states.FLUSHED_AFTER), which tell the grader what a group
        killed from outside can have lost."""
        if phase not in FLUSHED_AFTER or phase != self.current_phase:
            raise OrderError(f"no flush point after {phase!r} in the runner's order")
        self._collect()

    def phase(self, name: str) -> Any:
        self.current_phase = name
        return self.recorder.phase(name)

    def _adapter_dir(self, label: str) -> str | None:
        return str(self.artefacts / "adapters" / label) if self.artefacts else None

    # -- the run ----------------------------------------------------------------
    def run(self) -> None:
        # The runner's own order (runner_states), the one the grader holds records to:
        # a step out of it is a bug here, not a record to write.
        self.recorder.add_hook(StepOrder().hook)
        self.sampler.start()
        self.record.data["periodic_sampler"] = self.sampler.periodic_source
        self.watchdog.arm("start")
        self._note_step("start")
        self.watchdog.start()
        try:
            self._run()
            self.record.data["status"] = "completed"
        except BaseException as exc:
            self._unwinding.set()
            self.record.data["status"] = "failed"
            if self.timed_out is not None:
                self.record.data["failure"] = self._timeout_failure(
                    self.timed_out, self.watchdog.timeout_s
                )
                self.record.data["failure"]["traceback"] = traceback.format_exc()[-8000:]
                raise PhaseTimeout(self.record.data["failure"]["message"]) from exc
            self.record.data["failure"] = {
                "type": type(exc).__name__,
                "message": (str(exc) or repr(exc))[:4000],
                "phase": self.current_phase,
                "traceback": traceback.format_exc()[-8000:],
            }
            raise
        finally:
            self._unwinding.set()
            # The teardown is bounded too (a drain from a dead actor, ray.shutdown).
            self.watchdog.arm("shutdown")
            self.sampler.stop()
            procs, why = gpu_processes(self.nvml, self.device_index)
            self.record.data["driver_gpu_processes"] = procs
            self.record.data["driver_gpu_processes_error"] = why
            self._collect()
            self._shutdown()
            self.watchdog.stop()
            self._finished.set()

    def _shutdown(self) -> None:
        try:
            ray = optional_module("ray")
            if ray.is_initialized():
                ray.shutdown()
        except Exception:
            pass

    def _run(self) -> None:
        from verl.checkpoint_engine import CheckpointEngineManager
        from verl.single_controller.ray import RayClassWithInitArgs, RayWorkerGroup
        from verl.single_controller.ray.base import create_colocated_worker_cls

        from rlsys_closure.config import compose_verl_config, resolved_dict

        ray = optional_module("ray")
        spec, d, rec = self.spec, self.record.data, self.recorder
        d["environment"] = {
            "versions": installed_versions(),
            "python": sys.version.split()[0],
            "driver_pid": os.getpid(),
        }
        cfg = compose_verl_config(spec["overrides"])
        d["config"] = resolved_dict(cfg)
        self.record.flush()

        self.current_phase = "init"
        with rec.phase("init_ray"):
            self.ray_init(cfg)
        with rec.phase("init_actor"):
            cls = RayClassWithInitArgs(
                cls=ray.remote(self.worker_class()),
                config=cfg.actor_rollout_ref,
                role="actor_rollout",
            )
            dict_cls = create_colocated_worker_cls(class_dict={"actor_rollout": cls})
            wg_all = RayWorkerGroup(resource_pool=self.resource_pool(), ray_cls_with_init=dict_cls)
            wg = wg_all.spawn(prefix_set={"actor_rollout"})["actor_rollout"]
            wg.init_model()
            wg.closure_install_probes(self.device_index)
            self.wg = wg
        with rec.phase("init_lora_check"):
            initial = first(wg.closure_lora(self._adapter_dir("initial")))
            d["initial_lora"] = initial
            d["initial_lora_sha256"] = initial["sha256"]
            if initial["sha256"] != spec["initial_lora_sha256"]:
                raise RuntimeError(
                    f"actor LoRA {initial['sha256']} is not the shared initial adapter "
                    f"{spec['initial_lora_sha256']}"
                )
        with rec.phase("init_rollout_server"):
            servers = self.server_manager(cfg, wg)
        with rec.phase("init_checkpoint_manager"):
            manager = checkpoint_manager(CheckpointEngineManager, cfg, wg, servers.get_replicas())
        self.record.flush()
        # verl's trainers put the engine to sleep before the first sync.
        with rec.phase("init_sleep"):
            manager.sleep_replicas()

        wg.closure_set_label("initial_sync")
        with self.phase("initial_sync"):
            manager.update_weights(global_steps=0)
        self._check_streamed("initial_sync", d["initial_lora_sha256"])
        self._flush_after("initial_sync")

        tokenizer = load_tokenizer(spec["model_path"])
        source = spec["rollout_source"]
        prompt_ids = [chat_ids(tokenizer, p["messages"]) for p in source["prompts"]]
        client = servers.get_client()

        with self.phase("rollout_before_update") as info:
            outs, steps = generate(client, prompt_ids, source, tag="before")
            info["responses"] = len(outs)
            info["global_steps"] = sorted(set(steps), key=repr)
        require_global_steps("rollout_before_update", steps, 0)
        with self.phase("engine_sleep") as info:
            manager.sleep_replicas()
            info["effective"] = bool(spec["free_cache_engine"])
        with self.phase("score_before_update"):
            d["generation"]["before"] = scored(tokenizer, source, outs)
        self._flush_after("score_before_update")

        with self.phase("update") as info:
            metrics = sft_update(wg, tokenizer, source, prompt_ids, int(spec["seed"]))
            info["loss"] = metrics.get("loss")
            d["update"] = metrics
        d["update_completed"] = True
        self.current_phase = "update"
        updated = first(wg.closure_lora(self._adapter_dir("updated")))
        d["updated_lora"] = updated
        d["updated_lora_sha256"] = updated["sha256"]
        self._flush_after("update")

        wg.closure_set_label("sync")
        with self.phase("sync"):
            manager.update_weights(global_steps=1)
        wg.closure_set_label(None)
        # Hashed after the phase closed, so hashing is not in the sync's time.
        self._check_streamed("sync", d["updated_lora_sha256"])
        d["sync_completed"] = True
        self._flush_after("sync")

        with self.phase("rollout_after_update") as info:
            outs, steps = generate(client, prompt_ids, source, tag="after")
            info["responses"] = len(outs)
            info["global_steps"] = sorted(set(steps), key=repr)
        d["rollout_after_update_global_steps"] = sorted(set(steps), key=repr)
        # verl sets global_steps on the server after each sync
        # (vllm_rollout.py:248-250): 1 proves these rollouts came after it.
        require_global_steps("rollout_after_update", steps, 1)
        with self.phase("score_after_update"):
            d["generation"]["after"] = scored(tokenizer, source, outs)
        self.current_phase = None

    def _check_streamed(self, label: str, expected: str) -> None:
        """verl's sender was handed exactly the adapter the actor holds.

        What this proves, precisely: the probe on the actor's
        ``rollout.update_weights`` hashed the ``(name, tensor)`` stream verl passed
        to it during this sync (what verl's ``BucketedWeightSender`` then sends to
        vLLM), and that hash equals the actor's own LoRA hash. It does NOT prove
        that vLLM loaded those tensors or serves them: nothing is read back from
        vLLM. What the run shows on the vLLM side is only that every
        ``rollout_after_update`` response carries ``global_steps == 1``, which verl
        sets after ``update_weights_from_ipc`` returned (``vllm_rollout.py:243-250``)
        -- the load did not raise. The initial adapter's ``lora_B`` is zero, so the
        rollout before the update cannot tell which adapter is served either.
        """
        streamed = first(self.wg.closure_streamed_lora(label))
        self.record.data.setdefault("streamed_lora", {})[label] = streamed
        sha = streamed.get("sha256") if isinstance(streamed, dict) else None
        # The phase has closed; its end event (not yet collected) carries the hash.
        for ev in reversed(self.recorder.events):
            if ev.phase == label and ev.kind == "end":
                ev.detail["streamed_lora_sha256"] = sha
                break
        if sha != expected:
            self.current_phase = label
            raise RuntimeError(
                f"{label}: verl's weight sender was handed LoRA {sha} but the actor holds "
                f"{expected}" + ("" if streamed else " (no adapter update was streamed)")
            )


def main(
    argv: Sequence[str] | None = None,
    driver_factory: Callable[[dict[str, Any], GroupRecord], Any] = GroupDriver,
) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        sys.stderr.write("usage: python -m rlsys_closure.driver SPEC.json RECORD.json\n")
        return 2
    spec = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    record = GroupRecord(Path(args[1]), spec)
    record.flush()
    started = time.monotonic()
    # The watchdog ends a stuck step with SIGINT to this main thread, so SIGINT must
    # raise KeyboardInterrupt even when the group inherited it ignored (a run started by
    # `nohup ... &`, or from a script in the background): Python then keeps it ignored,
    # the interrupt was lost and only the hard stop ended the group, its record without
    # the stuck step's traceback.  A group has a session of its own: no terminal's
    # Ctrl-C reaches it this way.
    previous = _interruptible()
    try:
        driver_factory(spec, record).run()
    except BaseException as exc:
        # The record already holds the failure; one line here, details in the log.
        sys.stderr.write(
            f"group {spec['group']} failed after {time.monotonic() - started:.1f}"
            f" s: {type(exc).__name__}: {exc}\n"
        )
        traceback.print_exc(file=sys.stderr)
        return EXIT_TIMED_OUT if isinstance(exc, PhaseTimeout) else 5
    finally:
        if previous is not None:  # a caller in this process keeps its own
            signal.signal(signal.SIGINT, previous)
    return 0


def _interruptible() -> Any:
    """Make SIGINT raise KeyboardInterrupt here if it was ignored; what it was, or None
    when nothing was changed (another handler is kept, and only the main thread may set
    one)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return None
    return signal.signal(signal.SIGINT, signal.default_int_handler)


if __name__ == "__main__":
    raise SystemExit(main())
