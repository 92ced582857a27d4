"""rlsys closure plot: what the two pictures must show (artists and labels, not pixels)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from rlsys_closure import plot
from rlsys_closure.cli import main as closure_main

from pytest_rlsys.resultfile import checks as cc
from pytest_rlsys.resultfile.loading import validate_document

# Drawing with matplotlib: 5-9 s a test on 2 cores, about a minute for the module (slow
# policy, tests/conftest.py); `pytest --run-slow` and `pytest tests/unit/test_plot.py` run it.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "schemas" / "examples" / "pt-verl-closure.example.json"
NO_SAMPLE_PHASES = (
    "rollout_before_update",
    "score_before_update",
    "weight_transfer",
    "rollout_after_update",
    "score_after_update",
)
HOSTILE = "CUDA out of memory $x^2$ \\frac{1}{0} <b>bold</b> %s {}"


def example() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return doc


def failed_doc() -> dict[str, Any]:
    """The example cut off in release's update (OOM); retain never started."""
    doc = example()
    doc["status"] = "failed"
    doc["failure"] = {
        "group": "release",
        "phase": "update",
        "type": "torch.OutOfMemoryError",
        "message": HOSTILE,
    }
    release = doc["groups"]["release"]
    cut = release["phases"]["update"]["start_s"] + 0.8
    release["events"] = [
        e
        for e in release["events"]
        if e["t_s"] <= cut and not (e["phase"] == "update" and e["kind"] == "end")
    ]
    release["resource_samples"] = [s for s in release["resource_samples"] if s["t_s"] <= cut]
    release["resume_calls"] = [c for c in release["resume_calls"] if c["t_s"] <= cut]
    release.update(update_completed=False, sync_completed=False, updated_lora_sha256=None)
    retain = doc["groups"]["retain"]
    retain.update(
        events=[],
        resource_samples=[],
        resume_calls=[],
        update_completed=False,
        sync_completed=False,
        updated_lora_sha256=None,
    )
    for group in (release, retain):
        group["phases"] = cc.summarize_phases(group["events"], group["resource_samples"])
        group["sampled_gpu_peak_mb"], group["sampled_gpu_peak_phase"] = cc.whole_run_peak(
            group["resource_samples"], group["phases"]
        )
    doc["system_decision"] = {
        "checks": {n: r.as_dict() for n, r in cc.derive_checks(doc).items()},
        "measurements": cc.derive_measurements(doc),
    }
    loaded = validate_document(doc)
    assert loaded.ok, loaded.errors
    return doc


def write(tmp_path: Path, doc: dict[str, Any], name: str = "result.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def texts_by_gid(fig: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    for ax in fig.axes:
        for text in ax.texts:
            if text.get_gid():
                found[text.get_gid()] = text.get_text()
    return found


def artist(fig: Any, gid: str) -> Any:
    for ax in fig.axes:
        for item in [*ax.lines, *ax.patches, *ax.containers, *ax.texts]:
            if getattr(item, "get_gid", lambda: None)() == gid:
                return item
    raise AssertionError(f"no artist {gid}")


# ---------------------------------------------------------------- the data (no matplotlib)


def test_view_holds_the_chapters_numbers() -> None:
    view = plot.read_view(EXAMPLE)
    release, retain = view.groups["release"], view.groups["retain"]
    assert release.peaks["update"] == 6392 and retain.peaks["update"] == 10489
    assert (release.run_peak_mb, release.run_peak_phase) == (10086, "initial_sync")
    assert (retain.run_peak_mb, retain.run_peak_phase) == (10489, "update")
    assert all(release.peaks[p] is None for p in NO_SAMPLE_PHASES)
    # Shared time axis: each group's first cycle phase is at zero.
    assert release.windows["initial_sync"][0] == 0 == retain.windows["initial_sync"][0]
    assert release.init is not None and release.init[1] < 0
    assert release.run_peak_t is not None
    start, end = release.windows["initial_sync"]
    assert start <= release.run_peak_t <= end


# ---------------------------------------------------------------- the timeline


def test_timeline_labels_each_phase_with_its_peak_or_no_sample() -> None:
    view = plot.read_view(EXAMPLE)
    fig = plot.timeline_figure(view)
    labels = texts_by_gid(fig)
    for group in view.groups.values():
        for phase in group.windows:
            text = labels[f"phase-label:{group.name}:{phase}"]
            assert text.startswith(plot.label(phase))
            peak = group.peaks[phase]
            assert text.endswith(plot.NO_SAMPLE if peak is None else f"{peak:.0f} MiB"), text
    assert labels["phase-label:release:update"].endswith("6392 MiB")
    assert labels["phase-label:retain:update"].endswith("10489 MiB")
    no_sample = [
        p
        for p in cc.PHASE_NAMES
        if labels.get(f"phase-label:release:{p}", "").endswith(plot.NO_SAMPLE)
    ]
    assert no_sample == list(NO_SAMPLE_PHASES)
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert any(
        t.startswith(
            "release (free_cache_engine=true): whole-run sampled peak "
            "10086 MiB in initial sync; update peak 6392 MiB"
        )
        for t in titles
    )
    assert any(
        t.startswith("retain (free_cache_engine=false): whole-run sampled peak 10489 MiB in update")
        for t in titles
    )
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {
        "GPU used (whole device)",
        "periodic sample",
        "whole-run sampled peak",
        "update phase",
    } <= set(legend)


def test_timeline_draws_every_sample_on_the_aligned_axis() -> None:
    doc = example()
    view = plot.view_of(doc)
    fig = plot.timeline_figure(view)
    for name in ("release", "retain"):
        samples = doc["groups"][name]["resource_samples"]
        origin = doc["groups"][name]["phases"]["initial_sync"]["start_s"]
        gpu = [line for ax in fig.axes for line in ax.lines if line.get_gid() == f"gpu:{name}"]
        assert len(gpu) == 2  # the init panel and the cycle panel
        xs, ys = gpu[1].get_data()
        assert list(ys) == [s["gpu_used_mb"] for s in samples]
        assert list(xs) == pytest.approx([s["t_s"] - origin for s in samples])
        host = artist(fig, f"host:{name}")
        assert list(host.get_data()[1]) == [s["host_used_mb"] for s in samples]
        star = artist(fig, f"run-peak:{name}")
        assert star.get_marker() == "*"
        assert list(star.get_data()[1]) == [doc["groups"][name]["sampled_gpu_peak_mb"]]
    # The update band is highlighted (hatched) in both groups.
    update_bands = [p for ax in fig.axes for p in ax.patches if p.get_hatch() == "xx"]
    assert len(update_bands) >= 2


def test_boundary_samples_are_drawn_apart_from_periodic_ones() -> None:
    doc = example()
    samples = doc["groups"]["release"]["resource_samples"]
    picked = {i for i, s in enumerate(samples) if 18.5 <= s["t_s"] <= 22.0 and i % 3 == 0}
    for i in picked:
        samples[i]["reason"] = "boundary"
    assert validate_document(doc).ok
    fig = plot.timeline_figure(plot.view_of(doc))
    boundary = [
        line for ax in fig.axes for line in ax.lines if line.get_gid() == "boundary:release"
    ]
    periodic = [
        line for ax in fig.axes for line in ax.lines if line.get_gid() == "periodic:release"
    ]
    assert boundary and periodic
    assert boundary[0].get_marker() != periodic[0].get_marker()
    assert len(boundary[0].get_xdata()) == len(picked)
    assert len(periodic[0].get_xdata()) == len(samples) - len(picked)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "boundary sample" in legend
    # Retain has no boundary sample, so nothing is drawn for it.
    assert not [line for ax in fig.axes for line in ax.lines if line.get_gid() == "boundary:retain"]


# ---------------------------------------------------------------- the peaks


def test_peaks_figure_compares_the_groups_phase_by_phase() -> None:
    view = plot.read_view(EXAMPLE)
    fig = plot.peaks_figure(view)
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == [plot.label(p) for p in cc.PHASE_NAMES]
    update = ticks.index("update")
    assert ax.get_xticklabels()[update].get_fontweight() == "bold"
    bars = {c.get_label().split()[0]: c for c in ax.containers}
    assert bars["release"].patches[update].get_height() == 6392
    assert bars["retain"].patches[update].get_height() == 10489
    for phase in NO_SAMPLE_PHASES:  # a missing sample is no bar, never a zero bar
        assert not bars["release"].patches[cc.PHASE_NAMES.index(phase)].get_visible()
    labels = texts_by_gid(fig)
    assert labels["peak:release:update"] == "6392"
    assert labels["peak:retain:update"] == "10489"
    assert [p for p in cc.PHASE_NAMES if labels[f"peak:release:{p}"] == plot.NO_SAMPLE] == list(
        NO_SAMPLE_PHASES
    )
    assert [p for p in cc.PHASE_NAMES if labels[f"peak:retain:{p}"] == "not run"] == [
        "engine_sleep",
        "resume_weights",
        "resume_kv_cache",
    ]
    assert ax.get_title() == "update phase: release 6392 MiB vs retain 10489 MiB"
    highlight = [p for p in ax.patches if p.get_label() == "update phase"]
    assert len(highlight) == 1
    x0, x1 = highlight[0].get_x(), highlight[0].get_x() + highlight[0].get_width()
    assert x0 < update < x1
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "release whole-run peak 10086 MiB in initial sync" in legend
    assert "retain whole-run peak 10489 MiB in update" in legend


# ---------------------------------------------------------------- a failed run


def test_a_failed_runs_partial_file_is_drawn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, failed_doc())
    view = plot.read_view(path)
    release, retain = view.groups["release"], view.groups["retain"]
    assert set(release.unfinished) == {"update"} and "update" not in release.windows
    assert retain.times == [] and retain.run_peak_mb is None
    timeline, peaks = plot.timeline_figure(view), plot.peaks_figure(view)
    assert timeline.get_suptitle().count("FAILED RUN") == 1
    assert HOSTILE in timeline.get_suptitle()  # shown literally: '$' is not mathtext
    labels = texts_by_gid(timeline)
    assert labels["phase-label:release:update"] == f"update\n{plot.UNFINISHED}"
    assert "sync" not in release.windows and "phase-label:release:sync" not in labels
    assert any(
        t.get_text() == "no resource samples recorded" for ax in timeline.axes for t in ax.texts
    )
    assert texts_by_gid(peaks)["peak:release:update"] == plot.UNFINISHED
    # And the command draws it to files.
    out = tmp_path / "failed.png"
    assert closure_main(["plot", str(path), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "failed-peaks.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "failed-peaks.png" in capsys.readouterr().out


def test_a_completed_file_whose_own_checks_fail_says_so_in_the_title(tmp_path: Path) -> None:
    # Trial: a file whose checks fail was drawn like a good run.
    good = plot.read_view(write(tmp_path, example()))
    assert good.checks is None
    assert "checks fail" not in plot.timeline_figure(good).get_suptitle()
    doc = example()
    doc["groups"]["retain"]["updated_lora_sha256"] = "0" * 64  # the updates now differ
    view = plot.read_view(write(tmp_path, doc))
    assert view.status == "completed" and view.checks is not None
    for figure in (plot.timeline_figure(view), plot.peaks_figure(view)):
        title = figure.get_suptitle()
        assert "of the file's own checks fail (updated_lora_match)" in title, title


# ---------------------------------------------------------------- the command


def test_the_command_writes_svg_with_the_numbers_as_text(tmp_path: Path) -> None:
    from pytest_rlsys.cli import main as rlsys_main

    out = tmp_path / "timeline.svg"
    assert rlsys_main(["closure", "plot", str(EXAMPLE), "-o", str(out)]) == 0
    timeline = out.read_text(encoding="utf-8")
    peaks = (tmp_path / "timeline-peaks.svg").read_text(encoding="utf-8")
    assert "6392 MiB" in timeline and "10489 MiB" in timeline and "10086 MiB" in timeline
    assert "6392" in peaks and "10489" in peaks
    assert "update phase: release 6392 MiB vs retain 10489 MiB" in peaks


def test_default_output_is_named_after_the_run_label(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert closure_main(["plot", str(EXAMPLE)]) == 0
    label = example()["run_label"]
    assert (tmp_path / f"{label}-timeline.png").is_file()
    assert (tmp_path / f"{label}-timeline-peaks.png").is_file()


def test_missing_matplotlib_gives_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # None in sys.modules makes every `import matplotlib...` raise ImportError.
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "t.png"
    assert closure_main(["plot", str(EXAMPLE), "-o", str(out)]) == 3
    err = capsys.readouterr().err
    assert "needs matplotlib" in err and "pip install matplotlib" in err
    assert "Traceback" not in err and not out.exists()
    with pytest.raises(plot.MatplotlibMissing):
        plot.timeline_figure(plot.read_view(EXAMPLE))


@pytest.mark.parametrize(
    ("content", "output", "code", "says"),
    [
        (None, "t.png", 2, "no such file"),  # rlsys's one rule for a missing input
        (b"{not json", "t.png", 1, "invalid JSON"),
        (b'{"schema_version": "pt-verl-closure/9"}', "t.png", 1, "unknown schema_version"),
        (b"{}", "t.jpg", 2, "must end in .png or .svg"),
        ("example", "missing/t.png", 3, "folder"),
    ],
)
def test_bad_input_is_refused_with_a_message(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes | str | None,
    output: str,
    code: int,
    says: str,
) -> None:
    path = tmp_path / "in.json"
    if content == "example":
        path.write_bytes(EXAMPLE.read_bytes())
    elif isinstance(content, bytes):
        path.write_bytes(content)
    assert closure_main(["plot", str(path), "-o", str(tmp_path / output)]) == code
    err = capsys.readouterr().err
    assert err.startswith("plot: ") and says in err and "Traceback" not in err
    assert not list(tmp_path.glob("**/*.png"))


def test_help_names_the_extra(capsys: pytest.CaptureFixture[str]) -> None:
    assert closure_main(["plot", "--help"]) == 0
    assert "pip install matplotlib" in capsys.readouterr().out


def test_figures_are_independent_of_copies() -> None:
    # Drawing never changes the document it was given.
    doc = example()
    before = copy.deepcopy(doc)
    plot.timeline_figure(plot.view_of(doc))
    plot.peaks_figure(plot.view_of(doc))
    assert doc == before


def _no_host(doc: dict[str, Any]) -> None:
    for group in doc["groups"].values():
        for sample in group["resource_samples"]:
            sample["host_used_mb"] = None


def _no_samples(doc: dict[str, Any]) -> None:
    for group in doc["groups"].values():
        group["resource_samples"] = []


def _no_events(doc: dict[str, Any]) -> None:
    for group in doc["groups"].values():
        group["events"], group["resource_samples"] = [], group["resource_samples"][:3]


def _one_instant(doc: dict[str, Any]) -> None:
    for group in doc["groups"].values():
        for sample in group["resource_samples"]:
            sample["t_s"], sample["gpu_used_mb"] = 19.0, 0


def _end_before_start(doc: dict[str, Any]) -> None:
    # Schema-valid, check-failing: the update's end event carries an earlier time.
    for event in doc["groups"]["retain"]["events"]:
        if event["phase"] == "update" and event["kind"] == "end":
            event["t_s"] = 0.5


def _failed_in_init(doc: dict[str, Any]) -> None:
    doc["status"] = "failed"
    doc["failure"] = {
        "group": None,
        "phase": "init",
        "type": "RuntimeError",
        "message": "x" * 5000 + "\n$\\",
    }


@pytest.mark.parametrize(
    "change",
    [_no_host, _no_samples, _no_events, _one_instant, _end_before_start, _failed_in_init],
    ids=lambda f: f.__name__.strip("_"),
)
def test_odd_but_schema_valid_files_still_draw(change: Any) -> None:
    import io

    doc = example()
    change(doc)
    assert validate_document(doc).ok
    view = plot.view_of(doc)
    for fig in (plot.timeline_figure(view), plot.peaks_figure(view)):
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=30)  # drawing is where text/maths errors surface
        assert buffer.getvalue()[:4] == b"\x89PNG"
    if change is _failed_in_init:
        assert view.failure is not None and len(view.failure) <= 160
    if change is _no_samples:
        assert all(g.run_peak_mb is None for g in view.groups.values())


def _last_event_at_the_largest_double(doc: dict[str, Any]) -> None:
    doc["groups"]["release"]["events"][-1]["t_s"] = 1.7e308


def _a_reading_at_the_largest_double(doc: dict[str, Any]) -> None:
    doc["groups"]["retain"]["resource_samples"][5]["gpu_used_mb"] = 1.7e308


def _times_of_a_century(doc: dict[str, Any]) -> None:
    doc["groups"]["retain"]["resource_samples"][-1]["t_s"] = 3.2e9


@pytest.mark.parametrize(
    "change",
    [_last_event_at_the_largest_double, _a_reading_at_the_largest_double, _times_of_a_century],
    ids=lambda f: f.__name__.strip("_"),
)
def test_numbers_no_picture_can_show_are_refused_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any
) -> None:
    doc = example()
    change(doc)
    assert validate_document(doc).ok
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert closure_main(["plot", str(path), "-o", str(tmp_path / "t.png")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("plot: ") and "nothing a picture can show" in err
    assert "Traceback" not in err and not list(tmp_path.glob("*.png"))
