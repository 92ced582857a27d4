"""A tiny offline Qwen2 for smoke runs: no download, any GPU, seconds to build.

The weights are random (seeded); the tokenizer is a byte-level BPE trained
here on a small in-code corpus, wrapped as a fast tokenizer with a Qwen-style
chat template. vLLM loads tokenizers through AutoTokenizer, so it has to be a
real ``tokenizer.json`` fast tokenizer, not a custom Python class.

Needs torch, transformers and tokenizers; they are imported when building.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlsys_closure.optional import optional_module

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# The shape of Qwen's template: system/user/assistant turns framed by
# <|im_start|>role ... <|im_end|>, and a generation prompt that opens the
# assistant turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def _corpus() -> list[str]:
    # Arithmetic chat, like the runner's prompts, so common pieces get merges.
    lines = []
    for a in range(40):
        for b in range(0, 40, 7):
            lines.append(f"What is {a} plus {b}? The answer is {a + b}.")
            lines.append(f"Compute {a} times {b}. Answer: {a * b}")
    lines += [
        "You are a helpful assistant.",
        "system user assistant",
        "Please answer with a single number.",
    ]
    return lines


@dataclass(frozen=True)
class TinySpec:
    vocab_size: int = 512
    hidden_size: int = 128
    intermediate_size: int = 256
    num_hidden_layers: int = 2
    num_attention_heads: int = 2  # head_dim 64: supported by flash-attn and FlashInfer
    num_key_value_heads: int = 2
    max_position_embeddings: int = 2048
    seed: int = 0


def build_tokenizer(vocab_size: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    fast_cls = optional_module("transformers").PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    fast = fast_cls(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(out_dir: Path, spec: TinySpec | None = None) -> dict[str, Any]:
    """Write a tiny Qwen2 (model + tokenizer) to ``out_dir``; return its facts."""
    import torch

    transformers = optional_module("transformers")

    spec = spec or TinySpec()
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(spec.vocab_size)
    n_tokens = len(tokenizer)
    # Round the embedding up to a multiple of 64, as Qwen pads its own.
    vocab = max(spec.vocab_size, -(-n_tokens // 64) * 64)
    cfg = transformers.Qwen2Config(
        vocab_size=vocab,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    )
    torch.manual_seed(spec.seed)
    model = transformers.Qwen2ForCausalLM(cfg).to(torch.bfloat16)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    facts = {
        "path": str(out_dir),
        "vocab_size": vocab,
        "tokenizer_size": n_tokens,
        "parameters": sum(p.numel() for p in model.parameters()),
        "layers": spec.num_hidden_layers,
        "seed": spec.seed,
    }
    (out_dir / "rlsys_tiny_model.json").write_text(json.dumps(facts, indent=2) + "\n")
    return facts
