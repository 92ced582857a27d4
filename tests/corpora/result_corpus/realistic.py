"""Write the realistic example: a result file shaped like a real run, from the runner's code.

    python tests/corpora/result_corpus/realistic.py          # (re)write the example
    python tests/corpora/result_corpus/realistic.py --check  # exit 1 if it is stale

``schemas/examples/pt-verl-closure.example.json`` is hand-made: an exact 0.25 s grid from
0.0, both groups on the same clock, no event details. This one goes through the runner's
own ``EventRecorder``, ``MemorySampler``, ``pair_overrides`` and ``assemble`` with a
simulated GPU (the chapter's vLLM + Qwen2.5-0.5B + LoRA pair on a 16 GB card), so it
holds what a real file holds: each group on its own stretch of the host's monotonic
clock, readings that take 1-4 ms, a sampler stalled 0.31 s by an import, one dropped
reading, boundary samples, noisy memory, both syncs' resume calls with their details,
and the driver's event details (responses, global_steps, loss, the streamed adapter).
Deterministic: a seeded generator, so ``--check`` can pin it.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
for extra in (ROOT, ROOT / "gpu"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from rlsys_closure.assemble import assemble  # noqa: E402
from rlsys_closure.config import RunSettings, nested_from_overrides, pair_overrides  # noqa: E402
from rlsys_closure.events import EventRecorder  # noqa: E402
from rlsys_closure.sampler import MemorySampler  # noqa: E402

OUT = ROOT / "schemas" / "examples" / "pt-verl-closure.v1-realistic.example.json"
MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
REVISION = "7ae557604adf67be50417f59c2c2f167def9a775"
LORA0 = hashlib.sha256(b"closure example: initial adapter").hexdigest()
LORA1 = hashlib.sha256(b"closure example: updated adapter").hexdigest()
SOURCE = hashlib.sha256(b"closure example: frozen rollout source").hexdigest()
INTERVAL = 0.25
BOUNDARY = True  # the runner's default: a sample at every phase edge
TOTAL_MB = 16303.0
ACTOR_MB = 2310.0  # the actor's reserved memory: bf16 weights, LoRA, optimizer state
ACTOR_UPDATED_MB = 3194.0  # after the update (gradients, optimizer state, allocator cache)
ENGINE_MB = 0.4 * TOTAL_MB  # vLLM fills gpu_memory_utilization x total
OFFLOADED_MB = 540.0  # what a level-1 sleep leaves of the engine (CUDA context, buffers)


class SimGpu:
    """A clock and an NVML whose used memory follows the simulated run, with read noise."""

    def __init__(self, start: float, rng: random.Random) -> None:
        self.t = start
        self.level = 420.0
        self.rng = rng
        self.drop_next = False

    def clock(self) -> float:
        return self.t

    def nvmlInit(self) -> None:
        pass

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return index

    def nvmlDeviceGetMemoryInfo(self, handle: Any) -> Any:
        if self.drop_next:
            self.drop_next = False
            raise RuntimeError("NVML_ERROR_TIMEOUT")
        used = (self.level + self.rng.uniform(-6.0, 6.0)) * 2**20
        return SimpleNamespace(used=int(used), total=int(TOTAL_MB * 2**20))


def simulate(
    group: str,
    start: float,
    seed: int,
    config: dict[str, Any],
    *,
    interval: float = INTERVAL,
    boundary: bool = BOUNDARY,
    wakes_weights: bool = True,
) -> dict[str, Any]:
    """One group's raw record, as the driver collects it (``wakes_weights`` false: SGLang
    serving a LoRA adapter, whose released engine wakes only its KV cache)."""
    rng = random.Random(seed)
    gpu = SimGpu(start, rng)
    host = {"mb": 15480.0}
    sampler = MemorySampler(
        gpu,
        interval_s=interval,
        clock=gpu.clock,
        host_probe=lambda: round(host["mb"] + rng.uniform(-20.0, 20.0), 1),
        boundary_samples=boundary,
    )
    rec = EventRecorder(clock=gpu.clock, hooks=[sampler.boundary_hook])
    actor_rec = EventRecorder(clock=gpu.clock, hooks=[sampler.boundary_hook], source="actor")
    sampler.open()
    state = {"next": start + rng.uniform(0.0, interval)}
    actor_memory: dict[str, list[float]] = {}
    calls: list[dict[str, Any]] = []
    release = group == "release"

    def spend(dt: float, target: float | None = None, stall_at: float | None = None) -> None:
        """Let dt pass, moving memory towards target, with the sampler thread's readings."""
        end = gpu.t + dt
        begin, first = gpu.t, gpu.level
        while state["next"] <= end:
            gpu.t = state["next"]
            if target is not None:
                gpu.level = first + (target - first) * min(1.0, (gpu.t - begin) / max(dt, 1e-9))
            gpu.t += rng.uniform(0.0008, 0.004)  # the reading itself takes a few ms
            sampler.sample("periodic")
            pause = interval
            if stall_at is not None and gpu.t >= stall_at:
                pause += 0.31  # an import holding the GIL (torch, triton: 0.24-0.33 s)
                stall_at = None
            state["next"] = gpu.t + pause
        gpu.t = end
        if target is not None:
            gpu.level = target

    def phase(name: str, dt: float, target: float, actor: tuple[float, float]) -> Any:
        actor_memory[name] = [actor[0], actor[1]]
        return name, dt, target

    def wake(tags: list[str], during: str, dt: float, target: float) -> None:
        gpu.t += rng.uniform(0.0003, 0.002)
        calls.append(
            {
                "t_s": gpu.t,
                "tags": tags,
                "detail": {"during": during, "free_cache_engine": release},
            }
        )
        gpu.t += rng.uniform(0.0005, 0.003)  # the probe opens the sub-phase just after
        if during == "sync":
            sub = "resume_weights" if tags == ["weights"] else "resume_kv_cache"
            actor_memory[sub] = [ACTOR_UPDATED_MB, ACTOR_UPDATED_MB]
            with actor_rec.phase(sub):
                spend(dt, target)
        else:
            spend(dt, target)

    # -- init (recorded apart) --------------------------------------------------
    with rec.phase("init_ray"):
        spend(2.07 + rng.uniform(0, 0.2))
    with rec.phase("init_actor"):
        spend(7.6 + rng.uniform(0, 0.4), 420.0 + ACTOR_MB, stall_at=gpu.t + 1.1)
    if seed % 2:
        gpu.drop_next = True  # one NVML read fails: that reading is simply missing
    with rec.phase("init_lora_check"):
        spend(0.41 + rng.uniform(0, 0.05))
    with rec.phase("init_rollout_server"):
        spend(8.4 + rng.uniform(0, 0.6), 420.0 + ACTOR_MB + ENGINE_MB)
    with rec.phase("init_checkpoint_manager"):
        spend(0.06 + rng.uniform(0, 0.02))
    with rec.phase("init_sleep"):
        slept = 420.0 + ACTOR_MB + OFFLOADED_MB if release else gpu.level
        spend(0.21 + rng.uniform(0, 0.05), slept)
    spend(0.02)

    awake = 420.0 + ACTOR_MB + ENGINE_MB
    # -- the cycle --------------------------------------------------------------
    actor_memory["initial_sync"] = [ACTOR_MB, ACTOR_MB]
    with rec.phase("initial_sync") as info:
        spend(0.04)
        if release and wakes_weights:
            wake(["weights"], "initial_sync", 0.09, gpu.level + 990.0)
            spend(0.55 + rng.uniform(0, 0.1))  # the base weights' first transfer
            wake(["kv_cache"], "initial_sync", 0.2, awake)
        elif release:
            spend(0.55 + rng.uniform(0, 0.1))
            wake(["kv_cache"], "initial_sync", 0.2, awake)
        else:
            spend(0.4 + rng.uniform(0, 0.1))
        spend(0.03)
        info["streamed_lora_sha256"] = LORA0
    spend(0.12 + rng.uniform(0, 0.03))
    actor_memory["rollout_before_update"] = [ACTOR_MB, ACTOR_MB]
    with rec.phase("rollout_before_update") as info:
        spend(0.19 + rng.uniform(0, 0.2), awake + 24.0)
        info["responses"] = 8
        info["global_steps"] = [0]
    spend(0.004)
    actor_memory["engine_sleep"] = [ACTOR_MB, ACTOR_MB]
    with rec.phase("engine_sleep") as info:
        if release:
            spend(0.23 + rng.uniform(0, 0.03), 420.0 + ACTOR_MB + OFFLOADED_MB)
        else:
            spend(0.006 + rng.uniform(0, 0.004))
        info["effective"] = release
    spend(0.006)
    actor_memory["score_before_update"] = [ACTOR_MB, ACTOR_MB]
    with rec.phase("score_before_update"):
        spend(0.07 + rng.uniform(0, 0.03))
    spend(0.02)
    actor_memory["update"] = [ACTOR_MB, ACTOR_UPDATED_MB]
    with rec.phase("update") as info:
        spend(0.5, gpu.level + 1850.0)  # activations and gradients on top
        spend(0.85 + rng.uniform(0, 0.05), gpu.level + 60.0)
        info["loss"] = round(1.8734 + rng.uniform(-0.002, 0.002), 4)
    after_update = gpu.level
    spend(0.05)
    actor_memory["sync"] = [ACTOR_UPDATED_MB, ACTOR_UPDATED_MB]
    with rec.phase("sync") as info:
        spend(0.004)
        if release and wakes_weights:
            wake(["weights"], "sync", 0.085 + rng.uniform(0, 0.01), gpu.level + 990.0)
        spend(0.006)
        actor_memory["weight_transfer"] = [ACTOR_UPDATED_MB, ACTOR_UPDATED_MB]
        with actor_rec.phase("weight_transfer"):
            # empty_cache before the transfer returns the update's cached activations.
            spend(0.16 + rng.uniform(0, 0.04), after_update - 1700.0 + (990.0 if release else 0))
        spend(0.008)
        if release:
            wake(["kv_cache"], "sync", 0.2 + rng.uniform(0, 0.02), awake + 884.0)
        spend(0.01)
        info["streamed_lora_sha256"] = LORA1
    spend(0.08)
    actor_memory["rollout_after_update"] = [ACTOR_UPDATED_MB, ACTOR_UPDATED_MB]
    with rec.phase("rollout_after_update") as info:
        spend(0.21 + rng.uniform(0, 0.2))
        info["responses"] = 8
        info["global_steps"] = [1]
    spend(0.03)
    actor_memory["score_after_update"] = [ACTOR_UPDATED_MB, ACTOR_UPDATED_MB]
    with rec.phase("score_after_update"):
        spend(0.2 + rng.uniform(0, 0.03))
    spend(0.3)

    init_steps: list[dict[str, Any]] = []
    starts: dict[str, float] = {}
    for ev in rec.init_events:
        if ev.kind == "start":
            starts[ev.phase] = ev.t_s
        else:
            init_steps.append({"name": ev.phase, "start_s": starts[ev.phase], "end_s": ev.t_s})
    events = [e.as_dict() for e in rec.events + actor_rec.events]
    return {
        "group": group,
        "free_cache_engine": release,
        "status": "completed",
        "failure": None,
        "config": config,
        "rollout_source_sha256": SOURCE,
        "initial_lora_sha256": LORA0,
        "updated_lora_sha256": LORA1,
        "update_completed": True,
        "sync_completed": True,
        "init_steps": init_steps,
        "events": events,
        "resume_calls": calls,
        "samples": [s.as_dict() for s in sampler.snapshot()],
        "actor_memory": actor_memory,
    }


def build(
    *,
    interval: float = INTERVAL,
    boundary: bool = BOUNDARY,
    engine: str = "vllm",
    seeds: tuple[int, int] = (3, 8),
    starts: tuple[float, float] = (48213.6071, 48297.2245),
) -> dict[str, Any]:
    """The example (the defaults), or another honest run of the same shape."""
    settings = RunSettings(
        model_path=MODEL, adapter_path="/var/lib/rlsys/adapters/initial", engine=engine
    )
    configs = {g: nested_from_overrides(ov) for g, ov in pair_overrides(settings).items()}
    kw: dict[str, Any] = {
        "interval": interval,
        "boundary": boundary,
        "wakes_weights": engine != "sglang",  # the runner serves LoRA as an adapter
    }
    records = {
        "release": simulate("release", starts[0], seeds[0], configs["release"], **kw),
        "retain": simulate("retain", starts[1], seeds[1], configs["retain"], **kw),
    }
    return assemble(
        run_label="rtx5070ti_verl_closure_realistic_v1",
        records=records,
        configs=configs,
        environment={
            "gpu_name": "NVIDIA GeForce RTX 5070 Ti",
            "gpu_uuid": "GPU-5e0c2a91-7d3b-4f6e-9a0b-2c8d41f3a7e6",
            "gpu_total_mb": TOTAL_MB,
            "driver": "575.64.03",
            "cuda": "12.8",
            "python": "3.12.3",
            "torch": "2.8.0",
            "verl": "0.9.1",
            "vllm": "0.11.0",
            "packages": {"transformers": "4.56.1", "peft": "0.17.1", "ray": "2.49.2"},
        },
        workload={
            "model": MODEL,
            "model_revision": REVISION,
            "lora_rank": settings.lora_rank,
            "lora_alpha": settings.lora_alpha,
            "update_kind": "sft",
            "update_count": 1,
            "prompt_count": settings.n_prompts,
            "rollout_source_sha256": SOURCE,
        },
        sampling={
            "interval_s": interval,
            "boundary_samples": boundary,
            "source": "nvml",
            "host_source": "psutil",
        },
        initial_lora_sha256=LORA0,
        created_at="2026-03-14T09:31:07+08:00",
    )


def render() -> str:
    return json.dumps(build(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        fresh = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        if not fresh:
            print(f"stale: {OUT.relative_to(ROOT)}")
        return 0 if fresh else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
