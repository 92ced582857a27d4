"""The grader's sample rules (pytest_rlsys/resultfile/checks/series.py) against the shipped
sampler's own schedule (rlsys_closure.sample_child.next_tick): no stall pattern of a loaded
host makes an honest series fail; a second series, a faster sampler or readings from an
earlier attempt do. And the sampler never hands on an earlier series' readings."""

from __future__ import annotations

import itertools
import json
import random
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rlsys_closure.sample_child import next_tick
from rlsys_closure.sampler import ChildSampling, MemorySampler, host_used_mb

from pytest_rlsys.resultfile.checks.series import Sampled, coverage_problems


def honest_series(t0: float, interval: float, stalls: list[float], write_s: float) -> list[float]:
    """What sample_child's loop reads: each reading at its tick plus the host's stall, the
    next tick from next_tick (the loop's own arithmetic)."""
    tick, out = t0, []
    for stall in stalls:
        t = tick + stall  # select returns at the tick; the host runs the child `stall` later
        out.append(t)
        tick = next_tick(tick, t + write_s, interval)
    return out


def problems(times: list[float], interval: float, init_s: float | None = None) -> list[str]:
    """The series rules on ``times``; the run starts at ``init_s`` (default: just after the
    first reading: the sampler starts before init)."""
    samples = [{"t_s": t, "gpu_used_mb": 1000.0, "reason": "periodic"} for t in sorted(times)]
    span = (min(times) + 0.5 * interval if init_s is None else init_s, max(times))
    return coverage_problems(Sampled("release", samples, interval, False, span, {}))


# A loaded host: most readings on time, any share of them late by anything up to two
# intervals (a stall longer than that is a coverage gap, judged on its own).
@settings(max_examples=300, deadline=None)
@given(
    interval=st.sampled_from([0.1, 0.25, 0.5, 1.0]),
    t0=st.floats(10.0, 1e7),
    stalls=st.lists(
        st.one_of(st.just(0.0), st.floats(0.0, 0.002), st.floats(0.0, 2.0)),
        min_size=8,
        max_size=600,
    ),
    write_s=st.floats(0.0, 0.005),
)
def test_no_stall_pattern_fails_an_honest_series(
    interval: float, t0: float, stalls: list[float], write_s: float
) -> None:
    stalls = [s * interval if s > 0.002 else s for s in stalls]
    assert problems(honest_series(t0, interval, stalls, write_s), interval) == []


def test_a_loaded_host_leaves_many_close_pairs_and_passes() -> None:
    rng = random.Random(7)
    stalls = [rng.choice([0.0001, 0.0002, 0.09, 0.19]) for _ in range(2000)]
    times = honest_series(48213.6, 0.1, stalls, 0.0005)
    close = sum(1 for a, b in itertools.pairwise(times) if b - a < 0.02)
    assert close > 100  # what the old "at most 3 close pairs" rule refused
    assert problems(times, 0.1) == []


def _jittered(t0: float, interval: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return honest_series(t0, interval, [rng.uniform(5e-5, 2e-3) for _ in range(n)], 1e-4)


def test_a_second_series_interleaved_over_a_window_fails() -> None:
    for offset in (0.03, 0.1, 0.125, 0.2, 0.24):
        own = _jittered(1000.0, 0.25, 400, 1)
        other = _jittered(1000.0 + 20.0 + offset, 0.25, 40, 2)
        found = problems(own + other, 0.25)
        assert found and "periodic samples within" in found[0], offset


def test_a_sampler_faster_than_the_file_says_fails() -> None:
    for actual in (0.125, 0.2, 0.24):
        found = problems(_jittered(1000.0, actual, 400, 3), 0.25)
        assert any("the file records an interval of 0.25 s" in p for p in found), actual


def test_readings_of_an_earlier_attempt_fail() -> None:
    earlier = _jittered(1000.0, 0.25, 200, 4)
    this = _jittered(1000.0 + 50.0 + 300.0, 0.25, 400, 5)
    init = this[0] + 20.0  # the driver's imports and config come between
    found = problems(earlier + this, 0.25, init)
    assert found and "before the run" in found[0] and "an earlier attempt" in found[0]
    assert problems(this, 0.25, init) == []


def _over(times: list[float], interval: float, span: tuple[float, float]) -> list[str]:
    samples = [{"t_s": t, "gpu_used_mb": 1000.0, "reason": "periodic"} for t in sorted(times)]
    return coverage_problems(Sampled("release", samples, interval, False, span, {}))


def test_readings_of_an_earlier_attempt_after_the_run_fail() -> None:
    """A clock that restarted (a reboot between attempts) puts the earlier attempt's
    readings after this run's; the sampler stops right after the last phase, so a reading
    beyond a gap after the run is no reading of this run's."""
    this = _jittered(100.0, 0.25, 400, 6)
    span = (this[0] + 5.0, this[-1] - 0.1)  # init after the first reading; the last phase
    earlier = _jittered(this[-1] + 40.0, 0.25, 200, 7)
    found = _over(this + earlier, 0.25, span)
    assert found and "after the run" in found[0] and "an earlier attempt" in found[0]
    # the sampler's own tail after the last phase, without a break, is this run's
    tail = _jittered(this[-1] + 0.25, 0.25, 40, 8)
    assert _over(this + tail, 0.25, span) == []


def test_readings_of_an_earlier_attempt_between_the_groups_fail() -> None:
    """Between the groups' windows: readings after a pause that ended this group's
    series (the runner's wait between groups) are not its sampler's."""
    this = _jittered(100.0, 0.25, 400, 9)
    span = (this[0] + 5.0, this[-1])
    between = _jittered(this[-1] + 3.0, 0.25, 20, 10)  # a pause of ~3 s, then more
    found = _over(this + between, 0.25, span)
    assert found and "after the run" in found[0]


def test_the_sampler_never_hands_on_an_earlier_series(tmp_path: Path) -> None:
    out = tmp_path / "release.periodic.jsonl"
    out.write_text(json.dumps({"t_s": 1.0, "gpu_used_mb": 1.0, "host_used_mb": 1.0}) + "\n")
    sampler = MemorySampler(
        None,
        interval_s=0.05,
        host_probe=host_used_mb,
        boundary_samples=False,
        child=ChildSampling(nvml="none", out=out),
    )
    sampler.start()
    try:
        time.sleep(0.3)
    finally:
        sampler.stop()
    assert sampler.periodic_source == "process"
    times = [s.t_s for s in sampler.snapshot()]
    assert times and 1.0 not in times


def test_readings_moved_after_their_predecessor_are_a_series_the_sampler_can_write() -> None:
    """Issue 40, round 5, left open on purpose: a handful of readings moved a fraction of an
    interval after their predecessor, in a series otherwise on time, is read back exactly
    from the shipped schedule with ticks just after the on-time readings and a host that
    runs the child most of an interval late at each of them (a stall pattern the sampler
    cannot rule out). No rule that keeps every honest series passing can refuse it."""
    interval, t0 = 0.25, 5000.0
    rng = random.Random(11)
    moved = {57: 0.3, 130: 0.45, 201: 0.2, 333: 0.6}
    times: list[float] = []
    for k in range(400):
        if k in moved:
            times.append(times[-1] + moved[k] * interval)
        else:
            times.append(t0 + k * interval + rng.uniform(5e-5, 2e-3))
    # The honest reading: ticks 3 ms after the on-time readings' own ticks.
    phase = 0.003
    start = t0 + phase - interval
    stalls, tick = [], start
    for t in times:
        assert t >= tick  # never read before its tick
        stalls.append(t - tick)
        tick = next_tick(tick, t, interval)
    again = honest_series(start, interval, stalls, 0.0)
    assert max(abs(a - b) for a, b in zip(again, times, strict=True)) < 1e-9
    assert problems(again, interval) == []
