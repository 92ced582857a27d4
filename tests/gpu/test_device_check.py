"""gpu/device_check.py on a machine without a GPU: the degraded mode ends cleanly, says so,
and still runs what a CPU can (the sampler process, the PEFT hash, the CPU updates).

It runs as on the bare box it is for: an interpreter that has torch, transformers and peft
but neither the project (``pytest_rlsys``) nor pytest, verl, vLLM or Ray, started from a
plain checkout with another working directory."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import venv
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "gpu" / "device_check.py"

# Found, not imported: importing torch, transformers and peft here would cost every run
# of the suite about 3 s of CPU at collection, for tests that run them in a child.
pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("torch", "transformers", "peft")),
    reason="needs torch, transformers and peft (requirements/ci-gpu-cpu.txt)",
)


# What a bare GPU box does not have; a finder makes each absent, wherever it is installed
# (in CI the project shares its site-packages with torch).
_ABSENT = """import sys
class _Absent:
    names = {names!r}
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in cls.names:
            raise ModuleNotFoundError(f"No module named {{name!r}} (a bare box)", name=name)
        return None
sys.meta_path.insert(0, _Absent)
"""
_NEEDED = ("torch", "transformers", "peft", "tokenizers", "safetensors", "pynvml", "psutil")


def _bare_python(tmp: Path) -> Path:
    """A fresh venv whose site-packages reach only the needed packages' folders, with the
    project, pytest, verl, vLLM and Ray made absent (in this process and its children)."""
    root = tmp / "bare-venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    (site,) = root.glob("lib/python*/site-packages")
    folders = []
    for name in _NEEDED:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        origin = Path(spec.origin)
        folder = origin.parent.parent if origin.name == "__init__.py" else origin.parent
        if str(folder) not in folders:
            folders.append(str(folder))
    (site / "deps.pth").write_text("\n".join(folders) + "\n")
    names = {"pytest_rlsys", "pytest", "_pytest", "verl", "vllm", "ray", "sglang"}
    (site / "_bare_box.py").write_text(_ABSENT.format(names=sorted(names)))
    (site / "zz_bare_box.pth").write_text("import _bare_box\n")
    return root / "bin" / "python"


def _run(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    python = _bare_python(tmp)
    probe = subprocess.run(
        [str(python), "-c", "import torch, peft, transformers, pytest_rlsys"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "No module named 'pytest_rlsys' (a bare box)" in probe.stderr, probe.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["CUDA_VISIBLE_DEVICES"] = ""
    work = tmp / "elsewhere"
    work.mkdir()
    proc = subprocess.run(
        [str(python), str(SCRIPT), "--out", str(tmp / "out"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=work,
        check=False,
    )
    tmp = tmp / "out"
    report = json.loads((tmp / "device_check.json").read_text())
    return proc, report


@pytest.mark.slow
def test_without_a_gpu_it_runs_the_degraded_mode_and_exits_3(tmp_path: Path) -> None:
    proc, report = _run(tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "NO GPU:" in proc.stdout and "Traceback" not in proc.stderr
    assert report["gpu"] is False and report["exit_code"] == 3
    sections = {s["name"]: s for s in report["sections"]}  # type: ignore[attr-defined]
    assert list(sections) == [
        "environment",
        "sampler",
        "lora_fsdp",
        "determinism",
        "cumem",
        "preflight",
    ]
    assert sections.pop("cumem")["status"] == "skip"  # libcuda's calls need a GPU
    assert {s["status"] for s in sections.values()} == {"cpu"}, sections
    for name in sections:  # one line per section, saying what it showed
        assert any(line.split("] ", 1)[-1].startswith(name) for line in proc.stdout.splitlines())
    assert report["elapsed_s"] < 360  # type: ignore[operator]
    assert sections["sampler"]["data"]["source"] == "process"
    assert sections["sampler"]["data"]["max_gap_s"] <= 0.25
    lora = sections["lora_fsdp"]["data"]
    assert lora["backend"] == "gloo" and lora["summoned_sha256"] == lora["file_sha256"]
    assert lora["flat_sha256"] != lora["file_sha256"]  # verl's flat parameters never hash so
    det = sections["determinism"]["data"]
    assert det["backend"] == "gloo"  # FSDP1, each update in a process of its own
    assert det["on"]["match"] is True and det["on"]["l2"] == 0.0
    assert lora["file_sha256"] not in det["on"]["sha256"]  # the update moved the adapter
    assert det["on"]["settings"]["cublas_workspace_config"] == ":4096:8"
    assert det["on"]["settings"]["deterministic_algorithms"] is True
    assert det["off"]["settings"]["cublas_workspace_config"] is None
    assert sections["preflight"]["data"]["exit_code"] == 3  # no verl, vLLM or GPU here


@pytest.mark.slow
def test_it_ends_by_its_budget(tmp_path: Path) -> None:
    proc, report = _run(tmp_path, "--budget", "2")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert report["verdict"] == "out of time"
    assert "Traceback" not in proc.stderr


def test_the_cumem_structures_have_cuda_h_layout() -> None:
    """The cuMem section passes these to libcuda by pointer: their sizes must be cuda.h's."""
    import ctypes
    from unittest import mock

    spec = importlib.util.spec_from_file_location(
        "device_check_cumem", SCRIPT.with_name("device_check_cumem.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with mock.patch.dict(os.environ):  # the script sets its environment on import
        spec.loader.exec_module(module)
    assert ctypes.sizeof(module.CuMemAllocationProp) == 32
    assert module.CuMemAllocationProp.location.offset == 8
    assert module.CuMemAllocationProp.allocFlags.offset == 24
    assert ctypes.sizeof(module.CuMemAccessDesc) == 12
