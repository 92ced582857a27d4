"""Does running the battery ahead in a background thread pay?  One grade under pytest,
background run-ahead on vs off, in the same run.

Run: .venv/bin/python benchmarks/bench_ahead.py [--repeat N]
For each submission (the reference: every case passes; the untouched template: every
case raises NotImplementedError; one with a slow function: each call sleeps 2 ms), the
same ``pytest --rlsys-submission FILE`` runs N times with the run-ahead and N times
without, interleaved (on, off, on, off...) so that the load of a shared machine hits both
alike.  Both go through one wrapper that differs only in ``background``, so the
interpreter start and imports are the same.  Prints the median and minimum wall time of
each and the ratio off/on: a gain of 10 % is a ratio of 1.10 or more.

Measured (2 cores shared by 7 engineers, load 2-5, two series of 8 and 10 pairs): off/on
median 0.97, 1.05, 0.99 and 1.02, 0.96, 1.08 (reference, template, slow calls): below
the 10 % bar, so the run-ahead was removed (commit 506b5ef).  To measure again, run this
script from commit 92d89be, the last with the run-ahead; on later commits it says so.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from pytest_rlsys.grading.request import GradingRequest  # noqa: E402
from pytest_rlsys.resources import exercise_path, solution_path  # noqa: E402

# Runs pytest with the plugin's request forced to one background setting.
WRAPPER = """
import dataclasses, sys
import pytest
from pytest_rlsys import settings
made = settings.request_from_pytest
background = sys.argv.pop(1) == "on"
settings.request_from_pytest = lambda config: dataclasses.replace(
    made(config), background=background and made(config).background
)
sys.exit(pytest.main(sys.argv[1:]))
"""

SLOW = "\nimport time as _t\n_real = evaluate_topology\n" + (
    "def evaluate_topology(*a, **k):\n    _t.sleep(0.002)\n    return _real(*a, **k)\n"
)


def timed(cmd: list[str], cwd: Path) -> float:
    began = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True)
    elapsed = time.perf_counter() - began
    if done.returncode not in (0, 1):
        sys.exit(f"command failed: {' '.join(cmd)}\n{done.stdout[-2000:].decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=8)
    args = parser.parse_args()
    if "background" not in {f.name for f in dataclasses.fields(GradingRequest)}:
        sys.exit("no background run-ahead here (removed in 506b5ef): run this from 92d89be")
    reference = solution_path().read_text(encoding="utf-8")
    sources = {
        "reference": reference,
        "template": exercise_path().read_text(encoding="utf-8"),
        "slow calls": reference + SLOW,
    }
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "wrapper.py").write_text(WRAPPER, encoding="utf-8")
        print(f"{args.repeat} interleaved pairs per submission; wall seconds")
        print(
            f"{'submission':<12} {'on: median':>10} {'min':>6} {'off: median':>11} {'min':>6}"
            f" {'off/on median':>13} {'off/on min':>10}"
        )
        for name, source in sources.items():
            upload = cwd / name.replace(" ", "_")
            upload.mkdir()
            path = upload / "mine.py"
            path.write_text(source, encoding="utf-8")
            base = [sys.executable, "-P", str(cwd / "wrapper.py")]
            pytest = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
            grade = [*pytest, "--rlsys-submission", str(path), "--rlsys-seed", "1"]
            on: list[float] = []
            off: list[float] = []
            for _ in range(args.repeat):
                on.append(timed([*base, "on", *grade], cwd))
                off.append(timed([*base, "off", *grade], cwd))
            mon, moff = statistics.median(on), statistics.median(off)
            print(
                f"{name:<12} {mon:>10.3f} {min(on):>6.3f} {moff:>11.3f} {min(off):>6.3f}"
                f" {moff / mon:>13.2f} {min(off) / min(on):>10.2f}"
            )
            shutil.rmtree(upload)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores shared: ratios only)")


if __name__ == "__main__":
    main()
