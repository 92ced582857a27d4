"""The shipped sampler's largest gap under load: the figures behind the coverage allowance.

The runner samples from a child process (``gpu/rlsys_closure/sample_child.py``) that
reads on an absolute schedule ``t0 + k x interval`` and skips a missed tick. Its
largest gap between readings is therefore one interval (the wait for the next tick)
plus however long the host did not run it (the *stall*), plus one interval per
dropped reading. This script runs the shipped child (host memory only: ``--nvml
none``, so no GPU is needed) and reports, per interval and condition, the largest
gap and the stall it implies (largest gap minus the interval):

- ``baseline``: nothing else started by this script (the machine's own load);
- ``cpu-hog``: 2 x cpu_count busy-looping processes (every core oversubscribed);
- ``gil-parent``: the parent holds its GIL in long C calls (``sorted`` of a
  3-million-float list, about 1 s each) and imports a native module, as the
  driver does while it imports torch and vLLM;
- ``hog+gil``: both.

Each condition runs twice: as shipped (the child raises its own priority to
SCHED_RR or nice -10 where the host allows it) and without CAP_SYS_NICE (through
``setpriv``, as in a container that refuses both: ordinary priority), since the
allowance must hold for either.

Timings on a shared machine are inflated by everyone's load, so each condition is
also printed as a ratio against ``baseline`` measured in the same run.

Run:  .venv/bin/python benchmarks/bench_sampler_gap.py [--seconds S] [--intervals 0.1,0.25]
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
GPU = HERE.parent / "gpu"


def _spin(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


def _hog(seconds: float) -> Callable[[], None]:
    """Start 2 x cpu_count busy processes; return a joiner."""
    stop_at = time.monotonic() + seconds
    procs = [
        multiprocessing.Process(target=_spin, args=(stop_at,))
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    for p in procs:
        p.start()

    def join() -> None:
        for p in procs:
            p.join()

    return join


def _hold_gil(seconds: float) -> None:
    """Long C calls that hold the parent's GIL, and a native import, for ``seconds``."""
    data = [random.random() for _ in range(3_000_000)]
    stop_at = time.monotonic() + seconds
    import decimal  # a native module's import, as the driver's are

    del decimal
    while time.monotonic() < stop_at:
        sorted(data)


NO_NICE = ["setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"]


def run_child(interval: float, seconds: float, load: str, nice: bool) -> tuple[str, list[float]]:
    """Run the shipped sampler child for ``seconds`` under ``load``: its priority and
    reading times."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "samples.jsonl"
        env = dict(os.environ, PYTHONPATH=str(GPU))
        cmd = [sys.executable, "-m", "rlsys_closure.sample_child", "--interval", str(interval)]
        child = subprocess.Popen(
            [*([] if nice else NO_NICE), *cmd, "--nvml", "none", "--out", str(out)],
            stdin=subprocess.PIPE,
            env=env,
        )
        joiner = _hog(seconds) if "hog" in load else None
        if "gil" in load:
            _hold_gil(seconds)
        else:
            time.sleep(seconds)
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)
        if joiner is not None:
            joiner()
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    priority = next((str(r["priority"]) for r in rows if "priority" in r), "?")
    return priority, [float(r["t_s"]) for r in rows if "t_s" in r]


LOADS = ("baseline", "cpu-hog", "gil-parent", "hog+gil")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--intervals", default="0.1,0.25")
    args = parser.parse_args()
    print(f"cpu_count {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    print(
        "interval  priority    condition   readings  max gap s  stall s  p99 gap s  "
        "max gap / baseline"
    )
    cases = [(nice, load) for nice in (True, False) for load in LOADS]
    for interval in (float(x) for x in args.intervals.split(",")):
        base: float | None = None
        for nice, load in cases:
            priority, times = run_child(interval, args.seconds, load, nice)
            gaps = sorted(b - a for a, b in itertools.pairwise(times))
            if not gaps:
                print(f"{interval:<9g} {priority:<11} {load:<11} no readings")
                continue
            worst = gaps[-1]
            base = worst if load == "baseline" else base
            p99 = gaps[min(len(gaps) - 1, int(0.99 * len(gaps)))]
            ratio = worst / base if base else float("nan")
            print(
                f"{interval:<9g} {priority:<11} {load:<11} {len(times):>8}  {worst:>9.3f}  "
                f"{worst - interval:>7.3f}  {p99:>9.3f}  {ratio:>6.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
