"""Preflight's checks and exit codes with each dependency absent or broken."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rlsys_closure import cli
from rlsys_closure import machine_probes as probes
from rlsys_closure import preflight as pf

GOOD_VERSIONS = {
    "torch": "2.11.0+cu130",
    "transformers": "5.9.0",
    "tensordict": "0.10.0",
    "ray": "2.60.0",
    "peft": "0.20.0",
    "hydra-core": "1.3.8",
    "omegaconf": "2.3.0",
    "huggingface-hub": "1.33.0",
    "nvidia-ml-py": "13.615.71",
    "verl": "0.9.1",
    "vllm": "0.24.0",
}

# What rlsys_closure.gpu_probe prints on a machine where every mechanism works.
GOOD_MECHANISMS: dict[str, Any] = {
    "cuda": {"available": True, "torch": "2.11.0+cu130"},
    "cuda_ipc": {"status": "pass", "detail": "a CUDA tensor opened by handle in a second process"},
    "cumem_sleep": {"status": "pass", "detail": "slept 256 MiB: NVML saw 256 MiB freed"},
    "triton_jit": {"status": "pass", "detail": "Triton 3.6.0 built and ran a kernel"},
    "nvml_processes": {"status": "pass", "detail": "NVML lists 1 process(es)", "pids": [7]},
}


GOOD_BUILD_TOOLS: dict[str, Any] = {
    "cc": "/usr/bin/gcc",
    "cc_env": None,
    "include": "/usr/include/python3.12",
    "python_h": True,
    "compile_error": None,
}


def make_model_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    (folder / "tokenizer.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0")
    return folder


@pytest.fixture
def healthy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pf.PreflightOptions:
    """Every probe reports a ready GPU machine; tests then break one thing."""
    modules: dict[str, Any] = {
        "verl": probes.ModuleProbe(True, "0.9.1"),
        "vllm": probes.ModuleProbe(True, "0.24.0"),
        "flash_attn": probes.ModuleProbe(True, "2.8.3"),
    }
    monkeypatch.setattr(
        pf, "probe_module", lambda name: modules.get(name, probes.ModuleProbe(True, "1.0"))
    )
    monkeypatch.setattr(pf, "dist_version", lambda dist: GOOD_VERSIONS.get(dist))
    monkeypatch.setattr(
        pf,
        "nvml_probe",
        lambda: {
            "device_count": 1,
            "driver_version": "580.1",
            "gpus": [
                {"index": 0, "name": "NVIDIA H200", "memory_total_mb": 143771, "memory_used_mb": 1}
            ],
        },
    )
    monkeypatch.setattr(
        pf,
        "cuda_probe",
        lambda timeout_s=0: {
            "torch": "2.11.0",
            "cuda": "13.0",
            "available": True,
            "device_count": 1,
        },
    )
    monkeypatch.setattr(pf, "gpu_mechanisms_probe", lambda timeout_s=0: dict(GOOD_MECHANISMS))
    monkeypatch.setattr(pf, "build_tools_probe", lambda timeout_s=0: dict(GOOD_BUILD_TOOLS))
    monkeypatch.setattr(pf, "shm_usage", lambda: (64 * pf.GIB, 63 * pf.GIB))
    monkeypatch.setattr(pf, "disk_free_bytes", lambda path: 500 * pf.GIB)
    monkeypatch.setattr(
        pf, "host_memory", lambda: {"total": 128 * pf.GIB, "available": 100 * pf.GIB}
    )
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return pf.PreflightOptions(
        model_path=make_model_folder(tmp_path / "model"), output_dir=tmp_path
    )


def _failed(results: list[pf.CheckResult]) -> set[str]:
    return {r.name for r in results if r.failed}


def test_everything_ready_exits_0(healthy: pf.PreflightOptions) -> None:
    results = pf.run_checks(healthy)
    assert _failed(results) == set()
    assert pf.exit_code(results) == pf.EXIT_OK


def test_only_the_model_cache_missing_exits_4(healthy: pf.PreflightOptions, tmp_path: Path) -> None:
    healthy.model_path = None  # look in the (empty) HF cache instead
    results = pf.run_checks(healthy)
    assert _failed(results) == {"model_cache"}
    assert pf.exit_code(results) == pf.EXIT_MODEL_CACHE
    cache = next(r for r in results if r.name == "model_cache")
    assert "7ae557604adf" in cache.detail


def test_cached_snapshot_is_found(healthy: pf.PreflightOptions, tmp_path: Path) -> None:
    healthy.model_path = None
    root = tmp_path / "hub" / "models--Qwen--Qwen2.5-0.5B-Instruct"
    make_model_folder(root / "snapshots" / pf.DEFAULT_MODEL_REVISION)
    assert pf.exit_code(pf.run_checks(healthy)) == pf.EXIT_OK
    # A branch name resolves through refs/, as huggingface_hub writes it.
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(pf.DEFAULT_MODEL_REVISION)
    healthy.model_revision = "main"
    assert pf.exit_code(pf.run_checks(healthy)) == pf.EXIT_OK


def test_model_folder_missing_weights_fails(healthy: pf.PreflightOptions) -> None:
    assert healthy.model_path is not None
    (healthy.model_path / "model.safetensors").unlink()
    results = pf.run_checks(healthy)
    assert _failed(results) == {"model_cache"}
    assert "safetensors" in next(r for r in results if r.failed).detail


def _raise(exc: BaseException) -> Any:
    def f(*a: Any, **k: Any) -> Any:
        raise exc

    return f


def _module_broken(name: str, error: str) -> Any:
    def probe(mod: str) -> probes.ModuleProbe:
        if mod == name or mod.startswith(name + "."):
            return probes.ModuleProbe(False, None, error)
        return {"verl": probes.ModuleProbe(True, "0.9.1")}.get(mod, probes.ModuleProbe(True, "1.0"))

    return probe


BREAKAGES: dict[str, tuple[str, str, Any]] = {
    # case: (attribute of pf to replace, check expected to fail, replacement)
    "nvml library missing": (
        "nvml_probe",
        "nvml",
        _raise(OSError("NVML Shared Library Not Found")),
    ),
    "nvml sees no gpu": (
        "nvml_probe",
        "nvml",
        lambda: {"device_count": 0, "driver_version": "x", "gpus": []},
    ),
    "cuda probe crashes": ("cuda_probe", "cuda", _raise(RuntimeError("segfault in child"))),
    "cuda probe hangs": ("cuda_probe", "cuda", _raise(subprocess.TimeoutExpired(["python"], 120))),
    "torch without cuda": (
        "cuda_probe",
        "cuda",
        lambda timeout_s=0: {
            "torch": "2.13.0+cpu",
            "cuda": None,
            "available": False,
            "device_count": 0,
        },
    ),
    "verl absent": (
        "probe_module",
        "verl",
        _module_broken("verl", "ModuleNotFoundError: No module named 'verl'"),
    ),
    "verl wrong version": ("probe_module", "verl", lambda m: probes.ModuleProbe(True, "0.8.0")),
    "verl core broken": (
        "probe_module",
        "verl_core",
        lambda m: (
            probes.ModuleProbe(False, None, "ModuleNotFoundError: No module named 'uvicorn'")
            if m == "verl.checkpoint_engine"
            else probes.ModuleProbe(True, "0.9.1" if m == "verl" else "1")
        ),
    ),
    "vllm absent": (
        "probe_module",
        "rollout_engine",
        _module_broken("vllm", "ModuleNotFoundError: No module named 'vllm'"),
    ),
    "verl vllm shim raises ValueError": (
        "probe_module",
        "rollout_engine",
        lambda m: (
            probes.ModuleProbe(False, None, "ValueError: vllm version None not supported")
            if m == "verl.workers.rollout.vllm_rollout"
            else probes.ModuleProbe(True, "0.9.1" if m == "verl" else "1")
        ),
    ),
    "transformers out of range": (
        "dist_version",
        "dependencies",
        lambda d: {**GOOD_VERSIONS, "transformers": "5.24.0"}.get(d),
    ),
    # peft 0.21 finds no LoRA tensor under verl's FSDP1 wrapping: nothing would be synced.
    "peft 0.21": (
        "dist_version",
        "dependencies",
        lambda d: {**GOOD_VERSIONS, "peft": "0.21.2"}.get(d),
    ),
    "tensordict missing": (
        "dist_version",
        "dependencies",
        lambda d: None if d == "tensordict" else GOOD_VERSIONS.get(d),
    ),
    "disk nearly full": ("disk_free_bytes", "disk", lambda p: 1 * pf.GIB),
    "disk unreadable": ("disk_free_bytes", "disk", _raise(PermissionError(13, "denied"))),
    "host memory low": (
        "host_memory",
        "host_memory",
        lambda: {"total": 8 * pf.GIB, "available": 2 * pf.GIB},
    ),
    "host memory unreadable": ("host_memory", "host_memory", _raise(OSError("no /proc"))),
}


@pytest.mark.parametrize("case", sorted(BREAKAGES))
def test_each_broken_dependency_exits_3(
    case: str, healthy: pf.PreflightOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    attr, check, replacement = BREAKAGES[case]
    monkeypatch.setattr(pf, attr, replacement)
    results = pf.run_checks(healthy)
    assert check in _failed(results)
    assert pf.exit_code(results) == pf.EXIT_NOT_READY
    # Also with the model cache missing: still 3, never 4.
    healthy.model_path = None
    results = pf.run_checks(healthy)
    assert {"model_cache", check} <= _failed(results)
    assert pf.exit_code(results) == pf.EXIT_NOT_READY


def test_python_out_of_range(healthy: pf.PreflightOptions, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pf, "PYTHON_RANGE", ((3, 12), (3, 13)))
    results = pf.run_checks(healthy)
    assert _failed(results) == {"python"}
    assert pf.exit_code(results) == pf.EXIT_NOT_READY


def test_missing_flash_attn_is_a_warning_not_a_failure(
    healthy: pf.PreflightOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pf, "probe_module", _module_broken("flash_attn", "ImportError: x"))
    results = pf.run_checks(healthy)
    attention = next(r for r in results if r.name == "attention")
    assert attention.status == "warn" and attention.data["impl"] == "sdpa"
    assert pf.exit_code(results) == pf.EXIT_OK


@pytest.mark.parametrize(
    "body,kind",
    [
        ("raise ValueError('vllm version None not supported')", "ValueError"),
        ("raise RuntimeError('CUDA driver too old')", "RuntimeError"),
        ("raise SystemExit(3)", "SystemExit"),
        ("import _no_such_module_here", "ModuleNotFoundError"),
        ("def broken(:\n    pass", "SyntaxError"),
    ],
)
def test_probe_module_turns_any_import_failure_into_a_result(
    body: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"rlsys_broken_{kind.lower()}"
    (tmp_path / f"{name}.py").write_text(body + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = probes.probe_module(name)
    assert not probe.ok
    assert probe.error is not None and probe.error.startswith(kind)


def test_probe_module_reads_the_version() -> None:
    probe = probes.probe_module("json")
    assert probe.ok and probe.error is None


def test_cli_prints_each_check_and_writes_json(
    healthy: pf.PreflightOptions, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "reports" / "preflight.json"
    out.parent.mkdir()
    rc = cli.main(
        [
            "preflight",
            "--model-path",
            str(healthy.model_path),
            "--json",
            str(out),
            "--output-dir",
            str(tmp_path),
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["exit_code"] == 0 and report["ready"] is True
    names = [c["name"] for c in report["checks"]]
    assert names == [
        "python",
        "build_tools",
        "nvml",
        "cuda",
        "cuda_ipc",
        "cumem_sleep",
        "triton_jit",
        "nvml_processes",
        "shm",
        "verl",
        "verl_core",
        "rollout_engine",
        "dependencies",
        "attention",
        "disk",
        "host_memory",
        "model_cache",
    ]
    for name in names:
        assert name in printed
    assert "preflight: exit 0" in printed


def test_cli_exit_4_written_to_json(
    healthy: pf.PreflightOptions, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pf.json"
    rc = cli.main(["preflight", "--json", str(out)])
    assert rc == pf.EXIT_MODEL_CACHE
    report = json.loads(out.read_text())
    assert report["exit_code"] == 4
    assert [c["name"] for c in report["checks"] if c["status"] == "fail"] == ["model_cache"]
    assert "exit 4" in capsys.readouterr().out


@pytest.mark.slow
def test_real_preflight_on_this_machine_is_honest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No mocks: on a machine without a GPU it must say so, with a code that is not 4."""
    out = tmp_path / "pf.json"
    rc = cli.main(["preflight", "--json", str(out), "--output-dir", str(tmp_path)])
    report = json.loads(out.read_text())
    assert report["exit_code"] == rc
    failed = {c["name"] for c in report["checks"] if c["status"] == "fail"}
    if "nvml" in failed or "verl" in failed:
        assert rc == pf.EXIT_NOT_READY
    assert "Traceback" not in capsys.readouterr().err


def test_unwritable_json_path_is_one_line(
    healthy: pf.PreflightOptions, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "a-folder"  # the path exists but is a folder: the write fails
    taken.mkdir()
    rc = cli.main(["preflight", "--model-path", str(healthy.model_path), "--json", str(taken)])
    assert rc == pf.EXIT_NOT_READY
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err


def test_version_specifiers() -> None:
    spec = pf.DEPENDENCY_SPECS["transformers"]
    assert pf.version_satisfies("5.10.4", spec) is True
    assert pf.version_satisfies("5.6.0", spec) is False
    assert pf.version_satisfies("5.11.0", spec) is False
    assert pf.version_satisfies("2.13.0+cpu", ">=2.6") is True
    assert pf.version_satisfies("not a version", spec) is None


@pytest.mark.parametrize("command", [["preflight"], ["run", "--run-label", "x"]])
def test_sglang_is_refused_naming_what_is_supported(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """No recipe, test or probe for SGLang yet: refused before any work, exit 2."""
    assert cli.main([*command, "--engine", "sglang"]) == pf.EXIT_USAGE
    err = capsys.readouterr().err
    assert "SGLang is not supported" in err and "supported: vllm" in err
    assert "Traceback" not in err
    assert "sglang" not in pf.ENGINE_MODULES


@pytest.mark.parametrize(
    ("found", "said"),
    [
        ({"cc": None}, "no C compiler (clang or gcc)"),
        ({"cc": None, "cc_env": "/opt/nope/cc"}, "CC='/opt/nope/cc' is not a program"),
        ({"python_h": False}, "no Python.h in /usr/include/python3.12"),
        ({"compile_error": "fatal error: Python.h: No such file"}, "cannot build against"),
    ],
)
def test_no_compiler_or_python_h_fails_preflight_with_the_install_line(
    healthy: pf.PreflightOptions,
    monkeypatch: pytest.MonkeyPatch,
    found: dict[str, Any],
    said: str,
) -> None:
    """Triton builds vLLM's kernels with both: without them the first step fails minutes in."""
    monkeypatch.setattr(pf, "build_tools_probe", lambda timeout_s=0: {**GOOD_BUILD_TOOLS, **found})
    results = pf.run_checks(healthy)
    assert _failed(results) == {"build_tools"}
    assert pf.exit_code(results) == pf.EXIT_NOT_READY
    detail = next(r.detail for r in results if r.name == "build_tools")
    assert said in detail and "apt-get install build-essential python3." in detail


def test_the_real_build_tools_probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    assert probes.build_tools_probe()["cc"] is None
    monkeypatch.delenv("CC")
    monkeypatch.setattr(probes, "python_include_dir", lambda: str(tmp_path))
    assert probes.build_tools_probe()["python_h"] is False
    monkeypatch.undo()
    if probes.c_compiler() is None:
        pytest.skip("no C compiler on this machine")
    # Headers present but broken: the compile itself must fail, not just a file test.
    (tmp_path / "Python.h").write_text("#error not the real header\n")
    monkeypatch.setattr(probes, "python_include_dir", lambda: str(tmp_path))
    broken = probes.build_tools_probe()
    assert broken["python_h"] is True and "not the real header" in broken["compile_error"]
    monkeypatch.undo()
    real = probes.build_tools_probe()
    if not real["python_h"]:
        pytest.skip("this interpreter has no Python.h")
    assert real["compile_error"] is None
