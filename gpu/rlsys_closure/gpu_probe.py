"""The OS mechanisms the pair depends on, proven in seconds before any model loads.

    python -m rlsys_closure.gpu_probe [--mib 256]

Prints one JSON object (its last stdout line). Run by preflight in a child
process, so preflight itself never holds a CUDA context. Each mechanism is
tried for real, as small as it can be, and reported as
``{"status": "pass"|"fail"|"warn"|"skip", "detail": ...}``:

* ``cuda_ipc``: a CUDA tensor handed to a second (spawned) process through
  torch's CUDA IPC (``cudaIpcGetMemHandle`` / ``cudaIpcOpenMemHandle``), as
  verl's weight sender hands the LoRA buckets to vLLM; the receiver checks the
  values. Containers without ``CAP_SYS_PTRACE`` / with a private IPC namespace
  refuse it, and verl's sender then waits for ever.
* ``cumem_sleep``: vLLM's sleep mode (``CuMemAllocator``: cuMem virtual memory)
  on a small tagged allocation: sleep with offload, NVML must see the memory
  freed, wake, the values must be back. Needs vLLM; skipped without it.
* ``triton_jit``: one tiny Triton kernel built and launched (Triton builds its
  launcher with the C compiler and ``Python.h`` on first use; vLLM runs every
  step, and its LoRA kernels, through Triton). Skipped without Triton.
* ``nvml_processes``: NVML's list of compute processes, while this process
  holds a context. It raises in some virtualised setups, and inside a PID
  namespace lists host pids; neither breaks the run, so both are warnings.

Without a CUDA device every mechanism is ``skip`` and the exit code is 0: the
caller (preflight's ``cuda`` check) already reports the missing device.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
IPC_JOIN_S = 120.0
MECHANISMS = ("cuda_ipc", "cumem_sleep", "triton_jit", "nvml_processes")
TRITON_HINT = (
    "Triton builds its kernels with a C compiler and Python.h: apt-get install "
    f"build-essential python{sys.version_info.major}.{sys.version_info.minor}-dev "
    "(see preflight's build_tools)"
)
# Triton reads a kernel's source from its file: the kernel is written to one.
_TRITON_KERNEL = """import triton
import triton.language as tl


@triton.jit
def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)
"""


def _result(status: str, detail: str, **data: Any) -> dict[str, Any]:
    return {"status": status, "detail": detail, **data}


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _ipc_receiver(queue_in: Any, queue_out: Any) -> None:
    """In the spawned process: open the tensor by IPC handle and check it."""
    try:
        t = queue_in.get(timeout=IPC_JOIN_S)
        queue_out.put(("ok", float(t.float().sum().item()), int(t.numel())))
    except BaseException as exc:  # reported to the parent, whatever it is
        queue_out.put(("error", _one_line(exc), 0))


def probe_cuda_ipc(torch: Any) -> dict[str, Any]:
    ctx = torch.multiprocessing.get_context("spawn")
    queue_in, queue_out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=_ipc_receiver, args=(queue_in, queue_out), daemon=True)
    proc.start()
    try:
        t = torch.full((1024,), 3.0, device="cuda:0")
        queue_in.put(t)  # pickled with a CUDA IPC handle (torch.multiprocessing.reductions)
        try:
            kind, value, n = queue_out.get(timeout=IPC_JOIN_S)
        except Exception:
            return _result(
                "fail",
                f"the receiving process gave no answer within {IPC_JOIN_S:g} s",
                hint=IPC_HINT,
            )
        if kind != "ok":
            return _result(
                "fail", f"the receiving process could not open it: {value}", hint=IPC_HINT
            )
        if n != 1024 or value != 3.0 * 1024:
            return _result(
                "fail", f"the receiving process read wrong values (sum {value})", hint=IPC_HINT
            )
        return _result("pass", "a CUDA tensor opened by handle in a second process")
    finally:
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()


IPC_HINT = (
    "verl sends the LoRA weights to vLLM by CUDA IPC handle; without it the weight sync "
    "never returns. In Docker: --ipc=host and --cap-add SYS_PTRACE (or run outside the "
    "container sandbox)."
)
CUMEM_HINT = (
    "vLLM's sleep mode (the release group's free_cache_engine) uses CUDA virtual memory "
    "(cuMemCreate/cuMemMap); this GPU or its virtualisation does not allow it. Use a "
    "bare-metal or passthrough GPU; MIG slices and some vGPU profiles do not support it."
)


def _nvml_used_mb(nvml: Any, device: int) -> float:
    handle = nvml.nvmlDeviceGetHandleByIndex(device)
    return float(nvml.nvmlDeviceGetMemoryInfo(handle).used) / MIB


def probe_cumem(torch: Any, nvml: Any, index: int, mib: int) -> dict[str, Any]:
    """``index`` is NVML's; torch's device is cuda:0, the same GPU."""
    try:
        CuMemAllocator = importlib.import_module("vllm.device_allocator.cumem").CuMemAllocator
    except Exception as exc:
        return _result("skip", f"vLLM's CuMemAllocator not importable ({_one_line(exc)})")
    if nvml is None:
        return _result("skip", "no NVML to see the freed memory")
    try:
        allocator = CuMemAllocator.get_instance()
        with allocator.use_memory_pool(tag="weights"):
            t = torch.full((mib * MIB // 4,), 5.0, device="cuda:0")
        torch.cuda.synchronize()
        before = _nvml_used_mb(nvml, index)
        allocator.sleep(offload_tags=("weights",))
        torch.cuda.synchronize()
        asleep = _nvml_used_mb(nvml, index)
        allocator.wake_up()
        torch.cuda.synchronize()
        awake = _nvml_used_mb(nvml, index)
        intact = bool((t == 5.0).all().item())
    except Exception as exc:
        return _result("fail", f"sleep/wake failed: {_one_line(exc)}", hint=CUMEM_HINT)
    freed = before - asleep
    data = {"mib": mib, "nvml_before_mb": before, "nvml_asleep_mb": asleep, "nvml_awake_mb": awake}
    if freed < 0.75 * mib:
        return _result(
            "fail",
            f"NVML saw {freed:.0f} MiB freed by sleeping {mib} MiB: the memory timeline "
            "would not show the release",
            hint=CUMEM_HINT,
            **data,
        )
    if not intact:
        return _result(
            "fail", "the offloaded values did not come back on wake", hint=CUMEM_HINT, **data
        )
    return _result(
        "pass", f"slept {mib} MiB: NVML saw {freed:.0f} MiB freed, wake restored it", **data
    )


def probe_triton(torch: Any, device: str = "cuda:0") -> dict[str, Any]:
    try:
        version = str(importlib.import_module("triton").__version__)
    except Exception as exc:
        return _result("skip", f"Triton not importable ({_one_line(exc)})")
    with tempfile.TemporaryDirectory(prefix="rlsys_triton_") as tmp:
        path = Path(tmp) / "rlsys_triton_probe.py"
        path.write_text(_TRITON_KERNEL, encoding="ascii")
        spec = importlib.util.spec_from_file_location("rlsys_triton_probe", path)
        if spec is None or spec.loader is None:
            return _result("fail", f"cannot load the kernel file {path}")
        module = importlib.util.module_from_spec(spec)
        x = torch.arange(1000, dtype=torch.float32, device=device)
        out = torch.full_like(x, -1.0)
        try:
            spec.loader.exec_module(module)
            module.add_one[(4,)](x, out, 1000, BLOCK=256)
            if x.is_cuda:
                torch.cuda.synchronize()
        except Exception as exc:
            return _result(
                "fail",
                f"Triton {version} could not build or launch a kernel: {_one_line(exc)}",
                hint=TRITON_HINT,
            )
    if not bool((out == x + 1).all().item()):
        return _result("fail", f"Triton {version}'s kernel ran but computed wrong values")
    return _result("pass", f"Triton {version} built and ran a kernel", triton=version)


def probe_nvml_processes(nvml: Any, device: int) -> dict[str, Any]:
    if nvml is None:
        return _result("warn", "NVML unavailable: the driver-on-GPU evidence will be unknown")
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(device)
        pids = [int(p.pid) for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle)]
    except Exception as exc:
        return _result(
            "warn",
            f"NVML cannot list GPU processes here ({_one_line(exc)}); the record's "
            "'driver holds no GPU memory' evidence will be unknown (not a failure)",
        )
    if os.getpid() in pids:
        return _result(
            "pass", f"NVML lists {len(pids)} process(es), this probe among them", pids=pids
        )
    return _result(
        "warn",
        f"NVML lists {len(pids)} process(es) but not this probe (pid {os.getpid()}), which "
        "holds a CUDA context: a PID namespace (container) shows host pids, so 'the driver "
        "holds no GPU memory' cannot be shown from NVML here (not a failure)",
        pids=pids,
    )


def probe(mib: int) -> dict[str, Any]:
    """Every mechanism on the first visible GPU (torch's cuda:0; NVML's index mapped
    from CUDA_VISIBLE_DEVICES, as the sampler maps it)."""
    skip = {k: _result("skip", "no CUDA device") for k in MECHANISMS}
    try:
        import torch
    except Exception as exc:
        return {"cuda": {"available": False, "error": _one_line(exc)}, **skip}
    if not torch.cuda.is_available():
        return {"cuda": {"available": False, "torch": torch.__version__}, **skip}
    try:
        nvml: Any = importlib.import_module("pynvml")
        nvml.nvmlInit()
    except Exception:
        nvml = None
    out: dict[str, Any] = {"cuda": {"available": True, "torch": torch.__version__}}
    index = 0
    if nvml is not None:
        from rlsys_closure.sampler import cuda_device_index

        try:
            index = cuda_device_index(nvml)
        except Exception as exc:
            out["cuda"]["nvml_index_error"] = _one_line(exc)
            nvml = None
    torch.zeros(1, device="cuda:0")  # this process now holds a context
    probes: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("nvml_processes", lambda: probe_nvml_processes(nvml, index)),
        ("cumem_sleep", lambda: probe_cumem(torch, nvml, index, mib)),
        ("triton_jit", lambda: probe_triton(torch)),
        ("cuda_ipc", lambda: probe_cuda_ipc(torch)),
    ]
    for name, fn in probes:
        try:
            out[name] = fn()
        except Exception as exc:
            out[name] = _result("fail", f"probe error: {_one_line(exc)}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rlsys_closure.gpu_probe")
    p.add_argument("--mib", type=int, default=256)
    args = p.parse_args(argv)
    result = probe(args.mib)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
