"""``run``: the release/retain pair, end to end.

Order of work, chosen so that no GPU time is spent on a run that cannot pass:

1. refuse at once if a result file for the label exists;
2. preflight; if the only failure is the model cache, fetch the pinned
   revision (when allowed), then check again;
3. CPU-side preparation: the shared initial LoRA adapter (seeded, hashed),
   the frozen rollout source (hashed), both groups' verl configs composed and
   diffed (they must differ only in free_cache_engine);
4. the groups, one fresh process each (release, then retain); before each,
   whole-GPU memory is read, and the second group starts only once memory is
   back at the first group's baseline (within a tolerance), so what the first
   left behind (an orphaned vLLM EngineCore, say) cannot bias the second;
5. assemble whatever was recorded into the result file, marked failed if
   anything stopped early, and keep the raw artefacts beside it
   (``LABEL.artefacts/<group>/samples.jsonl`` and ``adapters/{initial,updated}``).

The steps are injectable (:class:`Steps`) so the orchestration itself is
tested on a CPU with fakes standing in for verl and the GPU.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_rlsys.escaping import say
from pytest_rlsys.resultfile.runner_states import GROUP_ORDER
from rlsys_closure import preflight as pf
from rlsys_closure.assemble import (
    ResultExistsError,
    assemble,
    environment_from,
    result_sample,
    write_result,
)
from rlsys_closure.config import GROUPS, RunSettings, compose_pair, pair_overrides
from rlsys_closure.deadline import MARKER_ENV, descendants, sweep_marked, terminate
from rlsys_closure.driver import phase_file
from rlsys_closure.machine_probes import installed_versions
from rlsys_closure.workload import build_rollout_source, rollout_source_sha256


@dataclass
class RunOptions:
    run_label: str
    output: Path
    model: str = pf.DEFAULT_MODEL
    model_revision: str = pf.DEFAULT_MODEL_REVISION
    model_path: Path | None = None
    engine: str = "vllm"
    lora_rank: int = 16
    lora_alpha: int = 32
    sample_interval_s: float = 0.25
    boundary_samples: bool = True
    n_prompts: int = 8
    max_new_tokens: int = 64
    gpu_memory_utilization: float = 0.4
    seed: int = 1234
    fetch: bool = True
    # The whole group process (its tree is killed at this deadline) and each step
    # inside it (the driver's watchdog); see rlsys_closure.deadline.
    group_timeout_s: float = 3600.0
    phase_timeout_s: float = 900.0
    extra_overrides: tuple[str, ...] = field(default_factory=tuple)
    # The second group starts when whole-GPU memory is within this of the first
    # group's baseline: allocator and driver noise is tens of MiB, an orphaned
    # vLLM engine holds GiBs.
    memory_tolerance_mb: float = 256.0
    memory_wait_s: float = 120.0

    @property
    def work_dir(self) -> Path:
        return self.output.with_name(self.output.stem + ".work")

    @property
    def artefacts_dir(self) -> Path:
        return self.output.with_name(self.output.stem + ".artefacts")

    def log_path(self, group: str) -> Path:
        return self.output.with_name(f"{self.output.stem}_{group}.log")


def fetch_model(repo_id: str, revision: str) -> Path:
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo_id=repo_id, revision=revision))


def make_adapter(settings: RunSettings, out_dir: Path) -> str:
    from rlsys_closure.lora import adapter_sha256, create_initial_adapter

    if (out_dir / "adapter_model.safetensors").is_file():
        return adapter_sha256(out_dir)  # made by an earlier attempt of this label
    return create_initial_adapter(
        settings.model_path,
        out_dir,
        rank=settings.lora_rank,
        alpha=settings.lora_alpha,
        target_modules=settings.target_modules,
        seed=settings.seed,
    )


EXIT_GROUP_TIMEOUT = 124


def run_group_process(
    spec_path: Path,
    record_path: Path,
    log_path: Path,
    timeout_s: float,
    module: str = "rlsys_closure.driver",
    kill_grace_s: float = 10.0,
) -> int:
    """One group in a fresh interpreter; its output goes to the group's log.

    ``module`` is the driver's entry point (a CPU test passes its own, which
    runs the same driver with the device and engine replaced).

    The group gets ``timeout_s``; past it, its whole process tree is killed
    and 124 returned. However it ended, every process still carrying the
    group's marker (Ray's, vLLM's engine children) is killed before this
    returns, so nothing the group started can hold the GPU for the next one.
    """
    env = dict(os.environ)
    # The child must import this package the same way we did.
    pkg_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH")) if p)
    token = uuid.uuid4().hex
    env[MARKER_ENV] = token
    with open(log_path, "a", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, str(spec_path), str(record_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            rc = proc.wait(timeout=timeout_s)
        except KeyboardInterrupt:
            # Ctrl-C, or SIGTERM from smoke.sh's timeout (cli makes it one): the
            # group's processes live in a session of their own and would survive us.
            log.write("\nrunner: interrupted; killing the group's processes\n")
            log.flush()
            terminate([proc.pid, *descendants(proc.pid)], kill_grace_s)
            sweep_marked(token, kill_grace_s)
            raise
        except subprocess.TimeoutExpired:
            log.write(
                f"\nrunner: group timed out after {timeout_s:g} s (--group-timeout); "
                "killing its processes\n"
            )
            log.flush()
            terminate([proc.pid, *descendants(proc.pid)], kill_grace_s)
            try:
                proc.wait(timeout=kill_grace_s + 5)
            except subprocess.TimeoutExpired:  # unkillable (uninterruptible I/O): say so
                log.write(f"runner: group process {proc.pid} did not die after SIGKILL\n")
            rc = EXIT_GROUP_TIMEOUT
        left = sweep_marked(token, kill_grace_s)
        if left:
            log.write(
                f"\nrunner: killed {len(left)} process(es) the group left behind: "
                f"{' '.join(map(str, sorted(left)))}\n"
            )
    return rc


def stuck_step(record_path: Path) -> dict[str, Any]:
    """The step a group noted last (``{"step", "phase"}``; empty when it noted none)."""
    try:
        note = json.loads(phase_file(record_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return note if isinstance(note, dict) else {}


def model_folder_sha256(folder: Path) -> str:
    """A revision stand-in for a local model: hash of its config, tokenizer and weights."""
    h = hashlib.sha256()
    for p in sorted(folder.iterdir()):
        if p.is_file() and (p.suffix in (".json", ".safetensors", ".jinja", ".txt")):
            h.update(p.name.encode())
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def gpu_used_mb() -> float | None:
    """Whole-GPU memory in use on the run's device (NVML), MiB; None without NVML."""
    from rlsys_closure.sampler import MIB, cuda_device_index, load_nvml

    try:
        nvml = load_nvml()
        nvml.nvmlInit()
    except Exception:
        return None
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(cuda_device_index(nvml))
        return float(nvml.nvmlDeviceGetMemoryInfo(handle).used) / MIB
    finally:
        nvml.nvmlShutdown()


@dataclass
class Steps:
    preflight: Callable[[pf.PreflightOptions], list[pf.CheckResult]] = pf.run_checks
    fetch_model: Callable[[str, str], Path] = fetch_model
    make_adapter: Callable[[RunSettings, Path], str] = make_adapter
    compose_pair: Callable[[RunSettings], dict[str, dict[str, Any]]] = compose_pair
    run_group: Callable[[Path, Path, Path, float], int] = run_group_process
    gpu_used_mb: Callable[[], float | None] = gpu_used_mb
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    versions: Callable[[], dict[str, str | None]] = field(
        default_factory=lambda: installed_versions
    )


def wait_for_baseline(
    steps: Steps, baseline: float | None, tolerance_mb: float, wait_s: float
) -> dict[str, Any]:
    """Whole-GPU memory before a group; waits (up to ``wait_s``) for the baseline.

    Returns ``{"baseline_mb", "used_mb", "tolerance_mb", "waited_s", "ok"}``;
    ``ok`` is False when memory stayed above baseline + tolerance.
    """
    t0 = steps.clock()
    used = steps.gpu_used_mb()
    if baseline is None:
        baseline = used
    while (
        used is not None
        and baseline is not None
        and used > baseline + tolerance_mb
        and steps.clock() - t0 < wait_s
    ):
        steps.sleep(1.0)
        used = steps.gpu_used_mb()
    ok = used is None or baseline is None or used <= baseline + tolerance_mb
    return {
        "baseline_mb": baseline,
        "used_mb": used,
        "tolerance_mb": tolerance_mb,
        "waited_s": round(steps.clock() - t0, 3),
        "ok": ok,
    }


def write_artefacts(root: Path, records: Mapping[str, Mapping[str, Any] | None]) -> None:
    """``root/<group>/samples.jsonl``: the group's recorded samples, one per line, with
    exactly the fields of the result file's resource samples (the adapters are
    written into ``root/<group>/adapters/`` by the group itself)."""
    for group, rec in records.items():
        if rec is None:
            continue
        folder = root / group
        folder.mkdir(parents=True, exist_ok=True)
        rows = [r for r in (result_sample(x) for x in rec.get("samples", [])) if r is not None]
        rows.sort(key=lambda r: r["t_s"])
        with open(folder / "samples.jsonl", "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, allow_nan=False) + "\n")


def _updated_l2(root: Path) -> float | None:
    from rlsys_closure.lora import ADAPTER_WEIGHTS, adapter_l2_distance

    a, b = (root / g / "adapters" / "updated" for g in GROUPS)
    if not ((a / ADAPTER_WEIGHTS).is_file() and (b / ADAPTER_WEIGHTS).is_file()):
        return None
    try:
        return adapter_l2_distance(a, b)
    except (OSError, ValueError):
        return None


def _say(out: TextIO, msg: str) -> None:
    say(msg, to=out)
    out.flush()


@dataclass
class _Prepared:
    """What the CPU side made before any GPU work: the settings, the initial adapter's
    hash, the rollout source and its hash, and the two composed configs."""

    settings: RunSettings
    lora_sha: str
    source: dict[str, Any]
    source_sha: str
    configs: dict[str, dict[str, Any]]


def run(opts: RunOptions, steps: Steps | None = None, out: TextIO | None = None) -> int:
    steps = steps or Steps()
    out = out or sys.stdout
    if opts.output.exists():
        _say(
            out,
            f"run: {opts.output} already exists; results are records and are never "
            "overwritten. Use a new --run-label.",
        )
        return pf.EXIT_EXISTS
    code, checks, model_path = _preflight(opts, steps, out)
    if code != pf.EXIT_OK:
        return code
    prepared = _prepare(opts, steps, out, checks, model_path)
    if prepared is None:
        return pf.EXIT_NOT_READY
    records: dict[str, dict[str, Any] | None] = {g: None for g in GROUPS}
    failure = _run_groups(opts, steps, out, prepared, records)
    return _finish(opts, steps, out, prepared, checks, records, failure)


def _preflight(
    opts: RunOptions, steps: Steps, out: TextIO
) -> tuple[int, list[pf.CheckResult], Path | None]:
    """The preflight checks (fetching the model when only its cache is missing): the exit
    code, the checks, and the model's folder."""
    popts = pf.PreflightOptions(
        engine=opts.engine,
        model=opts.model,
        model_revision=opts.model_revision,
        model_path=opts.model_path,
        output_dir=opts.output.parent,
    )
    checks = steps.preflight(popts)
    code = pf.exit_code(checks)
    _say(out, pf.format_results(checks))
    model_path = opts.model_path
    if code == pf.EXIT_MODEL_CACHE:
        if not opts.fetch:
            _say(out, "run: the model cache is missing and --no-fetch was given")
            return code, checks, None
        _say(out, f"run: fetching {opts.model}@{opts.model_revision} ...")
        try:
            model_path = steps.fetch_model(opts.model, opts.model_revision)
        except Exception as exc:
            _say(out, f"run: could not fetch the model: {type(exc).__name__}: {exc}")
            return pf.EXIT_MODEL_CACHE, checks, None
        checks = steps.preflight(popts)
        code = pf.exit_code(checks)
    if code != pf.EXIT_OK:
        _say(out, f"run: preflight exit {code}; no GPU work started")
        return code, checks, None
    if model_path is None:
        mc = next(c for c in checks if c.name == "model_cache")
        model_path = Path(mc.data["path"])
    return code, checks, model_path


def _prepare(
    opts: RunOptions,
    steps: Steps,
    out: TextIO,
    checks: list[pf.CheckResult],
    model_path: Path | None,
) -> _Prepared | None:
    """The CPU-side preparation; None (said) when it failed, before any GPU work."""
    work = opts.work_dir
    work.mkdir(parents=True, exist_ok=True)
    attention = next((c for c in checks if c.name == "attention"), None)
    settings = RunSettings(
        model_path=str(model_path),
        adapter_path=str(work / "initial_adapter"),
        engine=opts.engine,
        lora_rank=opts.lora_rank,
        lora_alpha=opts.lora_alpha,
        gpu_memory_utilization=opts.gpu_memory_utilization,
        attn_implementation="sdpa" if attention and attention.status != "pass" else None,
        n_prompts=opts.n_prompts,
        max_response_length=opts.max_new_tokens,
        seed=opts.seed,
        extra_overrides=opts.extra_overrides,
    )
    try:
        lora_sha = steps.make_adapter(settings, Path(settings.adapter_path))
        source = build_rollout_source(opts.n_prompts, opts.seed, opts.max_new_tokens)
        source_sha = rollout_source_sha256(source)
        configs = steps.compose_pair(settings)
    except Exception as exc:
        _say(
            out,
            f"run: CPU-side preparation failed, no GPU work started: {type(exc).__name__}: {exc}",
        )
        return None
    _say(
        out,
        f"run: initial adapter {lora_sha[:12]}, rollout source {source_sha[:12]}, "
        "configs differ only in free_cache_engine",
    )
    return _Prepared(settings, lora_sha, source, source_sha, configs)


def _run_groups(
    opts: RunOptions,
    steps: Steps,
    out: TextIO,
    prepared: _Prepared,
    records: dict[str, dict[str, Any] | None],
) -> dict[str, Any] | None:
    """Each group in turn, its record into ``records``; the failure that ended the run."""
    overrides = pair_overrides(prepared.settings)
    baseline: float | None = None
    for group in GROUP_ORDER:  # one after the other; the first failure ends the run
        memory = wait_for_baseline(steps, baseline, opts.memory_tolerance_mb, opts.memory_wait_s)
        baseline = memory["baseline_mb"]
        if not memory["ok"]:
            return _failure(
                out,
                group,
                None,
                "GpuMemoryNotReleased",
                f"whole-GPU memory {memory['used_mb']:.0f} MiB did not return to the baseline "
                f"{baseline:.0f} MiB (+{opts.memory_tolerance_mb:g}) within "
                f"{opts.memory_wait_s:g} s after the previous group; "
                "look for leftover engine processes (nvidia-smi)",
            )
        spec_path = _write_spec(opts, prepared, group, overrides[group])
        record_path = opts.work_dir / f"{group}.record.json"
        # What an earlier attempt of this label left must not pass for this one's: its
        # record, and the step note the runner reads after a kill (stuck_step).
        record_path.unlink(missing_ok=True)
        phase_file(record_path).unlink(missing_ok=True)
        flag = GROUPS[group]
        _say(out, f"run: group {group} (free_cache_engine={flag}) -> log {opts.log_path(group)}")
        t0 = time.monotonic()
        interrupted = False
        try:
            rc = steps.run_group(spec_path, record_path, opts.log_path(group), opts.group_timeout_s)
        except KeyboardInterrupt:
            # The group's processes are gone (run_group_process kills them); what was
            # recorded still becomes an honest failed file.
            interrupted, rc = True, 130
        try:
            loaded = json.loads(record_path.read_text(encoding="utf-8"))
            records[group] = loaded if isinstance(loaded, dict) else None
        except (OSError, ValueError):
            records[group] = None
        if records[group] is not None:
            records[group]["gpu_memory_at_start"] = memory  # type: ignore[index]
        _say(out, f"run: group {group} exit {rc} after {time.monotonic() - t0:.1f} s")
        if interrupted or rc != 0:
            # A failed group spoils the pair; do not spend GPU time on the other.
            return _group_failure(opts, out, group, rc, interrupted, records[group] or {})
    return None


def _write_spec(opts: RunOptions, prepared: _Prepared, group: str, overrides: Any) -> Path:
    """The group process's spec file (what it runs, with which settings)."""
    spec = {
        "group": group,
        "free_cache_engine": GROUPS[group],
        "overrides": overrides,
        "settings": prepared.settings.as_dict(),
        "model_path": prepared.settings.model_path,
        "rollout_source": prepared.source,
        "rollout_source_sha256": prepared.source_sha,
        "initial_lora_sha256": prepared.lora_sha,
        "seed": opts.seed,
        "sample_interval_s": opts.sample_interval_s,
        "boundary_samples": opts.boundary_samples,
        "artefacts_dir": str(opts.artefacts_dir),
        "phase_timeout_s": opts.phase_timeout_s,
    }
    spec_path = opts.work_dir / f"{group}.spec.json"
    spec_path.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    return spec_path


def _group_failure(
    opts: RunOptions, out: TextIO, group: str, rc: int, interrupted: bool, rec: dict[str, Any]
) -> dict[str, Any] | None:
    """The run's failure when a group was interrupted or its process failed; None when
    the group's own record already says how it failed."""
    note = stuck_step(opts.work_dir / f"{group}.record.json")
    phase, step = note.get("phase") or "init", note.get("step") or "start"
    if interrupted:
        return _failure(
            out,
            group,
            phase,
            "Interrupted",
            f"the run was interrupted (SIGINT/SIGTERM) while group {group} was in {step!r}; "
            "its processes were killed",
        )
    if rec.get("status") != "completed" and rc == EXIT_GROUP_TIMEOUT and not rec.get("failure"):
        return _failure(
            out,
            group,
            phase,
            "GroupTimeout",
            f"group {group} exceeded --group-timeout {opts.group_timeout_s:g} s while in "
            f"{step!r} and was killed; see {opts.log_path(group)}",
        )
    if rec.get("status") == "completed" or not rec.get("failure"):
        message = f"group process exited with {rc}; see {opts.log_path(group)}"
        return _failure(None, group, None, "GroupProcessFailed", message)
    return None


def _failure(
    out: TextIO | None, group: str, phase: str | None, kind: str, message: str
) -> dict[str, Any]:
    """The run's failure record, said on ``out`` when given."""
    if out is not None:
        _say(out, f"run: {message}")
    return {"group": group, "phase": phase, "type": kind, "message": message}


def _finish(
    opts: RunOptions,
    steps: Steps,
    out: TextIO,
    prepared: _Prepared,
    checks: list[pf.CheckResult],
    records: dict[str, dict[str, Any] | None],
    failure: dict[str, Any] | None,
) -> int:
    """The artefacts, then the result file assembled from the records and written."""
    write_artefacts(opts.artefacts_dir, records)
    l2 = _updated_l2(opts.artefacts_dir)
    if l2 is not None:
        _say(out, f"run: L2 distance between the two updated adapters: {l2:.3g}")
        for record in records.values():
            if record is not None:
                record["updated_lora_l2_between_groups"] = l2
    environment = environment_from([c.as_dict() for c in checks], steps.versions())
    workload = {
        "model": opts.model if opts.model_path is None else str(opts.model_path),
        "model_revision": opts.model_revision
        if opts.model_path is None
        else model_folder_sha256(opts.model_path),
        "lora_rank": opts.lora_rank,
        "lora_alpha": opts.lora_alpha,
        "update_kind": "sft",
        "update_count": 1,
        "prompt_count": opts.n_prompts,
        "rollout_source_sha256": prepared.source_sha,
    }
    sampling = {
        "interval_s": opts.sample_interval_s,
        "boundary_samples": opts.boundary_samples,
        "source": "nvml",
        "host_source": "psutil",
    }
    doc = assemble(
        run_label=opts.run_label,
        records=records,
        configs=prepared.configs,
        environment=environment,
        workload=workload,
        sampling=sampling,
        initial_lora_sha256=prepared.lora_sha,
        failure=failure,
    )
    try:
        write_result(opts.output, doc)
    except ResultExistsError as exc:
        _say(out, f"run: {exc}")
        return pf.EXIT_EXISTS
    _say(out, f"run: wrote {opts.output} ({doc['status']}); raw artefacts in {opts.artefacts_dir}")
    if doc["status"] != "completed":
        return pf.EXIT_RUN_FAILED
    return pf.EXIT_OK
