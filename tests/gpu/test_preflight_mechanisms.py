"""Preflight's OS-mechanism probes: CUDA IPC, cuMem sleep/wake, NVML's process list, /dev/shm.

The rule (gpu/README.md, "What preflight proves"): each mechanism the pair
depends on is tried for real in seconds before any model loads; a missing one
fails preflight (exit 3) naming the mechanism and what to do; NVML's process
list only warns, because the run does not need it. The probe's JSON is faked
here (no GPU); the probe script itself runs for real in its no-GPU mode, and
its mechanism functions run against fake torch / NVML / vLLM objects.
"""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from rlsys_closure import gpu_probe
from rlsys_closure import preflight as pf
from test_preflight import GOOD_MECHANISMS, healthy  # noqa: F401  (fixture)


def _with(monkeypatch: pytest.MonkeyPatch, **mechanisms: Any) -> None:
    found = {**GOOD_MECHANISMS, **mechanisms}
    monkeypatch.setattr(pf, "gpu_mechanisms_probe", lambda timeout_s=0: found)


def _by_name(results: list[pf.CheckResult]) -> dict[str, pf.CheckResult]:
    return {r.name: r for r in results}


def test_refused_cuda_ipc_fails_preflight_with_what_to_do(
    healthy: pf.PreflightOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with(
        monkeypatch,
        cuda_ipc={
            "status": "fail",
            "detail": "the receiving process could not open it: RuntimeError: "
            "cudaIpcOpenMemHandle failed: operation not permitted",
            "hint": gpu_probe.IPC_HINT,
        },
    )
    results = pf.run_checks(healthy)
    ipc = _by_name(results)["cuda_ipc"]
    assert ipc.status == "fail" and pf.exit_code(results) == pf.EXIT_NOT_READY
    assert "cudaIpcOpenMemHandle" in ipc.detail
    assert "--ipc=host" in ipc.detail and "SYS_PTRACE" in ipc.detail
    assert "weight sync" in ipc.detail


def test_cumem_sleep_that_frees_nothing_fails(
    healthy: pf.PreflightOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with(
        monkeypatch,
        cumem_sleep={
            "status": "fail",
            "detail": "NVML saw 0 MiB freed by sleeping 256 MiB",
            "hint": gpu_probe.CUMEM_HINT,
        },
    )
    results = pf.run_checks(healthy)
    assert _by_name(results)["cumem_sleep"].status == "fail"
    assert "virtual memory" in _by_name(results)["cumem_sleep"].detail
    assert pf.exit_code(results) == pf.EXIT_NOT_READY


@pytest.mark.parametrize(
    "reported",
    [
        {
            "status": "warn",
            "detail": "NVML cannot list GPU processes here (NVMLError: Not Supported)",
        },
        {"status": "warn", "detail": "NVML lists 3 process(es) but not this probe (pid 12)"},
        {"status": "fail", "detail": "probe error: NVMLError_Unknown"},
    ],
)
def test_an_nvml_process_list_that_raises_or_lies_only_warns(
    healthy: pf.PreflightOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    reported: dict[str, Any],
) -> None:
    _with(monkeypatch, nvml_processes=reported)
    results = pf.run_checks(healthy)
    assert _by_name(results)["nvml_processes"].status == "warn"
    assert pf.exit_code(results) == pf.EXIT_OK


def test_a_probe_that_hangs_or_crashes_fails_every_mechanism(
    healthy: pf.PreflightOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def hang(timeout_s: float = 0) -> dict[str, Any]:
        raise subprocess.TimeoutExpired("gpu_probe", timeout_s)

    monkeypatch.setattr(pf, "gpu_mechanisms_probe", hang)
    by = _by_name(pf.run_checks(healthy))
    assert {by[n].status for n in pf.MECHANISMS} == {"fail"}
    assert "did not finish within" in by["cuda_ipc"].detail

    monkeypatch.setattr(
        pf, "gpu_mechanisms_probe", lambda timeout_s=0: (_ for _ in ()).throw(RuntimeError("segv"))
    )
    by = _by_name(pf.run_checks(healthy))
    assert "segv" in by["cumem_sleep"].detail and by["cumem_sleep"].status == "fail"

    monkeypatch.setattr(pf, "gpu_mechanisms_probe", lambda timeout_s=0: {"cuda_ipc": "?"})
    by = _by_name(pf.run_checks(healthy))
    assert by["cuda_ipc"].status == "fail" and "reported nothing" in by["cuda_ipc"].detail


def test_no_cuda_skips_the_mechanisms(
    healthy: pf.PreflightOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    called: list[float] = []
    monkeypatch.setattr(
        pf, "gpu_mechanisms_probe", lambda timeout_s=0: called.append(timeout_s) or {}
    )
    monkeypatch.setattr(pf, "cuda_probe", lambda timeout_s=0: {"available": False})
    by = _by_name(pf.run_checks(healthy))
    assert called == [] and {by[n].status for n in pf.MECHANISMS} == {"skip"}


@pytest.mark.parametrize(
    ("total_mib", "free_mib", "status"),
    [(64, 64, "fail"), (8192, 512, "fail"), (8192, 8000, "pass"), (1024, 1024, "pass")],
)
def test_dev_shm_smaller_than_vllm_needs_fails_naming_shm_size(
    healthy: pf.PreflightOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    total_mib: int,
    free_mib: int,
    status: str,
) -> None:
    monkeypatch.setattr(pf, "shm_usage", lambda: (total_mib * 2**20, free_mib * 2**20))
    shm = _by_name(pf.run_checks(healthy))["shm"]
    assert shm.status == status
    if status == "fail":
        assert "--shm-size" in shm.detail and f"{free_mib} MiB free" in shm.detail


def test_dev_shm_missing_fails(
    healthy: pf.PreflightOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def gone() -> tuple[int, int]:
        raise FileNotFoundError(2, "No such file or directory", "/dev/shm")

    monkeypatch.setattr(pf, "shm_usage", gone)
    shm = _by_name(pf.run_checks(healthy))["shm"]
    assert shm.status == "fail" and "--shm-size" in shm.detail


@pytest.mark.slow
def test_the_probe_script_on_a_machine_without_cuda_skips_cleanly() -> None:
    pytest.importorskip("torch")
    env = {
        "PYTHONPATH": str(Path(pf.__file__).resolve().parent.parent),
        "PATH": "/usr/bin:/bin",
        "CUDA_VISIBLE_DEVICES": "",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "rlsys_closure.gpu_probe"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["cuda"]["available"] is False
    assert {found[n]["status"] for n in pf.MECHANISMS} == {"skip"}


# -- the probe's own mechanism functions, against fakes ------------------------------------
class _Proc:
    def __init__(self, pid: int) -> None:
        self.pid, self.usedGpuMemory = pid, 1 << 20


class _Nvml:
    def __init__(self, pids: list[int] | None, used: list[float] | None = None) -> None:
        self.pids, self.used = pids, list(used or [])

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetComputeRunningProcesses(self, h: int) -> list[_Proc]:
        if self.pids is None:
            raise RuntimeError("NVMLError_NotSupported")
        return [_Proc(p) for p in self.pids]

    def nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        return types.SimpleNamespace(used=int(self.used.pop(0) * 2**20), total=1 << 40)


def test_probe_nvml_processes_tells_a_namespace_from_a_refusal() -> None:
    import os

    assert gpu_probe.probe_nvml_processes(_Nvml([1, os.getpid()]), 0)["status"] == "pass"
    hidden = gpu_probe.probe_nvml_processes(_Nvml([999999]), 0)
    assert hidden["status"] == "warn" and "PID namespace" in hidden["detail"]
    refused = gpu_probe.probe_nvml_processes(_Nvml(None), 0)
    assert refused["status"] == "warn" and "NVMLError_NotSupported" in refused["detail"]


class _Tensor:
    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        return types.SimpleNamespace(all=lambda: types.SimpleNamespace(item=lambda: True))


def _fake_torch() -> Any:
    cuda = types.SimpleNamespace(synchronize=lambda *a: None)
    return types.SimpleNamespace(full=lambda *a, **k: _Tensor(), cuda=cuda)


def _fake_vllm(monkeypatch: pytest.MonkeyPatch, sleep_error: Exception | None = None) -> None:
    import contextlib

    class Allocator:
        @classmethod
        def get_instance(cls) -> Allocator:
            return cls()

        @contextlib.contextmanager
        def use_memory_pool(self, tag: str) -> Any:
            yield

        def sleep(self, offload_tags: tuple[str, ...]) -> None:
            if sleep_error is not None:
                raise sleep_error

        def wake_up(self, tags: Any = None) -> None:
            return None

    mod = types.ModuleType("vllm.device_allocator.cumem")
    mod.CuMemAllocator = Allocator  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm.device_allocator.cumem", mod)


def test_probe_cumem_needs_nvml_to_see_the_memory_go(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_vllm(monkeypatch)
    ok = gpu_probe.probe_cumem(_fake_torch(), _Nvml([], [1000.0, 744.0, 1000.0]), 0, 256)
    assert ok["status"] == "pass" and ok["nvml_asleep_mb"] == 744.0
    kept = gpu_probe.probe_cumem(_fake_torch(), _Nvml([], [1000.0, 990.0, 1000.0]), 0, 256)
    assert kept["status"] == "fail" and "10 MiB freed" in kept["detail"]
    _fake_vllm(monkeypatch, RuntimeError("CUDA Error: operation not supported (cuMemCreate)"))
    broken = gpu_probe.probe_cumem(_fake_torch(), _Nvml([], [1000.0]), 0, 256)
    assert broken["status"] == "fail" and "cuMemCreate" in broken["detail"]
    monkeypatch.setitem(sys.modules, "vllm.device_allocator.cumem", None)
    assert gpu_probe.probe_cumem(_fake_torch(), _Nvml([]), 0, 256)["status"] == "skip"


# -- the Triton kernel: a stand-in triton package whose launch does what a real one would
_FAKE_TRITON = {
    "__init__.py": (
        "__version__ = '3.6.0'\n"
        "MODE = {mode!r}\n"
        "class _Kernel:\n"
        "    def __init__(self, fn):\n"
        "        self.fn = fn\n"
        "    def __getitem__(self, grid):\n"
        "        def launch(x, out, n, BLOCK):\n"
        "            if MODE == 'no_compiler':\n"
        "                raise RuntimeError('Failed to find C compiler. Please specify via CC "
        "environment variable.')\n"
        "            out.copy_(x + (1 if MODE == 'ok' else 2))\n"
        "        return launch\n"
        "def jit(fn):\n"
        "    return _Kernel(fn)\n"
    ),
    "language.py": "constexpr = int\n",
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "status", "said"),
    [
        ("ok", "pass", "Triton 3.6.0 built and ran a kernel"),
        ("no_compiler", "fail", "Failed to find C compiler"),
        ("wrong", "fail", "computed wrong values"),
    ],
)
def test_triton_probe_builds_and_checks_one_kernel(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str, status: str, said: str
) -> None:
    torch = pytest.importorskip("torch")
    package = tmp_path / "triton"
    package.mkdir()
    for name, text in _FAKE_TRITON.items():
        (package / name).write_text(text.format(mode=mode))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("triton", "triton.language", "rlsys_triton_probe"):
        # Recorded as absent, so that the stand-in this test imports is gone after it: a
        # later first import of torch._dynamo would take it for the real Triton.
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    got = gpu_probe.probe_triton(torch, device="cpu")
    assert got["status"] == status and said in got["detail"], got
    if mode == "no_compiler":
        assert got["hint"] == gpu_probe.TRITON_HINT and "build-essential" in got["hint"]


def test_without_triton_the_kernel_probe_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setitem(sys.modules, "triton", None)  # import triton raises ImportError
    assert gpu_probe.probe_triton(torch, device="cpu")["status"] == "skip"


def test_a_triton_that_cannot_build_fails_preflight_with_what_to_install(
    healthy: pf.PreflightOptions,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with(
        monkeypatch,
        triton_jit={
            "status": "fail",
            "detail": "Triton 3.6.0 could not build or launch a kernel: RuntimeError: "
            "Failed to find C compiler",
            "hint": gpu_probe.TRITON_HINT,
        },
    )
    results = pf.run_checks(healthy)
    triton = _by_name(results)["triton_jit"]
    assert triton.status == "fail" and pf.exit_code(results) == pf.EXIT_NOT_READY
    assert "build-essential" in triton.detail
