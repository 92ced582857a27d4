"""``rlsys closure plot``: pictures of a pt-verl-closure result file.

Two figures, drawn from the file alone (nothing is re-run):

* the timeline: whole-GPU and host memory over time, one panel per group on a
  shared time axis whose zero is each group's first cycle phase, phase bands
  labelled with the phase's sampled peak (or "no sample"), boundary samples
  drawn apart from periodic ones, the whole-run peak starred;
* the peaks: each phase's sampled peak, release and retain side by side, the
  update phase highlighted.

What they show is read by ``plot_view`` (the evidence, re-derived as the grader derives
it); a failed run's partial file works, a phase that never ended drawn "unfinished".

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

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_rlsys.escaping import say
from pytest_rlsys.resultfile import checks as cc
from rlsys_closure.plot_view import (
    LABELS,
    NO_SAMPLE,
    UNFINISHED,
    GroupView,
    PlotError,
    PlotView,
    label,
    read_view,
    undrawable,
    view_of,
)

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


MAX_MARKED = 1500  # periodic samples per group drawn as dots; more are drawn as the line only


# Alternating greys for neighbouring bands: they must stay apart in greyscale too.
_BAND_SHADES = ("#d9d9d9", "#efefef")
_UPDATE_SHADE = "#ffe08a"
_GROUP_STYLE: dict[str, dict[str, Any]] = {
    # Colour plus hatch/line style, so the groups stay apart without colour.
    "release": {"color": "#1f5fa8", "hatch": "//", "linestyle": "-"},
    "retain": {"color": "#c0502a", "hatch": "", "linestyle": "-"},
}


class MatplotlibMissing(ImportError):
    """matplotlib (the ``plot`` extra) is not installed."""


def _mib(value: float | None) -> str:
    if value is None:
        return NO_SAMPLE
    return f"{value:.0f} MiB" if float(value).is_integer() else f"{value:.1f} MiB"


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


def _note(ax: Axes, text: str, fontsize: float) -> None:
    """A panel's one centred line saying why it holds no data."""
    _text(ax, 0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=fontsize)


def _marks(ax: Axes, points: list[tuple[float, float]], label: str | None, **style: Any) -> None:
    """Samples drawn as markers alone, no line between them."""
    if points:
        style.setdefault("zorder", 4)
        ax.plot(*zip(*points, strict=True), linestyle="none", label=label, **style)


def _draw_samples(ax: Axes, host_ax: Axes, group: GroupView, *, legend: bool) -> None:
    style = _GROUP_STYLE.get(group.name, {"color": "black"})
    color = style["color"]
    if not group.times:
        _note(ax, "no resource samples recorded", 10)
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
    samples = list(zip(group.times, group.gpu_mb, group.boundary, strict=True))
    periodic = [(t, v) for t, v, b in samples if not b]
    # A one-hour run has 14,400 samples per group: a dot each would be a smear
    # (and megabytes of SVG), so past MAX_MARKED the line alone shows them.
    if len(periodic) <= MAX_MARKED:
        _marks(
            ax,
            periodic,
            "periodic sample" if legend else None,
            marker="o",
            ms=3,
            color=color,
            gid=f"periodic:{group.name}",
        )
    _marks(
        ax,
        [(t, v) for t, v, b in samples if b],
        "boundary sample" if legend else None,
        marker="D",
        ms=5,
        markerfacecolor="white",
        markeredgecolor="black",
        gid=f"boundary:{group.name}",
    )
    if group.run_peak_mb is not None and group.run_peak_t is not None:
        _marks(
            ax,
            [(group.run_peak_t, group.run_peak_mb)],
            "whole-run sampled peak" if legend else None,
            marker="*",
            ms=15,
            markerfacecolor="gold",
            markeredgecolor="black",
            zorder=6,
            gid=f"run-peak:{group.name}",
        )
    host = [(t, v) for t, v in zip(group.times, group.host_mb, strict=True) if v is not None]
    if not host:
        _note(host_ax, "host memory not measured", 8)
        return
    host_ax.plot(
        *zip(*host, strict=True),
        color="#555555",
        lw=1.0,
        linestyle="--",
        marker="." if len(host) <= MAX_MARKED else "",
        ms=2,
        gid=f"host:{group.name}",
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


def _bar_caption(group: GroupView, phase: str) -> str:
    """What stands over a phase's bar: its peak, or why it has none."""
    peak = group.peaks.get(phase)
    if peak is not None:
        return f"{peak:.0f}"
    if phase in group.unfinished:
        return UNFINISHED
    return NO_SAMPLE if phase in group.windows else "not run"


def _draw_bars(
    ax: Axes, group: GroupView, xs: list[float], phases: list[str], width: float, top: float
) -> None:
    """One group's bars, each captioned with its peak (or drawn hidden, captioned why)."""
    style = _GROUP_STYLE.get(group.name, {"color": "grey", "hatch": ""})
    fce = {True: "true", False: "false", None: "?"}[group.free_cache_engine]
    bars = ax.bar(
        xs,
        [group.peaks.get(p) or 0.0 for p in phases],
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
        if peak is None:
            bar.set_visible(False)
        _text(
            ax,
            x,
            top * 0.02 if peak is None else peak + top * 0.01,
            _bar_caption(group, phase),
            ha="center",
            va="bottom",
            rotation=90,
            fontsize=8,
            gid=f"peak:{group.name}:{phase}",
            **({"style": "italic"} if peak is None else {}),
        )


def _draw_run_peaks(ax: Axes, groups: list[GroupView]) -> None:
    """Each group's whole-run peak as a horizontal line."""
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


def _highest(groups: list[GroupView]) -> float:
    """The highest peak drawn (a phase's or a whole run's), 1000 MiB when none is."""
    top = max((v for g in groups for v in g.peaks.values() if v is not None), default=1000.0)
    return max([top] + [g.run_peak_mb for g in groups if g.run_peak_mb is not None]) or 1000.0


def peaks_figure(view: PlotView) -> Figure:
    """Each phase's sampled peak, release vs retain side by side, the update highlighted."""
    fig = _new_figure(13.0, 6.0)
    fig.suptitle(_suptitle(view, "Sampled whole-GPU peak per phase"), fontsize=12, parse_math=False)
    ax = fig.add_subplot(1, 1, 1)
    groups = list(view.groups.values())
    present = {p for g in groups for p in list(g.windows) + list(g.unfinished)}
    phases = [p for p in cc.PHASE_NAMES if p in present]
    width = 0.8 / max(len(groups), 1)
    top = _highest(groups)
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
        offset = (gi - (len(groups) - 1) / 2) * width
        _draw_bars(ax, group, [i + offset for i in range(len(phases))], phases, width, top)
    _draw_run_peaks(ax, groups)
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
