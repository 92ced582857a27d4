"""A realistic class through `rlsys batch --jobs 2`: today's code against a pinned older
build, interleaved in one run, in files per minute.

Run: .venv/bin/python benchmarks/bench_class.py --old /work/bench-old/.venv/bin/python
        [--repeat 2] [--jobs 2]
The class (built from tests/corpora, about 130 files): the learner corpus (the correct
file and each one-bug mutant), the similarity corpus's independent solutions and disguised
copies (correct alternatives), and learners' attempts of every other kind from the
scenarios: hanging (at import, in every call), not loading (syntax error, exit at import,
not UTF-8, missing functions), crashing in every call, and the untouched template.
Each round grades the class with: the old build; today's (the similarity report with its
behaviour probes, as `rlsys batch` runs by default); today's with --no-behaviour (the
similarity report on code alone); in turn, so that load changes hit all alike.  Scores
of the files both builds grade the same way are compared, and the rows that differ named.
--old: the older build's Python (its venv, e.g. bf9335a: `git worktree add --detach
/work/bench-old bf9335a`, then the README's install into its .venv).
PYTHONDONTWRITEBYTECODE is dropped and each build grades the class once before timing.
"""

from __future__ import annotations

import argparse
import csv
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

from pytest_rlsys.resources import exercise_path  # noqa: E402
from tests.corpora.test_scenarios import submission_path  # noqa: E402

CORPORA = ROOT / "tests" / "corpora"
ATTEMPTS = (  # scenarios: a learner's file of each other kind
    "hang_at_import",
    "hang_everywhere",
    "syntax_error",
    "exit_at_import",
    "not_utf8",
    "missing_functions",
    "signals_to_self",
    "recursion_crash",
    "slow_but_correct",
)


def build_class(folder: Path) -> int:
    """Write the class into ``folder``; how many files it holds."""
    sources = sorted((CORPORA / "learner_corpus").glob("*.py"))
    sources += sorted((CORPORA / "similarity").glob("*/*.py"))
    sources = [p for p in sources if p.name != "make_copies.py"]
    sources += [submission_path(name) for name in ATTEMPTS]
    sources.append(exercise_path())
    for index, path in enumerate(sources):
        shutil.copy(path, folder / f"s{index:03d}_{path.parent.name}_{path.name}")
    return len(sources)


def run(python: str, folder: Path, out: Path, jobs: int, extra: list[str]) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [python, "-m", "pytest_rlsys", "batch", str(folder), "--jobs", str(jobs)]
    command += ["--seed", "1", "--csv", str(out), "--no-progress", *extra]
    began = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    took = time.perf_counter() - began
    if done.returncode not in (0, 1):
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]!r}")
    return took


def scores(path: Path) -> dict[str, str]:
    with open(path, encoding="utf-8") as handle:
        return {row["submission"]: row["score"] for row in csv.DictReader(handle)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", required=True, help="the older build's python")
    parser.add_argument("--old-name", default="bf9335a")
    parser.add_argument(
        "--also",
        nargs=2,
        action="append",
        default=[],
        metavar=("PYTHON", "NAME"),
        help="another build measured in the same rounds (e.g. main before a change)",
    )
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    builds = {
        args.old_name: (args.old, []),
        **{name: (python, []) for python, name in args.also},
        "today": (sys.executable, []),
        "today --no-behaviour": (sys.executable, ["--no-behaviour"]),
    }
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir(mode=0o700)  # as root, batch refuses a folder others can read
        count = build_class(folder)
        out = Path(tmp) / "out"
        out.mkdir()
        times: dict[str, list[float]] = {name: [] for name in builds}
        for rnd in range(args.repeat + 1):  # round 0 warms the bytecode caches
            for name, (python, extra) in builds.items():
                took = run(python, folder, out / f"{name}.csv", args.jobs, extra)
                if rnd:
                    times[name].append(took)
        graded = {name: scores(out / f"{name}.csv") for name in builds}
    print(f"{count} files, rlsys batch --jobs {args.jobs}, {args.repeat} interleaved rounds")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'build':24} {'median s':>9} {'min s':>7} {'files/min':>10} {'(best)':>7}")
    for name, runs in times.items():
        med, best = statistics.median(runs), min(runs)
        print(f"{name:24} {med:9.1f} {best:7.1f} {count / med * 60:10.0f} {count / best * 60:7.0f}")
    old, today = graded[args.old_name], graded["today"]
    differ = sorted(k for k in old.keys() & today.keys() if old[k] != today[k])
    print(f"scores that differ between {args.old_name} and today: {len(differ)} of {len(old)}")
    for name in differ:
        print(f"  {name}: {old[name]} -> {today[name]}")


if __name__ == "__main__":
    main()
