"""The test command cosmic-ray runs for each mutant (benchmarks/bench_cosmic_ray.py):
grade the mutated copy of the reference with the real battery (isolation on, expected
values from the untouched reference in solutions/) at two seeds.

Exit 1 (killed) as soon as a seed scores below full marks, else 0 (survived).  Prints one
JSON line with each seed's per-TODO scores, which the benchmark reads back from
cosmic-ray's session to check that a kill costs points in the mutant's own TODO only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pytest_rlsys.grading.battery import default_seed
from pytest_rlsys.grading.grader import grade_file


def main(path: str) -> int:
    scores: dict[str, dict[str, float]] = {}
    for seed in (default_seed(), 1):
        report = grade_file(Path(path), seed=seed)
        scores[str(seed)] = {k: v["score"] for k, v in report.sections().items()}
        if report.score < report.max_score:
            break
    print("RLSYS-SCORES " + json.dumps(scores))
    killed = any(sum(s.values()) < 100 for s in scores.values())
    return 1 if killed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
