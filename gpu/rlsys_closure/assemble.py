"""Two groups' raw records -> one ``pt-verl-closure/1`` result file.

The phase tables, whole-run peaks, checks and measurements are computed by
``pytest_rlsys.resultfile.checks``, the module the grader re-derives them with,
so the runner can never write a figure the grader computes differently.

Result files are records: :func:`write_result` never replaces an existing
file (the new file is linked into place, which fails if the name is taken).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_rlsys.resultfile import checks as cc

__all__ = [
    "GROUP_FLAGS",
    "RUNNER_VERSION",
    "SCHEMA_VERSION",
    "ResultExistsError",
    "assemble",
    "assemble_group",
    "environment_from",
    "result_sample",
    "utc_now",
    "write_result",
]

SCHEMA_VERSION = "pt-verl-closure/1"
RUNNER_VERSION = "rlsys_closure 0.1.0"
GROUP_FLAGS: dict[str, bool] = {"release": True, "retain": False}
_PHASES = set(cc.PHASE_NAMES)


class ResultExistsError(FileExistsError):
    """A result file for this run label is already there; it stays untouched."""


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _event(e: Mapping[str, Any]) -> dict[str, Any] | None:
    if e.get("phase") not in _PHASES or e.get("kind") not in ("start", "end"):
        return None
    out: dict[str, Any] = {"t_s": float(e["t_s"]), "phase": e["phase"], "kind": e["kind"]}
    if e.get("source"):
        out["source"] = str(e["source"])[:100]
    if isinstance(e.get("detail"), Mapping) and e["detail"]:
        out["detail"] = _plain(e["detail"])
    return out


def _resume_call(c: Mapping[str, Any]) -> dict[str, Any] | None:
    tags = [str(t) for t in c.get("tags") or []]
    if not tags:
        return None
    out: dict[str, Any] = {"t_s": float(c["t_s"]), "tags": sorted(set(tags), key=tags.index)}
    if isinstance(c.get("detail"), Mapping) and c["detail"]:
        out["detail"] = _plain(c["detail"])
    return out


def result_sample(s: Mapping[str, Any]) -> dict[str, Any] | None:
    # The schema's samples are whole-GPU readings: one without a GPU number is
    # not evidence of anything the checks look at.
    if not isinstance(s.get("gpu_used_mb"), (int, float)):
        return None
    out = {
        "t_s": float(s["t_s"]),
        "gpu_used_mb": float(s["gpu_used_mb"]),
        "host_used_mb": float(s["host_used_mb"])
        if isinstance(s.get("host_used_mb"), (int, float))
        else None,
    }
    if s.get("reason") in ("periodic", "boundary"):
        out["reason"] = s["reason"]
    return out


def _plain(value: Any) -> Any:
    """JSON-safe copy (drops NaN/inf, which strict readers reject)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _init(steps: list[Mapping[str, Any]]) -> dict[str, Any]:
    clean: list[dict[str, Any]] = [
        {"name": str(s["name"])[:100], "start_s": float(s["start_s"]), "end_s": float(s["end_s"])}
        for s in steps
    ]
    if not clean:
        return {"start_s": 0.0, "end_s": 0.0, "steps": []}
    starts: list[float] = [s["start_s"] for s in clean]
    ends: list[float] = [s["end_s"] for s in clean]
    return {"start_s": min(starts), "end_s": max(ends), "steps": clean}


def _initial_hash_nullable() -> bool:
    from pytest_rlsys.resultfile.schemas import schema

    group = schema("pt-verl-closure.v1.json")["$defs"]["group"]["properties"]
    return "null" in json.dumps(group.get("initial_lora_sha256", {}))


INITIAL_HASH_NULLABLE = _initial_hash_nullable()


def _annotate(events: list[dict[str, Any]], phase: str, kind: str, key: str, value: Any) -> None:
    """Add a diagnostic to the detail of a phase's edge (when both exist)."""
    if value is None:
        return
    for ev in events:
        if ev["phase"] == phase and ev["kind"] == kind:
            ev.setdefault("detail", {})[key] = _plain(value)
            return


def assemble_group(
    raw: Mapping[str, Any],
    fallback_config: Mapping[str, Any],
    fallback_lora: str,
    rollout_source_sha256: str,
    group: str,
) -> dict[str, Any]:
    """One group's section from its raw record (possibly partial or empty)."""
    config = raw.get("config") if isinstance(raw.get("config"), Mapping) else fallback_config
    events = [e for e in (_event(x) for x in raw.get("events", [])) if e is not None]
    events.sort(key=lambda e: e["t_s"])
    calls = [c for c in (_resume_call(x) for x in raw.get("resume_calls", [])) if c is not None]
    samples = [s for s in (result_sample(x) for x in raw.get("samples", [])) if s is not None]
    samples.sort(key=lambda s: s["t_s"])
    memory = {
        phase: (pair[0], pair[1])
        for phase, pair in (raw.get("actor_memory") or {}).items()
        if isinstance(pair, (list, tuple)) and len(pair) == 2
    }
    phases = cc.summarize_phases(events, samples, memory)
    peak, peak_phase = cc.whole_run_peak(samples, phases)
    _annotate(
        events, "initial_sync", "start", "gpu_memory_at_start", raw.get("gpu_memory_at_start")
    )
    # The determinism the actor's update ran under (cuBLAS workspace in force, the
    # sdpa backends, deterministic algorithms and whether they only warn).
    _annotate(events, "update", "start", "actor_determinism", raw.get("actor_determinism"))
    _annotate(
        events,
        "update",
        "end",
        "updated_lora_l2_between_groups",
        raw.get("updated_lora_l2_between_groups"),
    )
    # Only a hash the actor itself reported; a group that never read it does
    # not claim one (the schema of this version insists on a digest: then the
    # adapter the group was given, and the failure block says it never ran).
    initial = raw.get("initial_lora_sha256")
    if not isinstance(initial, str) and not INITIAL_HASH_NULLABLE:
        initial = fallback_lora
    return {
        "free_cache_engine": GROUP_FLAGS[group],
        "config": _plain(config),
        "config_sha256": cc.config_sha256(_plain(config)),
        "initial_lora_sha256": initial,
        "updated_lora_sha256": raw.get("updated_lora_sha256"),
        "rollout_source_sha256": raw.get("rollout_source_sha256") or rollout_source_sha256,
        "update_completed": raw.get("update_completed") is True,
        "sync_completed": raw.get("sync_completed") is True,
        "init": _init(list(raw.get("init_steps") or [])),
        "events": events,
        "resume_calls": sorted(calls, key=lambda c: c["t_s"]),
        "resource_samples": samples,
        "phases": phases,
        "sampled_gpu_peak_mb": peak,
        "sampled_gpu_peak_phase": peak_phase,
    }


def assemble(
    *,
    run_label: str,
    records: Mapping[str, Mapping[str, Any] | None],
    configs: Mapping[str, Mapping[str, Any]],
    environment: Mapping[str, Any],
    workload: Mapping[str, Any],
    sampling: Mapping[str, Any],
    initial_lora_sha256: str,
    failure: Mapping[str, Any] | None = None,
    created_at: str | None = None,
) -> dict[str, Any]:
    """The whole result document, checks and measurements derived from it.

    ``records`` maps each group to its raw record, or None if it never ran.
    A run is ``completed`` only if both groups completed and no ``failure``
    was passed; otherwise it is ``failed`` and the first failure is recorded.
    """
    groups = {}
    for g in GROUP_FLAGS:
        raw = records.get(g) or {}
        groups[g] = assemble_group(
            raw, configs.get(g, {}), initial_lora_sha256, str(workload["rollout_source_sha256"]), g
        )
    fail = dict(failure) if failure else None
    if fail is None:
        for g in GROUP_FLAGS:
            got = records.get(g)
            if got is None:
                fail = {
                    "group": g,
                    "phase": None,
                    "type": "NotRun",
                    "message": f"group {g} did not run",
                }
                break
            if got.get("status") != "completed":
                f = got.get("failure") or {}
                phase = f.get("phase")
                fail = {
                    "group": g,
                    "phase": phase if phase in _PHASES else ("init" if phase else None),
                    "type": str(f.get("type") or "GroupFailed")[:200],
                    "message": str(f.get("message") or f"group {g} ended as {got.get('status')!r}")[
                        :10000
                    ],
                }
                break
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_label": run_label,
        "created_at": created_at or utc_now(),
        "runner_version": RUNNER_VERSION,
        "status": "failed" if fail else "completed",
        "environment": _plain(dict(environment)),
        "workload": _plain(dict(workload)),
        "sampling": _plain(dict(sampling)),
        "groups": groups,
    }
    if fail:
        doc["failure"] = {k: fail[k] for k in ("group", "phase", "type", "message") if k in fail}
    # Measurements first: the resource_sampling check compares them with the samples.
    doc["system_decision"] = {"checks": {}, "measurements": cc.derive_measurements(doc)}
    doc["system_decision"]["checks"] = {
        name: r.as_dict() for name, r in cc.derive_checks(doc).items()
    }
    return doc


def environment_from(
    preflight_checks: list[Mapping[str, Any]], versions: Mapping[str, str | None]
) -> dict[str, Any]:
    """The environment section from preflight's checks and package versions."""
    by_name = {c.get("name"): c for c in preflight_checks}
    nvml = by_name.get("nvml", {}).get("data") or {}
    gpus = nvml.get("gpus") or [{}]
    cuda = by_name.get("cuda", {}).get("data") or {}
    py = by_name.get("python", {}).get("data") or {}
    return {
        "gpu_name": gpus[0].get("name"),
        "gpu_uuid": gpus[0].get("uuid"),
        "gpu_total_mb": gpus[0].get("memory_total_mb"),
        "driver": nvml.get("driver_version"),
        "cuda": cuda.get("cuda"),
        "python": py.get("version"),
        "torch": versions.get("torch"),
        "verl": versions.get("verl"),
        "vllm": versions.get("vllm"),
        "hostname": socket.gethostname(),
        "packages": {k: v for k, v in versions.items() if k not in ("torch", "verl", "vllm")},
    }


def write_result(path: Path, doc: Mapping[str, Any]) -> None:
    """Write ``doc`` to ``path`` atomically, never replacing an existing file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise ResultExistsError(f"{path} already exists; a new experiment takes a new run label")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # ASCII JSON: every value exact (the file is evidence), nothing a terminal acts on.
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    try:
        # link() fails if the name exists, even if another run got there
        # between our check and now; rename() would silently replace it.
        os.link(tmp, path)
    except FileExistsError:
        raise ResultExistsError(
            f"{path} already exists; a new experiment takes a new run label"
        ) from None
    except OSError:
        # A filesystem without hard links: exclusive create still never
        # replaces a file, at the cost of a partial file if we die mid-write.
        try:
            with open(path, "x", encoding="utf-8") as fh:
                fh.write(text)
        except FileExistsError:
            raise ResultExistsError(
                f"{path} already exists; a new experiment takes a new run label"
            ) from None
    finally:
        tmp.unlink(missing_ok=True)
