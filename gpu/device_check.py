"""One script for a lent GPU machine that has torch, transformers and peft, but no verl,
vLLM or Ray: what of the closure run can be proven there, in at most 6 minutes.

    python gpu/device_check.py [--out DIR] [--budget 360] [--interval 0.1]

Sections (each bounded; the whole run has ``--budget`` seconds, then exit 2):

1. ``environment``: torch / transformers / peft versions, CUDA, the GPU, the driver.
2. ``sampler``: the runner's sampler on real NVML, periodic samples from its own process at
   ``--interval``, through four short phases: idle, a 2 GiB allocation, a 0.6 s GIL-holding
   C call in this process, the free. Passes when the largest gap is at most 2 x the interval
   and NVML saw the allocation come and go.
3. ``lora_fsdp``: the runner's LoRA hash. The tiny model with the runner's seeded adapter,
   wrapped as verl 0.9.1 wraps it (FSDP1, ``use_orig_params=False``, one unit per LoRA
   Linear), NCCL on this one GPU (gloo on a CPU); the tensors read under
   ``summon_full_params`` must hash (``rlsys_closure.lora.lora_tensors_sha256``) to the
   adapter file's hash, the flat parameters must not.
4. ``determinism``: the pair's update as the two groups make it: each of two identical
   SFT updates in a process of its own, through FSDP1 (as in 3) with verl's mixed precision
   (bf16 compute over fp32 master weights) and bf16 autocast, with the run's determinism
   (``rlsys_closure.determinism``: cuBLAS workspace, sdpa math backend, deterministic
   algorithms); then two with it off. Do the updated adapters match (the graded
   ``updated_lora_match``)? Reports the L2 distance and the cuBLAS setting in force.
5. ``cumem``: vLLM's sleep mechanism without vLLM: 1 GiB of CUDA virtual memory mapped
   (``cuMemCreate``/``cuMemMap``, through libcuda), released and mapped again; NVML must
   see each step and the remapped memory must read back what was written.
6. ``preflight``: ``rlsys closure preflight``'s checks on this box: the C compiler and
   ``Python.h``, CUDA IPC to a second process, one Triton kernel built and run, NVML's
   process list (verl / vLLM are expected to be missing here; the section fails only on
   those mechanisms, ``build_tools`` and ``/dev/shm``).

Without a GPU it runs in a degraded mode: what can run on the CPU does (the sampler
without NVML, FSDP1 over gloo for the hash and the two-process updates), and it exits 3
with the line ``NO GPU: ...``. Exit codes: 0 every check passed; 1 a check failed;
2 out of time; 3 no GPU (degraded mode). A JSON report goes to ``--out``/device_check.json;
the terminal gets one line per section, and everything the libraries print (transformers'
progress bars and warnings, torch's, NCCL's, preflight's table) goes to
``--out``/device_check.log.  The update of section 4 (and its single-rank group) is in
``device_check_fsdp.py``, section 5 in ``device_check_cumem.py``, beside this script.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # rlsys_closure lives beside this script

from device_check_cumem import check_cumem  # noqa: E402
from device_check_fsdp import (  # noqa: E402  (no torch import)
    DETERMINISM_SWITCH,
    fsdp_update,
    init_single_rank,
    lora_linear,
)
from rlsys_closure.determinism import DETERMINISM_ENV  # noqa: E402  (no torch import)

# Nothing here downloads: the tiny model and its tokenizer are built locally.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Before torch initialises CUDA: cuBLAS reads its workspace setting once.
if os.environ.get(DETERMINISM_SWITCH, "1") == "1":
    for _key, _value in DETERMINISM_ENV.items():
        os.environ.setdefault(_key, _value)

EXIT_OK, EXIT_FAILED, EXIT_OUT_OF_TIME, EXIT_NO_GPU = 0, 1, 2, 3
GIB = 1024**3
MIB = 1024**2


class OutOfTime(Exception):
    pass


class Report:
    def __init__(self, out: Path, budget_s: float, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout  # where the one line per section goes
        self.out = out
        self.budget_s = budget_s
        self.t0 = time.monotonic()
        self.sections: list[dict[str, Any]] = []
        self.gpu = False

    def left(self) -> float:
        return self.budget_s - (time.monotonic() - self.t0)

    def add(self, name: str, status: str, detail: str, **data: Any) -> None:
        took = round(time.monotonic() - self.t0, 1)
        self.sections.append(
            {"name": name, "status": status, "detail": detail, "at_s": took, "data": data}
        )
        print(f"[{status:<4}] {name:<12} {detail}", file=self.stream, flush=True)

    def write(self, exit_code: int, verdict: str) -> None:
        doc = {
            "kind": "rlsys-closure-device-check",
            "gpu": self.gpu,
            "exit_code": exit_code,
            "verdict": verdict,
            "elapsed_s": round(time.monotonic() - self.t0, 1),
            "sections": self.sections,
        }
        with contextlib.suppress(OSError):
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / "device_check.json").write_text(json.dumps(doc, indent=1) + "\n")


LOG_NAME = "device_check.log"


def _to_the_log(log: Path) -> TextIO:
    """From here on, everything else this process and its children write to stdout or
    stderr (transformers' and torch's warnings and progress bars, NCCL's, preflight's
    table) goes to ``log``; the report's own lines go to the stream returned, the
    original stdout: one line per section."""
    sys.stdout.flush()
    sys.stderr.flush()
    report_fd = os.dup(1)
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    return os.fdopen(report_fd, "w", buffering=1, encoding="utf-8", errors="replace")


def section(report: Report, name: str, need_s: float, fn: Callable[[], None]) -> None:
    if report.left() < need_s:
        report.add(name, "skip", f"not enough time left ({report.left():.0f} s < {need_s:g} s)")
        return
    try:
        fn()
    except OutOfTime:
        raise
    except Exception as exc:
        report.add(
            name,
            "fail",
            f"{type(exc).__name__}: {exc}"[:300],
            traceback=traceback.format_exc()[-3000:],
        )


# -- 1. environment ---------------------------------------------------------------------
def check_environment(report: Report) -> None:
    import peft
    import torch
    import transformers

    data: dict[str, Any] = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
    }
    report.gpu = bool(torch.cuda.is_available())
    if report.gpu:
        data["device"] = torch.cuda.get_device_name(0)
        data["capability"] = list(torch.cuda.get_device_capability(0))
        with contextlib.suppress(Exception):
            import pynvml

            pynvml.nvmlInit()
            data["driver"] = str(pynvml.nvmlSystemGetDriverVersion())
            pynvml.nvmlShutdown()
    detail = ", ".join(f"{k} {v}" for k, v in data.items())
    report.add("environment", "pass" if report.gpu else "cpu", detail, **data)


# -- 2. sampler ---------------------------------------------------------------------------
def _hold_gil(seconds: float) -> float:
    probe = 5_000_000
    t = time.monotonic()
    sum(itertools.repeat(1, probe))
    per = max((time.monotonic() - t) / probe, 1e-10)
    t = time.monotonic()
    sum(itertools.repeat(1, int(seconds / per)))
    return time.monotonic() - t


def _exercise(report: Report, rec: Any) -> float:
    """The four phases the sampler watches: idle, a 2 GiB allocation, a GIL-holding C
    call in this process, the free.  Returns how long the GIL was held."""
    import torch

    with rec.phase("init_idle"):
        time.sleep(1.0)
    with rec.phase("update"):  # an allocation the size of a small KV pool
        x = torch.empty(2 * GIB, dtype=torch.uint8, device="cuda") if report.gpu else None
        if x is not None:
            x.fill_(1)
            torch.cuda.synchronize()
        time.sleep(0.5)
    with rec.phase("score_before_update"):
        held = _hold_gil(0.6)
    with rec.phase("engine_sleep"):
        del x
        if report.gpu:
            torch.cuda.empty_cache()
            torch.cuda.synchronize()
        time.sleep(0.5)
    return held


def _nvml_problems(samples: list[Any], data: dict[str, Any]) -> list[str]:
    """Whether NVML's boundary samples saw the 2 GiB come and go (readings into ``data``)."""

    def boundary(at: str) -> float | None:
        got = [s.gpu_used_mb for s in samples if s.at == at]
        return got[0] if got else None

    before, after = boundary("update:start"), boundary("update:end")
    freed_to = boundary("engine_sleep:end")
    data.update(nvml_before_mb=before, nvml_allocated_mb=after, nvml_after_free_mb=freed_to)
    problems = []
    if before is None or after is None or after - before < 1800:
        problems.append(f"NVML did not see the 2 GiB allocation ({before} -> {after} MiB)")
    if after is not None and freed_to is not None and after - freed_to < 1800:
        problems.append(f"NVML did not see the free ({after} -> {freed_to} MiB)")
    return problems


def check_sampler(report: Report, interval: float) -> None:
    from rlsys_closure.events import EventRecorder, phase_windows
    from rlsys_closure.sampler import (
        ChildSampling,
        MemorySampler,
        cuda_device_index,
        host_used_mb,
        load_nvml,
    )

    nvml: Any = None
    if report.gpu:
        nvml = load_nvml()
        nvml.nvmlInit()
    sampler = MemorySampler(
        nvml,
        device_index=cuda_device_index(nvml) if nvml is not None else 0,
        interval_s=interval,
        host_probe=host_used_mb,
        child=ChildSampling(
            "rlsys_closure.sampler:load_nvml" if nvml is not None else "none",
            report.out / "sampler.periodic.jsonl",
        ),
    )
    rec = EventRecorder(hooks=[sampler.boundary_hook])
    sampler.start()
    try:
        held = _exercise(report, rec)
    finally:
        sampler.stop()
    samples = sampler.snapshot()
    windows = phase_windows(rec.events)
    start = min(s for s, _ in windows.values())
    end = max(e for _, e in windows.values())
    periodic = [s.t_s for s in samples if s.reason == "periodic" and start <= s.t_s <= end]
    gap = max(b - a for a, b in itertools.pairwise([start, *periodic, end]))
    spacings = [b - a for a, b in itertools.pairwise(periodic)]
    data: dict[str, Any] = {
        "interval_s": interval,
        "source": sampler.periodic_source,
        "periodic_samples": len(periodic),
        "max_gap_s": round(gap, 4),
        "median_spacing_s": round(statistics.median(spacings), 4) if spacings else None,
        "gil_hold_s": round(held, 3),
        "errors": sampler.errors[:5],
    }
    problems = []
    if sampler.periodic_source != "process":
        problems.append("periodic samples did not come from the sampler process")
    if gap > 2 * interval + 0.05:
        problems.append(f"a {gap:.3f} s gap (limit {2 * interval:g} s)")
    if report.gpu:
        problems += _nvml_problems(samples, data)
        nvml.nvmlShutdown()
    status = "fail" if problems else ("pass" if report.gpu else "cpu")
    detail = "; ".join(problems) or (
        f"{len(periodic)} samples, max gap {gap:.3f} s at {interval:g} s through a "
        f"{held:.2f} s GIL hold"
        + (", NVML saw 2 GiB come and go" if report.gpu else " (host memory only: no NVML)")
    )
    report.add("sampler", status, detail, **data)


# -- 3. LoRA under FSDP -------------------------------------------------------------------
def _tiny(report: Report) -> tuple[Path, Path, str]:
    from rlsys_closure.lora import create_initial_adapter
    from rlsys_closure.tiny_model import TinySpec, build_tiny_model

    model, adapter = report.out / "tiny", report.out / "adapter"
    if not (model / "config.json").is_file():
        build_tiny_model(model, TinySpec())
    sha = create_initial_adapter(
        str(model), adapter, rank=8, alpha=16, target_modules="all-linear", seed=7
    )
    return model, adapter, sha


def check_lora_fsdp(report: Report) -> None:
    import torch
    import torch.distributed as dist
    from peft import PeftModel
    from rlsys_closure.lora import lora_tensors_sha256
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp.wrap import lambda_auto_wrap_policy
    from transformers import AutoModelForCausalLM

    model_dir, adapter_dir, file_sha = _tiny(report)
    base = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    peft_model = PeftModel.from_pretrained(base, str(adapter_dir), is_trainable=True)
    device = torch.device("cuda", 0) if report.gpu else torch.device("cpu")
    backend = "nccl" if report.gpu else "gloo"
    init_single_rank(backend)
    try:
        if report.gpu:
            torch.cuda.set_device(0)
        wrapped = FSDP(
            peft_model.to(device),
            auto_wrap_policy=functools.partial(lambda_auto_wrap_policy, lambda_fn=lora_linear),
            use_orig_params=False,
            device_id=device,
        )
        flat = [(n, p) for n, p in wrapped.named_parameters() if "lora_" in n]
        flat_sha = lora_tensors_sha256(flat) if flat else None
        with FSDP.summon_full_params(wrapped, writeback=False):
            full = [
                (n, p.detach().cpu().clone()) for n, p in wrapped.named_parameters() if "lora_" in n
            ]
        full_sha = lora_tensors_sha256(full)
    finally:
        dist.destroy_process_group()
    ok = full_sha == file_sha and flat_sha != file_sha
    report.add(
        "lora_fsdp",
        ("pass" if report.gpu else "cpu") if ok else "fail",
        f"FSDP1 ({backend}), one unit per LoRA Linear: under summon_full_params {len(full)} "
        f"LoRA tensors hash {'to' if full_sha == file_sha else 'NOT to'} the adapter file's; "
        f"the {len(flat)} flat parameters {'do not' if flat_sha != file_sha else 'DO'}",
        backend=backend,
        file_sha256=file_sha,
        summoned_sha256=full_sha,
        flat_sha256=flat_sha,
        n_summoned=len(full),
        n_flat=len(flat),
    )


# -- 4. determinism -----------------------------------------------------------------------
# -- 4. determinism -----------------------------------------------------------------------
def _update_in_a_process(
    report: Report, model_dir: Path, adapter_dir: Path, out_dir: Path, deterministic: bool
) -> dict[str, Any]:
    """:func:`fsdp_update` in a fresh process, as each group's update runs in its own."""
    env = {**os.environ, DETERMINISM_SWITCH: "1" if deterministic else "0"}
    if not deterministic:
        for key in DETERMINISM_ENV:
            env.pop(key, None)
    argv = [sys.executable, str(Path(__file__).resolve()), "--fsdp-update"]
    proc = subprocess.run(
        [*argv, str(model_dir), str(adapter_dir), str(out_dir)],
        capture_output=True,
        text=True,
        timeout=max(1.0, report.left()),
        env=env,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        last = tail[-1] if tail else "no output"
        raise RuntimeError(f"the update process exited {proc.returncode}: {last}")
    found: dict[str, Any] = json.loads(lines[-1])
    return found


def check_determinism(report: Report) -> None:
    from rlsys_closure.lora import adapter_l2_distance

    model_dir, adapter_dir, initial_sha = _tiny(report)
    results: dict[str, Any] = {}
    for label, det in (("on", True), ("off", False)):
        outs = [report.out / "updates" / f"{label}_{i}" for i in (1, 2)]
        got = [_update_in_a_process(report, model_dir, adapter_dir, o, det) for o in outs]
        results[label] = {
            "match": got[0]["sha256"] == got[1]["sha256"],
            "sha256": [g["sha256"] for g in got],
            "l2": adapter_l2_distance(outs[0], outs[1]),
            "settings": got[0]["settings"],
        }
    on, off = results["on"], results["off"]
    backend = got[0]["backend"]
    moved = initial_sha not in on["sha256"]  # the update changed the adapter at all
    detail = (
        "the update left the adapter unchanged: nothing was compared; " if not moved else ""
    ) + (
        f"FSDP1 ({backend}, bf16 over fp32), each update in its own process: with determinism "
        f"(cuBLAS {on['settings'].get('cublas_workspace_config')}) the two updated adapters "
        f"{'match' if on['match'] else 'DIFFER'} (L2 {on['l2']:.3g}); without: "
        f"{'match' if off['match'] else 'differ'} (L2 {off['l2']:.3g})"
    )
    status = ("pass" if report.gpu else "cpu") if on["match"] and moved else "fail"
    report.add("determinism", status, detail, backend=backend, **results)


# -- 6. preflight -------------------------------------------------------------------------
def check_preflight(report: Report) -> None:
    from rlsys_closure import preflight as pf

    model_dir = report.out / "tiny"
    opts = pf.PreflightOptions(
        model_path=model_dir if model_dir.is_dir() else None,
        output_dir=report.out,
        mechanisms_probe_timeout_s=min(180.0, max(30.0, report.left() - 10)),
    )
    results = pf.run_checks(opts)
    code = pf.exit_code(results)
    print(pf.format_results(results), flush=True)  # the whole table: to the log
    decisive = ("build_tools", *pf.MECHANISMS, "shm")
    mechanisms = {r.name: r.status for r in results if r.name in decisive}
    bad = [n for n, s in mechanisms.items() if s == "fail"]
    status = "fail" if bad else ("pass" if report.gpu else "cpu")
    report.add(
        "preflight",
        status,
        f"preflight exit {code} ({pf.EXIT_CODES[code]}); mechanisms "
        + ", ".join(f"{n} {s}" for n, s in mechanisms.items())
        + ("" if not bad else f"; MISSING: {', '.join(bad)}"),
        exit_code=code,
        checks=[r.as_dict() for r in results],
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python gpu/device_check.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", type=Path, default=None, help="work folder and JSON report")
    p.add_argument("--budget", type=float, default=360.0, help="seconds for everything")
    p.add_argument("--interval", type=float, default=0.1, help="sampling interval, seconds")
    # The determinism section runs each update in a process of its own, through this.
    p.add_argument("--fsdp-update", nargs=3, type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.fsdp_update:
        print(json.dumps(fsdp_update(*args.fsdp_update)), flush=True)
        return EXIT_OK
    out = args.out or Path(tempfile.mkdtemp(prefix="rlsys_device_check_"))
    try:
        stream = _to_the_log(out / LOG_NAME)
    except OSError as exc:
        print(f"device_check: cannot write its log in {out}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    say = functools.partial(print, file=stream, flush=True)
    report = Report(out, args.budget, stream)
    say(f"device_check: libraries' output (warnings, progress bars) in {out / LOG_NAME}")

    def out_of_time(signum: int, frame: object) -> None:
        raise OutOfTime

    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(max(1, int(args.budget)))
    try:
        try:
            check_environment(report)
        except ImportError as exc:
            report.add("environment", "fail", f"needs torch, transformers and peft: {exc}")
            report.write(EXIT_FAILED, "missing packages")
            return EXIT_FAILED
        if not report.gpu:
            say(
                "NO GPU: torch sees no CUDA device; running the degraded CPU mode "
                "(nothing about a GPU is proven by this run)"
            )
        section(report, "sampler", 10, lambda: check_sampler(report, args.interval))
        section(report, "lora_fsdp", 30, lambda: check_lora_fsdp(report))
        section(report, "determinism", 30, lambda: check_determinism(report))
        section(report, "cumem", 10, lambda: check_cumem(report))
        section(report, "preflight", 20, lambda: check_preflight(report))
    except OutOfTime:
        report.add("budget", "fail", f"out of time after {args.budget:g} s")
        report.write(EXIT_OUT_OF_TIME, "out of time")
        return EXIT_OUT_OF_TIME
    finally:
        signal.alarm(0)
    failed = [s["name"] for s in report.sections if s["status"] == "fail"]
    if failed:
        code, verdict = EXIT_FAILED, f"FAILED: {', '.join(failed)}"
    elif not report.gpu:
        code, verdict = EXIT_NO_GPU, "NO GPU: degraded CPU mode ran cleanly; no GPU check ran"
    else:
        code, verdict = EXIT_OK, "every check passed"
    report.write(code, verdict)
    say(
        f"device_check: {verdict} ({time.monotonic() - report.t0:.0f} s); "
        f"report {out / 'device_check.json'}"
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
