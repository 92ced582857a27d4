"""The data the ``rlsys closure plot`` pictures show, read from a result file alone.

Per-phase figures are re-derived from the events and samples with the same helpers the
grader uses (``pytest_rlsys.resultfile.checks``), so a picture shows the evidence, not
what the file claims about it; a phase that started and never ended is "unfinished".
Plain data, no matplotlib: the tests read a view without drawing it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_rlsys.escaping import clean
from pytest_rlsys.resultfile import checks as cc
from pytest_rlsys.resultfile.loading import load_result_file

__all__ = [
    "DRAWABLE_MB",
    "DRAWABLE_S",
    "LABELS",
    "NO_SAMPLE",
    "UNFINISHED",
    "GroupView",
    "PlotError",
    "PlotView",
    "label",
    "read_view",
    "undrawable",
    "view_of",
]


LABELS: dict[str, str] = {
    "initial_sync": "initial sync",
    "rollout_before_update": "rollout",
    "engine_sleep": "engine sleep",
    "score_before_update": "score",
    "update": "update",
    "sync": "sync",
    "resume_weights": "resume weights",
    "weight_transfer": "weight transfer",
    "resume_kv_cache": "resume KV cache",
    "rollout_after_update": "rollout 2",
    "score_after_update": "score 2",
}
NO_SAMPLE = "no sample"


UNFINISHED = "unfinished"


class PlotError(ValueError):
    """The file cannot be drawn; the message says why and what to do."""


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def label(phase: str) -> str:
    """The short, human name of a phase drawn on the pictures."""
    return LABELS.get(phase, phase.replace("_", " "))


@dataclass
class GroupView:
    """One group, with every time already relative to ``origin_s`` (its first cycle phase)."""

    name: str
    free_cache_engine: bool | None
    origin_s: float
    init: tuple[float, float] | None
    init_steps: list[tuple[str, float, float]]
    windows: dict[str, tuple[float, float]]  # phases that started and ended
    unfinished: dict[str, float]  # started, never ended: start
    sample_count: dict[str, int]
    peaks: dict[str, float | None]  # per phase, None = no sample
    times: list[float]
    gpu_mb: list[float]
    host_mb: list[float | None]
    boundary: list[bool]
    run_peak_mb: float | None
    run_peak_phase: str | None
    run_peak_t: float | None = None

    @property
    def top_phases(self) -> list[str]:
        return [p for p in self.windows if p not in cc.SYNC_SUB_PHASES]

    @property
    def sub_phases(self) -> list[str]:
        return [p for p in self.windows if p in cc.SYNC_SUB_PHASES]

    @property
    def end_s(self) -> float:
        ends = [w[1] for w in self.windows.values()] + list(self.unfinished.values())
        ends += self.times[-1:]
        return max(ends, default=0.0)


@dataclass
class PlotView:
    """What the pictures show, as plain data (tests read it without matplotlib)."""

    path: str
    run_label: str
    status: str
    gpu_name: str | None
    failure: str | None
    groups: dict[str, GroupView] = field(default_factory=dict)
    # The file's own checks (what ``rlsys result`` grades) when any fails: said in the
    # title, so a picture of a contradicted or failing run never passes for a good one.
    checks: str | None = None


def _unfinished(events: list[Mapping[str, Any]], windows: Mapping[str, Any]) -> dict[str, float]:
    """The phases that started and never ended, each with its first start."""
    started: dict[str, float] = {}
    for event in events:
        t = _num(event.get("t_s"))
        phase = event.get("phase")
        if event.get("kind") == "start" and isinstance(phase, str) and t is not None:
            started.setdefault(phase, t)
    return {p: t for p, t in started.items() if p not in windows}


def _span(raw: object) -> tuple[float, float] | None:
    """``start_s``/``end_s`` of a mapping, when both are numbers."""
    if not isinstance(raw, Mapping):
        return None
    start, end = _num(raw.get("start_s")), _num(raw.get("end_s"))
    return (start, end) if start is not None and end is not None else None


def _init(raw: object) -> tuple[tuple[float, float] | None, list[tuple[str, float, float]]]:
    """The group's initialisation span and its steps' (absolute times)."""
    if not isinstance(raw, Mapping):
        return None, []
    steps = [
        (str(step.get("name", "")), *span)
        for step in raw.get("steps", []) or []
        if (span := _span(step)) is not None
    ]
    return _span(raw), steps


def _peak_time(
    ordered: list[tuple[float, Mapping[str, Any]]],
    run_peak: float | None,
    phase: str | None,
    windows: Mapping[str, tuple[float, float]],
) -> float | None:
    """When (absolute) the whole-run peak was sampled: its first sample in its phase."""
    lo = windows[phase][0] if phase is not None and phase in windows else None
    for t, sample in ordered:
        if float(sample["gpu_used_mb"]) == run_peak and (lo is None or t >= lo):
            return t
    return None


def _mappings(group: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return [item for item in group.get(key, []) if isinstance(item, Mapping)]


def _ordered(samples: list[Mapping[str, Any]]) -> list[tuple[float, Mapping[str, Any]]]:
    """The samples that have a time and a GPU reading, by time."""
    timed = [
        (float(s["t_s"]), s)
        for s in samples
        if _num(s.get("t_s")) is not None and _num(s.get("gpu_used_mb")) is not None
    ]
    return sorted(timed, key=lambda pair: pair[0])


def _group_view(name: str, group: Mapping[str, Any]) -> GroupView:
    events, samples = _mappings(group, "events"), _mappings(group, "resource_samples")
    table = cc.summarize_phases(events, samples)
    run_peak, run_peak_phase = cc.whole_run_peak(samples, table)
    windows = cc.phase_windows(events)
    unfinished = _unfinished(events, windows)
    init, steps = _init(group.get("init"))
    firsts = [w[0] for w in windows.values()] + list(unfinished.values())
    # The zero of the shared time axis: the first cycle phase, so both groups'
    # cycles line up whatever their initialisation took.
    origin = min(firsts) if firsts else init[1] if init is not None else 0.0

    ordered = _ordered(samples)
    peak_at = _peak_time(ordered, run_peak, run_peak_phase, windows)
    fce = group.get("free_cache_engine")
    return GroupView(
        name=name,
        free_cache_engine=fce if isinstance(fce, bool) else None,
        origin_s=origin,
        init=(init[0] - origin, init[1] - origin) if init else None,
        init_steps=[(n, a - origin, b - origin) for n, a, b in steps],
        windows={p: (a - origin, b - origin) for p, (a, b) in windows.items()},
        unfinished={p: t - origin for p, t in unfinished.items()},
        sample_count={p: int(e["sample_count"]) for p, e in table.items()},
        peaks={p: _num(e["sampled_gpu_peak_mb"]) for p, e in table.items()},
        times=[t - origin for t, _ in ordered],
        gpu_mb=[float(s["gpu_used_mb"]) for _, s in ordered],
        host_mb=[_num(s.get("host_used_mb")) for _, s in ordered],
        boundary=[s.get("reason") == "boundary" for _, s in ordered],
        run_peak_mb=run_peak,
        run_peak_phase=run_peak_phase,
        run_peak_t=None if peak_at is None else peak_at - origin,
    )


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def view_of(doc: Mapping[str, Any], path: str = "<document>") -> PlotView:
    """The pictures' data from a document that is valid against its schema."""
    failure = doc.get("failure")
    failure_text: str | None = None
    if isinstance(failure, Mapping):
        where = " / ".join(str(failure[k]) for k in ("group", "phase") if failure.get(k))
        failure_text = _one_line(
            f"run failed{' in ' + where if where else ''}: "
            f"{failure.get('type', '')}: {failure.get('message', '')}"
        )
    env = doc.get("environment")
    gpu_name = env.get("gpu_name") if isinstance(env, Mapping) else None
    groups = doc.get("groups")
    groups = groups if isinstance(groups, Mapping) else {}
    view = PlotView(
        path=path,
        run_label=str(doc.get("run_label", "")),
        status=str(doc.get("status", "")),
        gpu_name=gpu_name if isinstance(gpu_name, str) else None,
        failure=failure_text,
    )
    for name in cc.GROUP_NAMES:
        group = groups.get(name)
        if isinstance(group, Mapping):
            view.groups[name] = _group_view(name, group)
    view.checks = _checks_text(doc, path)
    return view


def _checks_text(doc: Mapping[str, Any], path: str) -> str | None:
    """'CONTRADICTED: 2 of 8 of the file's own checks fail (...)', or None when all pass."""
    from pytest_rlsys.resultfile.grade import grade_document

    try:
        grade = grade_document(doc, path=path)
    except Exception:  # the picture never depends on the grade; say it could not run
        return "the file's own checks could not run (see rlsys result)"
    failed = [c.id.split(".", 1)[-1] for c in grade.cases if c.status != "passed"]
    if grade.gradable and not failed:
        return None
    return _one_line(
        f"{grade.verdict.upper()}: {len(failed)} of {len(grade.cases)} of the file's own "
        f"checks fail ({', '.join(failed)}); see rlsys result"
    )


# Beyond these a picture has nothing to show and matplotlib's tick and limit arithmetic
# overflows: no run lasts 30 years, no card or host holds an exabyte.
DRAWABLE_S = 1e9
DRAWABLE_MB = 1e12


def undrawable(view: PlotView) -> list[str]:
    """Why the view's numbers cannot be drawn (empty when they can)."""
    found: list[str] = []
    for group in view.groups.values():
        spans = [t for w in group.windows.values() for t in w] + list(group.unfinished.values())
        spans += group.times + ([t for w in [group.init] if w for t in w])
        spans += [t for _, a, b in group.init_steps for t in (a, b)]
        far = [t for t in spans if not abs(t) <= DRAWABLE_S]
        if far:
            found.append(
                f"{group.name}: a time {max(far, key=abs):.6g} s from its first cycle phase "
                f"(beyond {DRAWABLE_S:g} s)"
            )
        values = group.gpu_mb + [v for v in group.host_mb if v is not None]
        big = [v for v in values if not abs(v) <= DRAWABLE_MB]
        if big:
            found.append(f"{group.name}: a memory reading of {max(big, key=abs):.6g} MiB")
    return found


def read_view(path: str | Path) -> PlotView:
    """Load and validate a result file, then build its :class:`PlotView`."""
    loaded = load_result_file(path)
    if not loaded.ok or loaded.doc is None:
        shown = list(loaded.errors[:10])
        if len(loaded.errors) > len(shown):
            shown.append(f"... and {len(loaded.errors) - len(shown)} more")
        what = (
            "cannot read it"
            if loaded.stage == "read"
            else ("not a valid result file (check it with 'rlsys validate')")
        )
        # A problem names the file's own keys: each stays one inert line.
        lines = (clean(line, newlines=False) for line in shown)
        raise PlotError(f"{path}: {what}:\n" + "\n".join(f"  {line}" for line in lines))
    return view_of(loaded.doc, str(path))
