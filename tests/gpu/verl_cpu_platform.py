"""A CPU "platform" for verl 0.9.1, so its real actor code runs in CI without a GPU.

verl 0.9.1 has no CPU platform: with no accelerator its platform detection
falls back to CUDA (``plugin/platform/platform_manager.py:83-115``) and the
FSDP engine then asks torch.cuda for the current device. verl's own extension
point fixes that without touching verl: a module named in
``VERL_USE_EXTERNAL_MODULES`` is imported by ``import verl``
(``verl/__init__.py:49-52``), and ``VERL_PLATFORM`` picks a registered platform
(``platform_manager.py:93-96``). This module registers ``cpu``: the device is
the CPU, collectives are gloo, Ray schedules on CPUs.

The tox env ``verl-actor`` sets both variables, in this process and (through
the environment Ray inherits) in Ray's worker processes. Only the device is
substituted; every line of verl's actor, engine, worker-group and
checkpoint-manager code that runs is verl's own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import torch
from cpu_nvml import CpuNvml
from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry

__all__ = ["CpuDeviceId", "CpuNvml", "PlatformCPU"]


class CpuDeviceId(str):
    """What ``get_device_id()`` returns here: the CPU, in every form verl uses it.

    verl uses the current device id three ways: ``tensor.to(device_id)`` and
    FSDP's ``device_id=`` (an int there means an accelerator), and
    ``f"{get_device_name()}:{device_id}"`` (fsdp_utils.py:229). As text it is
    ``"cpu"``; formatted into a string it is the index ``0``.
    """

    def __format__(self, spec: str) -> str:
        return "0"


def _allow_cpu_sync_module_states() -> None:
    """torch's FSDP1 refuses ``sync_module_states=True`` (verl always sets it,
    transformer_impl.py:444) for CPU parameters, a guard written for NCCL; gloo
    broadcasts CPU tensors, so the guard is lifted here."""
    from torch.distributed.fsdp import _init_utils

    _init_utils._check_module_states_for_sync_module_states = lambda module_states: None


if not torch.cuda.is_available():
    _allow_cpu_sync_module_states()


@PlatformRegistry.register(platform="cpu")
class PlatformCPU(PlatformBase):  # type: ignore[misc]
    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return _CpuDeviceModule()  # type: ignore[return-value]

    def is_available(self) -> bool:
        return True

    def current_device(self) -> Any:
        return CpuDeviceId("cpu")

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    @contextlib.contextmanager
    def nvtx_range(self, msg: str) -> Iterator[None]:
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "CPU"

    def ray_noset_envvars(self) -> list[str]:
        return []

    def ray_resource_options(self, num_gpus: float) -> dict[str, Any]:
        return {}

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


class _CpuDeviceModule:
    """What verl calls on ``get_torch_device()``: torch.cpu plus no-op memory calls."""

    def __getattr__(self, name: str) -> Any:
        if hasattr(torch.cpu, name):
            return getattr(torch.cpu, name)
        if name in (
            "empty_cache",
            "reset_peak_memory_stats",
            "ipc_collect",
            "set_device",
            "manual_seed",
            "manual_seed_all",
        ):
            return lambda *a, **k: None
        if name in (
            "memory_allocated",
            "memory_reserved",
            "max_memory_allocated",
            "max_memory_reserved",
        ):
            return lambda *a, **k: 0
        if name == "mem_get_info":
            return lambda *a, **k: (0, 0)
        if name == "get_device_name":
            return lambda *a, **k: "CPU"
        if name == "is_available":
            return lambda: True
        if name == "current_device":
            return lambda: 0
        if name == "device_count":
            return lambda: 1
        raise AttributeError(name)
