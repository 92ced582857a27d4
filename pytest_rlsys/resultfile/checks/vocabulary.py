"""The vocabulary of a pt-verl-closure result: check, phase and group names, and the
rules' limits. Data only; every other module of the package reads it.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# The runner's own tables: its cycle, and the sub-phases inside the sync window (in this
# order when present), re-exported.
from pytest_rlsys.resultfile.runner_states import CYCLE
from pytest_rlsys.resultfile.runner_states import SYNC_SUB_PHASES as SYNC_SUB_PHASES

CHECK_NAMES: tuple[str, ...] = (
    "initial_lora_match",
    "updated_lora_match",
    "config_paired",
    "rollout_source_match",
    "update_and_sync",
    "phase_events",
    "resume_calls",
    "resource_sampling",
)

# The cycle with the sync's sub-phases after the sync. Must equal the enum of
# rlsys-common.v1.json#/$defs/phase_name (a test checks it).
_AFTER_SYNC = CYCLE.index("sync") + 1
PHASE_NAMES: tuple[str, ...] = (*CYCLE[:_AFTER_SYNC], *SYNC_SUB_PHASES, *CYCLE[_AFTER_SYNC:])

# The top-level phases every group runs, one after the other, in this order (the engine
# sleeps only where it is released).
REQUIRED_PHASE_ORDER: tuple[str, ...] = tuple(p for p in CYCLE if p != "engine_sleep")

# Phases required only when the engine is released (free_cache_engine true).
RELEASE_ONLY_PHASES: tuple[str, ...] = ("engine_sleep", "resume_weights", "resume_kv_cache")

# Required in both groups: the retained engine still receives the new weights.
ALWAYS_SUB_PHASES: tuple[str, ...] = ("weight_transfer",)

FREE_CACHE_ENGINE_PATH = "actor_rollout_ref.rollout.free_cache_engine"

GROUP_NAMES: tuple[str, ...] = ("release", "retain")
# Keys every resolved verl config holds (verl's config dataclasses give each a value)
# and the rules read: a config stripped of them would "agree" by absence.
REQUIRED_CONFIG_KEYS: tuple[str, ...] = (
    "actor_rollout_ref.model.path",
    "actor_rollout_ref.model.lora_rank",
    "actor_rollout_ref.actor.optim.lr",
    "actor_rollout_ref.rollout.name",
    "actor_rollout_ref.rollout.gpu_memory_utilization",
    "data.train_batch_size",
)


@dataclass(frozen=True)
class Rule:
    """One rule as data (docs/result-files.md lists the rows): its id, its source, what
    it reads, what it checks, and the function that returns its problems for one group
    (``problems(name, group, workload)``)."""

    id: str
    source: str
    reads: str
    check: str
    problems: Callable[[str, Mapping[str, Any], Mapping[str, Any]], list[str]]


@dataclass(frozen=True)
class EngineRange:
    """Where a configuration value must lie for the engine (or optimizer) to accept it:
    ``low`` (excluded when ``low_open``) up to ``high`` (included; None: no bound)."""

    path: str
    low: float
    low_open: bool
    high: float | None
    integer: bool
    source: str
    # Whose validation this row stands for (verl, vllm, torch): skipped where that
    # engine's own code judged the config (checks.configuration); "model" rows always
    # apply (the model section is judged by no engine's config object here).
    engine: str = "vllm"
    # Only for these rollout engines (empty: any): a vLLM-only limit must not judge an
    # SGLang run, whose own checks differ (SGLang takes a temperature above 2).
    rollout_engines: tuple[str, ...] = ()

    @property
    def accepted(self) -> str:
        """The accepted values, as a reader writes them."""
        kind = "an integer" if self.integer else "a number"
        only = f" ({'/'.join(self.rollout_engines)} rollouts)" if self.rollout_engines else ""
        if self.high is None:
            return f"{kind} {'>' if self.low_open else '>='} {self.low:g}{only}"
        return f"{kind} in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]{only}"

    def refuses(self, value: object) -> bool:
        """Whether the engine refuses ``value`` (None, "use the default", is not refused)."""
        if value is None:
            return False
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True
        if self.integer and not float(value).is_integer():
            return True
        low_ok = value > self.low if self.low_open else value >= self.low
        return not (low_ok and (self.high is None or value <= self.high))


def _range(
    bounds: str, source: str, engine: str = "vllm", only: tuple[str, ...] = ()
) -> EngineRange:
    """A row written ``"PATH (LOW, HIGH]"``: ``(`` excludes LOW, ``inf`` is no bound, and
    ``int`` before the interval accepts integers only."""
    path, _, interval = bounds.partition(" ")
    integer = interval.startswith("int ")
    interval = interval.removeprefix("int ")
    low, high = interval[1:-1].split(", ")
    top = None if high == "inf" else float(high)
    return EngineRange(path, float(low), interval[0] == "(", top, integer, source, engine, only)


# Configuration values the engines (and the optimizer) refuse: a run with another value
# could not have started (docs/result-files.md, config_paired).
ENGINE_RANGES: tuple[EngineRange, ...] = (
    _range(
        "actor_rollout_ref.rollout.gpu_memory_utilization (0, 1]",
        "vLLM `CacheConfig.gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)`, "
        "`vllm/config/cache.py:67` (vLLM 0.24.0); SGLang receives it as "
        "`mem_fraction_static` (verl `async_sglang_server.py:317`), a share of the card",
    ),
    _range(
        "actor_rollout_ref.actor.optim.lr [0, inf)",
        'torch `Adam.__init__`: `if not 0.0 <= lr: raise ValueError("Invalid learning rate")`, '
        "`torch/optim/adam.py:58` (torch 2.13; `AdamW(Adam)`, verl's default optimizer)",
        "torch",
    ),
    _range(
        "actor_rollout_ref.rollout.n int [1, inf)",
        'vLLM `SamplingParams._verify_args`: "n must be at least 1" (`vllm/sampling_params.py`)',
    ),
    _range(
        "actor_rollout_ref.rollout.temperature [0, inf)",
        'vLLM `SamplingParams._verify_args`: "temperature must be non-negative" '
        "(`vllm/sampling_params.py:523-528`; SGLang's `SamplingParams.verify` says the same; "
        "vLLM's upper bound is `_temperature` below)",
    ),
    _range(
        "actor_rollout_ref.rollout.repetition_penalty (0, inf)",
        'vLLM `SamplingParams._verify_args`: "repetition_penalty must be greater than zero" '
        "(`vllm/sampling_params.py:512-516`, vLLM 0.24.0)",
        only=("vllm",),
    ),
    _range(
        "actor_rollout_ref.rollout.max_num_seqs int [1, inf)",
        "vLLM `SchedulerConfig.max_num_seqs: int = Field(..., ge=1)` "
        "(`vllm/config/scheduler.py:63`, vLLM 0.24.0)",
        only=("vllm",),
    ),
    _range(
        "actor_rollout_ref.rollout.max_num_batched_tokens int [1, inf)",
        "vLLM `SchedulerConfig.max_num_batched_tokens: int = Field(..., ge=1)` "
        "(`vllm/config/scheduler.py:49`, vLLM 0.24.0)",
        only=("vllm",),
    ),
    _range(
        "actor_rollout_ref.model.lora_rank int [0, inf)",
        "PEFT `LoraConfig.r: int` and verl's `lora_rank > 0` switch (0: no LoRA); vLLM's "
        "`max_lora_rank` is an integer `MaxLoRARanks` (`vllm/config/lora.py:26`)",
        "model",  # the model section: no config object judged here holds it
    ),
    _range(
        "actor_rollout_ref.actor.optim.weight_decay [0, inf)",
        'torch `AdamW`/`Adam.__init__`: `if not 0.0 <= weight_decay: raise ValueError("Invalid '
        'weight_decay value")` (`torch/optim/adam.py`, torch 2.13); verl passes it to every '
        "optimizer (`build_optimizer`, `workers/config/optimizer.py:326-329`)",
        "torch",
    ),
    _range(
        "actor_rollout_ref.rollout.top_k int [-1, inf)",
        'vLLM `SamplingParams._verify_args`: "top_k must be 0 (disable), or at least 1" '
        '(-1 quietly accepted as disabled) and "top_k must be an integer" '
        "(`vllm/sampling_params.py`)",
    ),
    _range(
        "actor_rollout_ref.rollout.top_p (0, 1]",
        'vLLM `SamplingParams._verify_args`: "top_p must be in (0, 1]" (`vllm/sampling_params.py`)',
    ),
    _range(
        "actor_rollout_ref.rollout.response_length int [1, inf)",
        "verl's `RolloutConfig.response_length` (`workers/config/rollout.py`) is vLLM's "
        '`max_tokens`; vLLM `SamplingParams._verify_args`: "max_tokens must be at least 1" '
        "(`vllm/sampling_params.py`)",
    ),
    _range(
        "data.max_response_length int [1, inf)",
        "verl passes it as `rollout.response_length` (`trainer/config/rollout/rollout.yaml`), "
        "vLLM's `max_tokens`; vLLM `SamplingParams._verify_args`: \"max_tokens must be at "
        'least 1" (`vllm/sampling_params.py`)',
    ),
)

# The rollout's parallel sizes must divide the worker world (docs/result-files.md,
# config_paired): the world's GPUs, then tensor, data and pipeline parallel sizes (an
# absent one is 1; the rule needs n_gpus_per_node and tensor_model_parallel_size recorded).
PARALLEL_WORLD_PATHS = ("trainer.n_gpus_per_node", "trainer.nnodes")
PARALLEL_SIZE_PATHS = (
    "actor_rollout_ref.rollout.tensor_model_parallel_size",
    "actor_rollout_ref.rollout.data_parallel_size",
    "actor_rollout_ref.rollout.pipeline_model_parallel_size",
)
PARALLEL_SOURCE = (
    "verl `engine_workers.py`: `assert self.world_size % infer_world_size == 0` with "
    "`infer_world_size` = tensor x data x pipeline parallel size, "
    "`verl/workers/engine_workers.py:507-513` (volcengine/verl b178a3cd5); the same "
    "assert in `fsdp_workers.py:622-628`"
)

EXPECTED_FREE_CACHE_ENGINE: dict[str, bool] = {"release": True, "retain": False}

# Times are written as floats in seconds; allow for rounding when a writer
# stores a difference it computed itself (duration_s) rather than ours.
TIME_TOLERANCE_S = 1e-6
MEMORY_TOLERANCE_MB = 1e-6
MAX_LISTED = 8

# Top-level phases in the order a group runs them; none may overlap the next: the phase
# names but the sync's own sub-phases.
TOP_LEVEL_ORDER: tuple[str, ...] = tuple(p for p in PHASE_NAMES if p not in SYNC_SUB_PHASES)

RESUME_PHASES: tuple[str, ...] = ("resume_weights", "resume_kv_cache")

# Phases inside which a released engine may be resumed.
RESUME_ALLOWED_IN: tuple[str, ...] = ("initial_sync", "sync")

# Sampling coverage: the largest gap between periodic samples over the run is
# at most GAP_FACTOR x interval_s + STALL_SLACK_S: the shipped child sampler's gap is one
# interval (the next tick) + the host's stall + one interval per dropped reading (two
# allowed). The stall: at most 0.12 s for the child under load
# (benchmarks/bench_sampler_gap.py), 0.72 s for the thread it falls back to
# (verl-0.9.1-first-run-review.md); 1.0 s is that with 40 % margin (docs/result-files.md).
# The series' own schedule rules are in checks/series.py. With boundary samples, one lies
# within BOUNDARY_REACH x interval_s of each phase's start
# and end (the sampler takes it just after a start and just before an end).
GAP_FACTOR = 3.0
STALL_SLACK_S = 1.0
# The runner samples every 0.1-1 s; one reading in 10 s cannot see a phase (most last
# well under a second), and 250 "s" is a file written in milliseconds.
MAX_INTERVAL_S = 10.0
BOUNDARY_REACH = 0.5

# The probe logs a resume call just before it opens the resume sub-phase, and the
# actor (which logs calls) and the driver (which logs the syncs) are two processes:
# a call may lie this far outside its window. The machine's own granularity is
# Python's 5 ms thread-switch interval (sys.getswitchinterval()); 50 ms is ten of
# them, still far below any phase (the shortest sub-phase takes tens of ms).
RESUME_LEAD_S = 0.05

# Physical ceilings used when the file does not record a total: no GPU has
# 1 TiB of memory, and the largest one-GPU hosts the runner targets hold 2 TiB (an
# 8-GPU DGX H200 has 2 TiB); a reading above them is a unit slip (KiB or bytes
# written as MiB) or an invented number.
GPU_CEILING_MB = float(2**20)
HOST_CEILING_MB = float(2**21)

# A retained engine that "sleeps" frees its KV cache: whole-GPU memory falling
# by more than this much (and this fraction) across engine_sleep says it slept.
SLEEP_DROP_MB = 512.0
SLEEP_DROP_FRACTION = 0.1
# Whole-GPU memory inside a phase is at least this share of the actor's memory at its edges.
HOLLOW_FRACTION = 0.5
# The actor's memory holds at least this share of its model's bf16 weights.
MODEL_FIT_FRACTION = 0.9

# Memory that must move, or must not (resume_calls). A released engine's sleep frees
# its KV cache (vLLM level 1 also offloads the weights, level 2 discards them): at least
# RELEASE_FREE_MB, and at least RELEASE_FREE_SHARE of its share (gpu_memory_utilization x
# the card): the KV cache is what the share leaves after weights and activations.
RELEASE_FREE_MB = 256.0
RELEASE_FREE_SHARE = 0.25
# A retained engine keeps weights and KV cache resident: whole-GPU memory after the
# initial sync never falls more than this (and this fraction) below its level before
# the update (the actor's caching allocator only grows across the update).
RETAIN_SHED_MB = 1024.0
RETAIN_SHED_FRACTION = 0.25
# vLLM sizes its KV cache so the engine fills gpu_memory_utilization x the card's
# memory, and verl passes the same fraction to SGLang as mem_fraction_static (weights and
# KV pool; async_sglang_server.py:317): a retained engine's card shows at least this
# share of that.
RETAIN_UTILIZATION_FLOOR = 0.8
UTILIZATION_PATH = "actor_rollout_ref.rollout.gpu_memory_utilization"
# ... and no more than its share: outside gpu_memory_utilization x the card, the card
# holds the actor (its recorded memory), one CUDA context per process and allocator
# slack (RETAIN_SLACK_*), and CUDA graphs unless enforce_eager (CUDA_GRAPH_SHARE).
RETAIN_SLACK_MB = 2048.0
RETAIN_SLACK_SHARE = 0.10
CUDA_GRAPH_SHARE = 0.10
ENFORCE_EAGER_PATH = "actor_rollout_ref.rollout.enforce_eager"
DEFAULT_UTILIZATION = 0.5  # verl trainer/config/rollout/rollout.yaml:46
# created_at: not later than the grader's clock plus this skew, and the run it
# closes (created_at minus the run's length) not before verl existed.
CLOCK_SKEW_S = 3600.0
EARLIEST_RUN = _dt.datetime(2024, 1, 1, tzinfo=_dt.UTC)
# verl (major, minor) -> a date before which no such release existed: on 2026-01-29
# verl's main branch still read 0.8.0.dev (volcengine/verl b178a3cd5,
# verl/version/version; research/verl-0.9.1.md), so 0.9 came later.
VERL_NOT_BEFORE: dict[tuple[int, int], _dt.datetime] = {
    (0, 9): _dt.datetime(2026, 1, 29, tzinfo=_dt.UTC)
}

# Keys system_decision.measurements may hold: the grader re-derives each.
MEASUREMENT_KEYS: tuple[str, ...] = GROUP_NAMES

Doc = Mapping[str, Any]


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome and a one-line explanation naming the evidence."""

    passed: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """The form stored in ``system_decision.checks.<name>``."""
        return {"passed": self.passed, "detail": self.detail}
