"""NVML for the CPU platform of ``tox -e verl-actor``, importable without torch or verl.

The group driver's sampler process loads it by name (``cpu_nvml:CpuNvml``), so
it must import in a bare interpreter: psutil only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CpuNvml"]


class _Memory:
    def __init__(self, used: int, total: int) -> None:
        self.used, self.total = used, total


class CpuNvml:
    """NVML for the CPU platform: the device is the host, so "device memory" is the
    host's memory in use (psutil). The sampler and the result file see a real,
    moving series; nothing here pretends to be a GPU reading."""

    def nvmlInit(self) -> None:
        return None

    def nvmlShutdown(self) -> None:
        return None

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return ("cpu", index)

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        return "CPU-0"

    def nvmlDeviceGetMemoryInfo(self, handle: Any) -> _Memory:
        import psutil

        vm = psutil.virtual_memory()
        return _Memory(int(vm.total - vm.available), int(vm.total))

    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> list[Any]:
        return []
