"""gpu/device_check.py on a machine without a GPU: the degraded mode ends cleanly, says so,
and still runs what a CPU can (the sampler process, the PEFT hash, the CPU updates)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "gpu" / "device_check.py"

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")


def _run(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    report = json.loads((tmp / "device_check.json").read_text())
    return proc, report


@pytest.mark.slow
def test_without_a_gpu_it_runs_the_degraded_mode_and_exits_3(tmp_path: Path) -> None:
    proc, report = _run(tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "NO GPU:" in proc.stdout and "Traceback" not in proc.stderr
    assert report["gpu"] is False and report["exit_code"] == 3
    sections = {s["name"]: s for s in report["sections"]}  # type: ignore[attr-defined]
    assert list(sections) == ["environment", "sampler", "lora_fsdp", "determinism", "preflight"]
    assert {s["status"] for s in sections.values()} == {"cpu"}, sections
    assert sections["sampler"]["data"]["source"] == "process"
    assert sections["sampler"]["data"]["max_gap_s"] <= 0.25
    assert (
        sections["lora_fsdp"]["data"]["file_sha256"] == sections["lora_fsdp"]["data"]["peft_sha256"]
    )
    assert sections["determinism"]["data"]["on"]["match"] is True
    assert sections["preflight"]["data"]["exit_code"] == 3  # no verl, vLLM or GPU here


def test_it_ends_by_its_budget(tmp_path: Path) -> None:
    proc, report = _run(tmp_path, "--budget", "2")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert report["verdict"] == "out of time"
    assert "Traceback" not in proc.stderr
