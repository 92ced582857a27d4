"""Preflight: is this machine ready for the release/retain pair?

Every check is a function returning a :class:`CheckResult`; nothing here raises
for a missing or broken dependency. Imports are probed with a catch-all,
because a rollout package can fail with something other than ImportError
(verl's vLLM shim raises ValueError when vLLM is absent, a CUDA-built wheel can
raise OSError on a CPU box). CUDA itself is probed in a child process so this
process never holds a CUDA context.

Exit codes (also used by ``run``): see :data:`EXIT_CODES`.
"""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from rlsys_closure.gpu_probe import MECHANISMS as MECHANISMS
from rlsys_closure.machine_probes import (
    build_tools_probe,
    cuda_probe,
    disk_free_bytes,
    dist_version,
    gpu_mechanisms_probe,
    hf_hub_cache,
    nvml_probe,
    one_line,
    probe_module,
    shm_usage,
)
from rlsys_closure.sampler import host_memory

Status = Literal["pass", "fail", "warn", "skip"]

EXIT_OK = 0
EXIT_ERROR = 1  # bad input (a file that is not a result file, ...)
EXIT_USAGE = 2  # bad arguments (argparse's own code), a named input file not there
EXIT_NOT_READY = 3  # the environment cannot run the experiment
EXIT_MODEL_CACHE = 4  # ready except for the model cache
EXIT_RUN_FAILED = 5  # run failed mid-way; a partial result file was written
EXIT_EXISTS = 6  # run refused: a result file for this label exists
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "ready",
    EXIT_ERROR: "error in the input",
    EXIT_USAGE: "bad arguments, or a named input file that is not there",
    EXIT_NOT_READY: "environment not ready (see the failed checks)",
    EXIT_MODEL_CACHE: "ready except for the model cache (run fetches the pinned revision)",
    EXIT_RUN_FAILED: "run failed mid-way (partial result file written, marked failed)",
    EXIT_EXISTS: "a result file for this run label already exists",
}

VERL_VERSION = "0.9.1"
DEFAULT_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
# The snapshot the chapter's figures came from; pinned so a rerun loads the same bytes.
DEFAULT_MODEL_REVISION = "7ae557604adf67be50417f59c2c2f167def9a775"
PYTHON_RANGE = ((3, 10), (3, 13))  # verl 0.9.1: Requires-Python >=3.10,<3.13
# What verl 0.9.1 declares (wheel METADATA) for the packages the run leans on,
# narrowed where the run needs it: peft 0.21 selects adapter tensors by module
# path, which under verl's FSDP1 wrapping (utils/fsdp_utils.py:115-125) no longer
# matches the state-dict keys, so verl's collect_lora_params (fsdp_utils.py:715)
# returns nothing and no LoRA tensor reaches the rollout (reproduced on CPU).
DEPENDENCY_SPECS: dict[str, str] = {
    "torch": ">=2.6",
    "transformers": ">=5.5.3,<5.11,!=5.6.0",
    "tensordict": ">=0.8.0,<=0.10.0,!=0.9.0",
    "ray": ">=2.41.0",
    "peft": "<0.21",
    "hydra-core": "",
    "omegaconf": "",
    "huggingface-hub": "",
    "nvidia-ml-py": "",
}
ENGINE_MODULES: dict[str, tuple[str, str]] = {
    # engine -> (the engine's own package, verl's adapter module for it)
    "vllm": ("vllm", "verl.workers.rollout.vllm_rollout"),
}
VERL_CORE_MODULES = (
    "verl.workers.engine_workers",
    "verl.checkpoint_engine",
    "verl.workers.rollout.llm_server",
    "verl.workers.utils.losses",
    "verl.single_controller.ray",
)
GIB = 1024**3


@dataclass
class CheckResult:
    name: str
    status: Status
    detail: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PreflightOptions:
    engine: str = "vllm"
    model: str = DEFAULT_MODEL
    model_revision: str = DEFAULT_MODEL_REVISION
    model_path: Path | None = None
    output_dir: Path = Path(".")
    min_disk_gib: float = 5.0
    min_host_available_gib: float = 8.0
    cuda_probe_timeout_s: float = 120.0
    compile_probe_timeout_s: float = 60.0
    # The mechanisms probe imports torch twice (it spawns a receiver) and vLLM once.
    mechanisms_probe_timeout_s: float = 240.0
    # vLLM's multi-process executor (verl forces it even on one GPU) keeps its
    # message queues in /dev/shm; Docker's default 64 MiB fails minutes in.
    min_shm_gib: float = 1.0


# -- helpers ------------------------------------------------------------------
def version_satisfies(version: str, spec: str) -> bool | None:
    """True/False, or None when the version or spec cannot be parsed."""
    if not spec:
        return True
    try:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        # Local tags (+cpu, +cu130) must not make a release look newer or older.
        return Version(version).public in SpecifierSet(spec) or Version(version) in SpecifierSet(
            spec
        )
    except Exception:
        return None


def model_files_problem(folder: Path) -> str | None:
    """None when ``folder`` holds a loadable HF model, else what is missing."""
    if not folder.is_dir():
        return f"{folder} is not a folder"
    missing = []
    if not (folder / "config.json").is_file():
        missing.append("config.json")
    if not any((folder / n).is_file() for n in ("tokenizer.json", "tokenizer_config.json")):
        missing.append("tokenizer files")
    if not any(folder.glob("*.safetensors")):
        missing.append("*.safetensors weights")
    return f"{folder} lacks {', '.join(missing)}" if missing else None


def cached_snapshot(repo_id: str, revision: str, cache: Path | None = None) -> Path | None:
    """The snapshot folder of ``repo_id`` at ``revision`` in the HF cache, if any."""
    root = (cache or hf_hub_cache()) / ("models--" + repo_id.replace("/", "--"))
    if re.fullmatch(r"[0-9a-f]{40}", revision):
        commit = revision
    else:
        ref = root / "refs" / revision
        try:
            commit = ref.read_text(encoding="ascii").strip()
        except OSError:
            return None
    snap = root / "snapshots" / commit
    return snap if snap.is_dir() else None


# -- checks -------------------------------------------------------------------
def check_python(opts: PreflightOptions) -> CheckResult:
    v = sys.version_info[:2]
    lo, hi = PYTHON_RANGE
    data = {"version": platform.python_version(), "executable": sys.executable}
    if lo <= v < hi:
        return CheckResult("python", "pass", f"Python {platform.python_version()}", data)
    return CheckResult(
        "python",
        "fail",
        f"Python {platform.python_version()}; verl {VERL_VERSION} needs >=3.10,<3.13",
        data,
    )


def check_build_tools(opts: PreflightOptions) -> CheckResult:
    dev = f"python{sys.version_info.major}.{sys.version_info.minor}-dev"
    hint = (
        "Triton, which vLLM runs its kernels with, builds them with both on first use: "
        f"apt-get install build-essential {dev} (or set CC to a C compiler)"
    )
    try:
        info = build_tools_probe(opts.compile_probe_timeout_s)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return CheckResult("build_tools", "fail", f"the compile probe failed: {one_line(exc)}")
    missing = []
    if info["cc"] is None:
        env = info.get("cc_env")
        missing.append(f"CC={env!r} is not a program" if env else "no C compiler (clang or gcc)")
    if not info["python_h"]:
        missing.append(f"no Python.h in {info['include']}")
    if missing:
        return CheckResult("build_tools", "fail", f"{'; '.join(missing)}. {hint}", info)
    if info.get("compile_error"):
        return CheckResult(
            "build_tools",
            "fail",
            f"{info['cc']} cannot build against Python.h: {info['compile_error']}. {hint}",
            info,
        )
    return CheckResult(
        "build_tools", "pass", f"{info['cc']} builds against {info['include']}/Python.h", info
    )


def check_nvml(opts: PreflightOptions) -> CheckResult:
    try:
        info = nvml_probe()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return CheckResult("nvml", "fail", f"NVML unavailable: {one_line(exc)}")
    if info.get("device_count", 0) < 1:
        return CheckResult("nvml", "fail", "NVML sees no GPU", info)
    gpu = info["gpus"][0]
    return CheckResult(
        "nvml",
        "pass",
        f"{gpu['name']}, {gpu['memory_total_mb']} MiB, driver {info['driver_version']}",
        info,
    )


def check_cuda(opts: PreflightOptions) -> CheckResult:
    try:
        info = cuda_probe(opts.cuda_probe_timeout_s)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return CheckResult("cuda", "fail", f"torch CUDA probe failed: {one_line(exc)}")
    if not info.get("available"):
        return CheckResult(
            "cuda", "fail", f"torch {info.get('torch')} reports no usable CUDA device", info
        )
    return CheckResult(
        "cuda",
        "pass",
        f"torch {info.get('torch')}, CUDA {info.get('cuda')}, {info.get('device_count')} device(s)",
        info,
    )


def check_mechanisms(opts: PreflightOptions, cuda_ok: bool) -> list[CheckResult]:
    """CUDA IPC, vLLM's cuMem sleep/wake seen by NVML, a Triton kernel, NVML's process list.

    One child process tries each for real (seconds, no model). A failed
    mechanism fails preflight with what to do; NVML's process list can only warn:
    the run does not need it, only one line of its evidence does.
    """
    if not cuda_ok:
        return [CheckResult(n, "skip", "no usable CUDA device") for n in MECHANISMS]
    try:
        found = gpu_mechanisms_probe(opts.mechanisms_probe_timeout_s)
    except KeyboardInterrupt:
        raise
    except subprocess.TimeoutExpired:
        return [
            CheckResult(
                n,
                "fail",
                f"the mechanisms probe did not finish within {opts.mechanisms_probe_timeout_s:g}"
                " s (a CUDA IPC receiver that never opens its handle hangs the same way)",
            )
            for n in MECHANISMS
        ]
    except BaseException as exc:
        return [
            CheckResult(n, "fail", f"the mechanisms probe failed: {one_line(exc)}")
            for n in MECHANISMS
        ]
    out = []
    for name in MECHANISMS:
        got = found.get(name)
        if not isinstance(got, dict) or got.get("status") not in ("pass", "fail", "warn", "skip"):
            out.append(CheckResult(name, "fail", f"the probe reported nothing for {name}"))
            continue
        status = got["status"]
        if name == "nvml_processes" and status == "fail":
            status = "warn"  # never fail the run for a list only smoke's evidence reads
        if name == "cumem_sleep" and status == "skip" and opts.engine == "vllm":
            # vLLM absent or broken: rollout_engine already fails; say so here too.
            status = "skip"
        detail = str(got.get("detail", ""))
        if status == "fail" and got.get("hint"):
            detail = f"{detail}. {got['hint']}"
        data = {k: v for k, v in got.items() if k not in ("status", "detail")}
        out.append(CheckResult(name, status, detail, data))
    return out


def check_shm(opts: PreflightOptions) -> CheckResult:
    try:
        total, free = shm_usage()
    except OSError as exc:
        return CheckResult(
            "shm",
            "fail",
            f"/dev/shm unusable ({one_line(exc)}): vLLM's multi-process engine needs it; "
            "in Docker start the container with --shm-size=8g (or --ipc=host)",
        )
    data = {"total_bytes": total, "free_bytes": free}
    if free < opts.min_shm_gib * GIB:
        return CheckResult(
            "shm",
            "fail",
            f"/dev/shm has {free / 2**20:.0f} MiB free of {total / 2**20:.0f} MiB; vLLM's "
            f"multi-process engine (verl uses it even on one GPU) needs at least "
            f"{opts.min_shm_gib:g} GiB. In Docker start the container with --shm-size=8g "
            "(or --ipc=host); on a host, remount: mount -o remount,size=8G /dev/shm",
            data,
        )
    return CheckResult("shm", "pass", f"/dev/shm {free / GIB:.1f} GiB free", data)


def check_verl(opts: PreflightOptions) -> CheckResult:
    probe = probe_module("verl")
    if not probe.ok:
        return CheckResult("verl", "fail", f"verl does not import: {probe.error}")
    version = probe.version or dist_version("verl")
    if version != VERL_VERSION:
        return CheckResult(
            "verl",
            "fail",
            f"verl {version} installed; the runner needs {VERL_VERSION}",
            {"version": version},
        )
    return CheckResult("verl", "pass", f"verl {version}", {"version": version})


def check_verl_core(opts: PreflightOptions, verl_ok: bool) -> CheckResult:
    if not verl_ok:
        return CheckResult("verl_core", "skip", "verl itself is not usable")
    broken = {}
    for name in VERL_CORE_MODULES:
        probe = probe_module(name)
        if not probe.ok:
            broken[name] = probe.error
    if broken:
        first = next(iter(broken.items()))
        return CheckResult(
            "verl_core",
            "fail",
            f"{len(broken)} verl module(s) do not import, e.g. {first[0]}: {first[1]}"
            " (install verl[verl-core])",
            {"broken": broken},
        )
    return CheckResult("verl_core", "pass", "driver-side verl modules import", {})


def check_rollout_engine(opts: PreflightOptions, verl_ok: bool) -> CheckResult:
    if opts.engine not in ENGINE_MODULES:
        return CheckResult("rollout_engine", "fail", f"unknown engine {opts.engine!r}; use vllm")
    package, adapter = ENGINE_MODULES[opts.engine]
    probe = probe_module(package)
    data: dict[str, Any] = {"engine": opts.engine}
    if not probe.ok:
        return CheckResult(
            "rollout_engine", "fail", f"{package} does not import: {probe.error}", data
        )
    data["version"] = probe.version or dist_version(package)
    if not verl_ok:
        return CheckResult(
            "rollout_engine",
            "warn",
            f"{package} {data['version']} imports; verl's adapter not checked (no verl)",
            data,
        )
    aprobe = probe_module(adapter)
    if not aprobe.ok:
        return CheckResult(
            "rollout_engine",
            "fail",
            f"verl's {package} adapter does not import: {aprobe.error}",
            data,
        )
    return CheckResult("rollout_engine", "pass", f"{package} {data['version']}", data)


def check_dependencies(opts: PreflightOptions) -> CheckResult:
    versions: dict[str, str | None] = {}
    problems: list[str] = []
    for dist, spec in DEPENDENCY_SPECS.items():
        v = dist_version(dist)
        versions[dist] = v
        if v is None:
            problems.append(f"{dist} missing")
        elif version_satisfies(v, spec) is False:
            problems.append(f"{dist} {v} outside {spec}")
    data = {"versions": versions, "required": DEPENDENCY_SPECS}
    if problems:
        return CheckResult("dependencies", "fail", "; ".join(problems), data)
    return CheckResult(
        "dependencies", "pass", ", ".join(f"{k} {v}" for k, v in versions.items()), data
    )


def check_attention(opts: PreflightOptions) -> CheckResult:
    # verl's actor asks for flash_attention_2 unless told otherwise; without
    # flash-attn the runner overrides attn_implementation=sdpa in BOTH groups.
    probe = probe_module("flash_attn")
    if probe.ok:
        return CheckResult("attention", "pass", f"flash_attn {probe.version}", {"impl": "flash"})
    return CheckResult(
        "attention",
        "warn",
        f"flash_attn unavailable ({probe.error}); both groups use sdpa",
        {"impl": "sdpa"},
    )


def check_disk(opts: PreflightOptions) -> CheckResult:
    places = {"output": opts.output_dir, "hf_cache": hf_hub_cache()}
    free = {}
    low = []
    for key, p in places.items():
        try:
            free[key] = disk_free_bytes(p)
        except OSError as exc:
            return CheckResult("disk", "fail", f"cannot stat {p}: {one_line(exc)}")
        if free[key] < opts.min_disk_gib * GIB:
            low.append(f"{key} ({p}) has {free[key] / GIB:.1f} GiB free")
    data = {k: {"path": str(places[k]), "free_bytes": v} for k, v in free.items()}
    if low:
        return CheckResult(
            "disk", "fail", "; ".join(low) + f"; need {opts.min_disk_gib:g} GiB", data
        )
    return CheckResult(
        "disk", "pass", ", ".join(f"{k} {v / GIB:.1f} GiB free" for k, v in free.items()), data
    )


def check_host_memory(opts: PreflightOptions) -> CheckResult:
    try:
        mem = host_memory()
    except Exception as exc:
        return CheckResult("host_memory", "fail", f"cannot read host memory: {one_line(exc)}")
    avail = mem["available"] / GIB
    if avail < opts.min_host_available_gib:
        return CheckResult(
            "host_memory",
            "fail",
            f"{avail:.1f} GiB available; need {opts.min_host_available_gib:g} GiB "
            "(vLLM's level-1 sleep parks the weights in host memory)",
            mem,
        )
    return CheckResult("host_memory", "pass", f"{avail:.1f} GiB available", mem)


def check_model_cache(opts: PreflightOptions) -> CheckResult:
    if opts.model_path is not None:
        problem = model_files_problem(opts.model_path)
        data = {"path": str(opts.model_path)}
        if problem:
            return CheckResult("model_cache", "fail", problem, data)
        return CheckResult("model_cache", "pass", f"model folder {opts.model_path}", data)
    cache = hf_hub_cache()
    snap = cached_snapshot(opts.model, opts.model_revision, cache)
    data = {"model": opts.model, "revision": opts.model_revision, "cache": str(cache)}
    if snap is None:
        return CheckResult(
            "model_cache",
            "fail",
            f"{opts.model}@{opts.model_revision[:12]} not in {cache}; "
            "`run` fetches it when a network is there",
            data,
        )
    problem = model_files_problem(snap)
    data["path"] = str(snap)
    if problem:
        return CheckResult("model_cache", "fail", problem, data)
    return CheckResult("model_cache", "pass", f"{opts.model} at {snap}", data)


MODEL_CACHE_CHECK = "model_cache"


def run_checks(opts: PreflightOptions) -> list[CheckResult]:
    cuda = check_cuda(opts)
    results = [check_python(opts), check_build_tools(opts), check_nvml(opts), cuda]
    results += check_mechanisms(opts, cuda.status == "pass")
    results.append(check_shm(opts))
    verl = check_verl(opts)
    results += [
        verl,
        check_verl_core(opts, verl.status == "pass"),
        check_rollout_engine(opts, verl.status == "pass"),
        check_dependencies(opts),
        check_attention(opts),
        check_disk(opts),
        check_host_memory(opts),
        check_model_cache(opts),
    ]
    return results


def exit_code(results: Sequence[CheckResult]) -> int:
    failed = {r.name for r in results if r.failed}
    if not failed:
        return EXIT_OK
    if failed == {MODEL_CACHE_CHECK}:
        return EXIT_MODEL_CACHE
    return EXIT_NOT_READY


def report(results: Sequence[CheckResult], opts: PreflightOptions) -> dict[str, Any]:
    code = exit_code(results)
    return {
        "kind": "rlsys-closure-preflight",
        "ready": code == EXIT_OK,
        "exit_code": code,
        "meaning": EXIT_CODES[code],
        "engine": opts.engine,
        "model": str(opts.model_path) if opts.model_path else opts.model,
        "model_revision": None if opts.model_path else opts.model_revision,
        "checks": [r.as_dict() for r in results],
    }


_MARK = {"pass": "ok  ", "fail": "FAIL", "warn": "warn", "skip": "skip"}


def format_results(results: Sequence[CheckResult]) -> str:
    width = max(len(r.name) for r in results) if results else 0
    lines = [f"[{_MARK[r.status]}] {r.name:<{width}}  {r.detail}" for r in results]
    code = exit_code(results)
    lines.append(f"preflight: exit {code}: {EXIT_CODES[code]}")
    return "\n".join(lines)
