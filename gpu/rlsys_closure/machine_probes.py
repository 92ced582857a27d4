"""What preflight asks the machine: imports, installed versions, NVML, torch's CUDA,
the C build Triton does, the GPU mechanisms (in a child), /dev/shm, disk and the Hugging
Face cache.  Each probe is a function of its own so that tests replace it (preflight
looks each up by name in its own module).  Nothing here imports verl, torch or NVML at
module level: this module must import on a CPU box."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else ""
    return f"{type(exc).__name__}: {msg}"[:300] if msg else type(exc).__name__


@dataclass
class ModuleProbe:
    ok: bool
    version: str | None = None
    error: str | None = None


def probe_module(name: str) -> ModuleProbe:
    """Import ``name``; any failure becomes a ModuleProbe, never an exception."""
    try:
        mod = importlib.import_module(name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit and friends from a broken package too
        return ModuleProbe(False, None, one_line(exc))
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
