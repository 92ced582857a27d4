"""One grade with timers on its phases (``bench_profile.py`` starts it, behind a fence mode).

Usage: python profile_run.py OUT.json grade|pytest ARGS...
Runs ``rlsys grade ARGS`` or ``pytest ARGS`` in this process with the grader's phases wrapped
by timers, then writes {phase: [seconds, count]} to OUT.json.  The timers cost a little
themselves, so the wall times that the ratios use come from runs without them.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from typing import Any

BEGAN = time.perf_counter()
TOTALS: dict[str, list[float]] = {}
_DEPTH: dict[str, int] = {}


def _add(phase: str, seconds: float) -> None:
    entry = TOTALS.setdefault(phase, [0.0, 0])
    entry[0] += seconds
    entry[1] += 1


def timed(
    owner: Any, name: str, phase: str, hides: str = "", when: Callable[..., bool] | None = None
) -> None:
    """Wrap ``owner.name`` so that its time (outermost call only, and only the calls whose
    arguments ``when`` accepts) counts to ``phase``; while it runs, ``hides`` (a phase
    inside it) does not count."""
    if not hasattr(owner, name):
        return  # a build without it (measured with --against)
    inner: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _DEPTH.get(phase) or (when is not None and not when(*args)):
            return inner(*args, **kwargs)
        _DEPTH[phase] = _DEPTH[hides] = 1
        began = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            _DEPTH[phase] = _DEPTH[hides] = 0
            _add(phase, time.perf_counter() - began)

    setattr(owner, name, wrapper)


def _pytest_timers() -> object:
    """Hook wrappers around pytest's own phases (pytest is imported only for its entry)."""
    import pytest

    def around(phase: str) -> Any:
        began = time.perf_counter()
        result = yield
        _add(phase, time.perf_counter() - began)
        return result

    class Timers:
        @pytest.hookimpl(wrapper=True)
        def pytest_collection(self, session: Any) -> Any:
            return (yield from around("pytest: collection"))

        @pytest.hookimpl(wrapper=True)
        def pytest_runtestloop(self, session: Any) -> Any:
            return (yield from around("pytest: run loop (items + cases)"))

        @pytest.hookimpl(wrapper=True)
        def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
            return (yield from around("report: terminal summary"))

    return Timers()


def install() -> None:
    began = time.perf_counter()
    from pytest_rlsys import session
    from pytest_rlsys.grading import fence, grader, isolation, leftovers

    _add("imports: grading modules", time.perf_counter() - began)
    child = isolation.ChildProcess
    timed(grader, "prepare_battery", "battery build")
    timed(child, "_spawn", "child: spawn (parent side, fence plan)")
    timed(fence, "plan", "fence: plan (parent)")
    timed(leftovers, "start_walk", "fence: walk for writable folders (start)")
    timed(leftovers, "writable_folders", "fence: walk for writable folders (wait)")
    timed(leftovers, "clean_uid", "fence: sweep after the child")
    timed(leftovers, "remove_tree", "fence: scratch removal")
    # The load's request and reply (the first ensure_loaded of each child): the child's
    # start, its fence and the submission's load, as far as they did not overlap the
    # grader's work; its frames are not counted as round trips.
    timed(
        child,
        "ensure_loaded",
        "child: wait for the load reply",
        hides="round trips: wait + receive",
        when=lambda c: c.load is None,
    )
    timed(child, "_send", "round trips: send")
    timed(child, "send_ahead", "round trips: send ahead (no wait)")
    timed(child, "_recv_sized", "round trips: wait + receive")
    timed(child, "kill", "child: stop and clean up")
    child.close = child.kill  # the alias named the unwrapped function
    timed(session.GradingSession, "finish", "report: build + write files")
    timed(session.GradingSession, "summary_lines", "report: summary lines")


def main() -> None:
    out, entry, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    _add("interpreter: start to driver", BEGAN - _process_start())
    if entry == "pytest":
        began = time.perf_counter()
        import pytest

        _add("imports: pytest", time.perf_counter() - began)
    if entry == "child":
        child_start(int(args[0]) if args else 5)
        code = 0
    else:
        install()
    began = time.perf_counter()
    if entry == "child":
        pass
    elif entry == "pytest":
        code = pytest.main(args, plugins=[_pytest_timers()])
    else:
        from pytest_rlsys.cli import main as cli_main

        code = cli_main(["grade", *args])
    _add("entry point: total", time.perf_counter() - began)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(TOTALS, handle)
    sys.exit(int(code or 0))


def child_start(count: int) -> None:
    """A fresh child's start and load of the reference, with this machine's fence and with
    an empty plan (no Landlock, no seccomp filter, no rlimits): the difference is the
    fence's set-up inside the child."""
    from pytest_rlsys.grading import fence
    from pytest_rlsys.grading.isolation import ChildProcess
    from pytest_rlsys.grading.outcomes import Limits
    from pytest_rlsys.resources import FUNCTIONS, solution_path

    source = solution_path().read_text(encoding="utf-8")
    fenced_plan = fence.plan

    def bare(scratch: str, limits: Limits, confined: bool = False) -> str:
        return json.dumps({"scratch": scratch, "landlock": 0, "seccomp": "", "limits": {}})

    for phase, plan in (
        ("child: start + load, fenced", fenced_plan),
        ("child: start + load, no fence", bare),
    ):
        fence.plan = plan  # type: ignore[assignment]
        for _ in range(count):
            child = ChildProcess(source, "mine.py", list(FUNCTIONS), Limits())
            began = time.perf_counter()
            assert child.ensure_loaded().ok
            _add(phase, time.perf_counter() - began)
            began = time.perf_counter()
            child.close()
            _add("child: stop and clean up", time.perf_counter() - began)
    fence.plan = fenced_plan  # type: ignore[assignment]


def _process_start() -> float:
    """This process's start on the perf_counter clock (from /proc, 10 ms resolution)."""
    import os

    with open(f"/proc/{os.getpid()}/stat", encoding="ascii") as handle:
        ticks = int(handle.read().rpartition(")")[2].split()[19])
    with open("/proc/uptime", encoding="ascii") as handle:
        uptime = float(handle.read().split()[0])
    started_ago = uptime - ticks / os.sysconf("SC_CLK_TCK")
    return time.perf_counter() - started_ago


if __name__ == "__main__":
    main()
