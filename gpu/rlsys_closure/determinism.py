"""What makes the two groups' single updates the same bytes.

The graded check ``updated_lora_match`` wants the release and retain groups'
updated adapters to hash equal: same initial adapter, same batch, same seed,
one step. That holds only if every kernel of the update is deterministic.
verl's ``full_determinism`` (set in both groups) is not enough by itself: it
calls ``torch.use_deterministic_algorithms(True, warn_only=True)``
(``workers/engine/utils.py:59``), so a non-deterministic kernel only warns.

When the two hashes still differ, the check fails (the run does not hide it):
the runner prints and records the L2 distance between the two updated
adapters (``updated_lora_l2_between_groups``); a distance that is tiny next to
the update's own size means kernel non-determinism, not a pairing error.

Imported by the driver (the environment) and by the actor worker (the
attention backend); torch is imported only inside the function.
"""

from __future__ import annotations

import os
from typing import Any

# Set in every Ray process of the group before CUDA starts, so the two groups'
# updates can be the same bytes (the graded updated_lora_match). verl's
# full_determinism calls torch.use_deterministic_algorithms(True, warn_only=True)
# (workers/engine/utils.py:59): a non-deterministic kernel then only warns.
# cuBLAS is deterministic only with a fixed workspace; flash-attn's backward only
# when asked (transformers reads FLASH_ATTENTION_DETERMINISTIC). The actor also
# runs sdpa on its math backend (deterministic_attention, below).
DETERMINISM_ENV: dict[str, str] = {
    "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
    "FLASH_ATTENTION_DETERMINISTIC": "1",
}


def deterministic_attention() -> dict[str, Any]:
    """Run sdpa on its math backend in this (the actor's) process, and say so.

    The flash and memory-efficient sdpa backwards accumulate with atomics, so two
    identical updates can differ in the last bits; under verl's ``warn_only``
    determinism they only warn. The math backend is matmuls and a softmax,
    deterministic with ``CUBLAS_WORKSPACE_CONFIG`` set. The actor's sequences are
    tens of tokens, so its O(L^2) memory is nothing. Both groups set the same
    flags: the pairing is unchanged. (flash-attn proper, if installed, reads
    ``FLASH_ATTENTION_DETERMINISTIC`` instead.)
    """
    import torch

    settings: dict[str, Any] = {}
    cuda = torch.backends.cuda
    for name in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
        fn = getattr(cuda, name, None)
        if fn is not None:
            fn(False)
            settings[name] = False
    cuda.enable_math_sdp(True)
    settings["enable_math_sdp"] = True
    settings["deterministic_algorithms"] = bool(torch.are_deterministic_algorithms_enabled())
    settings["deterministic_warn_only"] = bool(
        torch.is_deterministic_algorithms_warn_only_enabled()
    )
    # What this process's cuBLAS is told, read after verl's init: verl's own
    # enable_full_determinism writes ":16:8" over the runner's ":4096:8" (both are
    # cuBLAS's documented deterministic settings), so the record says which one won.
    settings["cublas_workspace_config"] = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    return settings
