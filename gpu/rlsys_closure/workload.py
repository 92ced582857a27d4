"""The frozen rollout source, the scorer and the supervised batch.

Both groups read the same source: the prompts, their reference answers, the
sampling parameters and the per-request seeds, built here from one seed and
hashed. The supervised update trains on the reference answers, so both groups
update on the same tokens whatever the engine generated; the generated
rollouts are scored and recorded, which exercises generate and score without
letting sampling noise pick different training data for the two groups.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from typing import Any

SYSTEM_PROMPT = "You are a helpful assistant. Answer with a single number."


def build_rollout_source(
    n_prompts: int, seed: int, max_new_tokens: int, temperature: float = 0.0
) -> dict[str, Any]:
    """Synthetic arithmetic prompts with known answers, fixed by ``seed``."""
    if n_prompts < 1:
        raise ValueError("n_prompts must be at least 1")
    rng = random.Random(seed)
    prompts = []
    for i in range(n_prompts):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        answer = str(a + b)
        prompts.append(
            {
                "id": f"p{i:03d}",
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": f"What is {a} plus {b}?"},
                ],
                "ground_truth": answer,
                "reference": f"The answer is {answer}.",
                "seed": seed + i,
            }
        )
    return {
        "kind": "synthetic-arithmetic/1",
        "seed": seed,
        "prompts": prompts,
        "sampling_params": {
            "temperature": temperature,
            "top_p": 1.0,
            "max_tokens": max_new_tokens,
            "logprobs": False,
        },
    }


def rollout_source_sha256(source: dict[str, Any]) -> str:
    text = json.dumps(
        source, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_NUMBER = re.compile(r"-?\d+")


def score(response: str, ground_truth: str) -> float:
    """1.0 when the last integer in the response is the answer, else 0.0."""
    found = _NUMBER.findall(response)
    return 1.0 if found and found[-1] == ground_truth else 0.0


def sft_batch(
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    pad_id: int,
) -> dict[str, Any]:
    """Left-padded prompts + right-padded responses, as verl's actor expects.

    Returns torch tensors ``input_ids``, ``attention_mask``, ``position_ids``
    ([B, P+R]), ``prompts`` ([B, P]), ``responses`` and ``response_mask``
    ([B, R]). Position ids count real tokens only, so padding does not shift
    them.
    """
    import torch

    if len(prompt_ids) != len(response_ids) or not prompt_ids:
        raise ValueError("need the same, non-zero number of prompts and responses")
    if any(len(r) == 0 for r in response_ids) or any(len(p) == 0 for p in prompt_ids):
        raise ValueError("empty prompt or response")
    p_len = max(len(p) for p in prompt_ids)
    r_len = max(len(r) for r in response_ids)
    b = len(prompt_ids)
    prompts = torch.full((b, p_len), pad_id, dtype=torch.long)
    responses = torch.full((b, r_len), pad_id, dtype=torch.long)
    p_mask = torch.zeros((b, p_len), dtype=torch.long)
    r_mask = torch.zeros((b, r_len), dtype=torch.long)
    for i, (p, r) in enumerate(zip(prompt_ids, response_ids, strict=True)):
        prompts[i, p_len - len(p) :] = torch.tensor(list(p), dtype=torch.long)
        p_mask[i, p_len - len(p) :] = 1
        responses[i, : len(r)] = torch.tensor(list(r), dtype=torch.long)
        r_mask[i, : len(r)] = 1
    attention = torch.cat([p_mask, r_mask], dim=1)
    position = torch.clamp(torch.cumsum(attention, dim=1) - 1, min=0)
    return {
        "prompts": prompts,
        "responses": responses,
        "input_ids": torch.cat([prompts, responses], dim=1),
        "attention_mask": attention,
        "position_ids": position,
        "response_mask": r_mask,
    }


def nested_loss_mask(batch: dict[str, Any], offsets: Any = None) -> Any:
    """The loss mask verl's ``sft_loss`` wants in no-padding mode.

    A jagged nested tensor over each unpadded sequence: zeros on the prompt,
    the response mask on the response (``sft_loss`` shifts it by one itself).
    ``left_right_2_no_padding`` sets a dense [B, R] mask instead, which does
    not line up with the packed sequences.
    """
    import torch

    rows = []
    attn, rmask = batch["attention_mask"], batch["response_mask"]
    p_len = batch["prompts"].shape[1]
    for i in range(attn.shape[0]):
        n_prompt = int(attn[i, :p_len].sum())
        n_resp = int(attn[i, p_len:].sum())
        rows.append(
            torch.cat(
                [torch.zeros(n_prompt, dtype=torch.float32), rmask[i, :n_resp].to(torch.float32)]
            )
        )
    if offsets is None:
        return torch.nested.nested_tensor(rows, layout=torch.jagged)
    # Share the packed input_ids' offsets so the two line up by construction.
    return torch.nested.nested_tensor_from_jagged(torch.cat(rows), offsets=offsets)


def verl_sft_tensordict(batch: dict[str, Any], seed: int) -> Any:
    """``batch`` (from :func:`sft_batch`) as the TensorDict verl's update_actor takes.

    No-padding layout (``left_right_2_no_padding``), the jagged loss mask
    that ``sft_loss`` needs, and the non-tensor settings the training worker
    reads. Needs verl and tensordict.
    """
    import importlib

    tensor_dict = importlib.import_module("tensordict").TensorDict
    tu = importlib.import_module("verl.utils.tensordict_utils")
    padding = importlib.import_module("verl.workers.utils.padding")

    b = int(batch["input_ids"].shape[0])
    td = tensor_dict(
        {k: v for k, v in batch.items() if k not in ("prompts", "responses")}, batch_size=[b]
    )
    td = padding.left_right_2_no_padding(td)
    # left_right_2_no_padding leaves a dense [B, R] loss mask; sft_loss in
    # no-padding mode reads a jagged one over the whole unpadded sequence.
    td["loss_mask"] = nested_loss_mask(batch, offsets=td["input_ids"].offsets())
    tu.assign_non_tensor(
        td,
        temperature=1.0,
        mini_batch_size=b,
        global_batch_size=b,
        epochs=1,
        seed=seed,
        dataloader_kwargs={"shuffle": False},
        calculate_entropy=False,
        compute_loss=True,
    )
    return td
