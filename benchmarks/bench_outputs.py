"""Cost of writing the platform files: each renderer (with its text cleaning) against a
plain ``json.dumps`` of the score document in the same run, and against grading itself.

Run: .venv/bin/python benchmarks/bench_outputs.py [--repeat 50]
The report is the untouched template's (every case failed: the longest texts), and a copy
whose every message is hostile text (surrogates, controls, bidi, CJK).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_rlsys.grading.grader import grade_file  # noqa: E402
from pytest_rlsys.grading.scoring import OUTPUT_KINDS, ScoreReport  # noqa: E402
from pytest_rlsys.messages import Msg  # noqa: E402
from pytest_rlsys.outputs import registry, scorejson  # noqa: E402
from pytest_rlsys.resources import exercise_path  # noqa: E402

HOSTILE = "\ud800\uffff\x1b[2J\u202eevil\u200b 中文：" * 20


def timed(repeat: int, action: object) -> float:
    assert callable(action)
    began = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - began) / repeat


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    began = time.perf_counter()
    report = grade_file(exercise_path(), seed=1)
    grading = time.perf_counter() - began
    hostile = ScoreReport(
        **{
            **vars(report),
            "cases": [
                # Every text a message is worded from (a result-file check's note is
                # shown whole), and the category.
                dataclasses.replace(c, kind="", note=HOSTILE, category=Msg(HOSTILE, HOSTILE))
                for c in report.cases
            ],
        }
    )
    for name, subject in (("template", report), ("hostile", hostile)):
        baseline = timed(
            args.repeat,
            lambda s=subject: json.dumps(
                scorejson.document(s), ensure_ascii=False, indent=2
            ).encode("utf-8", "surrogatepass"),
        )
        print(
            f"{name}: {len(subject.cases)} cases; grading took {grading * 1000:.0f} ms; "
            f"baseline json.dumps {baseline * 1000:.2f} ms"
        )
        for kind in OUTPUT_KINDS:
            cost = timed(args.repeat, lambda k=kind, s=subject: registry.render(k, s))
            print(
                f"  {kind:<13} {cost * 1000:8.2f} ms  x{cost / baseline:5.1f} baseline  "
                f"{cost / grading * 100:5.2f}% of grading"
            )


if __name__ == "__main__":
    main()
