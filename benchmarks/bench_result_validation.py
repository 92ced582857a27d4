"""Validate + grade a synthetic one-hour pt-verl-closure file; compare with check-jsonschema.

The file: two groups, each with 14,400 whole-GPU/host samples (0.25 s over one
hour) and every phase, built with ``closure_checks`` so that it is consistent
and scores full marks. Timed in one run, on the same file:

1. in process: ``load_result_file`` (parse + schema) and ``grade_result_file``;
2. ``rlsys validate FILE`` and ``rlsys result FILE`` as subprocesses (includes
   interpreter start-up, like the next one);
3. ``check-jsonschema --schemafile schemas/pt-verl-closure.v1.json FILE``.
   The schema's sibling ``$ref`` resolve against its ``$id``
   (https://rlsys.invalid/...), which check-jsonschema would try to fetch, so
   ``--base-uri`` points it at the schema file instead.

Run:  .venv/bin/python benchmarks/bench_result_validation.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pytest_rlsys.resources import schema_dir
from pytest_rlsys.resultfile import checks as closure_checks
from pytest_rlsys.resultfile.grading import grade_result_file
from pytest_rlsys.resultfile.loading import load_result_file

INTERVAL_S = 0.25
SAMPLES = 14_400  # one hour at 0.25 s

# One hour laid out as (phase, start_s, end_s); sub-phases sit inside sync.
RELEASE_WINDOWS = [
    ("initial_sync", 300.0, 400.0),
    ("rollout_before_update", 400.5, 1000.0),
    ("engine_sleep", 1000.5, 1010.0),
    ("score_before_update", 1010.5, 1200.0),
    ("update", 1200.5, 2600.0),
    ("sync", 2600.5, 2700.0),
    ("resume_weights", 2601.0, 2620.0),
    ("weight_transfer", 2620.5, 2680.0),
    ("resume_kv_cache", 2680.5, 2699.0),
    ("rollout_after_update", 2700.5, 3300.0),
    ("score_after_update", 3300.5, 3599.0),
]
RETAIN_WINDOWS = [w for w in RELEASE_WINDOWS if w[0] not in closure_checks.RELEASE_ONLY_PHASES]


def _events(windows: list[tuple[str, float, float]]) -> list[dict[str, Any]]:
    events = []
    for phase, start, end in windows:
        events.append({"t_s": start, "phase": phase, "kind": "start"})
        events.append({"t_s": end, "phase": phase, "kind": "end"})
    return sorted(events, key=lambda e: (e["t_s"], e["kind"] == "start"))


def _group(fce: bool, rng: random.Random, config: dict[str, Any], hashes: dict[str, str]) -> Any:
    windows = RELEASE_WINDOWS if fce else RETAIN_WINDOWS
    samples = [
        {
            "t_s": k * INTERVAL_S,
            "gpu_used_mb": rng.randint(6000, 10500),
            "host_used_mb": round(rng.uniform(15000, 16000), 1),
            "reason": "periodic",
        }
        for k in range(SAMPLES)
    ]
    events = _events(windows)
    phases = closure_checks.summarize_phases(events, samples)
    peak, phase = closure_checks.whole_run_peak(samples, phases)
    calls = [{"t_s": 2605.0, "tags": ["weights"]}, {"t_s": 2685.0, "tags": ["kv_cache"]}]
    return {
        "free_cache_engine": fce,
        "config": config,
        "config_sha256": closure_checks.config_sha256(config),
        "initial_lora_sha256": hashes["initial"],
        "updated_lora_sha256": hashes["updated"],
        "rollout_source_sha256": hashes["source"],
        "update_completed": True,
        "sync_completed": True,
        "init": {"start_s": 0.0, "end_s": 299.0},
        "events": events,
        "resume_calls": calls if fce else [],
        "resource_samples": samples,
        "phases": phases,
        "sampled_gpu_peak_mb": peak,
        "sampled_gpu_peak_phase": phase,
    }


def build_one_hour_doc() -> dict[str, Any]:
    example = json.loads(
        (schema_dir() / "examples" / "pt-verl-closure.example.json").read_text("utf-8")
    )
    rng = random.Random(20260314)
    hashes = {
        "initial": example["groups"]["release"]["initial_lora_sha256"],
        "updated": example["groups"]["release"]["updated_lora_sha256"],
        "source": example["workload"]["rollout_source_sha256"],
    }
    groups = {}
    for name, fce in (("release", True), ("retain", False)):
        config = json.loads(json.dumps(example["groups"][name]["config"]))
        groups[name] = _group(fce, rng, config, hashes)
    doc = {key: example[key] for key in ("schema_version", "created_at", "environment")}
    doc.update(
        run_label="bench_one_hour",
        status="completed",
        workload=example["workload"],
        sampling=example["sampling"],
        groups=groups,
        system_decision={"checks": {}, "measurements": {}},
    )
    doc["system_decision"]["measurements"] = closure_checks.derive_measurements(doc)
    checks = closure_checks.derive_checks(doc)
    doc["system_decision"]["checks"] = {k: v.as_dict() for k, v in checks.items()}
    return doc


T = TypeVar("T")


def _time(fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (median)")
    args = parser.parse_args()
    repeat = max(1, args.repeat)
    schema = schema_dir() / "pt-verl-closure.v1.json"
    bin_dir = Path(sys.executable).parent
    check_jsonschema = shutil.which("check-jsonschema", path=str(bin_dir)) or shutil.which(
        "check-jsonschema"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one_hour.json"
        path.write_text(json.dumps(build_one_hour_doc()), encoding="utf-8")
        size_mib = path.stat().st_size / 2**20
        print(f"file: {SAMPLES} samples x 2 groups, {size_mib:.1f} MiB")

        t_validate, loaded = _time(lambda: load_result_file(path), repeat)
        t_grade, grade = _time(lambda: grade_result_file(path), repeat)
        assert loaded.ok, loaded.errors
        print(
            f"in process: load+validate {t_validate:.3f} s; load+validate+grade {t_grade:.3f} s "
            f"(score {grade.score:g}/{grade.max_score:g})"
        )

        rlsys = [sys.executable, "-m", "pytest_rlsys"]
        t_val_cli, val = _time(lambda: _run([*rlsys, "validate", str(path)]), repeat)
        t_res_cli, res = _time(lambda: _run([*rlsys, "result", str(path)]), repeat)
        t_cli = t_val_cli + t_res_cli
        print(f"rlsys validate (1 subprocess): {t_val_cli:.3f} s, exit {val.returncode}")
        print(
            f"rlsys result (1 subprocess, validates too): {t_res_cli:.3f} s, exit {res.returncode}"
        )

        if check_jsonschema is None:
            print("check-jsonschema: not installed; nothing to compare")
            return 0
        cmd = [
            check_jsonschema,
            "--base-uri",
            schema.resolve().as_uri(),
            "--schemafile",
            str(schema),
            str(path),
        ]
        t_cj, proc = _time(lambda: _run(cmd), repeat)
        result = proc
        status = (
            "ok" if result.returncode == 0 else f"exit {result.returncode}: {result.stdout[-300:]}"
        )
        print(f"check-jsonschema (schema only, 1 subprocess): {t_cj:.3f} s, {status}")
        print(f"ratio rlsys validate / check-jsonschema: {t_val_cli / t_cj:.2f}")
        print(f"ratio rlsys validate+result / check-jsonschema: {t_cli / t_cj:.2f}")
        print(f"ratio in-process validate+grade / check-jsonschema: {t_grade / t_cj:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
