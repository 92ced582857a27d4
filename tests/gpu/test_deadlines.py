"""No wait without a deadline; no process outlives its group (rlsys_closure.deadline).

The groups here are real processes running the runner's real GroupDriver
(watchdog, sampler process, record, main) with verl's calls replaced by the
ways a GPU run gets stuck (tests/gpu/hang_driver.py).
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import LORA0
from rlsys_closure import driver, runner
from rlsys_closure import preflight as pf
from rlsys_closure.config import RunSettings, nested_from_overrides, pair_overrides
from rlsys_closure.deadline import Watchdog, descendants

from pytest_rlsys.resultfile.loading import load_result_file

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _tests_gpu_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    # The group process imports hang_driver from here.
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH")) if p)
    )


def _spec(tmp: Path, mode: str, **extra: Any) -> Path:
    spec = {
        "group": "release",
        "free_cache_engine": True,
        "overrides": [],
        "rollout_source_sha256": "0" * 64,
        "initial_lora_sha256": LORA0,
        "sample_interval_s": 0.1,
        "boundary_samples": True,
        "fake_mode": mode,
        **extra,
    }
    path = tmp / "release.spec.json"
    path.write_text(json.dumps(spec))
    return path


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"


def _group(tmp: Path, mode: str, timeout_s: float, **extra: Any) -> tuple[int, float, Path]:
    spec, record = _spec(tmp, mode, **extra), tmp / "release.record.json"
    t0 = time.monotonic()
    rc = runner.run_group_process(
        spec, record, tmp / "release.log", timeout_s, module="hang_driver", kill_grace_s=3.0
    )
    return rc, time.monotonic() - t0, record


def _startup_s() -> float:
    """What starting a group process (an interpreter importing the driver) takes here now."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", "import hang_driver"], env=env, check=True)
    return time.monotonic() - began


@pytest.fixture
def step_s() -> float:
    """A phase deadline the group's own start-up steps cannot use up on this machine now:
    2 s plus three times its start-up (under a CPU hog, 2 s let init_ray time out before
    the phase under test was reached)."""
    return float(math.ceil(2.0 + 3 * _startup_s()))


@pytest.mark.slow
def test_a_sync_whose_receiver_never_connects_ends_by_its_deadline(
    tmp_path: Path, step_s: float
) -> None:
    rc, took, record = _group(tmp_path, "sync_never_connects", 120.0, phase_timeout_s=step_s)
    log = (tmp_path / "release.log").read_text()
    assert rc == driver.EXIT_TIMED_OUT, log
    assert took < 60 + step_s, f"the stuck sync took {took:.1f} s to end (deadline {step_s} s)"
    rec = json.loads(record.read_text())
    assert rec["status"] == "failed"
    assert rec["failure"]["type"] == "PhaseTimeout"
    assert rec["failure"]["phase"] == "initial_sync"
    message = rec["failure"]["message"]
    assert "initial_sync" in message and f"{step_s:g} s" in message
    # The ordinary failure path ran: the samples up to the hang are in the record.
    assert rec["periodic_sampler"] == "process"
    assert [s["name"] for s in rec["init_steps"]] == ["init_ray"]
    assert [e["phase"] for e in rec["events"] if e["kind"] == "start"] == ["initial_sync"]
    assert sum(s["reason"] == "periodic" for s in rec["samples"]) >= 5


@pytest.mark.slow
def test_a_blocking_wait_inside_asyncio_run_ends_seconds_after_its_deadline(
    tmp_path: Path, step_s: float
) -> None:
    """verl's naive sync blocks in ray.get inside asyncio.run, whose Runner swallows the
    first SIGINT: the watchdog interrupts again, so the ordinary failure path ends the group
    seconds after its deadline, long before the hard stop (60 s here would be due)."""
    rc, took, record = _group(
        tmp_path, "blocked_in_asyncio_run", 300.0, phase_timeout_s=step_s, timeout_grace_s=60.0
    )
    log = (tmp_path / "release.log").read_text()
    assert rc == driver.EXIT_TIMED_OUT, log
    assert "interrupting again" in log and "hard stop" not in log, log
    assert took < 50 + step_s, f"{took:.1f} s: the group waited for the hard stop"
    rec = json.loads(record.read_text())
    assert rec["failure"]["type"] == "PhaseTimeout" and rec["failure"]["phase"] == "initial_sync"
    assert "KeyboardInterrupt" in rec["failure"]["traceback"]


@pytest.mark.slow
def test_a_stuck_actor_is_not_called_on_the_way_out(tmp_path: Path, step_s: float) -> None:
    """The failure path skips the drain (it would queue behind the stuck call), so the
    group ends at its deadline, not at the hard stop's."""
    rc, took, record = _group(
        tmp_path, "actor_stuck", 120.0, phase_timeout_s=step_s, timeout_grace_s=60.0
    )
    log = (tmp_path / "release.log").read_text()
    assert rc == driver.EXIT_TIMED_OUT, log
    assert "hard stop" not in log and took < 50 + step_s
    rec = json.loads(record.read_text())
    assert rec["failure"]["phase"] == "initial_sync"
    assert any("drain skipped" in e for e in rec["sampler_errors"])


@pytest.mark.slow
def test_a_wait_that_swallows_the_interrupt_is_stopped_hard(tmp_path: Path, step_s: float) -> None:
    rc, took, record = _group(
        tmp_path, "ignores_interrupt", 120.0, phase_timeout_s=step_s, timeout_grace_s=1.0
    )
    assert rc == driver.EXIT_TIMED_OUT, (tmp_path / "release.log").read_text()
    assert took < 60 + step_s
    rec = json.loads(record.read_text())
    assert rec["failure"]["type"] == "PhaseTimeout" and rec["failure"]["phase"] == "initial_sync"
    assert "hard stop" in (tmp_path / "release.log").read_text()


def test_a_non_daemon_engine_child_is_gone_after_its_group(tmp_path: Path) -> None:
    rc, _, record = _group(tmp_path, "orphan_then_complete", 120.0)
    assert rc == 0, (tmp_path / "release.log").read_text()
    orphan = int(record.with_suffix(".orphan").read_text())
    assert not _alive(orphan), "a process the group started outlived it"
    assert (
        f"killed 1 process(es) the group left behind: {orphan}"
        in (tmp_path / "release.log").read_text()
    )


@pytest.fixture(scope="module")
def group_deadline_s() -> float:
    """A group deadline its own start-up cannot use up on this machine: 4 s plus three
    times what starting a group process (an interpreter importing the driver) takes here
    now.  A loaded machine starts slowly; where the group is stuck is the point."""
    return float(math.ceil(4.0 + 3 * _startup_s()))


@pytest.mark.slow  # a real group waited out to its deadline
def test_a_group_past_its_deadline_is_killed_with_everything_it_started(
    tmp_path: Path, group_deadline_s: float
) -> None:
    deadline = group_deadline_s
    rc, took, record = _group(tmp_path, "hang_everything", deadline, phase_timeout_s=3600.0)
    assert rc == runner.EXIT_GROUP_TIMEOUT
    assert took < deadline + 30
    orphan = int(record.with_suffix(".orphan").read_text())
    assert not _alive(orphan)
    assert all(not _alive(p) for p in descendants(os.getpid()))
    note = runner.stuck_step(record)
    assert note["step"] == "initial_sync" and note["phase"] == "initial_sync"


@pytest.mark.slow  # a real group waited out to its deadline
def test_a_killed_group_ends_the_run_as_an_honest_failed_file(
    tmp_path: Path, group_deadline_s: float
) -> None:
    """Through ``run``: the result names the group, the stuck phase, the deadline;
    ``rlsys result`` grades it 4 (failed run)."""
    model = tmp_path / "model"
    checks = [
        pf.CheckResult("python", "pass", "3.11", {"version": "3.11"}),
        pf.CheckResult("model_cache", "pass", "model", {"path": str(model)}),
    ]

    def compose(settings: RunSettings) -> dict[str, dict[str, Any]]:
        return {g: nested_from_overrides(ov) for g, ov in pair_overrides(settings).items()}

    def run_group(spec_path: Path, record_path: Path, log: Path, timeout_s: float) -> int:
        spec = json.loads(spec_path.read_text())
        spec["fake_mode"] = "hang_everything"
        spec_path.write_text(json.dumps(spec))
        return runner.run_group_process(
            spec_path, record_path, log, timeout_s, module="hang_driver", kill_grace_s=3.0
        )

    steps = runner.Steps(
        preflight=lambda o: checks,
        make_adapter=lambda s, p: LORA0,
        compose_pair=compose,
        run_group=run_group,
        gpu_used_mb=lambda: None,
        versions=lambda: {"verl": "0.9.1"},
    )
    opts = runner.RunOptions(
        run_label="stuck", output=tmp_path / "stuck.json", group_timeout_s=group_deadline_s
    )
    out = io.StringIO()
    assert runner.run(opts, steps, out) == pf.EXIT_RUN_FAILED, out.getvalue()
    loaded = load_result_file(opts.output)
    assert loaded.ok, loaded.errors
    doc = loaded.doc
    assert doc is not None and doc["status"] == "failed"
    assert doc["failure"]["type"] == "GroupTimeout"
    assert doc["failure"]["group"] == "release" and doc["failure"]["phase"] == "initial_sync"
    assert f"--group-timeout {group_deadline_s:g} s" in doc["failure"]["message"]

    from pytest_rlsys.cli import main as rlsys_main

    assert rlsys_main(["result", str(opts.output)]) == 4


def test_watchdog_fires_once_for_an_overdue_step_and_never_for_a_rearmed_one() -> None:
    now = [0.0]
    fired: list[tuple[str, float]] = []
    dog = Watchdog(10.0, lambda label, t: fired.append((label, t)), clock=lambda: now[0])
    dog.arm("init_actor")
    now[0] = 9.0
    assert dog.check() is None
    dog.arm("after init_actor")  # each step gets its own full deadline
    now[0] = 18.0
    assert dog.check() is None
    now[0] = 19.5
    assert dog.check() == "after init_actor"
    assert fired == [("after init_actor", 10.0)]
    dog.arm("sync")
    now[0] = 100.0
    assert dog.check() is None and len(fired) == 1  # a group times out once
    dog.disarm()
    with pytest.raises(ValueError):
        Watchdog(0, lambda label, t: None)


def test_cli_takes_the_deadlines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlsys_closure import cli

    seen: dict[str, float] = {}

    def fake_run(opts: runner.RunOptions) -> int:
        seen["group"], seen["phase"] = opts.group_timeout_s, opts.phase_timeout_s
        return 0

    monkeypatch.setattr(runner, "run", fake_run)
    argv = ["run", "--run-label", "d", "--output", str(tmp_path / "d.json")]
    assert cli.main([*argv, "--group-timeout", "600", "--phase-timeout", "120"]) == 0
    assert seen == {"group": 600.0, "phase": 120.0}
    assert cli.main([*argv, "--group-timeout", "0"]) == pf.EXIT_USAGE


def test_the_driver_arms_every_step(tmp_path: Path) -> None:
    """Each phase, and the work after it, is armed: the watchdog is never idle mid-run."""
    spec = json.loads(_spec(tmp_path, "none").read_text())
    record = driver.GroupRecord(tmp_path / "rec.json", spec)
    d = driver.GroupDriver(spec, record, nvml=None)
    armed: list[str] = []
    d.watchdog.arm = armed.append  # type: ignore[method-assign]
    with d.phase("update"):
        pass
    with d.recorder.phase("init_ray"):
        pass
    assert armed == ["update", "after update", "init_ray", "after init_ray"]
    note = json.loads(driver.phase_file(record.path).read_text())
    assert note["step"] == "after init_ray"
