"""The ``cumem`` section of gpu/device_check.py: vLLM's sleep mechanism without vLLM.

1 GiB of CUDA virtual memory mapped (``cuMemCreate``/``cuMemMap``, through libcuda and
the structures of cuda.h), released and mapped again; NVML must see each step and the
remapped memory must read back what was written.
"""

from __future__ import annotations

import ctypes
from typing import Any, Protocol

__all__ = ["CuMemAccessDesc", "CuMemAllocationProp", "check_cumem"]

MIB = 1024**2


class Section(Protocol):
    """What a section needs of device_check's report."""

    gpu: bool

    def add(self, name: str, status: str, detail: str, **data: Any) -> None: ...


class _CuMemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _CuMemAllocFlags(ctypes.Structure):
    _fields_ = [
        ("compressionType", ctypes.c_ubyte),
        ("gpuDirectRDMACapable", ctypes.c_ubyte),
        ("usage", ctypes.c_ushort),
        ("reserved", ctypes.c_ubyte * 4),
    ]


class CuMemAllocationProp(ctypes.Structure):
    """``CUmemAllocationProp`` of cuda.h (32 bytes on x86-64)."""

    _fields_ = [
        ("type", ctypes.c_int),  # CU_MEM_ALLOCATION_TYPE_PINNED = 1
        ("requestedHandleTypes", ctypes.c_int),  # CU_MEM_HANDLE_TYPE_NONE = 0
        ("location", _CuMemLocation),  # CU_MEM_LOCATION_TYPE_DEVICE = 1, device ordinal
        ("win32HandleMetaData", ctypes.c_void_p),
        ("allocFlags", _CuMemAllocFlags),
    ]


class CuMemAccessDesc(ctypes.Structure):
    """``CUmemAccessDesc`` of cuda.h."""

    _fields_ = [("location", _CuMemLocation), ("flags", ctypes.c_int)]  # PROT_READWRITE = 3


def check_cumem(report: Section, mib: int = 1024) -> None:
    """Map ``mib`` MiB of CUDA virtual memory (the driver calls vLLM's CuMemAllocator makes
    to sleep and wake), NVML must see it come; unmap and release, NVML must see it go; map
    again, write and read back. Through libcuda itself: no vLLM or cuda-python needed."""
    if not report.gpu:
        report.add("cumem", "skip", "no GPU: the cuMem map/release/remap needs one")
        return
    import torch
    from rlsys_closure.sampler import cuda_device_index, load_nvml

    torch.zeros(1, device="cuda:0")  # the primary context is current in this thread
    torch.cuda.synchronize()
    cuda = ctypes.CDLL("libcuda.so.1")

    def call(name: str, *args: Any) -> None:
        rc = getattr(cuda, name)(*args)
        if rc != 0:
            text = ctypes.c_char_p()
            cuda.cuGetErrorName(rc, ctypes.byref(text))
            raise RuntimeError(f"{name}: {(text.value or b'?').decode()} ({rc})")

    nvml: Any = load_nvml()
    nvml.nvmlInit()
    handle = nvml.nvmlDeviceGetHandleByIndex(cuda_device_index(nvml))

    def used_mb() -> float:
        return float(nvml.nvmlDeviceGetMemoryInfo(handle).used) / MIB

    prop = CuMemAllocationProp()
    prop.type, prop.location.type, prop.location.id = 1, 1, torch.cuda.current_device()
    access = CuMemAccessDesc()
    access.location.type, access.location.id, access.flags = 1, prop.location.id, 3
    gran = ctypes.c_size_t()
    call("cuMemGetAllocationGranularity", ctypes.byref(gran), ctypes.byref(prop), 0)
    size = -(-mib * MIB // gran.value) * gran.value
    ptr, mem = ctypes.c_uint64(), ctypes.c_uint64()
    readings: dict[str, float] = {}

    def map_and_fill(value: int) -> None:
        call("cuMemCreate", ctypes.byref(mem), ctypes.c_size_t(size), ctypes.byref(prop), 0)
        call("cuMemMap", ptr, ctypes.c_size_t(size), ctypes.c_size_t(0), mem, 0)
        call("cuMemSetAccess", ptr, ctypes.c_size_t(size), ctypes.byref(access), 1)
        call("cuMemsetD8_v2", ptr, ctypes.c_ubyte(value), ctypes.c_size_t(size))
        call("cuCtxSynchronize")

    def unmap() -> None:
        call("cuMemUnmap", ptr, ctypes.c_size_t(size))
        call("cuMemRelease", mem)
        call("cuCtxSynchronize")

    try:
        readings["base"] = used_mb()
        call("cuMemAddressReserve", ctypes.byref(ptr), ctypes.c_size_t(size), 0, 0, 0)
        map_and_fill(5)
        readings["mapped"] = used_mb()
        unmap()
        readings["released"] = used_mb()
        map_and_fill(7)
        readings["remapped"] = used_mb()
        back = (ctypes.c_ubyte * 4096)()
        call("cuMemcpyDtoH_v2", back, ptr, ctypes.c_size_t(4096))
        unmap()
        call("cuMemAddressFree", ptr, ctypes.c_size_t(size))
    finally:
        nvml.nvmlShutdown()
    want = 0.9 * size / MIB
    seen = {
        "map": readings["mapped"] - readings["base"],
        "release": readings["mapped"] - readings["released"],
        "remap": readings["remapped"] - readings["released"],
    }
    problems = [f"NVML saw {v:.0f} MiB at {k}" for k, v in seen.items() if v < want]
    if set(back) != {7}:
        problems.append("the remapped memory did not read back what was written")
    report.add(
        "cumem",
        "fail" if problems else "pass",
        "; ".join(problems)
        or (
            f"cuMem {size // MIB} MiB: NVML saw it mapped (+{seen['map']:.0f} MiB), released "
            f"(-{seen['release']:.0f}) and remapped (+{seen['remap']:.0f}); read back intact"
        ),
        size_mb=size // MIB,
        nvml_mb=readings,
    )
