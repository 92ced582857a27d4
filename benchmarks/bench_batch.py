"""Batch grading throughput: N submissions, isolation on, `rlsys batch --jobs 2` vs
`--jobs 1` in the same run (the ratio is the parallel speed-up on this machine).

Run: .venv/bin/python benchmarks/bench_batch.py [--count 200]
The corpus: the reference, each planted defect of tests/unit/test_battery.py in turn, the
untouched template and a submission that exits at import, cycled to --count files.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_rlsys.resources import exercise_path, solution_path  # noqa: E402
from tests.unit.test_battery import DEFECTS  # noqa: E402


def corpus(folder: Path, count: int) -> None:
    reference = solution_path().read_text(encoding="utf-8")
    sources = [reference, exercise_path().read_text(encoding="utf-8"), "import os\nos._exit(3)\n"]
    sources += [reference.replace(old, new) for _, _, old, new in DEFECTS]
    for index in range(count):
        (folder / f"student_{index:03d}.py").write_text(
            sources[index % len(sources)], encoding="utf-8"
        )


def run_batch(folder: Path, jobs: int, out: Path) -> float:
    began = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_rlsys",
            "batch",
            str(folder),
            "--jobs",
            str(jobs),
            "--seed",
            "1",
            "--csv",
            str(out),
            "--no-progress",
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "subs"
        folder.mkdir(mode=0o700)  # as root, batch refuses a folder others can read
        corpus(folder, args.count)
        one = run_batch(folder, 1, Path(tmp) / "one.csv")
        two = run_batch(folder, 2, Path(tmp) / "two.csv")
        with open(Path(tmp) / "two.csv", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        with open(Path(tmp) / "one.csv", encoding="utf-8") as handle:
            same = [r["score"] for r in csv.DictReader(handle)] == [r["score"] for r in rows]
    graded = sum(r["status"] == "graded" for r in rows)
    print(f"{args.count} submissions ({graded} graded), isolation on")
    print(f"  --jobs 1: {one:.1f} s  ({args.count / one * 60:.0f} submissions/min)")
    print(f"  --jobs 2: {two:.1f} s  ({args.count / two * 60:.0f} submissions/min)")
    print(f"  speed-up jobs2/jobs1: {one / two:.2f}x; same scores both ways: {same}")


if __name__ == "__main__":
    main()
