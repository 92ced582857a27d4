"""``rlsys closure plot``: pictures of a pt-verl-closure result file.

Two figures, drawn from the file alone (nothing is re-run):

* the timeline: whole-GPU and host memory over time, one panel per group on a
  shared time axis whose zero is each group's first cycle phase, phase bands
  labelled with the phase's sampled peak (or "no sample"), boundary samples
  drawn apart from periodic ones, the whole-run peak starred;
* the peaks: each phase's sampled peak, release and retain side by side, the
  update phase highlighted.

Per-phase figures are re-derived from the events and samples with the same
helpers the grader uses (``pytest_rlsys.resultfile.checks``), so the picture
shows the evidence, not what the file claims about it. A failed run's partial
file works: a phase that started and never ended is drawn as "unfinished".

matplotlib is optional (``pip install matplotlib``, or the ``plot`` extra); it is imported
only when a figure is drawn, through the Agg/SVG canvases (no display, no
pyplot state).

Public API::

    PlotError, MatplotlibMissing, PLOT_INSTALL_HINT, FORMATS
    LABELS, label(phase) -> str, NO_SAMPLE, UNFINISHED, MAX_MARKED
    GroupView, PlotView, read_view(path) -> PlotView, view_of(doc) -> PlotView
    timeline_figure(view) -> Figure
    peaks_figure(view) -> Figure
    output_paths(output) -> (timeline_path, peaks_path)
    write_figures(view, output) -> (timeline_path, peaks_path)
    plot_main(file, output) -> int          # the CLI body, prints and returns an exit code
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_rlsys.escaping import clean, say
from pytest_rlsys.resultfile import checks as cc
from pytest_rlsys.resultfile.loading import load_result_file

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "FORMATS",
    "LABELS",
    "MAX_MARKED",
    "NO_SAMPLE",
    "PLOT_INSTALL_HINT",
    "UNFINISHED",
    "GroupView",
    "MatplotlibMissing",
    "PlotError",
    "PlotView",
    "label",
    "output_paths",
    "peaks_figure",
    "plot_main",
    "read_view",
    "timeline_figure",
    "view_of",
    "write_figures",
]

PLOT_INSTALL_HINT = (
    "rlsys closure plot needs matplotlib, which is not installed; "
    "install it: pip install matplotlib (from a checkout of this project, "
    "pip install '.[plot]' installs the pinned version)"
)
FORMATS = (".png", ".svg")

# Exit codes shared with the rest of ``rlsys closure`` (preflight.EXIT_CODES).
_EXIT_OK, _EXIT_ERROR, _EXIT_USAGE, _EXIT_NOT_READY = 0, 1, 2, 3

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
MAX_MARKED = 1500  # periodic samples per group drawn as dots; more are drawn as the line only
UNFINISHED = "unfinished"
# Alternating greys for neighbouring bands: they must stay apart in greyscale too.
_BAND_SHADES = ("#d9d9d9", "#efefef")
_UPDATE_SHADE = "#ffe08a"
_GROUP_STYLE: dict[str, dict[str, Any]] = {
    # Colour plus hatch/line style, so the groups stay apart without colour.
    "release": {"color": "#1f5fa8", "hatch": "//", "linestyle": "-"},
    "retain": {"color": "#c0502a", "hatch": "", "linestyle": "-"},
}


class PlotError(ValueError):
    """The file cannot be drawn; the message says why and what to do."""


class MatplotlibMissing(ImportError):
    """matplotlib (the ``plot`` extra) is not installed."""


def _mib(value: float | None) -> str:
    if value is None:
        return NO_SAMPLE
    return f"{value:.0f} MiB" if float(value).is_integer() else f"{value:.1f} MiB"


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def label(phase: str) -> str:
    """The short, human name of a phase drawn on the pictures."""
    return LABELS.get(phase, phase.replace("_", " "))


# --------------------------------------------------------------------------- plain data


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


def _group_view(name: str, group: Mapping[str, Any]) -> GroupView:
    events = [e for e in group.get("events", []) if isinstance(e, Mapping)]
    samples = [s for s in group.get("resource_samples", []) if isinstance(s, Mapping)]
    table = cc.summarize_phases(events, samples)
    run_peak, run_peak_phase = cc.whole_run_peak(samples, table)
    windows = cc.phase_windows(events)
    started: dict[str, float] = {}
    for event in events:
        t = _num(event.get("t_s"))
        phase = event.get("phase")
        if event.get("kind") == "start" and isinstance(phase, str) and t is not None:
            started.setdefault(phase, t)
    unfinished = {p: t for p, t in started.items() if p not in windows}

    init_raw = group.get("init")
    init: tuple[float, float] | None = None
    steps: list[tuple[str, float, float]] = []
    if isinstance(init_raw, Mapping):
        start, end = _num(init_raw.get("start_s")), _num(init_raw.get("end_s"))
        if start is not None and end is not None:
            init = (start, end)
        for step in init_raw.get("steps", []) or []:
            if isinstance(step, Mapping):
                s0, s1 = _num(step.get("start_s")), _num(step.get("end_s"))
                if s0 is not None and s1 is not None:
                    steps.append((str(step.get("name", "")), s0, s1))

    firsts = [w[0] for w in windows.values()] + list(unfinished.values())
    # The zero of the shared time axis: the first cycle phase, so both groups'
    # cycles line up whatever their initialisation took.
    if firsts:
        origin = min(firsts)
    elif init is not None:
        origin = init[1]
    else:
        origin = 0.0

    ordered = sorted(
        (
            (float(s["t_s"]), s)
            for s in samples
            if _num(s.get("t_s")) is not None and _num(s.get("gpu_used_mb")) is not None
        ),
        key=lambda pair: pair[0],
    )
    times = [t - origin for t, _ in ordered]
    gpu = [float(s["gpu_used_mb"]) for _, s in ordered]
    host = [_num(s.get("host_used_mb")) for _, s in ordered]
    boundary = [s.get("reason") == "boundary" for _, s in ordered]
    peak_t: float | None = None
    if run_peak is not None:
        lo = windows[run_peak_phase][0] if run_peak_phase in windows else None
        for t, v in zip(times, gpu, strict=True):
            if v == run_peak and (lo is None or t + origin >= lo):
                peak_t = t
                break

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
        times=times,
        gpu_mb=gpu,
        host_mb=host,
        boundary=boundary,
        run_peak_mb=run_peak,
        run_peak_phase=run_peak_phase,
        run_peak_t=peak_t,
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


# --------------------------------------------------------------------------- drawing


def _matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise MatplotlibMissing(PLOT_INSTALL_HINT) from exc


def _new_figure(width: float, height: float) -> Figure:
    _matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # Agg: renders without a display, whatever MPLBACKEND says
    return fig


def _text(ax: Axes, x: float, y: float, text: str, **kw: Any) -> None:
    # parse_math=False: a '$' in a file-derived string must not start mathtext.
    ax.text(x, y, text, parse_math=False, **kw)


def _phase_caption(group: GroupView, phase: str) -> str:
    if phase in group.unfinished:
        return f"{label(phase)}\n{UNFINISHED}"
    return f"{label(phase)}\n{_mib(group.peaks.get(phase))}"


def _spread(centres: list[float], gap: float) -> list[float]:
    """Label positions at least ``gap`` apart, each as near its band's centre as allowed."""
    placed: list[float] = []
    for centre in centres:
        placed.append(max(centre, placed[-1] + gap) if placed else centre)
    return placed


def _captions(
    ax: Axes, group: GroupView, items: list[tuple[str, float, bool]], gap: float, *, bottom: bool
) -> None:
    """Rotated phase captions; one pushed aside by a neighbour gets a leader to its band."""
    from matplotlib.transforms import blended_transform_factory

    trans = blended_transform_factory(ax.transData, ax.transAxes)
    items = sorted(items, key=lambda item: item[1])
    y = 0.015 if bottom else 0.985
    style: dict[str, Any] = {
        "rotation": 90,
        "ha": "center",
        "va": "bottom" if bottom else "top",
        "fontsize": 7 if bottom else 7.5,
        "zorder": 5,
        "parse_math": False,
        # Captions live inside the panel: clipped there, and never stretching the layout.
        "clip_on": True,
        "in_layout": False,
        "bbox": {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
    }
    for (phase, centre, bold), x in zip(items, _spread([i[1] for i in items], gap), strict=True):
        text = _phase_caption(group, phase)
        extra: dict[str, Any] = {
            "fontweight": "bold" if bold else "normal",
            "gid": f"phase-label:{group.name}:{phase}",
        }
        if x == centre:
            ax.text(x, y, text, transform=trans, **style, **extra)
        else:
            ax.annotate(
                text,
                xy=(centre, 0.31 if bottom else 0.6),
                xycoords=trans,
                xytext=(x, y),
                textcoords=trans,
                arrowprops={"arrowstyle": "-", "lw": 0.6, "color": "#333333"},
                **style,
                **extra,
            )


def _draw_bands(ax: Axes, group: GroupView, *, captions: bool, gap: float = 0.0) -> None:
    top: list[tuple[str, float, bool]] = []
    for index, phase in enumerate(group.top_phases):
        start, end = group.windows[phase]
        highlight = phase == "update"
        ax.axvspan(
            start,
            end,
            color=_UPDATE_SHADE if highlight else _BAND_SHADES[index % 2],
            hatch="xx" if highlight else None,
            alpha=0.9,
            lw=0,
            zorder=0,
            label="update phase" if highlight and captions else None,
        )
        top.append((phase, (start + end) / 2, highlight))
    subs: list[tuple[str, float, bool]] = []
    for phase in group.sub_phases if captions else ():
        start, end = group.windows[phase]
        ax.axvspan(
            start,
            end,
            ymin=0.0,
            ymax=0.3,
            facecolor="#bcbcbc",
            hatch="..",
            edgecolor="#555555",
            lw=0.5,
            zorder=1,
        )
        subs.append((phase, (start + end) / 2, False))
    last = group.times[-1] if group.times else None
    for phase, start in group.unfinished.items():
        end = max(last if last is not None else start, start)
        ax.axvspan(
            start,
            end if end > start else start + 0.05,
            facecolor="white",
            hatch="\\\\",
            edgecolor="#888888",
            lw=0.8,
            zorder=0,
        )
        top.append((phase, start + gap / 2, False))
    if captions:
        _captions(ax, group, top, gap, bottom=False)
        _captions(ax, group, subs, gap, bottom=True)


def _draw_init(ax: Axes, group: GroupView) -> None:
    from matplotlib.transforms import blended_transform_factory

    trans = blended_transform_factory(ax.transData, ax.transAxes)
    if group.init is not None:
        ax.axvspan(*group.init, color="#f4f4f4", lw=0, zorder=0)
    for index, (name, start, end) in enumerate(group.init_steps):
        ax.axvspan(
            start, end, facecolor=_BAND_SHADES[index % 2], edgecolor="#777777", lw=0.5, zorder=0
        )
        _text(
            ax,
            (start + end) / 2,
            0.985,
            name,
            transform=trans,
            rotation=90,
            ha="center",
            va="top",
            fontsize=7,
            zorder=5,
        )


def _draw_samples(ax: Axes, host_ax: Axes, group: GroupView, *, legend: bool) -> None:
    style = _GROUP_STYLE.get(group.name, {"color": "black"})
    color = style["color"]
    if not group.times:
        _text(
            ax,
            0.5,
            0.5,
            "no resource samples recorded",
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=10,
        )
        return
    ax.plot(
        group.times,
        group.gpu_mb,
        color=color,
        lw=1.2,
        zorder=3,
        label="GPU used (whole device)" if legend else None,
        gid=f"gpu:{group.name}",
    )
    periodic = [
        (t, v) for t, v, b in zip(group.times, group.gpu_mb, group.boundary, strict=True) if not b
    ]
    boundary = [
        (t, v) for t, v, b in zip(group.times, group.gpu_mb, group.boundary, strict=True) if b
    ]
    # A one-hour run has 14,400 samples per group: a dot each would be a smear
    # (and megabytes of SVG), so past MAX_MARKED the line alone shows them.
    if periodic and len(periodic) <= MAX_MARKED:
        ax.plot(
            *zip(*periodic, strict=True),
            linestyle="none",
            marker="o",
            ms=3,
            color=color,
            zorder=4,
            label="periodic sample" if legend else None,
            gid=f"periodic:{group.name}",
        )
    if boundary:
        ax.plot(
            *zip(*boundary, strict=True),
            linestyle="none",
            marker="D",
            ms=5,
            markerfacecolor="white",
            markeredgecolor="black",
            zorder=4,
            label="boundary sample" if legend else None,
            gid=f"boundary:{group.name}",
        )
    if group.run_peak_mb is not None and group.run_peak_t is not None:
        ax.plot(
            [group.run_peak_t],
            [group.run_peak_mb],
            linestyle="none",
            marker="*",
            ms=15,
            markerfacecolor="gold",
            markeredgecolor="black",
            zorder=6,
            label="whole-run sampled peak" if legend else None,
            gid=f"run-peak:{group.name}",
        )
    host = [(t, v) for t, v in zip(group.times, group.host_mb, strict=True) if v is not None]
    if host:
        host_ax.plot(
            *zip(*host, strict=True),
            color="#555555",
            lw=1.0,
            linestyle="--",
            marker="." if len(host) <= MAX_MARKED else "",
            ms=2,
            gid=f"host:{group.name}",
        )
    else:
        _text(
            host_ax,
            0.5,
            0.5,
            "host memory not measured",
            transform=host_ax.transAxes,
            ha="center",
            va="center",
            fontsize=8,
        )


def _group_title(group: GroupView) -> str:
    fce = {True: "true", False: "false", None: "unknown"}[group.free_cache_engine]
    peak = (
        f"whole-run sampled peak {_mib(group.run_peak_mb)}"
        + (f" in {label(group.run_peak_phase)}" if group.run_peak_phase else "")
        if group.run_peak_mb is not None
        else "no sample in the run"
    )
    update_text = (
        f"; update peak {_mib(group.peaks.get('update'))}" if "update" in group.windows else ""
    )
    return f"{group.name} (free_cache_engine={fce}): {peak}{update_text}"


def _suptitle(view: PlotView, what: str) -> str:
    first = f"{what} - {view.run_label}"
    if view.gpu_name:
        first += f" ({view.gpu_name})"
    if view.status != "completed":
        first += f" - {view.status.upper()} RUN, partial record"
    lines = [first, *(x for x in (view.checks, view.failure) if x)]
    return "\n".join(lines)


def timeline_figure(view: PlotView) -> Figure:
    """GPU and host memory over time, one panel per group, phases banded and labelled."""
    groups = list(view.groups.values())
    fig = _new_figure(18.0, 4.2 * max(len(groups), 1) + 1.2)
    fig.suptitle(_suptitle(view, "Memory timeline"), fontsize=12, parse_math=False)
    if not groups:
        return fig
    ratios: list[float] = []
    for _ in groups:
        ratios += [3.0, 1.0]
    grid = fig.add_gridspec(2 * len(groups), 2, width_ratios=[1.0, 6.0], height_ratios=ratios)
    init_lo = min((g.init[0] for g in groups if g.init), default=-1.0)
    cycle_hi = max((g.end_s for g in groups), default=1.0)
    gpu_top = max((max(g.gpu_mb) for g in groups if g.gpu_mb), default=0.0) or 1000.0
    lead = min(0.25, 0.05 * max(cycle_hi, 1.0))
    # A rotated two-line caption is about 0.25 in wide; the cycle panel is about
    # 13.5 in wide for the whole cycle. Neighbours closer than that are spread.
    gap = 0.25 / 13.5 * (cycle_hi + 2 * lead)
    first: dict[str, Axes] = {}
    for row, group in enumerate(groups):
        init_ax = fig.add_subplot(
            grid[2 * row, 0], sharex=first.get("init"), sharey=first.get("gpu")
        )
        gpu_ax = fig.add_subplot(grid[2 * row, 1], sharex=first.get("cycle"), sharey=init_ax)
        init_host = fig.add_subplot(grid[2 * row + 1, 0], sharex=init_ax, sharey=first.get("host"))
        host_ax = fig.add_subplot(grid[2 * row + 1, 1], sharex=gpu_ax, sharey=init_host)
        first.setdefault("init", init_ax)
        first.setdefault("gpu", init_ax)
        first.setdefault("cycle", gpu_ax)
        first.setdefault("host", init_host)
        _draw_init(init_ax, group)
        for ax in (gpu_ax, host_ax):
            _draw_bands(ax, group, captions=ax is gpu_ax, gap=gap)
        for g_ax, h_ax in ((init_ax, init_host), (gpu_ax, host_ax)):
            _draw_samples(g_ax, h_ax, group, legend=g_ax is gpu_ax and row == 0)
        gpu_ax.set_title(_group_title(group), loc="left", fontsize=10, parse_math=False)
        init_ax.set_title(f"{group.name}: init (not a cycle phase)", loc="left", fontsize=9)
        init_ax.set_ylabel("GPU used (MiB)")
        init_host.set_ylabel("host used (MiB)")
        for ax in (gpu_ax, host_ax):
            ax.tick_params(labelleft=False)
        for ax in (init_ax, gpu_ax, init_host, host_ax):
            ax.grid(axis="y", color="#cccccc", lw=0.5)
        if row == len(groups) - 1:
            host_ax.set_xlabel("seconds from the group's first cycle phase")
            init_host.set_xlabel("seconds (init)")
        if row == 0:
            handles, names = gpu_ax.get_legend_handles_labels()
            fig.legend(handles, names, loc="outside lower center", ncols=len(names), fontsize=9)
    # Headroom above the highest sample for the phase labels.
    first["gpu"].set_ylim(0, gpu_top * 1.6)
    # Host memory keeps its own autoscaled range: its changes (offloaded
    # weights) are small next to the total, and the axis says where it starts.
    first["init"].set_xlim(min(init_lo, -lead) - 0.2, -lead)
    first["cycle"].set_xlim(-lead, cycle_hi + lead)
    return fig


def peaks_figure(view: PlotView) -> Figure:
    """Each phase's sampled peak, release vs retain side by side, the update highlighted."""
    fig = _new_figure(13.0, 6.0)
    fig.suptitle(_suptitle(view, "Sampled whole-GPU peak per phase"), fontsize=12, parse_math=False)
    ax = fig.add_subplot(1, 1, 1)
    groups = list(view.groups.values())
    present = {p for g in groups for p in list(g.windows) + list(g.unfinished)}
    phases = [p for p in cc.PHASE_NAMES if p in present]
    width = 0.8 / max(len(groups), 1)
    top = max((v for g in groups for v in g.peaks.values() if v is not None), default=1000.0)
    top = max([top] + [g.run_peak_mb for g in groups if g.run_peak_mb is not None]) or 1000.0
    if "update" in phases:
        at = phases.index("update")
        ax.axvspan(
            at - 0.5,
            at + 0.5,
            color=_UPDATE_SHADE,
            hatch="xx",
            lw=0,
            zorder=0,
            label="update phase",
        )
    for gi, group in enumerate(groups):
        style = _GROUP_STYLE.get(group.name, {"color": "grey", "hatch": ""})
        offset = (gi - (len(groups) - 1) / 2) * width
        xs = [i + offset for i in range(len(phases))]
        heights = [group.peaks.get(p) or 0.0 for p in phases]
        fce = {True: "true", False: "false", None: "?"}[group.free_cache_engine]
        bars = ax.bar(
            xs,
            heights,
            width * 0.95,
            color=style["color"],
            hatch=style["hatch"],
            edgecolor="black",
            lw=0.6,
            zorder=2,
            label=f"{group.name} (free_cache_engine={fce})",
            gid=f"bars:{group.name}",
        )
        for bar, phase, x in zip(bars, phases, xs, strict=True):
            peak = group.peaks.get(phase)
            if peak is not None:
                _text(
                    ax,
                    x,
                    peak + top * 0.01,
                    f"{peak:.0f}",
                    ha="center",
                    va="bottom",
                    rotation=90,
                    fontsize=8,
                    gid=f"peak:{group.name}:{phase}",
                )
                continue
            bar.set_visible(False)
            if phase in group.unfinished:
                caption = UNFINISHED
            elif phase in group.windows:
                caption = NO_SAMPLE
            else:
                caption = "not run"
            _text(
                ax,
                x,
                top * 0.02,
                caption,
                ha="center",
                va="bottom",
                rotation=90,
                fontsize=8,
                style="italic",
                gid=f"peak:{group.name}:{phase}",
            )
    for group in groups:
        if group.run_peak_mb is None:
            continue
        style = _GROUP_STYLE.get(group.name, {"color": "grey"})
        where = f" in {label(group.run_peak_phase)}" if group.run_peak_phase else ""
        ax.axhline(
            group.run_peak_mb,
            color=style["color"],
            linestyle="--" if group.name == "release" else ":",
            lw=1.2,
            zorder=1,
            label=f"{group.name} whole-run peak {_mib(group.run_peak_mb)}{where}",
            gid=f"run-peak:{group.name}",
        )
    update_parts = [
        f"{g.name} {_mib(g.peaks.get('update'))}" for g in groups if "update" in g.windows
    ]
    if update_parts:
        ax.set_title(
            "update phase: " + " vs ".join(update_parts),
            fontsize=11,
            fontweight="bold",
            parse_math=False,
        )
    ax.set_xticks(range(len(phases)), [label(p) for p in phases], rotation=30, ha="right")
    for tick, phase in zip(ax.get_xticklabels(), phases, strict=True):
        if phase == "update":
            tick.set_fontweight("bold")
    ax.set_ylabel("sampled whole-GPU peak (MiB)")
    ax.set_ylim(0, top * 1.25)
    ax.set_xlim(-0.6, max(len(phases) - 0.4, 0.6))
    ax.grid(axis="y", color="#cccccc", lw=0.5, zorder=0)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=9)
    return fig


# --------------------------------------------------------------------------- files and CLI


def output_paths(output: Path) -> tuple[Path, Path]:
    """The timeline goes to ``output``; the peaks figure next to it as ``STEM-peaks.EXT``."""
    if output.suffix.lower() not in FORMATS:
        raise PlotError(f"{output}: the picture must end in {' or '.join(FORMATS)}")
    return output, output.with_name(f"{output.stem}-peaks{output.suffix}")


def write_figures(view: PlotView, output: Path) -> tuple[Path, Path]:
    """Draw both figures and save them (PNG at 150 dpi, or SVG)."""
    timeline_path, peaks_path = output_paths(output)
    if not output.parent.is_dir():
        raise PlotError(f"{output.parent}: no such folder; create it or pick another -o")
    from matplotlib import rc_context

    for path, fig in ((timeline_path, timeline_figure(view)), (peaks_path, peaks_figure(view))):
        try:
            # SVG keeps its text as text: searchable, selectable, read by screen readers.
            with rc_context({"svg.fonttype": "none"}):
                fig.savefig(path, dpi=150, metadata=_metadata(path))
        except OSError as exc:
            raise PlotError(f"cannot write {path}: {exc.strerror or exc}") from None
    return timeline_path, peaks_path


def _metadata(path: Path) -> dict[str, Any]:
    # No creation date in the file: the same result file gives the same picture.
    return {"Date": None} if path.suffix.lower() == ".svg" else {}


def plot_main(file: Path, output: Path | None) -> int:
    """``rlsys closure plot FILE [-o OUT]``: print what was written, return an exit code."""
    if output is not None and output.suffix.lower() not in FORMATS:
        say(f"plot: {output}: the picture must end in {' or '.join(FORMATS)}", err=True)
        return _EXIT_USAGE
    try:
        _matplotlib()
        view = read_view(file)
        beyond = undrawable(view)
        if beyond:
            raise PlotError(
                f"{file}: nothing a picture can show: "
                + "; ".join(beyond)
                + " (check the file with 'rlsys result')"
            )
        target = output or Path(f"{view.run_label or file.stem}-timeline.png")
        try:
            written = write_figures(view, target)
        except (OverflowError, ValueError, FloatingPointError) as exc:
            # matplotlib's own arithmetic on numbers no check above foresaw.
            raise PlotError(f"{file}: matplotlib cannot draw these numbers ({exc})") from None
    except MatplotlibMissing as exc:
        say(f"plot: {exc}", err=True)
        return _EXIT_NOT_READY
    except PlotError as exc:
        say(f"plot: {exc}", err=True)
        return _EXIT_ERROR
    say(f"plot: wrote {written[0]} (memory timeline) and {written[1]} (per-phase peaks)")
    return _EXIT_OK
