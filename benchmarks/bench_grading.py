"""One submission, whole battery, isolated, vs the chapter's three tests in plain pytest.

Run: .venv/bin/python benchmarks/bench_grading.py [--repeat N]
Prints wall times (median of N) for, in the same run:
  A. `pytest --rlsys-submission REF` (whole battery through the isolation boundary)
  B. `pytest benchmarks/chapter_tests.py` (the chapter's 3 tests, in-process, same code)
  C. the engine alone, in-process timing of the battery: cases/s and calls/s
and the ratio A/B.  Ratios, not absolute numbers, are what to compare across machines.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_rlsys.grading.grader import Grader  # noqa: E402
from pytest_rlsys.resources import solution_path  # noqa: E402


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    began = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - began
    if done.returncode not in (0,):
        sys.exit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stdout[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ref = solution_path()
    env = dict(os.environ, RLSYS_BENCH_TARGET=str(ref))
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        # Both runs start in the same empty folder, so neither reads this repo's config.
        (cwd / "test_chapter.py").write_text((HERE / "chapter_tests.py").read_text())
        plugin = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                  "--rlsys-submission", str(ref), "--rlsys-seed", "1"]
        plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 "test_chapter.py"]
        a = [timed(plugin, env, cwd) for _ in range(args.repeat)]
        b = [timed(plain, env, cwd) for _ in range(args.repeat)]
    engine_times, calls = [], 0
    for _ in range(args.repeat):
        grader = Grader(ref, ref.read_bytes(), seed=1)
        began = time.perf_counter()
        grader.run_all()
        engine_times.append(time.perf_counter() - began)
        calls = sum(len(c.calls) for c in grader.cases)
        assert grader.report().score == 100
    cases = len(grader.cases)
    ma, mb, mc = (statistics.median(x) for x in (a, b, engine_times))
    print(f"A  plugin, whole battery isolated ({cases} cases): {ma:.3f} s (median of "
          f"{args.repeat})")
    print(f"B  chapter's 3 tests, plain pytest in-process:   {mb:.3f} s")
    print(f"   ratio A/B: {ma / mb:.2f}x")
    print(f"C  engine only (child start + {cases} cases, {calls} calls): {mc:.3f} s -> "
          f"{cases / mc:.0f} cases/s, {calls / mc:.0f} calls/s through the boundary")


if __name__ == "__main__":
    main()
