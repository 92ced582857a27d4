"""The verl configuration of each group, built so the pair differs in one key.

Both groups are built from one :class:`RunSettings` by the same function; the
only argument that differs is ``free_cache_engine``. :func:`check_paired`
diffs the two results key by key and is run on the CPU before any GPU work.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pytest_rlsys.resultfile.checks import FREE_CACHE_ENGINE_PATH, config_diff, config_sha256
from rlsys_closure.optional import optional_module

# One copy of each rule: the grader's flag path, config hash and diff are the
# runner's, so the runner never pairs or hashes a config differently.
FLAG_KEY = FREE_CACHE_ENGINE_PATH
__all__ = [
    "FLAG_KEY",
    "GROUPS",
    "RunSettings",
    "check_paired",
    "compose_pair",
    "compose_verl_config",
    "config_diff",
    "config_sha256",
    "group_overrides",
    "nested_from_overrides",
    "optional_module",
    "overrides_to_dict",
    "pair_overrides",
    "resolved_dict",
    "settings_from_json",
    "verl_config_dir",
]
GROUPS: dict[str, bool] = {"release": True, "retain": False}


@dataclass(frozen=True)
class RunSettings:
    """Everything both groups share. Change these, never one group alone."""

    model_path: str
    adapter_path: str
    engine: str = "vllm"
    lora_rank: int = 16
    lora_alpha: int = 32
    target_modules: str = "all-linear"
    gpu_memory_utilization: float = 0.4
    # Eager mode: CUDA graphs are not freed by sleep and would sit in both
    # groups' floor; eager also starts faster. Same value in both groups.
    enforce_eager: bool = True
    attn_implementation: str | None = None  # "sdpa" when flash-attn is absent
    n_prompts: int = 8
    max_prompt_length: int = 256
    max_response_length: int = 64
    micro_batch_size: int = 4
    lr: float = 1e-4
    seed: int = 1234
    extra_overrides: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["extra_overrides"] = list(self.extra_overrides)
        return d


def _fmt(value: object) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite setting {value!r}")
        return repr(value)
    return str(value)


def group_overrides(settings: RunSettings, free_cache_engine: bool) -> list[str]:
    """Hydra overrides of verl's ``ppo_trainer`` config for one group."""
    s = settings
    pairs: list[tuple[str, object]] = [
        ("actor_rollout_ref.model.path", s.model_path),
        ("actor_rollout_ref.model.lora_rank", s.lora_rank),
        ("actor_rollout_ref.model.lora_alpha", s.lora_alpha),
        ("actor_rollout_ref.model.target_modules", s.target_modules),
        # One adapter made once on the CPU and loaded by both groups, so their
        # initial LoRA weights are the same bytes (PEFT's init is random).
        ("actor_rollout_ref.model.lora_adapter_path", s.adapter_path),
        ("actor_rollout_ref.rollout.name", s.engine),
        ("actor_rollout_ref.rollout.tensor_model_parallel_size", 1),
        ("actor_rollout_ref.rollout.gpu_memory_utilization", s.gpu_memory_utilization),
        # vLLM reads the base weights from disk; only the adapter is synced.
        ("actor_rollout_ref.rollout.load_format", "safetensors"),
        ("actor_rollout_ref.rollout.enforce_eager", s.enforce_eager),
        ("actor_rollout_ref.rollout.n", 1),
        ("actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu", s.micro_batch_size),
        ("actor_rollout_ref.rollout.checkpoint_engine.backend", "naive"),
        ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", s.micro_batch_size),
        ("actor_rollout_ref.actor.ppo_mini_batch_size", s.n_prompts),
        ("actor_rollout_ref.actor.optim.lr", s.lr),
        ("actor_rollout_ref.actor.optim.total_training_steps", 1),
        ("actor_rollout_ref.actor.use_torch_compile", False),
        # Deterministic kernels in both groups (verl's enable_full_determinism,
        # workers/engine/utils.py:31-63): the update runs under bf16 autocast,
        # and without it the two updated adapters may differ by an ulp.
        ("actor_rollout_ref.actor.fsdp_config.full_determinism", True),
        ("data.train_batch_size", s.n_prompts),
        ("data.max_prompt_length", s.max_prompt_length),
        ("data.max_response_length", s.max_response_length),
        ("trainer.n_gpus_per_node", 1),
        ("trainer.nnodes", 1),
        ("trainer.logger", "[console]"),
        (FLAG_KEY, free_cache_engine),
    ]
    out = [f"{k}={_fmt(v)}" for k, v in pairs]
    # Not in rollout.yaml, hence '+'. Pinned True in both: sleep mode must be
    # available for the release group, and must not differ between groups.
    out.append("+actor_rollout_ref.rollout.enable_sleep_mode=True")
    if s.attn_implementation:
        out.append(
            f"+actor_rollout_ref.model.override_config.attn_implementation={s.attn_implementation}"
        )
    out.extend(s.extra_overrides)
    return out


def pair_overrides(settings: RunSettings) -> dict[str, list[str]]:
    return {g: group_overrides(settings, flag) for g, flag in GROUPS.items()}


def overrides_to_dict(overrides: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"override without '=': {item!r}")
        out[key.lstrip("+~")] = value
    return out


def _typed(value: str) -> Any:
    """Hydra-like reading of an override value: bools, ints, floats, else text."""
    if value in ("True", "true"):
        return True
    if value in ("False", "false"):
        return False
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def nested_from_overrides(overrides: Sequence[str]) -> dict[str, Any]:
    """The overrides as a nested, typed mapping in verl's layout.

    Not verl's resolved config (that needs verl); the runner's record of what
    it set, and what the CPU tests pair without verl installed.
    """
    root: dict[str, Any] = {}
    for key, value in overrides_to_dict(overrides).items():
        node = root
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = _typed(value)
    return root


def check_paired(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Problems with a pair of configs; empty when they differ only in the flag."""
    diff = config_diff(a, b)
    problems = [f"{k} differs" for k in diff if k != FLAG_KEY]
    if FLAG_KEY not in diff:
        problems.append(f"{FLAG_KEY} does not differ")
    return problems


def verl_config_dir() -> str:
    import verl

    return os.path.join(os.path.dirname(verl.__file__), "trainer", "config")


def compose_verl_config(overrides: Sequence[str]) -> Any:
    """verl's real ``ppo_trainer`` config with the overrides (needs verl + hydra)."""
    hydra = optional_module("hydra")
    global_hydra = optional_module("hydra.core.global_hydra").GlobalHydra.instance()
    # A second composition in one process (the pair check does two) needs the
    # global Hydra state cleared first.
    if global_hydra.is_initialized():
        global_hydra.clear()
    with hydra.initialize_config_dir(config_dir=verl_config_dir(), version_base=None):
        return hydra.compose(config_name="ppo_trainer", overrides=list(overrides))


def resolved_dict(cfg: Any) -> dict[str, Any]:
    """A composed config as plain JSON-able data, interpolations resolved."""
    omegaconf = optional_module("omegaconf")
    data = omegaconf.OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    if not isinstance(data, dict):
        raise TypeError("config did not resolve to a mapping")
    return _jsonable(data)  # type: ignore[no-any-return]


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)  # JSON has no inf/nan; keep it visible rather than drop it
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def compose_pair(settings: RunSettings) -> dict[str, dict[str, Any]]:
    """Both groups' resolved verl configs, checked to differ only in the flag."""
    out = {g: resolved_dict(compose_verl_config(ov)) for g, ov in pair_overrides(settings).items()}
    problems = check_paired(out["release"], out["retain"])
    if problems:
        raise ValueError("configs are not paired: " + "; ".join(problems))
    return out


def settings_from_json(path: Path) -> RunSettings:
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["extra_overrides"] = tuple(raw.get("extra_overrides", ()))
    return RunSettings(**raw)
