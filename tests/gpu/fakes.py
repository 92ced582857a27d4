"""Stand-ins for NVML, the clock and a verl group, for CPU tests."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rlsys_closure.config import RunSettings, nested_from_overrides, pair_overrides
from rlsys_closure.events import EventRecorder
from rlsys_closure.sampler import MIB, MemorySampler

LORA0 = hashlib.sha256(b"initial adapter").hexdigest()
LORA1 = hashlib.sha256(b"updated adapter").hexdigest()
SOURCE = hashlib.sha256(b"frozen rollout source").hexdigest()


class FakeClock:
    """A monotonic clock the test moves; optionally ticks on every read."""

    def __init__(self, start: float = 100.0, tick: float = 0.0) -> None:
        self.t = start
        self.tick = tick

    def __call__(self) -> float:
        self.t += self.tick
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


@dataclass
class _Mem:
    used: int
    total: int


class FakeNvml:
    """NVML whose used memory is a function of the fake clock (MiB)."""

    def __init__(
        self, used_mb: Callable[[], float], total_mb: float = 16384.0, fail_reads: bool = False
    ) -> None:
        self.used_mb = used_mb
        self.total_mb = total_mb
        self.fail_reads = fail_reads
        self.inits = 0
        self.shutdowns = 0
        self.uuids = [
            "GPU-0a1b2c3d-0000-0000-0000-000000000000",
            "GPU-9f8e7d6c-1111-1111-1111-111111111111",
        ]

    def nvmlInit(self) -> None:
        self.inits += 1

    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return ("gpu", index)

    def nvmlDeviceGetCount(self) -> int:
        return len(self.uuids)

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        return self.uuids[handle[1]]

    def nvmlDeviceGetMemoryInfo(self, handle: Any) -> _Mem:
        if self.fail_reads:
            raise RuntimeError("NVML read failed")
        return _Mem(int(self.used_mb() * MIB), int(self.total_mb * MIB))


# Per phase: (duration in s, GPU MiB while inside). Shorter than 0.25 s on
# purpose for most phases, as in the chapter's run.
RELEASE_TIMELINE: list[tuple[str, float, float]] = [
    ("initial_sync", 1.13, 10086.0),
    ("rollout_before_update", 0.13, 9000.0),
    ("engine_sleep", 0.235, 7140.0),
    ("score_before_update", 0.08, 5000.0),
    ("update", 1.367, 6392.0),
    ("sync", 0.48, 9615.0),
    ("rollout_after_update", 0.22, 9600.0),
    ("score_after_update", 0.21, 9500.0),
]
RETAIN_TIMELINE: list[tuple[str, float, float]] = [
    ("initial_sync", 0.48, 10047.0),
    ("rollout_before_update", 0.32, 10046.0),
    ("engine_sleep", 0.02, 10046.0),
    ("score_before_update", 0.23, 10051.0),
    ("update", 1.345, 10489.0),
    ("sync", 0.32, 10471.0),
    ("rollout_after_update", 0.3, 10470.0),
    ("score_after_update", 0.18, 10469.0),
]


def simulate_group(
    group: str,
    *,
    interval_s: float = 0.25,
    boundary_samples: bool = True,
    fail_in: str | None = None,
    config: dict[str, Any] | None = None,
    updated_lora: str = LORA1,
) -> dict[str, Any]:
    """A raw group record as the driver writes it, from a simulated timeline.

    Uses the real EventRecorder and MemorySampler; time is a fake clock and
    periodic samples are taken by stepping it in interval_s increments.
    """
    clock = FakeClock(start=50.0 if group == "release" else 500.0)
    level = {"mb": 2000.0}
    nvml = FakeNvml(lambda: level["mb"])
    sampler = MemorySampler(
        nvml,
        interval_s=interval_s,
        clock=clock,
        host_probe=lambda: 8000.0,
        boundary_samples=boundary_samples,
    )
    rec = EventRecorder(clock=clock, hooks=[sampler.boundary_hook])
    sampler.open()
    next_tick = {"t": clock.t}
    resume_calls: list[dict[str, Any]] = []

    def spend(dt: float) -> None:
        # Advance time, taking the periodic samples a sampler thread would.
        end = clock.t + dt
        while next_tick["t"] <= end:
            clock.t = next_tick["t"]
            sampler.sample("periodic")
            next_tick["t"] += interval_s
        clock.t = end

    for step, dt in (("init_ray", 2.1), ("init_actor", 7.7), ("init_rollout_server", 8.6)):
        with rec.phase(step):
            spend(dt)
    timeline = RELEASE_TIMELINE if group == "release" else RETAIN_TIMELINE
    status, failure = "completed", None
    update_done = sync_done = False
    try:
        for phase, dt, mb in timeline:
            level["mb"] = mb
            if phase == fail_in:
                with rec.phase(phase):
                    spend(dt / 2)
                    raise RuntimeError(f"simulated failure in {phase}")
            if phase == "sync":
                rec.start("sync")
                spend(0.01)
                subs = [("weight_transfer", dt * 0.5)]
                if group == "release":
                    subs = [("resume_weights", dt * 0.2), *subs, ("resume_kv_cache", dt * 0.2)]
                for sub, sdt in subs:
                    if sub.startswith("resume"):
                        tags = ["weights"] if sub == "resume_weights" else ["kv_cache"]
                        resume_calls.append(
                            {"t_s": clock.t, "tags": tags, "detail": {"during": "sync"}}
                        )
                    with rec.phase(sub):
                        spend(sdt)
                spend(0.01)
                rec.end("sync")
                sync_done = True
            else:
                with rec.phase(phase) as info:
                    if phase == "initial_sync" and group == "release":
                        # verl's first update_weights wakes the slept engine as every
                        # sync does (engine_workers.py:778-782, 818-823).
                        for tags in (["weights"], ["kv_cache"]):
                            spend(dt / 3)
                            resume_calls.append(
                                {"t_s": clock.t, "tags": tags, "detail": {"during": phase}}
                            )
                    spend(dt / 3 if phase == "initial_sync" and group == "release" else dt)
                    if phase == "engine_sleep":
                        # As the driver records it: a no-op when the cache is retained.
                        info["effective"] = group == "release"
                if phase == "update":
                    update_done = True
            spend(0.001)
    except RuntimeError as exc:
        status = "failed"
        failure = {"type": "RuntimeError", "message": str(exc), "phase": fail_in}
    init_steps = []
    starts: dict[str, float] = {}
    for ev in rec.init_events:
        if ev.kind == "start":
            starts[ev.phase] = ev.t_s
        else:
            init_steps.append({"name": ev.phase, "start_s": starts[ev.phase], "end_s": ev.t_s})
    return {
        "group": group,
        "free_cache_engine": group == "release",
        "status": status,
        "failure": failure,
        "config": config,
        "rollout_source_sha256": SOURCE,
        "initial_lora_sha256": LORA0,
        "updated_lora_sha256": updated_lora if update_done else None,
        "update_completed": update_done,
        "sync_completed": sync_done,
        "init_steps": init_steps,
        "events": [e.as_dict() for e in rec.events],
        "resume_calls": resume_calls,
        "samples": [s.as_dict() for s in sampler.snapshot()],
        "actor_memory": {"update": [4100.0, 5200.0]},
    }


def paired_configs(tmp: str = "/tmp/x") -> dict[str, dict[str, Any]]:
    settings = RunSettings(model_path=f"{tmp}/model", adapter_path=f"{tmp}/adapter")
    return {g: nested_from_overrides(ov) for g, ov in pair_overrides(settings).items()}


def assemble_kwargs(**over: Any) -> dict[str, Any]:
    configs = paired_configs()
    kwargs: dict[str, Any] = {
        "run_label": "cpu_synthetic_pair_v1",
        "records": {g: simulate_group(g, config=configs[g]) for g in ("release", "retain")},
        "configs": configs,
        "environment": {
            "gpu_name": "FakeGPU",
            "driver": None,
            "cuda": None,
            "python": "3.11",
            "torch": None,
            "verl": "0.9.1",
            "vllm": None,
        },
        "workload": {
            "model": "tiny",
            "model_revision": None,
            "lora_rank": 16,
            "lora_alpha": 32,
            "update_kind": "sft",
            "update_count": 1,
            "prompt_count": 8,
            "rollout_source_sha256": SOURCE,
        },
        "sampling": {
            "interval_s": 0.25,
            "boundary_samples": True,
            "source": "nvml",
            "host_source": "psutil",
        },
        "initial_lora_sha256": LORA0,
    }
    kwargs.update(over)
    return kwargs
