"""The tiny offline Qwen2 and the shared initial LoRA adapter, on the CPU."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from rlsys_closure import cli
from rlsys_closure.lora import normalize_lora_name
from rlsys_closure.preflight import model_files_problem

# Found here, imported by the tests that use them: importing torch and transformers costs
# about 3 s of CPU, which the plain loop leaves to the tests marked slow.
pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(n) is None for n in ("torch", "transformers", "tokenizers")),
    reason="needs torch, transformers and tokenizers (requirements/ci-gpu-cpu.txt)",
)
# The model is built with torch and loaded with transformers (about 4 s of CPU with their
# imports); --run-slow, as CI runs it, runs these.
TORCH = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny") / "tiny-qwen2"
    assert cli.main(["tiny-model", str(out)]) == 0
    return out


@TORCH
def test_tiny_model_loads_and_runs_offline(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    import transformers

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert (tiny / "tokenizer.json").is_file()  # a fast tokenizer, which vLLM can load
    assert model_files_problem(tiny) is None  # preflight accepts it as --model-path
    tok: Any = transformers.AutoTokenizer.from_pretrained(str(tiny))
    model: Any = transformers.AutoModelForCausalLM.from_pretrained(str(tiny))
    assert model.config.model_type == "qwen2"
    assert model.config.num_hidden_layers == 2
    assert model.config.vocab_size >= len(tok) and model.config.vocab_size % 64 == 0
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    messages = [{"role": "user", "content": "What is 2 plus 3?"}]
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text == "<|im_start|>user\nWhat is 2 plus 3?<|im_end|>\n<|im_start|>assistant\n"
    ids = tok(text, return_tensors="pt")["input_ids"]
    # Byte-level BPE: any text round-trips.
    assert tok.decode(ids[0]) == text
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    assert logits.shape == (1, ids.shape[1], model.config.vocab_size)
    assert torch.isfinite(logits).all()
    generated = model.generate(ids, max_new_tokens=4, do_sample=False)
    assert generated.shape[1] <= ids.shape[1] + 4


@TORCH
def test_tiny_model_is_reproducible(tiny: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    assert cli.main(["tiny-model", str(again)]) == 0
    assert (again / "model.safetensors").read_bytes() == (tiny / "model.safetensors").read_bytes()
    facts = json.loads((tiny / "rlsys_tiny_model.json").read_text())
    assert facts["layers"] == 2 and facts["parameters"] > 0


@TORCH  # the command imports torch before it looks at the folder
def test_tiny_model_into_an_unwritable_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli.main(["tiny-model", str(blocker / "sub")]) == 1
    assert "cannot write" in capsys.readouterr().err


def test_lora_names_normalise_across_sources() -> None:
    mem = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight"
    fsdp = "_fsdp_wrapped_module." + mem
    disk = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight"
    assert {normalize_lora_name(n) for n in (mem, fsdp, disk)} == {
        "model.layers.0.self_attn.q_proj.lora_A.weight"
    }


@TORCH
def test_initial_adapter_is_shared_and_hashed(tiny: Path, tmp_path: Path) -> None:
    pytest.importorskip("peft", reason="peft is not installed")
    import torch
    import transformers
    from peft import PeftModel
    from rlsys_closure.lora import adapter_sha256, create_initial_adapter, lora_tensors_sha256

    kw = {"rank": 16, "alpha": 32, "target_modules": "all-linear"}
    a = create_initial_adapter(str(tiny), tmp_path / "a", seed=1234, **kw)  # type: ignore[arg-type]
    b = create_initial_adapter(str(tiny), tmp_path / "b", seed=1234, **kw)  # type: ignore[arg-type]
    c = create_initial_adapter(str(tiny), tmp_path / "c", seed=7, **kw)  # type: ignore[arg-type]
    assert a == b != c
    assert adapter_sha256(tmp_path / "a") == a
    # Loaded the way verl's actor loads lora_adapter_path, it hashes the same.
    base = transformers.AutoModelForCausalLM.from_pretrained(str(tiny), dtype=torch.float32)
    loaded = PeftModel.from_pretrained(base, str(tmp_path / "a"), is_trainable=True)
    assert lora_tensors_sha256(loaded.named_parameters()) == a
    # One optimiser step changes it.
    with torch.no_grad():
        for name, p in loaded.named_parameters():
            if "lora_B" in name:
                p.add_(0.01)
    assert lora_tensors_sha256(loaded.named_parameters()) != a
