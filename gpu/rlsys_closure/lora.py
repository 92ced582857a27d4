"""The initial LoRA adapter and the hash both groups are compared by.

PEFT initialises ``lora_A`` randomly, so two groups that each build their own
adapter start from different weights. The runner builds one adapter, seeded,
on the CPU, saves it, and both groups load it (``lora_adapter_path``).

The hash is over tensors, not file bytes, so that the adapter file, the
in-memory PEFT model and the FSDP-wrapped actor can all be hashed the same
way: names are normalised (wrapper prefixes and the adapter name dropped),
sorted, and each tensor contributes its name, shape and float32 bytes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "ADAPTER_WEIGHTS",
    "adapter_l2_distance",
    "adapter_sha256",
    "create_initial_adapter",
    "lora_tensors_sha256",
    "normalize_lora_name",
    "save_lora_tensors",
]

ADAPTER_WEIGHTS = "adapter_model.safetensors"
_WRAPPERS = ("_fsdp_wrapped_module.", "_checkpoint_wrapped_module.", "_orig_mod.", "module.")


def normalize_lora_name(name: str) -> str:
    """Canonical name of a LoRA tensor, wherever it was read from.

    ``base_model.model.model.layers.0.q_proj.lora_A.default.weight`` (in memory)
    and ``base_model.model.model.layers.0.q_proj.lora_A.weight`` (in the file)
    both become ``model.layers.0.q_proj.lora_A.weight``.
    """
    for w in _WRAPPERS:
        name = name.replace(w, "")
    if name.startswith("base_model.model."):
        name = name[len("base_model.model.") :]
    # The adapter name PEFT inserts in memory (".default.") is absent in files.
    return re.sub(r"\.(lora_[AB]|lora_embedding_[AB])\.[^.]+\.weight$", r".\1.weight", name)


def lora_tensors_sha256(named: Iterable[tuple[str, Any]]) -> str:
    """sha256 over sorted (normalised name, shape, float32 bytes) of LoRA tensors."""
    import torch

    items: dict[str, Any] = {}
    for name, tensor in named:
        if "lora_" not in name:
            continue
        t = tensor
        if hasattr(t, "full_tensor"):  # a DTensor shard (FSDP2): gather it
            t = t.full_tensor()
        items[normalize_lora_name(name)] = t.detach().to("cpu", torch.float32).contiguous()
    if not items:
        raise ValueError("no LoRA tensors to hash")
    h = hashlib.sha256()
    for key in sorted(items):
        t = items[key]
        h.update(key.encode())
        h.update(repr(tuple(t.shape)).encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()


def save_lora_tensors(named: Iterable[tuple[str, Any]], out_dir: Path) -> str:
    """Write LoRA tensors as ``adapter_model.safetensors`` in ``out_dir``; return their hash.

    The names are kept as given (verl sends PEFT's file names), so the file
    hashes like the tensors: ``adapter_sha256(out_dir)`` equals the return value.
    """
    from safetensors.torch import save_file

    tensors = {name: t.detach().to("cpu").contiguous() for name, t in named if "lora_" in name}
    if not tensors:
        raise ValueError("no LoRA tensors to save")
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(out_dir / ADAPTER_WEIGHTS))
    return lora_tensors_sha256(tensors.items())


def adapter_sha256(adapter_dir: Path) -> str:
    from safetensors.torch import load_file

    path = adapter_dir / ADAPTER_WEIGHTS
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist")
    return lora_tensors_sha256(load_file(str(path)).items())


def adapter_l2_distance(dir_a: Path, dir_b: Path) -> float:
    """L2 norm of the difference of two adapters' LoRA tensors (float64).

    A diagnostic for two updates that should be identical: 0.0 when they are;
    an ulp-sized value points at nondeterministic kernels, a large one at
    different data or settings. Raises ValueError if the tensor sets differ.
    """
    import torch
    from safetensors.torch import load_file

    a = {normalize_lora_name(k): v for k, v in load_file(str(dir_a / ADAPTER_WEIGHTS)).items()}
    b = {normalize_lora_name(k): v for k, v in load_file(str(dir_b / ADAPTER_WEIGHTS)).items()}
    if a.keys() != b.keys():
        raise ValueError("the two adapters hold different LoRA tensors")
    total = 0.0
    for key in a:
        if a[key].shape != b[key].shape:
            raise ValueError(f"{key}: shapes {tuple(a[key].shape)} and {tuple(b[key].shape)}")
        diff = a[key].to(torch.float64) - b[key].to(torch.float64)
        total += float((diff * diff).sum())
    return float(total**0.5)


def create_initial_adapter(
    model_path: str,
    out_dir: Path,
    *,
    rank: int,
    alpha: int,
    target_modules: str,
    seed: int,
) -> str:
    """Build the seeded adapter on the CPU, save it, return its tensor hash."""
    import torch
    from peft import LoraConfig, get_peft_model, get_peft_model_state_dict
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32)
    torch.manual_seed(seed)
    cfg = LoraConfig(
        task_type="CAUSAL_LM",
        r=rank,
        lora_alpha=alpha,
        target_modules=target_modules,
        bias="none",
    )
    model = get_peft_model(base, cfg)
    in_memory = lora_tensors_sha256(get_peft_model_state_dict(model).items())
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    on_disk = adapter_sha256(out_dir)
    if on_disk != in_memory:
        raise RuntimeError("the saved adapter does not hash like the one in memory")
    return on_disk
