"""What a group's steps ask of verl and the model: verl's checkpoint manager, the
rollout's generate, the scores, one supervised update with verl's own sft_loss, its
metrics as plain floats, and the GPU's processes as NVML lists them.

Everything verl- and transformers-related is imported inside functions: this module must
import on a CPU box for the CLI and the tests.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

from rlsys_closure.sampler import MIB
from rlsys_closure.workload import score, sft_batch, verl_sft_tensordict


def first(result: Any) -> Any:
    # ONE_TO_ALL methods return one value per worker; there is one worker.
    return result[0] if isinstance(result, list) and result else result


def checkpoint_manager(cls: Any, cfg: Any, wg: Any, replicas: Any) -> Any:
    """verl's CheckpointEngineManager, built as verl's own trainer builds it.

    verl 0.9.1: ``CheckpointEngineManager(config, actor_wg, replicas)``
    (``checkpoint_engine/base.py:409-418``; ``trainer/ppo/v1/trainer_base.py:381-388``).
    No fallback: a signature change must fail here, loudly, before any phase.
    """
    from verl.utils.config import omega_conf_to_dataclass

    ce_cfg = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout.checkpoint_engine)
    if ce_cfg.backend != "naive":
        raise ValueError(
            f"checkpoint_engine.backend is {ce_cfg.backend!r}; the colocated "
            "closure run needs 'naive' (verl's sync trainer forces it too)"
        )
    return cls(config=ce_cfg, actor_wg=wg, replicas=list(replicas))


def require_global_steps(phase: str, steps: Sequence[Any], expected: int) -> None:
    if not steps or any(s != expected for s in steps):
        seen = sorted(set(map(repr, steps)))
        raise RuntimeError(
            f"{phase}: the rollout reported global_steps {seen}, "
            f"expected {expected} for every response"
        )


def gpu_processes(nvml: Any, index: int) -> tuple[list[dict[str, Any]] | None, str | None]:
    """Processes holding memory on the GPU as NVML lists them, or None and why not.

    NVML's process list raises in some virtualised setups, and inside a PID
    namespace (a container) it lists host pids, which never equal ours: the
    caller must treat "None" as unknown, and an empty match as weak evidence.
    """
    if nvml is None:
        return None, "no NVML"
    try:
        nvml.nvmlInit()
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        procs = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
        out = [
            {
                "pid": int(p.pid),
                "used_mb": (float(p.usedGpuMemory) / MIB if p.usedGpuMemory is not None else None),
            }
            for p in procs
        ]
        nvml.nvmlShutdown()
        return out, None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]


def load_tokenizer(model_path: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path)


def chat_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    out = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    # transformers 5 returns a BatchEncoding here.
    ids = out["input_ids"] if hasattr(out, "keys") else out
    return [int(x) for x in ids]


def generate(
    client: Any, prompt_ids: Sequence[list[int]], source: dict[str, Any], tag: str
) -> tuple[list[list[int]], list[Any]]:
    """Token ids of each response, and the global_steps each was served at."""

    async def one(i: int, ids: list[int]) -> tuple[list[int], Any]:
        params = dict(source["sampling_params"])
        params["seed"] = source["prompts"][i]["seed"]
        out = await client.generate(request_id=f"{tag}-{i}", prompt_ids=ids, sampling_params=params)
        extra = getattr(out, "extra_fields", None) or {}
        return [int(t) for t in out.token_ids], extra.get("global_steps")

    async def all_() -> list[tuple[list[int], Any]]:
        return list(await asyncio.gather(*(one(i, p) for i, p in enumerate(prompt_ids))))

    pairs = asyncio.run(all_())
    return [p[0] for p in pairs], [p[1] for p in pairs]


def scored(tokenizer: Any, source: dict[str, Any], outs: list[list[int]]) -> dict[str, Any]:
    texts = [tokenizer.decode(o, skip_special_tokens=True) for o in outs]
    scores = [score(t, p["ground_truth"]) for t, p in zip(texts, source["prompts"], strict=True)]
    return {
        "scores": scores,
        "mean_score": sum(scores) / len(scores),
        "response_tokens": [len(o) for o in outs],
        "samples": [
            {"id": p["id"], "response": t[:500]}
            for p, t in zip(source["prompts"], texts, strict=True)
        ][:4],
    }


def sft_update(
    wg: Any, tokenizer: Any, source: dict[str, Any], prompt_ids: list[list[int]], seed: int
) -> dict[str, Any]:
    """One supervised step with verl's own sft_loss, on the frozen references."""
    import functools

    from verl.workers.utils.losses import sft_loss

    eos = tokenizer.eos_token_id
    responses = [
        [*tokenizer.encode(p["reference"], add_special_tokens=False), eos]
        for p in source["prompts"]
    ]
    batch = sft_batch(prompt_ids, responses, pad_id=int(tokenizer.pad_token_id or 0))
    b = len(prompt_ids)
    td = verl_sft_tensordict(batch, seed)
    # What verl's SFT trainer does (trainer/sft_trainer.py:163).
    wg.set_loss_fn(functools.partial(sft_loss, config=None))
    out = first(wg.update_actor(td))
    # verl 0.9.1: update_actor returns a TensorDict whose "metrics" is a dict
    # (workers/engine_workers.py:336; the trainer reads it so, trainer_base.py:1861).
    metrics = out["metrics"]
    return {
        "n_sequences": b,
        "target_tokens": int(sum(len(r) for r in responses)),
        **plain_metrics(metrics),
    }


def plain_metrics(metrics: Any) -> dict[str, Any]:
    """verl's metrics as finite floats; a non-finite value (a skipped step's
    grad_norm) becomes None rather than breaking the record."""
    if not isinstance(metrics, dict):
        return {}
    out: dict[str, Any] = {}
    for k, v in metrics.items():
        if isinstance(v, list) and v:
            v = v[-1]
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        out[str(k)] = f if math.isfinite(f) else None
    return out
