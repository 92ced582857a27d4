"""verl's actor/rollout worker with probes for the closure experiment.

Imported only inside a group's process and its Ray workers (it imports verl at
module level). The probes record, in the actor process and on the same
monotonic clock as the driver, what happens inside
``ActorRolloutRefWorker.update_weights`` (verl 0.9.1,
``workers/engine_workers.py:728-827``): the engine resume calls with their
tags, and the weight transfer. A driver cannot see these: the whole sync is a
single remote call from its side.

verl looks up ``self.rollout.resume`` (``:782``, ``:823``) and
``self.rollout.update_weights`` (``:804``) on every call, so instance
attributes set on the rollout adapter shadow the class's methods and verl's
own code calls through the probes unchanged. :data:`PROBED_ROLLOUT_METHODS`
names them; a test checks they are what verl's ``update_weights`` calls.

The LoRA hashes are taken from exactly the tensors verl sends to the rollout:
``engine.get_per_tensor_param(base_sync_done=True)`` (``:786-788``). Under
FSDP1 with ``use_orig_params: false`` the module's own ``named_parameters()``
are 1-D flat parameters, whose hash never equals the adapter file's.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from verl.single_controller.base.decorator import Dispatch, register
from verl.workers.engine_workers import ActorRolloutRefWorker

from rlsys_closure.determinism import deterministic_attention
from rlsys_closure.lora import lora_tensors_sha256, save_lora_tensors

MIB = 1024 * 1024
# The rollout adapter's methods verl's update_weights calls and the probes wrap.
PROBED_ROLLOUT_METHODS: tuple[str, ...] = ("resume", "update_weights")


def _tap(
    weights: Iterable[tuple[str, Any]], seen: list[tuple[str, Any]]
) -> Iterator[tuple[str, Any]]:
    # Pass-through: the rollout consumes the stream as before; only references
    # are kept here (hashing waits until the sync has ended, so it is not timed).
    for name, tensor in weights:
        seen.append((name, tensor))
        yield name, tensor


class ClosureActorRolloutRefWorker(ActorRolloutRefWorker):  # type: ignore[misc]
    """ActorRolloutRefWorker plus probe methods (all dispatched ONE_TO_ALL)."""

    def _closure_state(self) -> dict[str, Any]:
        state: dict[str, Any] | None = getattr(self, "_closure", None)
        if state is None:
            state = {
                "lock": threading.Lock(),
                "events": [],
                "resume_calls": [],
                "samples": [],
                "actor_memory": {},
                "label": None,
                "nvml": None,
                "handle": None,
                "installed": False,
                "streamed": {},
            }
            self._closure = state
        return state

    def _closure_sample(self, at: str) -> None:
        st = self._closure_state()
        nvml = st["nvml"]
        if nvml is None:
            return
        t = time.monotonic()
        try:
            used = float(nvml.nvmlDeviceGetMemoryInfo(st["handle"]).used) / MIB
        except Exception:
            return
        st["samples"].append(
            {"t_s": t, "gpu_used_mb": used, "host_used_mb": None, "reason": "boundary", "at": at}
        )

    def _closure_reserved_mb(self) -> float | None:
        try:
            import torch

            return float(torch.cuda.memory_reserved()) / MIB if torch.cuda.is_available() else None
        except Exception:
            return None

    def _closure_edge(self, phase: str, kind: str, **detail: Any) -> None:
        # Sub-phases are recorded only inside the cycle's sync; the initial
        # sync's are not phases of their own (each phase occurs once).
        st = self._closure_state()
        if st["label"] != "sync":
            return
        if kind == "start":
            t = time.monotonic()
            self._closure_sample(f"{phase}:start")
        else:
            self._closure_sample(f"{phase}:end")
            t = time.monotonic()
        mem = self._closure_reserved_mb()
        st["actor_memory"].setdefault(phase, [None, None])[0 if kind == "start" else 1] = mem
        ev: dict[str, Any] = {"t_s": t, "phase": phase, "kind": kind, "source": "actor"}
        if detail:
            ev["detail"] = detail
        with st["lock"]:
            st["events"].append(ev)

    def _closure_nvml(self) -> Any:
        """The NVML the actor-side boundary samples read (a CPU test substitutes one)."""
        import pynvml

        return pynvml

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)  # type: ignore[untyped-decorator]
    def closure_install_probes(self, device_index: int = 0) -> bool:
        st = self._closure_state()
        if st["installed"]:
            return True
        st["determinism"] = deterministic_attention()
        try:
            nvml = self._closure_nvml()
            nvml.nvmlInit()
            st["nvml"] = nvml
            st["handle"] = nvml.nvmlDeviceGetHandleByIndex(device_index)
        except Exception:
            st["nvml"] = None  # events still recorded; boundary samples come from the driver
        rollout = self.rollout
        original_resume = rollout.resume
        original_update = rollout.update_weights
        free_cache = bool(self.config.rollout.free_cache_engine)

        @functools.wraps(original_resume)
        async def resume(*args: Any, **kwargs: Any) -> Any:
            tags = kwargs.get("tags", args[0] if args else None)
            tag_list = [str(x) for x in (tags or ["weights", "kv_cache"])]
            phase = "resume_kv_cache" if tag_list == ["kv_cache"] else "resume_weights"
            with st["lock"]:
                st["resume_calls"].append(
                    {
                        "t_s": time.monotonic(),
                        "tags": tag_list,
                        "detail": {"during": st["label"], "free_cache_engine": free_cache},
                    }
                )
            self._closure_edge(phase, "start", tags=tag_list)
            try:
                return await original_resume(*args, **kwargs)
            finally:
                self._closure_edge(phase, "end")

        @functools.wraps(original_update)
        async def update_weights(weights: Any, *args: Any, **kwargs: Any) -> Any:
            # The adapter call (LoRA served as an adapter, base already loaded)
            # is the one whose tensors are hashed; a base sync is not tapped.
            adapter_call = (
                kwargs.get("peft_config") is not None
                and kwargs.get("base_sync_done", True) is True
                and not hasattr(weights, "__aiter__")
            )
            if adapter_call:
                seen: list[tuple[str, Any]] = []
                with st["lock"]:
                    st["streamed"][st["label"]] = seen
                weights = _tap(weights, seen)
            # Timed from here: verl gathered the LoRA tensors (get_per_tensor_param)
            # before calling update_weights, so the gather is not in weight_transfer.
            self._closure_edge("weight_transfer", "start")
            try:
                return await original_update(weights, *args, **kwargs)
            finally:
                self._closure_edge("weight_transfer", "end")

        # Instance attributes shadow the adapter's methods, so verl's own
        # update_weights calls through the probes without any change to verl.
        rollout.resume = resume
        rollout.update_weights = update_weights
        st["installed"] = True
        return True

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)  # type: ignore[untyped-decorator]
    def closure_set_label(self, label: str | None) -> None:
        self._closure_state()["label"] = label

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)  # type: ignore[untyped-decorator]
    def closure_drain(self) -> dict[str, Any]:
        st = self._closure_state()
        with st["lock"]:
            out = {
                "events": list(st["events"]),
                "resume_calls": list(st["resume_calls"]),
                "samples": list(st["samples"]),
                "actor_memory": dict(st["actor_memory"]),
                "determinism": st.get("determinism"),
            }
            st["events"].clear()
            st["resume_calls"].clear()
            st["samples"].clear()
            st["actor_memory"].clear()
        return out

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)  # type: ignore[untyped-decorator]
    def closure_actor_memory_mb(self) -> float | None:
        """What the actor's torch allocator holds (reserved), MiB."""
        return self._closure_reserved_mb()

    def _closure_lora_tensors(self) -> list[tuple[str, Any]]:
        engine = self.actor.engine
        params, peft_config = engine.get_per_tensor_param(
            layered_summon=getattr(self, "layered_summon", False), base_sync_done=True
        )
        if peft_config is None:
            raise RuntimeError("the actor has no LoRA adapter to hash (peft_config is None)")
        return [(name, t.detach().to("cpu").clone()) for name, t in params]

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)  # type: ignore[untyped-decorator]
    def closure_lora(self, save_dir: str | None = None) -> dict[str, Any]:
        """Hash (and optionally save) the LoRA tensors verl would send to the rollout.

        Same tensors as ``update_weights`` gathers, from verl's own
        ``get_per_tensor_param(base_sync_done=True)``; comparable with the
        adapter file's hash (:func:`rlsys_closure.lora.adapter_sha256`).
        """
        tensors = self._closure_lora_tensors()
        out: dict[str, Any] = {
            "sha256": lora_tensors_sha256(tensors),
            "n_tensors": len(tensors),
            "n_params": int(sum(t.numel() for _, t in tensors)),
        }
        if save_dir:
            save_lora_tensors(tensors, Path(save_dir))
            out["saved_to"] = save_dir
        return out

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)  # type: ignore[untyped-decorator]
    def closure_streamed_lora(self, label: str) -> dict[str, Any] | None:
        """Hash of the LoRA tensors streamed to the rollout during sync ``label``.

        None when no adapter update was streamed under that label. The
        references are dropped afterwards.
        """
        st = self._closure_state()
        with st["lock"]:
            seen = st["streamed"].pop(label, None)
        if seen is None:
            return None
        if not seen:
            return {"sha256": None, "n_tensors": 0}
        return {"sha256": lora_tensors_sha256(seen), "n_tensors": len(seen)}
