"""Configuration values the engines refuse (config_paired): a run with such a value could
not have started.

Two judges, one set of rules (docs/result-files.md, *A value the engine itself refuses*):

- **the engines' own code** (``checks.engines_own``): where verl, vLLM or torch is
  importable (the lab box; ``tox -e verl-config``), the recorded values are handed to their
  own config objects and constructors (verl's ``RolloutConfig`` and
  ``FSDPOptimizerConfig``, verl's ``build_optimizer`` with torch's optimizer, vLLM's
  ``SamplingParams``, ``CacheConfig`` and ``MaxLoRARanks``), and their validation speaks;
- **the built-in tables** below, read from those engines' sources (the release each row
  names), for a machine without them, and for every engine the first judge lacks.

Each table rule names the engine whose validation it stands for, so a rule is applied
only where that engine's own code did not judge.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_rlsys.resultfile.checks import engines_own
from pytest_rlsys.resultfile.checks.identity import lookup, lookup_or, model_identity
from pytest_rlsys.resultfile.checks.machine import engine_name
from pytest_rlsys.resultfile.checks.vocabulary import ENGINE_RANGES

# The releases the tables were read from (their sources are cited row by row).
TABLE_RELEASES: dict[str, str] = {"verl": "0.9.1", "vllm": "0.24.0", "torch": "2.13.0"}
SHOWN = {"verl": "verl", "vllm": "vLLM", "torch": "torch"}

ROLLOUT = "actor_rollout_ref.rollout"
OPTIM = "actor_rollout_ref.actor.optim"


@dataclass(frozen=True)
class ChoiceRule:
    """A value that must be one of a fixed set (a string the engine matches exactly)."""

    path: str
    engine: str
    choices: tuple[str, ...]
    source: str
    # Only where this other path holds this value (None: always).
    when: tuple[str, object] | None = None

    @property
    def accepted(self) -> str:
        return "one of " + ", ".join(f"`{c}`" for c in self.choices)


# torch.optim's optimizer classes (torch 2.13, ``torch/optim/__init__.py`` ``__all__``):
# verl's build_optimizer does ``getattr(importlib.import_module(optimizer_impl), optimizer)``.
TORCH_OPTIMIZERS = (
    "ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon",
    "NAdam", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
)  # fmt: skip

CHOICE_RULES: tuple[ChoiceRule, ...] = (
    ChoiceRule(
        f"{ROLLOUT}.mode",
        "verl",
        ("async",),
        "verl `RolloutConfig.__post_init__` (`workers/config/rollout.py:278-291`) raises on "
        "`sync` and only warns on any other value, but the worker then asks "
        "`get_rollout_class(name, mode)` (`workers/rollout/base.py:89-106`), whose registry "
        "holds only `async`: no run with another mode gets past its workers' start",
    ),
    ChoiceRule(
        f"{OPTIM}.lr_scheduler_type",
        "verl",
        ("constant", "cosine"),
        "verl `FSDPOptimizerConfig.__post_init__`: `assert self.lr_scheduler_type in "
        '["constant", "cosine"]` (`workers/config/optimizer.py:116-124`)',
    ),
    ChoiceRule(
        f"{OPTIM}.warmup_style",
        "verl",
        ("constant", "cosine"),
        "verl `FSDPOptimizerConfig.__post_init__`: `assert self.warmup_style in "
        '["constant", "cosine"]` (`workers/config/optimizer.py:117-118`)',
    ),
    ChoiceRule(
        f"{OPTIM}.optimizer",
        "torch",
        TORCH_OPTIMIZERS,
        "verl `build_optimizer` (`workers/config/optimizer.py:298-353`) takes the class "
        "`getattr(torch.optim, optimizer)`; torch 2.13 `torch/optim/__init__.py` `__all__`",
        when=(f"{OPTIM}.optimizer_impl", "torch.optim"),
    ),
)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _lora_rank(config: Mapping[str, Any], engine: str) -> list[str]:
    """verl ``get_vllm_max_lora_rank`` (``workers/rollout/vllm_rollout/utils.py:83-104``):
    a rank above the largest of vLLM's ``MaxLoRARanks`` (512, ``vllm/config/lora.py:26``)
    raises ValueError."""
    rank = _number(lookup(config, "actor_rollout_ref.model.lora_rank")[1])
    if engine != "vllm" or rank is None or rank <= 512:
        return []
    return [
        f"sets actor_rollout_ref.model.lora_rank={rank:g}: verl's get_vllm_max_lora_rank raises "
        '"lora_rank must be less than or equal to 512" (vLLM\'s MaxLoRARanks, '
        "vllm/config/lora.py:26; verl workers/rollout/vllm_rollout/utils.py:83-104)"
    ]


def _parallel(config: Mapping[str, Any], engine: str) -> list[str]:
    """verl ``RolloutConfig.__post_init__`` (``workers/config/rollout.py:294-323``)."""
    problems = []
    pp = _number(lookup_or(config, f"{ROLLOUT}.pipeline_model_parallel_size", 1))
    if pp is not None and pp > 1 and engine in ("vllm", "sglang"):
        problems.append(
            f"sets {ROLLOUT}.pipeline_model_parallel_size={pp:g}: verl raises NotImplementedError "
            f'for {engine} ("not implemented pipeline_model_parallel_size > 1 yet", '
            "workers/config/rollout.py:320-323)"
        )
    ep = _number(lookup_or(config, f"{ROLLOUT}.expert_parallel_size", 1))
    tp = _number(lookup_or(config, f"{ROLLOUT}.tensor_model_parallel_size", 2))
    dp = _number(lookup_or(config, f"{ROLLOUT}.data_parallel_size", 1))
    if ep is not None and ep > 1 and tp is not None and dp is not None and ep != tp * dp:
        problems.append(
            f"sets {ROLLOUT}.expert_parallel_size={ep:g} with tensor x data parallel "
            f'{tp:g} x {dp:g}: verl asserts "expert_parallel_size must be equal to '
            'tensor_model_parallel_size * data_parallel_size" (workers/config/rollout.py:294-297)'
        )
    return problems


def _scheduler(config: Mapping[str, Any], engine: str) -> list[str]:
    """vLLM ``SchedulerConfig.verify_max_model_len`` (``vllm/config/scheduler.py:270-291``),
    with verl's defaults (``RolloutConfig``: 8192 tokens, 1024 sequences, chunked prefill
    on) for a value the config leaves out."""
    if engine != "vllm":
        return []
    tokens = _number(lookup_or(config, f"{ROLLOUT}.max_num_batched_tokens", 8192))
    seqs = _number(lookup_or(config, f"{ROLLOUT}.max_num_seqs", 1024))
    problems = []
    if tokens is not None and seqs is not None and tokens < seqs:
        problems.append(
            f"sets {ROLLOUT}.max_num_batched_tokens={tokens:g}, below max_num_seqs={seqs:g}: "
            'vLLM raises "max_num_batched_tokens ... must be greater than or equal to '
            'max_num_seqs" '
            "(SchedulerConfig.verify_max_model_len, vllm/config/scheduler.py:286-291)"
        )
    chunked = lookup_or(config, f"{ROLLOUT}.enable_chunked_prefill", True)
    length = _number(lookup(config, f"{ROLLOUT}.max_model_len")[1])
    if chunked is False and tokens is not None and length is not None and tokens < length:
        problems.append(
            f"sets {ROLLOUT}.max_num_batched_tokens={tokens:g} is below max_model_len={length:g} "
            "with chunked prefill off: vLLM raises (SchedulerConfig.verify_max_model_len, "
            "vllm/config/scheduler.py:274-284)"
        )
    return problems


def _temperature(config: Mapping[str, Any], engine: str) -> list[str]:
    """vLLM ``SamplingParams._verify_args``: "temperature must be in [0, 2]"
    (``vllm/sampling_params.py:529-534``); SGLang has no upper bound."""
    value = _number(lookup(config, f"{ROLLOUT}.temperature")[1])
    if engine != "vllm" or value is None or value <= 2.0:
        return []
    return [
        f'sets {ROLLOUT}.temperature={value:g}: vLLM raises "temperature must be in [0, 2]" '
        "(SamplingParams._verify_args, vllm/sampling_params.py:529-534)"
    ]


def _betas(config: Mapping[str, Any], engine: str) -> list[str]:
    """torch ``Adam.__init__``: ``if not 0.0 <= betas[i] < 1.0: raise ValueError("Invalid
    beta parameter at index i")`` (``torch/optim/adam.py``; AdamW is Adam); verl passes
    ``betas`` to any Adam-family optimizer (``build_optimizer``)."""
    present, betas = lookup(config, f"{OPTIM}.betas")
    name = str(lookup_or(config, f"{OPTIM}.optimizer", "AdamW")).lower()
    if not present or betas is None or "adam" not in name:
        return []
    values = [_number(b) for b in betas] if isinstance(betas, list) else []
    if len(values) == 2 and all(v is not None and 0.0 <= v < 1.0 for v in values):
        return []
    return [
        f'sets {OPTIM}.betas={betas!r}: torch\'s Adam/AdamW raises "Invalid beta parameter" '
        "unless both are in [0, 1) (torch/optim/adam.py, Adam.__init__)"
    ]


# Each model's max_position_embeddings, as its config.json on the Hugging Face Hub states it,
# for the families and sizes the runner and docs name (Qwen2.5 0.5B-72B, Qwen3, Llama 3.x).
# verl reads exactly this field (get_max_position_embeddings, workers/rollout/utils.py:26-35:
# max_position_embeddings, else text_config's) and refuses a larger max_model_len before
# the engine starts, in the vLLM server ("max_model_len (...) should be less than or equal
# to max_position_embeddings", vLLMHttpServer._validate_configs,
# workers/rollout/vllm_rollout/vllm_async_server.py:1103-1110) and the SGLang server alike
# (async_sglang_server.py:171-179). The field as written, not times a RoPE-scaling factor:
# verl does not scale it (Qwen2.5-Instruct's config.json ships 32768 with rope_scaling
# null; YaRN is an edit of the file, a local model; Llama 3.1+ state 131072 with their
# llama3 rope_scaling). Matched on the whole hub id, case-insensitively (the Hub resolves
# ids so); a model not listed (a local folder, another hub model) is not judged: the file
# does not hold its config; nor is a config whose model.override_config may change it.
_QWEN25 = ("0.5B", "1.5B", "3B", "7B", "14B", "32B", "72B")
MODEL_MAX_POSITIONS: dict[str, int] = {
    # Qwen2.5: the instruction-tuned models and the 0.5B and 3B bases state 32768; the
    # other bases state 131072 (their config.json; the Qwen2.5 report, context lengths).
    # Where a source left doubt (the 1.5B base), the larger figure: a missed refusal costs
    # less than an honest run contradicted.
    **{f"qwen/qwen2.5-{size.lower()}-instruct": 32768 for size in _QWEN25},
    **{f"qwen/qwen2.5-{size.lower()}": 32768 for size in ("0.5B", "3B")},
    **{f"qwen/qwen2.5-{size.lower()}": 131072 for size in ("1.5B", "7B", "14B", "32B", "72B")},
    # Qwen3 (post-trained, hybrid thinking): 40960 in every size's config.json.
    **{
        f"qwen/qwen3-{size}": 40960
        for size in ("0.6b", "1.7b", "4b", "8b", "14b", "32b", "30b-a3b", "235b-a22b")
    },
    # Llama 3: 8192; Llama 3.1, 3.2 and 3.3: 131072 (rope_scaling llama3, factor 8 over
    # original_max_position_embeddings 8192, already counted in the stated 131072).
    **{
        f"meta-llama/meta-llama-3-{size}{kind}": 8192
        for size in ("8b", "70b")
        for kind in ("", "-instruct")
    },
    **{
        f"meta-llama/llama-3.{minor}-{size}{kind}": 131072
        for minor, sizes in (("1", ("8b", "70b", "405b")), ("2", ("1b", "3b")), ("3", ("70b",)))
        for size in sizes
        for kind in ("", "-instruct")
        if not (minor == "3" and kind == "")  # Llama 3.3 is released as -Instruct only
    },
}
# The engines whose verl server applies that check.
MAX_POSITION_ENGINES = frozenset({"vllm", "sglang"})
# Their num_attention_heads (config.json; the Qwen2.5 report's table): vLLM shards the
# heads over the tensor-parallel GPUs and raises "Total number of attention heads (14) must
# be divisible by tensor parallel size (4)" (ModelConfig.verify_with_parallel_config,
# vllm/config/model.py:1159-1170).
MODEL_HEADS: dict[str, int] = {
    f"Qwen/Qwen2.5-{size}{kind}": heads
    for size, heads in (("0.5B", 14), ("1.5B", 12), ("3B", 16))
    for kind in ("", "-Instruct")
}


def _hub_model(config: Mapping[str, Any]) -> str | None:
    path = lookup(config, "actor_rollout_ref.model.path")[1]
    model = model_identity(path) if isinstance(path, str) else None
    return model[1] if model and model[0] == "hub" else None


def _heads(config: Mapping[str, Any], engine: str) -> list[str]:
    model = _hub_model(config)
    heads = MODEL_HEADS.get(model) if model else None
    tp = _number(lookup_or(config, f"{ROLLOUT}.tensor_model_parallel_size", 2))
    if engine != "vllm" or heads is None or tp is None or tp < 1 or heads % tp == 0:
        return []
    return [
        f"sets {ROLLOUT}.tensor_model_parallel_size={tp:g}, which does not divide {model}'s "
        f'{heads} attention heads: vLLM raises "Total number of attention heads ({heads}) must '
        f'be divisible by tensor parallel size ({tp:g})" (ModelConfig.'
        "verify_with_parallel_config, vllm/config/model.py:1159-1170)"
    ]


def _max_model_len(config: Mapping[str, Any], engine: str) -> list[str]:
    length = _number(lookup(config, f"{ROLLOUT}.max_model_len")[1])
    model = _hub_model(config)
    limit = MODEL_MAX_POSITIONS.get(model.lower()) if model else None
    override = lookup(config, "actor_rollout_ref.model.override_config")[1]
    if engine not in MAX_POSITION_ENGINES or length is None or limit is None or override:
        return []
    if length <= limit:
        return []
    return [
        f"sets {ROLLOUT}.max_model_len={length:g}, beyond {model}'s "
        f"max_position_embeddings {limit} (its config.json): verl's {engine} server raises "
        '"max_model_len (...) should be less than or equal to max_position_embeddings" before '
        "the engine starts (get_max_position_embeddings; vllm_async_server.py:1103-1110, "
        "async_sglang_server.py:171-179)"
    ]


ENGINE_DTYPES = engines_own.ENGINE_DTYPES
# verl's own precision names (``verl/utils/torch_dtypes.py`` ``PrecisionType.to_dtype``:
# membership in HALF_LIST, FLOAT_LIST or BFLOAT_LIST, else ``RuntimeError("unexpected
# precision")``), read for the FSDP model and mixed-precision dtypes by
# ``fsdp_workers.py`` ``_build_model_optimizer`` (actor, ref) and the critic's.
VERL_PRECISIONS: tuple[object, ...] = (16, "16", "fp16", "float16", 32, "32", "fp32")
VERL_PRECISIONS += ("float32", "bf16", "bfloat16")
VERL_DTYPE_PATHS = engines_own.VERL_DTYPE_PATHS


def rollout_dtype_refused(value: object) -> bool:
    """Whether vLLM / SGLang refuse this ``rollout.dtype`` (both lower-case the string)."""
    return not (isinstance(value, str) and value.lower() in ENGINE_DTYPES)


def verl_precision_refused(value: object) -> bool:
    """Whether verl's ``PrecisionType.to_dtype`` refuses this value (a list membership: 16
    and 16.0 compare equal, True does not equal 16)."""
    return isinstance(value, bool) or value not in VERL_PRECISIONS


def _rollout_dtype(config: Mapping[str, Any], engine: str) -> list[str]:
    value = lookup(config, f"{ROLLOUT}.dtype")[1]
    if value is None or not rollout_dtype_refused(value):
        return []
    shown = "vLLM" if engine == "vllm" else "SGLang"
    return [
        f"sets {ROLLOUT}.dtype={value!r}, which {shown} refuses (it accepts one of "
        + ", ".join(f"`{d}`" for d in ENGINE_DTYPES)
        + ", any case; _get_and_verify_dtype raises on any other: vllm/config/model.py, "
        "sglang/srt/configs/model_config.py)"
    ]


def _vllm_dtype(config: Mapping[str, Any], engine: str) -> list[str]:
    return _rollout_dtype(config, engine) if engine == "vllm" else []


def _sglang_dtype(config: Mapping[str, Any], engine: str) -> list[str]:
    return _rollout_dtype(config, engine) if engine == "sglang" else []


def _verl_dtypes(config: Mapping[str, Any], engine: str) -> list[str]:
    problems: list[str] = []
    for path in VERL_DTYPE_PATHS:
        present, value = lookup(config, path)
        if present and value is not None and verl_precision_refused(value):
            problems.append(
                f"sets {path}={value!r}, which verl refuses (PrecisionType.to_dtype, "
                "verl/utils/torch_dtypes.py, accepts 16, 32, fp16, float16, fp32, float32, "
                'bf16, bfloat16 and raises "unexpected precision" on any other; read by '
                "fsdp_workers.py _build_model_optimizer before the model is built)"
            )
    return problems


# Rules across several values, each with the engine whose validation it stands for.
CROSS_RULES: tuple[tuple[str, Callable[[Mapping[str, Any], str], list[str]]], ...] = (
    ("vllm", _lora_rank),
    ("verl", _parallel),
    ("vllm", _scheduler),
    ("vllm", _temperature),
    ("torch", _betas),
    ("model", _max_model_len),  # no engine here holds the model's config: always the table
    ("model", _heads),
    # vLLM's own code judges its rollouts where installed; SGLang's always by the table.
    ("vllm", _vllm_dtype),
    ("sglang", _sglang_dtype),  # no SGLang judges here: always the table
    ("verl", _verl_dtypes),
)


def table_problems(config: Mapping[str, Any], skip: frozenset[str]) -> list[str]:
    """What the built-in tables refuse in one config, for every engine not in ``skip``
    (those whose own code already judged it)."""
    engine = engine_name(config)
    problems: list[str] = []
    for rule in ENGINE_RANGES:
        present, value = lookup(config, rule.path)
        applies = not rule.rollout_engines or engine in rule.rollout_engines
        if rule.engine not in skip and applies and present and rule.refuses(value):
            problems.append(
                f"sets {rule.path}={value!r}, which the engine refuses (it accepts "
                f"{rule.accepted}; {rule.source})"
            )
    for choice in CHOICE_RULES:
        if choice.engine in skip:
            continue
        if choice.when is not None:
            where, wanted = choice.when
            if lookup_or(config, where, wanted) != wanted:
                continue
        present, value = lookup(config, choice.path)
        if present and value is not None and value not in choice.choices:
            problems.append(
                f"sets {choice.path}={value!r}, which the engine refuses (it accepts "
                f"{choice.accepted}; {choice.source})"
            )
    for owner, rule_fn in CROSS_RULES:
        if owner not in skip:
            problems += rule_fn(config, engine)
    return problems


@functools.cache
def _installed() -> tuple[tuple[str, str], ...]:
    # Asked once per process: which engines can judge here does not change while it runs.
    return tuple(engines_own.installed().items())


def judge_label() -> str:
    """Which judge checks the configuration here, with versions (``rlsys result`` says it)."""
    own = dict(_installed())
    tables = [f"{SHOWN[n]} {TABLE_RELEASES[n]}" for n in TABLE_RELEASES if n not in own]
    table_text = f"the built-in tables ({', '.join(tables)})"
    if not own:
        return table_text
    mine = ", ".join(f"{SHOWN[name]} {version}" for name, version in own.items())
    return f"the engines' own code ({mine})" + (f"; for the rest, {table_text}" if tables else "")


def config_problems(config: Mapping[str, Any]) -> list[str]:
    """What the engines refuse in one group's config, each a phrase that follows "<group>'s
    config " (``sets X=v, which ...``): their own code where installed,
    the built-in tables for the rest (an engine that failed to import is left to them)."""
    engine = engine_name(config)
    own = dict(_installed())
    problems: list[str] = []
    judged: frozenset[str] = frozenset()
    if own:
        try:
            problems, judged = engines_own.own_problems(config, engine, own)
        except Exception:  # the engines' code must never take the grade down: tables judge
            problems, judged = [], frozenset()
    return problems + table_problems(config, judged)
