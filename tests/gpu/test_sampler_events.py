"""The sampler and the event recorder against a fake NVML and a fake clock."""

from __future__ import annotations

import time

import pytest
from fakes import RELEASE_TIMELINE, FakeClock, FakeNvml, simulate_group
from rlsys_closure.events import EventRecorder, PhaseError, phase_windows
from rlsys_closure.sampler import MemorySampler, samples_in

from pytest_rlsys.resultfile import checks as cc


def _recorder(
    clock: FakeClock,
    mb: float = 1000.0,
    boundary: bool = True,
) -> tuple[EventRecorder, MemorySampler]:
    sampler = MemorySampler(
        FakeNvml(lambda: mb),
        interval_s=0.25,
        clock=clock,
        host_probe=lambda: 4096.0,
        boundary_samples=boundary,
    )
    return EventRecorder(clock=clock, hooks=[sampler.boundary_hook]), sampler


def test_boundary_samples_fall_inside_their_phase_even_on_a_ticking_clock() -> None:
    # Every clock read moves time on, so "when" each reading happens matters.
    clock = FakeClock(tick=0.001)
    rec, sampler = _recorder(clock)
    for name in ("rollout_before_update", "engine_sleep", "score_before_update"):
        with rec.phase(name):
            pass  # far shorter than one sampling interval
    windows = phase_windows(rec.events)
    samples = sampler.snapshot()
    assert len(samples) == 6 and all(s.reason == "boundary" for s in samples)
    for name, (start, end) in windows.items():
        inside = samples_in(samples, start, end)
        assert [s.at for s in inside] == [f"{name}:start", f"{name}:end"]


@pytest.mark.parametrize("boundary", [True, False])
def test_no_phase_without_a_sample_when_boundary_samples_are_on(boundary: bool) -> None:
    record = simulate_group("release", boundary_samples=boundary)
    table = cc.summarize_phases(record["events"], record["samples"])
    assert set(table) >= {p for p, _, _ in RELEASE_TIMELINE}
    empty = [p for p, row in table.items() if row["sample_count"] == 0]
    if boundary:
        assert empty == []
        assert all(row["sampled_gpu_peak_mb"] is not None for row in table.values())
    else:
        # Phases shorter than the 0.25 s interval can miss every periodic sample;
        # their peak is then null, never 0.
        assert empty, "expected a short phase without periodic samples"
        for p in empty:
            assert table[p]["sampled_gpu_peak_mb"] is None
    for row in table.values():
        assert row["sampled_gpu_peak_mb"] != 0


def test_phase_peaks_come_from_samples_in_the_window() -> None:
    record = simulate_group("release")
    table = cc.summarize_phases(record["events"], record["samples"])
    assert table["update"]["sampled_gpu_peak_mb"] == 6392.0
    assert table["initial_sync"]["sampled_gpu_peak_mb"] == 10086.0
    peak, phase = cc.whole_run_peak(record["samples"], table)
    assert (peak, phase) == (10086.0, "initial_sync")
    # Periodic samples every 0.25 s: a 1.367 s update holds 5 or 6 of them.
    periodic = [s for s in record["samples"] if s["reason"] == "periodic"]
    start, end = phase_windows(record["events"])["update"]
    assert len([s for s in periodic if start <= s["t_s"] <= end]) in (5, 6)


def test_recorder_keeps_init_apart_and_initial_sync_in_the_cycle() -> None:
    clock = FakeClock()
    rec, _ = _recorder(clock)
    with rec.phase("init_ray"):
        clock.advance(1)
    with rec.phase("initial_sync"):
        clock.advance(1)
    assert [e.phase for e in rec.init_events] == ["init_ray", "init_ray"]
    assert [(e.phase, e.kind) for e in rec.events] == [
        ("initial_sync", "start"),
        ("initial_sync", "end"),
    ]


def test_a_failing_phase_is_still_closed() -> None:
    clock = FakeClock()
    rec, sampler = _recorder(clock)
    with pytest.raises(ZeroDivisionError), rec.phase("update"):
        clock.advance(0.5)
        _ = 1 / 0
    assert rec.open_phases() == []
    end = rec.events[-1]
    assert end.kind == "end" and end.detail["failed"] is True
    assert "ZeroDivisionError" in end.detail["error"]
    assert [s.at for s in sampler.snapshot()] == ["update:start", "update:end"]


def test_phase_misuse_raises() -> None:
    rec, _ = _recorder(FakeClock())
    rec.start("sync")
    with pytest.raises(PhaseError):
        rec.start("sync")
    with pytest.raises(PhaseError):
        rec.end("update")


def test_merged_worker_events_are_kept_in_time_order() -> None:
    clock = FakeClock()
    rec, _ = _recorder(clock)
    rec.start("sync")
    clock.advance(1.0)
    rec.end("sync")
    from rlsys_closure.events import Event

    rec.extend(
        [
            Event("weight_transfer", "start", clock.t - 0.6, "actor"),
            Event("weight_transfer", "end", clock.t - 0.2, "actor"),
        ]
    )
    assert [(e.phase, e.kind) for e in rec.events] == [
        ("sync", "start"),
        ("weight_transfer", "start"),
        ("weight_transfer", "end"),
        ("sync", "end"),
    ]


def test_a_failed_read_is_recorded_not_raised() -> None:
    clock = FakeClock()
    nvml = FakeNvml(lambda: 1.0, fail_reads=True)
    sampler = MemorySampler(nvml, clock=clock, host_probe=lambda: 10.0)
    s = sampler.sample()
    assert s is not None and s.gpu_used_mb is None and s.host_used_mb == 10.0
    assert any("NVML read failed" in e for e in sampler.errors)
    # Nothing at all to read: no sample, still no exception.
    blind = MemorySampler(None, clock=clock, host_probe=None)
    assert blind.sample() is None


def test_thread_samples_periodically_and_stops() -> None:
    nvml = FakeNvml(lambda: 2048.0)
    sampler = MemorySampler(nvml, interval_s=0.01, host_probe=lambda: 1.0)
    with sampler:
        time.sleep(0.15)
        sampler.boundary_hook("update", "start")
    n = len(sampler.samples)
    time.sleep(0.05)
    assert len(sampler.samples) == n, "sampling went on after stop()"
    periodic = [s for s in sampler.snapshot() if s.reason == "periodic"]
    assert len(periodic) >= 3
    assert all(s.gpu_used_mb == 2048.0 for s in periodic)
    times = [s.t_s for s in sampler.snapshot()]
    assert times == sorted(times)
    assert nvml.inits == 1 and nvml.shutdowns == 1
    assert any(s.reason == "boundary" for s in sampler.samples)


def test_host_memory_is_read_for_real() -> None:
    sampler = MemorySampler(None)
    s = sampler.sample()
    assert s is not None and s.host_used_mb is not None and s.host_used_mb > 0


@pytest.mark.parametrize("bad", [0, -0.25, float("nan")])
def test_interval_must_be_positive(bad: float) -> None:
    with pytest.raises(ValueError):
        MemorySampler(None, interval_s=bad)
