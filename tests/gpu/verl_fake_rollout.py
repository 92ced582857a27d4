"""A stand-in for vLLM at verl's rollout boundary, for the CPU env ``verl-actor``.

Two pieces replace exactly what needs vLLM and a GPU:

* :class:`FakeServerAdapter`, the worker-side adapter (verl's is
  ``vllm_rollout.ServerAdapter``): ``resume`` wakes the server only when
  ``free_cache_engine`` is set, ``update_weights`` streams the tensors to the
  server and then sets its ``global_steps``, as verl's adapter does
  (``vllm_rollout.py:195-202``, ``:210-250``);
* :class:`FakeReplica` and :class:`FakeServer`, the replica and its server
  actor (verl's ``vLLMReplica`` / ``vLLMHttpServer``): sleep, wake_up, generate
  (deterministic tokens, ``extra_fields.global_steps``), clear_kv_cache.

Everything around them is verl's: the worker, its FSDP engine and
``update_weights``, the worker group, ``LLMServerManager`` with its load
balancer and client, and ``CheckpointEngineManager``. The server keeps a log of
every call and the hash of the LoRA tensors it received, so a test can check
what verl actually sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import ray
from rlsys_closure.lora import lora_tensors_sha256
from verl.single_controller.base.decorator import Dispatch, register
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutMode, RolloutReplica, TokenOutput

__all__ = [
    "FakeReplica",
    "FakeRolloutWorker",
    "FakeServer",
    "FakeServerAdapter",
    "install",
    "server_name",
]

ADAPTER_FQN = "verl_fake_rollout.FakeServerAdapter"


def server_name(replica_rank: int) -> str:
    return f"closure_fake_server_{replica_rank}"


class FakeServer:
    """What vLLMHttpServer does that the closure run observes, without an engine."""

    def __init__(self, free_cache_engine: bool) -> None:
        self.free_cache_engine = free_cache_engine
        self.global_steps: int | None = None
        self.asleep = False
        self.log: list[tuple[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        orphans = os.environ.get("RLSYS_TEST_ORPHAN_DIR")
        if orphans:
            # As vLLM's EngineCore: a non-daemon child with no parent-death check, here
            # in a session of its own, so neither Ray nor a process-group kill reaches it.
            proc = subprocess.Popen(
                [sys.executable, "-c", "import time\nwhile True: time.sleep(1)"],
                start_new_session=True,
            )
            Path(orphans, f"engine-{proc.pid}").write_text(str(proc.pid))

    async def sleep(self) -> None:
        self.log.append(("sleep", None))
        if self.free_cache_engine:  # vllm_async_server.py:853-862
            self.asleep = True

    async def wake_up(self, tags: list[str] | None = None) -> None:
        self.log.append(("wake_up", list(tags or [])))
        self.asleep = False

    async def receive_weights(
        self, named: list[tuple[str, Any]], peft_config: Any, base_sync_done: bool
    ) -> None:
        self.log.append(("update_weights", len(named)))
        self.received.append(
            {
                "sha256": lora_tensors_sha256(named) if named else None,
                "n_tensors": len(named),
                "peft": peft_config is not None,
                "base_sync_done": base_sync_done,
            }
        )

    async def clear_kv_cache(self) -> None:
        self.log.append(("clear_kv_cache", None))

    async def set_global_steps(self, global_steps: int) -> None:
        self.log.append(("set_global_steps", global_steps))
        self.global_steps = global_steps

    async def generate(
        self,
        request_id: str,
        *,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        **kwargs: Any,
    ) -> TokenOutput:
        if self.asleep:
            raise RuntimeError("generate on a sleeping engine")
        self.log.append(("generate", request_id))
        n = int(sampling_params.get("max_tokens") or 4)
        seed = hashlib.sha256(f"{prompt_ids}{sampling_params.get('seed')}".encode()).digest()
        tokens = [int(b) % 200 + 20 for b in seed[: min(n, 8)]]
        return TokenOutput(
            token_ids=tokens,
            stop_reason="completed",
            extra_fields={"global_steps": self.global_steps},
        )

    async def abort_all_requests(self, reject_request: bool = False) -> None:
        return None

    async def resume_generation(self) -> None:
        return None

    def calls(self) -> list[tuple[str, Any]]:
        return list(self.log)

    def weights_received(self) -> list[dict[str, Any]]:
        return list(self.received)


class FakeReplica(RolloutReplica):  # type: ignore[misc]
    """One replica with one fake server actor, named so the adapter finds it."""

    async def launch_servers(self) -> None:
        handle = (
            ray.remote(FakeServer)
            .options(
                name=server_name(self.replica_rank),
                num_cpus=0,
                max_concurrency=64,
            )
            .remote(bool(self.config.free_cache_engine))
        )
        self.servers = [handle]
        self._server_handle = handle
        self._server_address = f"fake://{server_name(self.replica_rank)}"

    async def init_hybrid(self, worker_group: Any) -> None:
        self.rollout_mode = RolloutMode.HYBRID
        self.workers = worker_group.workers[
            self.world_size * self.replica_rank : self.world_size * (self.replica_rank + 1)
        ]
        await self.launch_servers()


class FakeServerAdapter(BaseRollout):  # type: ignore[misc]
    """Worker side: verl's ServerAdapter contract, talking to :class:`FakeServer`."""

    def __init__(
        self, config: Any, model_config: Any, device_mesh: Any, replica_rank: int = 0, **kwargs: Any
    ) -> None:
        super().__init__(config, model_config, device_mesh)
        self.replica_rank = replica_rank
        self.sleep_level = 1
        self.server: Any = None  # set by a test that runs without Ray
        self.local_log: list[tuple[str, Any]] = []

    def _server(self) -> Any:
        if self.server is None:
            self.server = ray.get_actor(server_name(self.replica_rank))
        return self.server

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        server = self._server()
        fn = getattr(server, method)
        if hasattr(fn, "remote"):
            return await fn.remote(*args, **kwargs)
        return await fn(*args, **kwargs)

    async def resume(self, tags: list[str]) -> None:
        self.local_log.append(("resume", list(tags)))
        if self.config.free_cache_engine:  # vllm_rollout.py:195-202
            await self._call("wake_up", tags=tags)

    async def release(self) -> None:
        if self.config.free_cache_engine:
            await self._call("sleep")

    async def update_weights(
        self,
        weights: Any,
        global_steps: int | None = None,
        wire_format: str = "named_tensors",
        **kwargs: Any,
    ) -> None:
        named = [(name, t.detach().to("cpu").clone()) for name, t in weights]
        self.local_log.append(("update_weights", len(named)))
        await self._call(
            "receive_weights",
            named,
            kwargs.get("peft_config"),
            bool(kwargs.get("base_sync_done", True)),
        )
        await self._call("clear_kv_cache")
        if global_steps is not None:  # vllm_rollout.py:246-250
            await self._call("set_global_steps", global_steps)


def install() -> None:
    """Point verl's rollout registries at the fakes (in the calling process)."""
    from verl.workers.rollout import base
    from verl.workers.rollout.replica import RolloutReplicaRegistry

    base._ROLLOUT_REGISTRY[("vllm", "async")] = ADAPTER_FQN
    RolloutReplicaRegistry.register("vllm", lambda: FakeReplica)


def run_sync(coro: Any) -> Any:
    return asyncio.run(coro)


def _worker_base() -> type:
    from rlsys_closure.verl_worker import ClosureActorRolloutRefWorker

    return ClosureActorRolloutRefWorker


class FakeRolloutWorker(_worker_base()):  # type: ignore[misc]
    """The runner's worker, in a Ray worker process of the CPU env.

    Before verl's init_model: the fake rollout is registered in this process,
    and a gloo process group is made from the env verl's worker group set
    (verl would ask for "cpu:gloo,cpu:gloo", which torch refuses).
    """

    def _closure_nvml(self) -> Any:
        from verl_cpu_platform import CpuNvml

        return CpuNvml()

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)  # type: ignore[untyped-decorator]
    def init_model(self) -> Any:
        import torch.distributed as dist

        install()
        if not dist.is_initialized():
            dist.init_process_group("gloo")
        return super().init_model()
