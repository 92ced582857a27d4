"""The ``system`` view of a result file: checks, phase tables, whole-run peaks.

Figures come from ``system_decision.measurements`` (what the file claims);
the checks are shown as claimed and, next to them, as re-derived from the
evidence, so a view never repeats a false claim unmarked. A missing sample is
shown as "—": no sample is not zero MiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_rlsys.escaping import clean
from pytest_rlsys.resultfile import checks as cc
from pytest_rlsys.resultfile.loading import load_result_file

NULL = "—"
VIEWS = ("system",)

NOTES = (
    "whole-GPU and whole-host samples include every process on the machine; a difference of "
    "whole-GPU peaks is not the KV-cache size",
    "one release/retain pair does not establish a speed-up",
)


class SummaryError(ValueError):
    """The file cannot be summarised; the message says why, in one line per problem."""


def _num(value: Any, fmt: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return NULL
    try:
        return format(value, fmt)
    except (OverflowError, ValueError):  # an integer too large for a float
        return "too large"


def _phase_order(phases: Mapping[str, Any]) -> list[str]:
    known = [p for p in cc.PHASE_NAMES if p in phases]
    return known + sorted(p for p in phases if p not in known)


def read_summary(path: str | Path, view: str = "system") -> dict[str, Any]:
    """The view as plain data. Raises :class:`SummaryError` for an unusable file."""
    if view not in VIEWS:
        raise SummaryError(f"unknown view {view!r}; known: {', '.join(VIEWS)}")
    loaded = load_result_file(path)
    if not loaded.ok or loaded.doc is None:
        shown = list(loaded.errors[:10])
        more = len(loaded.errors) - len(shown)
        if more > 0:
            shown.append(f"... and {more} more")
        raise SummaryError(
            f"{path}: not a valid result file:\n"
            + "\n".join(f"  {clean(e, newlines=False)}" for e in shown)
        )
    doc = loaded.doc
    decision = doc["system_decision"]
    derived = cc.derive_checks(doc)
    checks = {}
    for name in cc.CHECK_NAMES:
        claimed = decision["checks"][name]
        checks[name] = {
            "claimed": claimed["passed"],
            "derived": derived[name].passed,
            "detail": derived[name].detail,
        }
    groups: dict[str, Any] = {}
    for g in cc.GROUP_NAMES:
        m = decision["measurements"][g]
        groups[g] = {
            "free_cache_engine": m["free_cache_engine"],
            "phases": {p: dict(m["phases"][p]) for p in _phase_order(m["phases"])},
            "sampled_gpu_peak_mb": m["sampled_gpu_peak_mb"],
            "sampled_gpu_peak_phase": m["sampled_gpu_peak_phase"],
            "update_completed": doc["groups"][g]["update_completed"],
            "sync_completed": doc["groups"][g]["sync_completed"],
            "resume_calls": [c["tags"] for c in doc["groups"][g]["resume_calls"]],
        }
    return {
        "view": view,
        "schema_version": doc["schema_version"],
        "run_label": doc["run_label"],
        "status": doc["status"],
        "failure": doc.get("failure"),
        "created_at": doc["created_at"],
        "model": doc["workload"]["model"],
        "lora_rank": doc["workload"]["lora_rank"],
        "sampling": doc["sampling"],
        "checks": checks,
        "groups": groups,
        "notes": list(NOTES),
    }


def format_summary(s: Mapping[str, Any]) -> str:
    lines = [
        f"run {s['run_label']} ({s['schema_version']}), status {s['status']}, "
        f"created {s['created_at']}",
        f"model {s['model']}, LoRA rank {s['lora_rank']}; samples every "
        f"{_num(s['sampling']['interval_s'], 'g')} s"
        + (" plus one at every phase boundary" if s["sampling"]["boundary_samples"] else ""),
    ]
    if s.get("failure"):
        f = s["failure"]
        lines.append(
            f"FAILED in group {f.get('group') or '?'}, phase {f.get('phase') or '?'}: "
            f"{f['type']}: {f['message'].splitlines()[0] if f['message'] else ''}"
        )
    lines += _check_lines(s["checks"])
    for g, data in s["groups"].items():
        lines += _group_lines(g, data)
    lines += [""] + [f"note: {n}" for n in s["notes"]]
    return "\n".join(lines)


def _check_lines(checks: Mapping[str, Any]) -> list[str]:
    n_ok = sum(1 for c in checks.values() if c["derived"])
    lines = ["", f"checks ({n_ok}/{len(checks)} pass on the evidence)"]
    width = max(len(n) for n in checks)
    for name, c in checks.items():
        mark = "pass" if c["derived"] else "FAIL"
        false_claim = (
            " (file claims pass: false claim)" if c["claimed"] and not c["derived"] else ""
        )
        lines.append(f"  [{mark}] {name:<{width}}  {c['detail']}{false_claim}")
    return lines


def _group_lines(g: str, data: Mapping[str, Any]) -> list[str]:
    lines = [
        "",
        f"group {g} (free_cache_engine={'true' if data['free_cache_engine'] else 'false'})",
        f"  {'phase':<22} {'duration_s':>10} {'samples':>8} {'sampled_peak_MiB':>17}",
    ]
    for phase, row in data["phases"].items():
        lines.append(
            f"  {phase:<22} {_num(row['duration_s'], '.3f'):>10} "
            f"{_num(row['sample_count'], 'd'):>8} "
            f"{_num(row['sampled_gpu_peak_mb'], '.0f'):>17}"
        )
    peak = _num(data["sampled_gpu_peak_mb"], ".0f")
    where = data["sampled_gpu_peak_phase"] or "no phase"
    lines.append(f"  whole-run sampled peak: {peak} MiB" + (f" in {where}" if peak != NULL else ""))
    calls = ", ".join("+".join(t) for t in data["resume_calls"]) or "none"
    lines.append(f"  resume calls: {calls}")
    return lines
