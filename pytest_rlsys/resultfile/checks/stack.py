"""Versions and a card that cannot go together (config_paired): the recorded software stack
against the engines' own requirement metadata, CUDA's driver table and the card table.

- vLLM pins the torch it was built against (``Requires-Dist: torch==X`` in its wheel's
  METADATA); where the recorded vLLM is the one installed here, its own metadata is read
  (``importlib.metadata.requires("vllm")``), else ``VLLM_TORCH_PINS`` below, read from
  the wheels' METADATA. A vLLM release in neither is not judged.
- A CUDA build of torch needs a driver at least CUDA's minimum for that major version
  (``CUDA_DRIVER_MINIMUM``: NVIDIA's CUDA release notes, table "CUDA Toolkit and Minimum
  Required Driver Version for CUDA Minor Version Compatibility", Linux). A data-centre or
  professional card may run a newer CUDA on an older driver through CUDA's
  forward-compatibility package, so the rule is applied only to a card whose NVML name
  says it never can: GeForce, TITAN, a notebook part (``cards.forward_compatible``; NVIDIA's
  CUDA Compatibility guide), whether or not the card table knows its memory.
- vLLM refuses bfloat16 below compute capability 8.0 (``CudaPlatform.check_if_supports_
  dtype``, ``vllm/platforms/cuda.py:610-628``); the rollout's dtype is verl's
  ``rollout.dtype`` (default ``bfloat16``, ``workers/config/rollout.py``).
- vLLM profiles the weights inside its share (``gpu_memory_utilization`` x the card) and
  raises when nothing is left for the KV cache ("No available memory for the cache
  blocks", ``vllm/v1/core/kv_cache_utils.py``): unquantised weights of 2 bytes a
  parameter (bf16/fp16, the least an unquantised checkpoint has), split over the tensor
  parallel GPUs, above the share cannot start. Not applied where the kwargs size the KV
  cache in bytes (the share is ignored).
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from collections.abc import Mapping
from typing import Any

from pytest_rlsys.resultfile.checks.cards import card_of, forward_compatible, gpu_total
from pytest_rlsys.resultfile.checks.evidence import as_number, group_of, section
from pytest_rlsys.resultfile.checks.identity import lookup, lookup_or
from pytest_rlsys.resultfile.checks.machine import engine_name, kv_cache_bytes
from pytest_rlsys.resultfile.checks.sampling import model_billions
from pytest_rlsys.resultfile.checks.vocabulary import (
    DEFAULT_UTILIZATION,
    GROUP_NAMES,
    UTILIZATION_PATH,
    Doc,
)

# vLLM release -> the torch its wheel pins (METADATA Requires-Dist, read from the wheels
# on PyPI: vllm-0.24.0 "torch==2.11.0", vllm-0.11.0 "torch==2.8.0").
VLLM_TORCH_PINS: dict[str, str] = {"0.24.0": "2.11.0", "0.11.0": "2.8.0"}
# CUDA major -> the least Linux driver that runs it (minor-version compatibility).
CUDA_DRIVER_MINIMUM: dict[int, tuple[int, ...]] = {
    13: (580, 65, 6),
    12: (525, 60, 13),
    11: (450, 80, 2),
}
BF16_CAPABILITY = (8, 0)
WEIGHT_BYTES = 2.0


def _release(version: object) -> str | None:
    """The public release of a version string ("2.11.0+cu130" -> "2.11.0")."""
    return version.split("+", 1)[0].strip() if isinstance(version, str) else None


def _numbers(version: object) -> tuple[int, ...] | None:
    text = _release(version)
    if not text or not re.fullmatch(r"\d+(\.\d+)*", text):
        return None
    return tuple(int(part) for part in text.split("."))


@functools.cache
def _installed_vllm() -> tuple[str, tuple[str, ...]] | None:
    """The installed vLLM's version and requirements, read once a process (a metadata
    search of sys.path costs a millisecond: a twentieth of grading a one-hour file)."""
    try:
        return importlib.metadata.version("vllm"), tuple(importlib.metadata.requires("vllm") or ())
    except importlib.metadata.PackageNotFoundError:
        return None


def torch_pin(vllm: str) -> tuple[str, str] | None:
    """(the torch a vLLM release pins, where that was read), None when not known."""
    installed = _installed_vllm()
    if installed is not None and installed[0] == vllm:
        for requirement in installed[1]:
            pinned = re.fullmatch(r"torch\s*==\s*([\w.]+)", requirement.strip())
            if pinned:
                return pinned.group(1), f"the installed vLLM {vllm}'s own METADATA"
    pin = VLLM_TORCH_PINS.get(vllm)
    return (pin, f"vLLM {vllm}'s wheel METADATA (the built-in table)") if pin else None


def _pins(environment: Mapping[str, Any]) -> list[str]:
    vllm, torch = _release(environment.get("vllm")), _release(environment.get("torch"))
    if not vllm or not torch:
        return []
    found = torch_pin(vllm)
    if found is None or found[0] == torch:
        return []
    return [
        f"environment records vLLM {vllm} with torch {environment.get('torch')}, but vLLM "
        f"{vllm} requires torch=={found[0]} ({found[1]}): pip installs no other pair, and "
        "vLLM's compiled kernels load against no other torch"
    ]


def _cuda_major(environment: Mapping[str, Any]) -> int | None:
    cuda = _numbers(environment.get("cuda"))
    if cuda:
        return cuda[0]
    torch = environment.get("torch")
    local = re.search(r"\+cu(\d+?)(\d)$", torch) if isinstance(torch, str) else None
    return int(local.group(1)) if local else None


def _driver(environment: Mapping[str, Any]) -> list[str]:
    """CUDA's minor-version compatibility runs any CUDA X.y on a driver of at least X.0's
    minimum; only the forward-compatibility package runs it on an older one, and a GeForce,
    TITAN or notebook card never has that package (``cards.forward_compatible``)."""
    name = environment.get("gpu_name")
    major, driver = _cuda_major(environment), _numbers(environment.get("driver"))
    if forward_compatible(name) is not False or major is None or driver is None:
        return []
    least = CUDA_DRIVER_MINIMUM.get(major)
    if least is None or driver >= least:
        return []
    return [
        f"environment records CUDA {major} (torch {environment.get('torch')}) on driver "
        f"{environment.get('driver')}, but CUDA {major} needs driver >= "
        f"{'.'.join(map(str, least))} (CUDA's minor-version compatibility table, Linux) and "
        f"a {name} has no forward-compatibility path (GeForce, TITAN and notebook parts "
        "never get CUDA's forward-compatibility package): torch finds no GPU"
    ]


def _bf16(environment: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    found = card_of(environment.get("gpu_name"))
    if found is None or found[0].capability >= BF16_CAPABILITY or engine_name(config) != "vllm":
        return []
    dtype = lookup_or(config, "actor_rollout_ref.rollout.dtype", "bfloat16")
    if str(dtype).lower() not in ("bfloat16", "bf16"):
        return []
    cc = ".".join(map(str, found[0].capability))
    return [
        f"the rollout runs vLLM in {dtype} on a {found[0].label} (compute capability {cc}): "
        'vLLM raises "Bfloat16 is only supported on GPUs with compute capability of at least '
        '8.0" (CudaPlatform.check_if_supports_dtype, vllm/platforms/cuda.py:610-628)'
    ]


def _weights(doc: Doc, environment: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    engine = engine_name(config)
    total = gpu_total(environment)
    model = section(doc, "workload").get("model")
    billions = model_billions(model) or model_billions(
        lookup(config, "actor_rollout_ref.model.path")[1]
    )
    quantized = lookup(config, "actor_rollout_ref.rollout.quantization")[1] is not None
    if engine != "vllm" or total is None or billions is None or quantized:
        return []
    if kv_cache_bytes(config, engine) is not None:
        return []
    share = as_number(lookup_or(config, UTILIZATION_PATH, DEFAULT_UTILIZATION))
    if share is None or not 0 < share <= 1:
        return []  # judged by the engine's range
    # Tensor parallelism splits the weights over its GPUs (verl's default is 2 where the
    # config leaves it out: the reading that can only spare a run).
    ways = as_number(lookup_or(config, "actor_rollout_ref.rollout.tensor_model_parallel_size", 2.0))
    if ways is None or ways < 1:
        return []
    weights = billions * 1e9 * WEIGHT_BYTES / 2**20 / ways
    if weights <= share * total:
        return []
    return [
        f"the model's {billions:g}B parameters hold at least {weights:.0f} MiB of weights "
        f"per GPU (tensor parallel {ways:g}), above vLLM's share gpu_memory_utilization "
        f"{share:g} x {total:.0f} MiB = "
        f'{share * total:.0f} MiB: vLLM raises "No available memory for the cache blocks" '
        "(vllm/v1/core/kv_cache_utils.py)"
    ]


def stack_problems(doc: Doc) -> list[str]:
    """What in the recorded stack and card cannot go together, each said once."""
    environment = section(doc, "environment")
    found = _pins(environment) + _driver(environment)
    for name in GROUP_NAMES:
        config = group_of(doc, name).get("config")
        if isinstance(config, Mapping):
            found += _bf16(environment, config) + _weights(doc, environment, config)
    return list(dict.fromkeys(found))
