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

import importlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from rlsys_closure.gpu_probe import MECHANISMS as MECHANISMS
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


@dataclass
class ModuleProbe:
    ok: bool
    version: str | None = None
    error: str | None = None


# -- probes (tests replace these) ---------------------------------------------
def probe_module(name: str) -> ModuleProbe:
    """Import ``name``; any failure becomes a ModuleProbe, never an exception."""
    try:
        mod = importlib.import_module(name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit and friends from a broken package too
        return ModuleProbe(False, None, _one_line(exc))
    version = getattr(mod, "__version__", None)
    return ModuleProbe(True, str(version) if version is not None else None)


# The stack whose versions every result file records (driver and runner alike).
STACK_DISTRIBUTIONS = (
    "torch",
    "verl",
    "vllm",
    "sglang",
    "transformers",
    "peft",
    "ray",
    "tensordict",
    "nvidia-ml-py",
)


def installed_versions() -> dict[str, str | None]:
    return {dist: dist_version(dist) for dist in STACK_DISTRIBUTIONS}


def dist_version(dist: str) -> str | None:
    """Installed version of a distribution, read from metadata without importing it."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
    except Exception:
        return None


def nvml_probe() -> dict[str, Any]:
    """GPU facts through NVML. Raises on any failure (the caller reports it)."""
    from rlsys_closure.sampler import load_nvml

    nvml: Any = load_nvml()
    nvml.nvmlInit()
    try:
        count = int(nvml.nvmlDeviceGetCount())
        gpus = []
        for i in range(count):
            h = nvml.nvmlDeviceGetHandleByIndex(i)
            mem = nvml.nvmlDeviceGetMemoryInfo(h)
            name = nvml.nvmlDeviceGetName(h)
            gpus.append(
                {
                    "index": i,
                    "name": name.decode() if isinstance(name, bytes) else str(name),
                    "memory_total_mb": round(int(mem.total) / 1024**2),
                    "memory_used_mb": round(int(mem.used) / 1024**2),
                }
            )
        driver = nvml.nvmlSystemGetDriverVersion()
        return {
            "device_count": count,
            "driver_version": driver.decode() if isinstance(driver, bytes) else str(driver),
            "gpus": gpus,
        }
    finally:
        nvml.nvmlShutdown()


_CUDA_PROBE = (
    "import json, torch\n"
    "ok = torch.cuda.is_available()\n"
    "print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda,"
    " 'available': ok, 'device_count': torch.cuda.device_count() if ok else 0}))\n"
)


def cuda_probe(timeout_s: float = 120.0) -> dict[str, Any]:
    """torch's view of CUDA, asked in a child process (no context here)."""
    proc = subprocess.run(
        [sys.executable, "-c", _CUDA_PROBE],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        raise RuntimeError(tail[-1] if tail else f"probe exited with {proc.returncode}")
    data: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


# Triton (vLLM runs its kernels every step, and its LoRA kernels) builds a launcher
# on first use with the system C compiler against the interpreter's headers
# (triton/runtime/build.py): the same compile, done here on a C file.
_PYTHON_H_PROGRAM = "#include <Python.h>\nint rlsys_probe(void) { return PY_MAJOR_VERSION; }\n"


def c_compiler() -> str | None:
    """The compiler Triton's build picks: ``$CC`` if set, else clang or gcc on PATH."""
    cc = os.environ.get("CC")
    if cc:
        return shutil.which(cc)
    return shutil.which("clang") or shutil.which("gcc")


def python_include_dir() -> str:
    return str(sysconfig.get_paths()["include"])


def build_tools_probe(timeout_s: float = 60.0) -> dict[str, Any]:
    """The compiler, ``Python.h``, and whether a shared object builds with both."""
    cc, include = c_compiler(), python_include_dir()
    data: dict[str, Any] = {
        "cc": cc,
        "cc_env": os.environ.get("CC"),
        "include": include,
        "python_h": os.path.isfile(os.path.join(include, "Python.h")),
        "compile_error": None,
    }
    if cc is None or not data["python_h"]:
        return data
    with tempfile.TemporaryDirectory(prefix="rlsys_cc_") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text(_PYTHON_H_PROGRAM, encoding="ascii")
        proc = subprocess.run(
            [cc, str(src), "-O0", "-shared", "-fPIC", f"-I{include}", "-o", f"{tmp}/probe.so"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        errors = [line for line in tail if "error" in line.lower()] or tail
        data["compile_error"] = (errors[0] if errors else f"exit {proc.returncode}")[:300]
    return data


def gpu_mechanisms_probe(timeout_s: float = 240.0) -> dict[str, Any]:
    """Run :mod:`rlsys_closure.gpu_probe` in a child (no CUDA context here); its JSON."""
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-m", "rlsys_closure.gpu_probe"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        env=env,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        raise RuntimeError(tail[-1] if tail else f"probe exited with {proc.returncode}")
    data: dict[str, Any] = json.loads(lines[-1])
    return data


def shm_usage() -> tuple[int, int]:
    """(total, free) bytes of /dev/shm."""
    usage = shutil.disk_usage("/dev/shm")
    return usage.total, usage.free


def disk_free_bytes(path: Path) -> int:
    # The folder may not exist yet: measure the nearest existing parent.
    p = path.resolve()
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).free


def hf_hub_cache() -> Path:
    """Where huggingface_hub keeps snapshots, found the same way it does."""
    env = os.environ
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    if env.get("HUGGINGFACE_HUB_CACHE"):
        return Path(env["HUGGINGFACE_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    xdg = env.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


# -- helpers ------------------------------------------------------------------
def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else ""
    return f"{type(exc).__name__}: {msg}"[:300] if msg else type(exc).__name__


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
        return CheckResult("build_tools", "fail", f"the compile probe failed: {_one_line(exc)}")
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
        return CheckResult("nvml", "fail", f"NVML unavailable: {_one_line(exc)}")
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
        return CheckResult("cuda", "fail", f"torch CUDA probe failed: {_one_line(exc)}")
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
            CheckResult(n, "fail", f"the mechanisms probe failed: {_one_line(exc)}")
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
            f"/dev/shm unusable ({_one_line(exc)}): vLLM's multi-process engine needs it; "
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
            return CheckResult("disk", "fail", f"cannot stat {p}: {_one_line(exc)}")
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
        return CheckResult("host_memory", "fail", f"cannot read host memory: {_one_line(exc)}")
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
