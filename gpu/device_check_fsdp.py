"""The SFT update of gpu/device_check.py's determinism section, as a group's actor makes
it (verl 0.9.1's FSDP1 wrapping of a LoRA model), and the single-rank process group it and
the ``lora_fsdp`` section run in.  torch, transformers and peft are imported by the
functions only: ``device_check`` sets the determinism environment before torch loads.
"""

from __future__ import annotations

import functools
import os
import socket
from pathlib import Path
from typing import Any

__all__ = ["DETERMINISM_SWITCH", "SEED", "fsdp_update", "init_single_rank", "lora_linear"]

# The determinism section's update processes run with it on ("1") or off ("0").
DETERMINISM_SWITCH = "RLSYS_DEVICE_CHECK_DETERMINISM"
SEED = 1234


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lora_linear(m: Any) -> bool:
    # verl 0.9.1: one FSDP unit per LoRA Linear (utils/fsdp_utils.py:115-125), so
    # each flat parameter is uniformly trainable (use_orig_params=False).
    import torch

    return isinstance(m, torch.nn.Linear) and m.weight.requires_grad


def init_single_rank(backend: str) -> None:
    import datetime

    import torch.distributed as dist

    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(_free_port()),
        RANK="0",
        WORLD_SIZE="1",
        LOCAL_RANK="0",
    )
    dist.init_process_group(backend, rank=0, world_size=1, timeout=datetime.timedelta(seconds=60))


def fsdp_update(model_dir: Path, adapter_dir: Path, out_dir: Path) -> dict[str, Any]:
    """One SFT update as a group's actor makes it, in this process (a group of its own):
    FSDP1 over one rank (NCCL on a GPU, gloo on the CPU), one unit per LoRA Linear,
    ``use_orig_params=False``, verl's mixed precision (bf16 compute over fp32 master
    weights, fp32 reduce), AdamW on the flat parameters. The updated LoRA tensors, read
    under ``summon_full_params``, go to ``out_dir``; returns their hash and the settings."""
    import torch
    import torch.distributed as dist
    from peft import PeftModel
    from rlsys_closure.determinism import deterministic_attention
    from rlsys_closure.lora import save_lora_tensors
    from rlsys_closure.workload import build_rollout_source, sft_batch
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import MixedPrecision
    from torch.distributed.fsdp.wrap import lambda_auto_wrap_policy
    from transformers import AutoModelForCausalLM, AutoTokenizer

    deterministic = os.environ.get(DETERMINISM_SWITCH, "1") == "1"
    gpu = torch.cuda.is_available()
    device = torch.device("cuda", 0) if gpu else torch.device("cpu")
    if deterministic:  # verl's full_determinism first, then the actor's sdpa backend
        torch.use_deterministic_algorithms(True, warn_only=True)
        settings = deterministic_attention()
    else:
        torch.use_deterministic_algorithms(False)
        for name in ("enable_flash_sdp", "enable_mem_efficient_sdp"):
            getattr(torch.backends.cuda, name)(True)
        settings = {"deterministic_algorithms": False}
    settings["cublas_workspace_config"] = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    backend = "nccl" if gpu else "gloo"
    init_single_rank(backend)
    try:
        if gpu:
            torch.cuda.set_device(0)
        torch.manual_seed(SEED)
        tok = AutoTokenizer.from_pretrained(str(model_dir))
        base = AutoModelForCausalLM.from_pretrained(
            str(model_dir), dtype=torch.float32, attn_implementation="sdpa"
        )
        peft_model = PeftModel.from_pretrained(base, str(adapter_dir), is_trainable=True)
        model = FSDP(
            peft_model.to(device),
            auto_wrap_policy=functools.partial(lambda_auto_wrap_policy, lambda_fn=lora_linear),
            use_orig_params=False,
            mixed_precision=MixedPrecision(
                param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.float32
            ),
            device_id=device,
        )
        source = build_rollout_source(8, SEED, 16)
        prompts = []
        for p in source["prompts"]:
            encoded: Any = tok.apply_chat_template(
                p["messages"], add_generation_prompt=True, tokenize=True
            )
            # transformers 5 returns a BatchEncoding here (as the driver handles it).
            token_ids = encoded["input_ids"] if hasattr(encoded, "keys") else encoded
            prompts.append([int(x) for x in token_ids])
        responses = [
            [*tok.encode(p["reference"], add_special_tokens=False), tok.eos_token_id]
            for p in source["prompts"]
        ]
        batch = sft_batch(prompts, responses, pad_id=int(tok.pad_token_id or 0))
        ids = batch["input_ids"].to(device)
        labels = ids.clone()
        prompt_len = batch["prompts"].shape[1]
        labels[:, :prompt_len] = -100
        labels[:, prompt_len:][batch["response_mask"].to(device) == 0] = -100
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        # verl's actor runs its forward under bf16 autocast as well (dp_actor).
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
            out = model(
                input_ids=ids,
                attention_mask=batch["attention_mask"].to(device),
                position_ids=batch["position_ids"].to(device),
            )
        logits = out.logits.float()[:, :-1]
        loss: Any = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100
        )
        loss.backward()
        opt.step()
        with FSDP.summon_full_params(model, writeback=False):
            full = [
                (n, p.detach().cpu().clone()) for n, p in model.named_parameters() if "lora_" in n
            ]
        sha = save_lora_tensors(full, out_dir)
    finally:
        dist.destroy_process_group()
    return {"sha256": sha, "backend": backend, "loss": float(loss), "settings": settings}
