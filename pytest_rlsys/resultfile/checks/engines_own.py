"""The engines' own validation of a recorded config, where they are importable.

verl, vLLM and torch are imported only when a config is judged and only where installed
(the lab box; ``tox -e verl-config``), never at import time of this package. Each is
handed the recorded values through its own entry points, the ones the run itself went
through, and what it raises is the problem:

- verl: ``omega_conf_to_dataclass`` into ``RolloutConfig`` (OmegaConf's type checks, then
  ``RolloutConfig.__post_init__``: rollout mode, pipeline and expert parallelism) and into
  ``FSDPOptimizerConfig`` (the scheduler), then ``build_optimizer`` on one parameter (the
  optimizer class and torch's own checks of lr, weight decay and betas);
- torch beside vLLM but without verl: the optimizer class from ``torch.optim`` with the same
  arguments (a bare torch, as CI installs it, does not switch the judge: see ``installed``);
- vLLM: ``SamplingParams`` (n, temperature, top_p, top_k, repetition penalty, max tokens),
  ``CacheConfig`` (gpu_memory_utilization), ``SchedulerConfig`` (batched tokens against
  sequences and length), and verl's ``get_vllm_max_lora_rank`` (vLLM's ``MaxLoRARanks``).

What an engine here does not cover stays with the built-in tables (checks.configuration).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
import os
import typing
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from pytest_rlsys.resultfile.checks.identity import lookup

ROLLOUT = "actor_rollout_ref.rollout"
OPTIM = "actor_rollout_ref.actor.optim"
# Set to "tables" to judge with the built-in tables even where the engines are installed.
JUDGE_ENV = "RLSYS_CONFIG_JUDGE"
ENGINES = ("verl", "vllm", "torch")
# The rollout's dtype strings, as both engines read them: vLLM 0.24 ``ModelConfig.dtype``
# (``ModelDType`` Literal) and ``_get_and_verify_dtype`` (``vllm/config/model.py``: lower-cased,
# then "auto" or a key of ``_STR_DTYPE_TO_TORCH_DTYPE``, else ``ValueError("Unknown dtype")``);
# SGLang ``ServerArgs`` ``--dtype`` choices and its ``_get_and_verify_dtype``
# (``sglang/srt/configs/model_config.py``), the same six. verl hands ``rollout.dtype`` to
# both unchanged (``vllm_async_server.py``, ``async_sglang_server.py``).
ENGINE_DTYPES = ("auto", "half", "float16", "bfloat16", "float", "float32")
# The FSDP dtypes verl reads through PrecisionType.to_dtype (fsdp_workers.py).
VERL_DTYPE_PATHS = tuple(
    f"{section}.{key}"
    for section in (
        "actor_rollout_ref.actor.fsdp_config",
        "actor_rollout_ref.ref.fsdp_config",
        "critic.model.fsdp_config",
    )
    for key in (
        "model_dtype",
        "mixed_precision.param_dtype",
        "mixed_precision.reduce_dtype",
        "mixed_precision.buffer_dtype",
    )
)


def installed() -> dict[str, str]:
    """The engines importable here, with their versions (nothing is imported).
    ``RLSYS_CONFIG_JUDGE=tables`` leaves them all to the built-in tables."""
    if os.environ.get(JUDGE_ENV, "").strip().lower() == "tables":
        return {}
    found: dict[str, str] = {}
    for dist in ENGINES:
        try:
            if importlib.util.find_spec(dist) is None:
                continue
            found[dist] = importlib.metadata.version(dist)
        except (ImportError, ValueError, importlib.metadata.PackageNotFoundError):
            continue
    if "verl" not in found and "vllm" not in found:
        # A bare torch (CI's CPU build) is no lab box: importing it costs seconds a file
        # and its optimizer checks are the tables' rows; torch judges beside verl or vLLM.
        found.pop("torch", None)
    return found


def _said(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _scalars(section: object, fields: set[str]) -> dict[str, Any]:
    """The recorded values of a config section that the dataclass declares (nested
    sections are the runner's own sub-configs, not what is judged here)."""
    if not isinstance(section, Mapping):
        return {}
    return {
        k: _plain(v)
        for k, v in section.items()
        if k in fields and v is not None and not isinstance(v, Mapping)
    }


def _plain(value: Any) -> Any:
    """JSON does not tell 4 from 4.0 (a re-serialised file may write either): an integral
    float is handed on as an int, which OmegaConf also takes for a float field."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return [_plain(v) for v in value] if isinstance(value, list) else value


def _optimizer_args(optim: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """verl ``build_optimizer``'s arguments (``workers/config/optimizer.py:324-337``)."""
    name = str(optim.get("optimizer") or "AdamW")
    impl = str(optim.get("optimizer_impl") or "torch.optim")
    args: dict[str, Any] = {
        "lr": optim.get("lr", 1e-3),
        "weight_decay": optim.get("weight_decay", 0.01),
    }
    if "adam" in name.lower() or "ademamix" in name.lower():
        args["betas"] = tuple(optim.get("betas") or (0.9, 0.999))
    override = optim.get("override_optimizer_config")
    if isinstance(override, Mapping):
        args.update(override)
    return name, impl, args


def _verl(config: Mapping[str, Any], engine: str) -> list[str]:
    from verl.utils.config import omega_conf_to_dataclass
    from verl.workers.config import FSDPOptimizerConfig, RolloutConfig
    from verl.workers.config.optimizer import build_optimizer

    problems: list[str] = []
    rollout_fields = {f.name for f in dataclasses.fields(RolloutConfig)}
    values = _scalars(lookup(config, ROLLOUT)[1], rollout_fields)
    values["name"] = engine
    try:
        with warnings.catch_warnings():
            # verl only warns on a mode it does not run ("Only 'async' mode is supported"), then
            # refuses it at the workers' start (get_rollout_class): the warning is the refusal.
            warnings.filterwarnings("error", message="Unknown rollout mode")
            omega_conf_to_dataclass(values, RolloutConfig)
    except Exception as exc:
        problems.append(f"is refused by verl's RolloutConfig (rollout section): {_said(exc)}")
    optim = lookup(config, OPTIM)[1]
    optim = optim if isinstance(optim, Mapping) else {}
    optim_fields = {f.name for f in dataclasses.fields(FSDPOptimizerConfig)}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            optim_config = omega_conf_to_dataclass(
                {**_scalars(optim, optim_fields), **_listed(optim, ("betas",))}, FSDPOptimizerConfig
            )
        if optim_config.optimizer_impl == "torch.optim":
            build_optimizer([_one_parameter()], optim_config)
    except Exception as exc:
        problems.append(
            "is refused by verl's FSDPOptimizerConfig / build_optimizer (torch's optimizer; "
            f"optimizer section): {_said(exc)}"
        )
    return problems + _verl_precisions(config)


def _verl_precisions(config: Mapping[str, Any]) -> list[str]:
    """The FSDP model and mixed-precision dtypes through verl's own ``PrecisionType``."""
    from verl.utils.torch_dtypes import PrecisionType

    problems: list[str] = []
    for path in VERL_DTYPE_PATHS:
        present, value = lookup(config, path)
        if not present or value is None:
            continue
        try:
            PrecisionType.to_dtype(value)
        except Exception as exc:
            problems.append(f"sets {path}={value!r}, refused by verl's PrecisionType: {_said(exc)}")
    return problems


def _listed(section: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: _plain(section[k]) for k in keys if isinstance(section.get(k), list)}


def _one_parameter() -> Any:
    import torch

    return torch.nn.Parameter(torch.zeros(1))


def _torch(config: Mapping[str, Any], engine: str) -> list[str]:
    optim = lookup(config, OPTIM)[1]
    name, impl, args = _optimizer_args(optim if isinstance(optim, Mapping) else {})
    if impl != "torch.optim":
        return []
    try:
        import torch.optim

        getattr(torch.optim, name)([_one_parameter()], **args)
    except Exception as exc:
        return [f"is refused by torch.optim.{name} (optimizer section): {_said(exc)}"]
    return []


def _vllm(config: Mapping[str, Any], engine: str) -> list[str]:
    if engine != "vllm":
        return []
    from vllm import SamplingParams
    from vllm.config import CacheConfig

    problems: list[str] = []
    rollout = lookup(config, ROLLOUT)[1]
    rollout = rollout if isinstance(rollout, Mapping) else {}
    sampling = {
        k: rollout[k]
        for k in ("n", "temperature", "top_p", "top_k", "repetition_penalty")
        if rollout.get(k) is not None
    }
    tokens = rollout.get("response_length")
    if tokens is None:
        tokens = lookup(config, "data.max_response_length")[1]
    if tokens is not None:
        sampling["max_tokens"] = tokens
    checks: list[tuple[str, Callable[[], object]]] = [
        ("SamplingParams", lambda: SamplingParams(**sampling))
    ]
    utilization = rollout.get("gpu_memory_utilization")
    if utilization is not None:
        checks.append(("CacheConfig", lambda: CacheConfig(gpu_memory_utilization=utilization)))
    rank = lookup(config, "actor_rollout_ref.model.lora_rank")[1]
    if isinstance(rank, int) and not isinstance(rank, bool) and rank > 0:
        checks.append(("MaxLoRARanks (verl's get_vllm_max_lora_rank)", lambda: _lora_rank(rank)))
    dtype = rollout.get("dtype")
    if dtype is not None:
        checks.append(("ModelConfig dtype (_get_and_verify_dtype's names)", lambda: _dtype(dtype)))
    for what, build in checks:
        try:
            build()
        except Exception as exc:
            problems.append(f"is refused by vLLM's {what} (rollout section): {_said(exc)}")
    return problems


def _dtype(dtype: object) -> None:
    """The installed vLLM's own dtype names (``ModelDType``, the keys of
    ``_STR_DTYPE_TO_TORCH_DTYPE``): ``_get_and_verify_dtype`` lower-cases a string and
    raises "Unknown dtype" on any other."""
    from vllm.config import model

    names = {"auto", *getattr(model, "_STR_DTYPE_TO_TORCH_DTYPE", {})}
    names |= set(typing.get_args(getattr(model, "ModelDType", None)))
    if names == {"auto"}:  # a release that keeps them elsewhere: the table's, read from 0.24
        names = set(ENGINE_DTYPES)
    if not isinstance(dtype, str) or dtype.lower() not in names:
        raise ValueError(f"Unknown dtype: {dtype!r} (vLLM accepts {sorted(names)})")


def _lora_rank(rank: int) -> None:
    """verl ``get_vllm_max_lora_rank`` (``workers/rollout/vllm_rollout/utils.py:83-104``)
    on the installed vLLM's ``MaxLoRARanks``: a rank above the largest is refused."""
    from vllm.config.lora import MaxLoRARanks

    largest = max(typing.get_args(MaxLoRARanks))
    if rank > largest:
        raise ValueError(f"lora_rank must be less than or equal to {largest}, but got {rank}")


JUDGES: dict[str, Callable[[Mapping[str, Any], str], list[str]]] = {
    "verl": _verl,
    "vllm": _vllm,
    "torch": _torch,
}


def own_problems(
    config: Mapping[str, Any], engine: str, engines: Mapping[str, str]
) -> tuple[list[str], frozenset[str]]:
    """What the installed engines' own code refuses in one config, and which engines
    judged it (torch's optimizer goes through verl where verl is installed). An engine
    that cannot be imported here after all judges nothing (its table rules then apply)."""
    problems: list[str] = []
    judged: set[str] = set()
    for name in engines:
        if name in judged:
            continue  # torch, already handed the optimizer through verl's build_optimizer
        try:
            problems += JUDGES[name](config, engine)
        except ImportError:
            continue
        judged.add(name)
        if name == "verl" and "torch" in engines:
            judged.add("torch")
    return problems, frozenset(judged)
