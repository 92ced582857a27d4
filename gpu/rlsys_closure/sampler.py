"""Whole-GPU and whole-host memory sampling.

The driver never touches CUDA (a context alone costs hundreds of MiB and would
bias the series), so device memory is read through NVML, which sees what every
process on the GPU holds, the vLLM engine's sleep/wake allocations included
(those live below PyTorch's allocator, so torch counters miss them).

NVML sits behind :class:`NvmlLike` so tests can inject a fake one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from rlsys_closure.events import Clock, Edge

MIB = 1024 * 1024
SampleKind = Literal["periodic", "boundary"]


class MemoryInfo(Protocol):
    used: int
    total: int


class NvmlLike(Protocol):
    """The handful of pynvml calls the sampler uses."""

    def nvmlInit(self) -> None: ...

    def nvmlShutdown(self) -> None: ...

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any: ...

    def nvmlDeviceGetMemoryInfo(self, handle: Any) -> MemoryInfo: ...

    def nvmlDeviceGetCount(self) -> int: ...

    def nvmlDeviceGetUUID(self, handle: Any) -> str | bytes: ...


def load_nvml() -> NvmlLike:
    """Import pynvml (package nvidia-ml-py); raises whatever the import raises."""
    import pynvml

    return pynvml  # type: ignore[no-any-return]


def host_memory() -> dict[str, int]:
    """Whole-host memory in bytes: ``total`` and ``available`` (psutil, else /proc)."""
    try:
        import psutil

        vm = psutil.virtual_memory()
        return {"total": int(vm.total), "available": int(vm.available)}
    except ImportError:
        pass
    # No psutil: /proc/meminfo has the same two numbers on Linux.
    fields: dict[str, int] = {}
    with open("/proc/meminfo", encoding="ascii") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            parts = rest.split()
            if parts:
                fields[key] = int(parts[0]) * 1024
    return {"total": fields["MemTotal"], "available": fields["MemAvailable"]}


def host_used_mb() -> float:
    """Whole-host memory in use, MiB (total minus available, as ``free`` shows)."""
    memory = host_memory()
    return float(memory["total"] - memory["available"]) / MIB


class DeviceSelectionError(ValueError):
    """CUDA_VISIBLE_DEVICES names a device NVML cannot map to an index."""


def _as_text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def cuda_device_index(nvml: Any = None, visible: str | None = None) -> int:
    """The NVML index of the GPU the run uses (the first visible device).

    NVML numbers devices physically and ignores CUDA_VISIBLE_DEVICES, so the
    first visible entry is mapped back: a plain index is used as is, a
    ``GPU-...`` UUID is looked up through NVML (``nvml`` is required then).
    MIG instances are refused: whole-GPU memory is not what a MIG slice uses.
    """
    raw = os.environ.get("CUDA_VISIBLE_DEVICES", "") if visible is None else visible
    first = raw.split(",")[0].strip()
    if first == "" or first.isdigit():
        return int(first) if first else 0
    if first.startswith("MIG-"):
        raise DeviceSelectionError(
            f"CUDA_VISIBLE_DEVICES={raw!r} selects a MIG instance; the closure run samples a "
            "whole GPU. Give a GPU index or a GPU-... UUID."
        )
    if first.startswith("GPU-") and nvml is not None:
        for index in range(int(nvml.nvmlDeviceGetCount())):
            uuid = _as_text(nvml.nvmlDeviceGetUUID(nvml.nvmlDeviceGetHandleByIndex(index)))
            if uuid.startswith(first):  # CUDA accepts a unique prefix of the UUID
                return index
        raise DeviceSelectionError(f"CUDA_VISIBLE_DEVICES={raw!r}: no GPU with UUID {first}")
    raise DeviceSelectionError(
        f"CUDA_VISIBLE_DEVICES={raw!r}: cannot map {first!r} to an NVML index"
        + ("" if nvml is not None else " without NVML")
    )


@dataclass(frozen=True)
class Sample:
    t_s: float
    gpu_used_mb: float | None
    host_used_mb: float | None
    reason: SampleKind
    # The phase boundary that triggered a boundary sample ("update:start");
    # kept for debugging, not written to the result file.
    at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The result file's resource_sample shape."""
        return {
            "t_s": self.t_s,
            "gpu_used_mb": self.gpu_used_mb,
            "host_used_mb": self.host_used_mb,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ChildSampling:
    """Take the periodic samples in a child process (:mod:`rlsys_closure.sample_child`).

    ``nvml`` names the NVML the child loads (``"module:attr"``, called with no
    arguments, or ``"none"``); ``out`` is the file its readings go to.
    ``start_timeout_s`` bounds the wait for its first reading: a child that
    does not start in time is stopped and the sampler falls back to a thread,
    recording why in :attr:`MemorySampler.errors`.
    """

    nvml: str
    out: Path
    start_timeout_s: float = 60.0
    stop_timeout_s: float = 10.0


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent)


class MemorySampler:
    """Samples every ``interval_s``, and on demand (boundary samples).

    The periodic series runs in a daemon thread, or, given ``child``, in a
    child process whose interpreter the caller's imports and C calls cannot
    hold (the group driver uses this; see :mod:`rlsys_closure.sample_child`).
    Boundary samples are always taken synchronously, in the caller.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. Pass
    :meth:`boundary_hook` to an :class:`~rlsys_closure.events.EventRecorder` to
    get a synchronous sample at every phase edge.
    """

    def __init__(
        self,
        nvml: NvmlLike | None,
        *,
        device_index: int = 0,
        interval_s: float = 0.25,
        clock: Clock = time.monotonic,
        host_probe: Callable[[], float] | None = host_used_mb,
        boundary_samples: bool = True,
        child: ChildSampling | None = None,
    ) -> None:
        if not interval_s > 0:
            raise ValueError(f"sampling interval must be positive, got {interval_s!r}")
        if child is not None and clock is not time.monotonic:
            # The child reads CLOCK_MONOTONIC; another clock would not line up.
            raise ValueError("child sampling needs the time.monotonic clock")
        self._nvml = nvml
        self._device_index = device_index
        self.interval_s = float(interval_s)
        self._clock = clock
        self._host_probe = host_probe
        self.boundary_samples = boundary_samples
        self._handle: Any = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.samples: list[Sample] = []
        self.errors: list[str] = []
        self.child = child
        self._proc: subprocess.Popen[bytes] | None = None
        self._child_stderr: IO[bytes] | None = None
        # Where the periodic series actually came from: "thread" or "process".
        self.periodic_source: str | None = None
        self.child_priority: str | None = None

    # -- lifecycle -----------------------------------------------------------
    def open(self) -> None:
        if self._nvml is not None and self._handle is None:
            self._nvml.nvmlInit()
            self._handle = self._nvml.nvmlDeviceGetHandleByIndex(self._device_index)

    def start(self) -> None:
        self.open()
        if self._thread is not None or self._proc is not None:
            return
        if self.child is not None and self._start_child(self.child):
            self.periodic_source = "process"
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="rlsys-mem-sampler", daemon=True)
        self._thread.start()
        self.periodic_source = "thread"

    def _start_child(self, child: ChildSampling) -> bool:
        """Start the sampling process and wait (bounded) for its first reading."""
        child.out.parent.mkdir(parents=True, exist_ok=True)
        # A fresh file for this series: the child creates it (exclusively), so readings of an
        # earlier attempt of the label (or of a sampler that outlived it, still appending
        # to the old file) can never join this one.
        child.out.unlink(missing_ok=True)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_package_root(), env.get("PYTHONPATH")) if p
        )
        cmd = [
            sys.executable,
            "-m",
            "rlsys_closure.sample_child",
            "--interval",
            repr(self.interval_s),
            "--device-index",
            str(self._device_index),
            "--nvml",
            child.nvml,
            "--out",
            str(child.out),
        ]
        try:
            self._child_stderr = open(child.out.with_suffix(".stderr"), "wb")  # noqa: SIM115
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=self._child_stderr,
                env=env,
            )
        except OSError as exc:
            self._note(f"sampler process did not start ({exc}); sampling in a thread")
            return False
        deadline = time.monotonic() + child.start_timeout_s
        while time.monotonic() < deadline:
            lines = self._child_lines()
            if lines and "fatal" in lines[0]:
                self._note(f"sampler process failed: {lines[0]['fatal']}; sampling in a thread")
                self._stop_child()
                return False
            if any("t_s" in line for line in lines):
                return True
            if self._proc.poll() is not None:
                self._note(
                    f"sampler process exited with {self._proc.returncode} before its first "
                    f"reading (see {child.out.with_suffix('.stderr')}); sampling in a thread"
                )
                self._stop_child()
                return False
            time.sleep(0.02)
        self._note(
            f"sampler process gave no reading within {child.start_timeout_s:g} s; "
            "sampling in a thread"
        )
        self._stop_child()
        return False

    def _child_lines(self) -> list[dict[str, Any]]:
        if self.child is None:
            return []
        try:
            text = self.child.out.read_text(encoding="utf-8")
        except OSError:
            return []
        out = []
        for line in text.splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # the last line may be half written
            if isinstance(obj, dict):
                out.append(obj)
        return out

    def _stop_child(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        timeout = self.child.stop_timeout_s if self.child is not None else 10.0
        if proc.poll() is not None:
            # Ended on its own mid-run: its series stops there, and the file says why.
            self._note(f"sampler process ended early with exit code {proc.returncode}")
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # end-of-file is the child's stop signal
        except OSError:
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._note(f"sampler process did not stop within {timeout:g} s; killed")
            proc.kill()
            proc.wait(timeout=timeout)
        if self._child_stderr is not None:
            self._child_stderr.close()
            self._child_stderr = None

    def _child_samples(self) -> list[Sample]:
        out: list[Sample] = []
        for line in self._child_lines():
            if "t_s" in line:
                out.append(
                    Sample(
                        float(line["t_s"]),
                        line.get("gpu_used_mb"),
                        line.get("host_used_mb"),
                        "periodic",
                    )
                )
            elif "priority" in line:
                self.child_priority = str(line["priority"])
            elif "error" in line:
                msg = f"sampler process: {line['error']}"
                if msg not in self.errors:
                    self._note(msg)
        return out

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(5.0, 4 * self.interval_s))
            self._thread = None
        if self._proc is not None:
            self._stop_child()
        if self._nvml is not None and self._handle is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception as exc:  # shutting down must never mask the run's own result
                self.errors.append(f"nvmlShutdown: {exc}")
            self._handle = None

    def __enter__(self) -> MemorySampler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        # Event.wait rather than sleep so stop() does not wait a whole interval.
        while not self._stop.is_set():
            self.sample("periodic")
            if self._stop.wait(self.interval_s):
                break

    # -- reading -------------------------------------------------------------
    def _gpu_used_mb(self) -> float | None:
        if self._nvml is None:
            return None
        if self._handle is None:
            self.open()
        info = self._nvml.nvmlDeviceGetMemoryInfo(self._handle)
        return float(info.used) / MIB

    def sample(self, reason: SampleKind = "periodic", at: str | None = None) -> Sample | None:
        """Take one sample now. A failed read is recorded, never raised."""
        t = self._clock()
        gpu: float | None = None
        host: float | None = None
        try:
            gpu = self._gpu_used_mb()
        except Exception as exc:
            self._note(f"gpu read at {t:.3f}: {type(exc).__name__}: {exc}")
        try:
            host = self._host_probe() if self._host_probe is not None else None
        except Exception as exc:
            self._note(f"host read at {t:.3f}: {type(exc).__name__}: {exc}")
        if gpu is None and host is None:
            return None
        s = Sample(t, gpu, host, reason, at)
        with self._lock:
            self.samples.append(s)
        return s

    def _note(self, message: str) -> None:
        with self._lock:
            # A broken device would otherwise add one line per interval for hours.
            if len(self.errors) < 100:
                self.errors.append(message)

    def boundary_hook(self, phase: str, edge: Edge) -> None:
        if self.boundary_samples:
            self.sample("boundary", at=f"{phase}:{edge}")

    def snapshot(self) -> list[Sample]:
        """Every sample so far, in time order (the child's periodic ones included)."""
        child = self._child_samples() if self.periodic_source == "process" else []
        with self._lock:
            return sorted([*self.samples, *child], key=lambda s: s.t_s)


def samples_in(samples: list[Sample], start: float, end: float) -> list[Sample]:
    """Samples whose time lies in the closed window [start, end]."""
    return [s for s in samples if start <= s.t_s <= end]
