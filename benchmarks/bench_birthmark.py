"""What the behaviour probes cost a batch: a class of 30 graded with them and with
``--no-behaviour``, alternately in the same run (the ratio is the cost on this machine).

Run: .venv/bin/python benchmarks/bench_birthmark.py [--count 30] [--rounds 3]
The class: the similarity corpus's independent solutions and disguised copies, the
untouched template and a file that does not load, cycled to --count files.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_rlsys.resources import exercise_path  # noqa: E402

SET = HERE.parent / "tests" / "corpora" / "similarity"


def corpus(folder: Path, count: int) -> None:
    sources = [p.read_text("utf-8") for p in sorted(SET.glob("**/*.py")) if "make_" not in p.name]
    sources += [exercise_path().read_text("utf-8"), "def pipeline_capacity(:\n"]
    for index in range(count):
        (folder / f"student_{index:03d}.py").write_text(sources[index % len(sources)], "utf-8")


def run_batch(folder: Path, out: Path, probes: bool) -> float:
    argv = [sys.executable, "-m", "pytest_rlsys", "batch", str(folder), "--seed", "1"]
    argv += ["--jobs", "2", "--csv", str(out), "--no-progress"]
    began = time.perf_counter()
    subprocess.run(argv + ([] if probes else ["--no-behaviour"]), check=True, capture_output=True)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with_probes: list[float] = []
    without: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "subs"
        folder.mkdir(mode=0o700)  # as root, batch refuses a folder others can read
        corpus(folder, args.count)
        for _ in range(args.rounds):
            without.append(run_batch(folder, Path(tmp) / "off.csv", probes=False))
            with_probes.append(run_batch(folder, Path(tmp) / "on.csv", probes=True))
    off, on = statistics.median(without), statistics.median(with_probes)
    print(f"{args.count} submissions, --jobs 2, median of {args.rounds} alternating rounds")
    print(f"  --no-behaviour: {off:.1f} s  {[round(t, 1) for t in without]}")
    print(f"  with probes:    {on:.1f} s  {[round(t, 1) for t in with_probes]}")
    print(f"  ratio with/without: {on / off:.2f}x")


if __name__ == "__main__":
    main()
