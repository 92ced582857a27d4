"""The rollout engine's sleep/wake state machine, per engine, as verl 0.9.1 implements it.

Which engine a group ran is read from its config (``actor_rollout_ref.rollout.name``);
the engine chooses the machine. Sources (verl 0.9.1 wheel, paths inside ``verl/``):

- Both engines, released group (``free_cache_engine`` true): the driver sleeps the
  replicas before the first sync and after each generation
  (``checkpoint_engine/base.py:466-469``); every weight sync runs
  ``ActorRolloutRefWorker.update_weights`` (``workers/engine_workers.py:768-827``), which
  resumes ``["weights"]`` first when ``resume_weights`` holds (``:775-782``), then
  transfers the weights (``:786-806``), then after a barrier resumes ``["kv_cache"]``
  (``:818-823``). A retained group (``free_cache_engine`` false) makes neither call and
  its server's ``sleep`` returns at once (vLLM ``vllm_async_server.py:853-855``, SGLang
  ``async_sglang_server.py:504-506``).
- vLLM: ``resume_weights = free_cache_engine`` (``engine_workers.py:778-780``): its
  level-1 sleep unmaps the weights too, so each sync wakes ``weights`` then ``kv_cache``.
  The server can sleep only with ``enable_sleep_mode`` (passed to vLLM at
  ``vllm_async_server.py:337``; default true, ``workers/config/rollout.py:268``).
- SGLang: ``resume_weights = free_cache_engine and sleep_level != 1``
  (``engine_workers.py:775-777``), and ``sleep_level`` is 1 exactly when LoRA is served
  as an adapter (``workers/rollout/sglang_rollout/sglang_rollout.py:206``;
  ``sglang_rollout/utils.py:77-90``: lora rank > 0 and not ``model.lora.merge``). Its
  adapter-mode sleep releases only the KV cache (``async_sglang_server.py:511-514``), so
  each sync wakes ``kv_cache`` alone. SGLang always launches with its memory saver on
  (``async_sglang_server.py:319``): ``enable_sleep_mode`` does not apply.

An engine verl 0.9.1 has no such path for (any other name) gets no machine: the
grader then checks only the engine-independent rules (resumes only inside the syncs,
retain never resumes) and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_rlsys.resultfile.checks.identity import lookup, lookup_or

ENGINE_PATH = "actor_rollout_ref.rollout.name"
SLEEP_MODE_PATH = "actor_rollout_ref.rollout.enable_sleep_mode"
KNOWN_ENGINES: tuple[str, ...] = ("vllm", "sglang")
# The runner's engine when a config does not name one (verl requires the key:
# rollout.yaml:5 is "???"; the runner always writes it).
DEFAULT_ENGINE = "vllm"


@dataclass(frozen=True)
class EngineMachine:
    """What one released sync does: the resume tags, in order, and where that is written."""

    engine: str
    wakes: tuple[str, ...]  # e.g. ("weights", "kv_cache")
    needs_sleep_mode: bool  # vLLM sleeps only with enable_sleep_mode
    source: str

    @property
    def wakes_weights(self) -> bool:
        return "weights" in self.wakes


def engine_name(config: object) -> str:
    """The rollout engine a config names (lower-cased), DEFAULT_ENGINE when it names none."""
    return str(lookup_or(config, ENGINE_PATH, DEFAULT_ENGINE)).strip().lower()


def lora_as_adapter(config: Mapping[str, Any]) -> bool:
    """LoRA served as an adapter: lora rank > 0 and not merged (sglang_rollout/utils.py:77-90)."""
    rank = 0.0
    for dotted in ("actor_rollout_ref.model.lora_rank", "actor_rollout_ref.model.lora.rank"):
        present, value = lookup(config, dotted)
        if present and isinstance(value, (int, float)) and not isinstance(value, bool):
            rank = max(rank, float(value))
    _, merge = lookup(config, "actor_rollout_ref.model.lora.merge")
    return rank > 0 and merge is not True


def machine_for(config: object) -> EngineMachine | None:
    """The released sync's machine for the engine a config names; None for an unknown one."""
    engine = engine_name(config)
    if engine == "vllm":
        return EngineMachine(
            "vllm", ("weights", "kv_cache"), True, "verl workers/engine_workers.py:778-782, 818-823"
        )
    if engine == "sglang":
        adapter = isinstance(config, Mapping) and lora_as_adapter(config)
        if adapter:
            return EngineMachine(
                "sglang",
                ("kv_cache",),
                False,
                "verl workers/engine_workers.py:775-777, 818-823 (sleep_level 1 with a LoRA "
                "adapter, sglang_rollout.py:206)",
            )
        return EngineMachine(
            "sglang",
            ("weights", "kv_cache"),
            False,
            "verl workers/engine_workers.py:775-777, 818-823 (sleep_level 2 without an adapter)",
        )
    return None


def kv_cache_bytes(config: object, engine: str) -> float | None:
    """The KV cache size the engine's own kwargs fix in bytes
    (``rollout.engine_kwargs.<engine>.kv_cache_memory_bytes``, passed to vLLM at
    ``vllm_async_server.py:349``); vLLM then ignores ``gpu_memory_utilization``, so no
    rule that reads the share applies. None when the kwargs do not size it."""
    present, kwargs = lookup(config, f"actor_rollout_ref.rollout.engine_kwargs.{engine}")
    if not present or not isinstance(kwargs, Mapping):
        return None
    size = kwargs.get("kv_cache_memory_bytes")
    if size is None:
        return None
    # Set but no plain number ("4G" through some front end): sized all the same, and no
    # floor can be read from it.
    return float(size) if isinstance(size, int | float) and not isinstance(size, bool) else 0.0
