"""GitHub Classroom: the runner result that education/autograding-grading-reporter reads.

The reporter (src/main.js) takes each runner step's ``result`` output, decodes it with
``Buffer.from(value, "base64").toString("utf-8")`` and ``JSON.parse``; it fails the job
when ``status`` is ``"fail"`` or ``"error"``; it prints each test's ``name``,
``status`` (``pass``/``fail``/``error``), ``message`` (errors), ``test_code`` and
``line_no`` (0: none); and src/notify-classroom.js sums ``tests[].score`` in order, when
``max_score`` is set, into the check run's ``Points <sum>/<max_score>`` that Classroom
records.  The file written here is that JSON; ``step_output`` is the base64 a workflow
step puts in ``$GITHUB_OUTPUT``.

The sum is a JavaScript float sum, so each score is chosen (within a few ulps of its
hundredths) so that the running sum hits every exact total: the Points line reads
``Points 65.5/100``, never ``Points 65.49999999999999/100``.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from typing import Any

from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.outputs.cases import title
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import clean, clip, dump_json, js_number

__all__ = ["exact_running_scores", "points_line", "render", "step_output"]

MAX_TEXT = 2000
_STATUS = {"passed": "pass", "failed": "fail"}


def exact_running_scores(cents: Sequence[int]) -> list[float]:
    """Scores whose left-to-right float sum equals ``sum(cents[:k]) / 100`` at every k."""
    scores: list[float] = []
    acc = 0.0
    running = 0
    for value in cents:
        running += value
        target = running / 100
        score = value / 100
        if acc + score != target:
            score = target - acc
            step = 0
            while acc + score != target and step < 64:
                step += 1
                score = math.nextafter(score, math.inf if acc + score < target else -math.inf)
        scores.append(score)
        acc += score
    return scores


def render(report: ScoreReport, options: RenderOptions) -> str:
    scores = exact_running_scores([c.cents for c in report.cases])
    tests: list[dict[str, Any]] = []
    for case, score in zip(report.cases, scores, strict=True):
        tests.append({
            "name": title(case, options.lang),
            "status": _STATUS.get(case.status, "error"),
            "score": score,
            "message": clip(clean(case.message), MAX_TEXT),
            "test_code": clip(clean(case.claim or case.call), MAX_TEXT),
            "filename": "", "line_no": 0,
            "execution_time": f"{case.seconds:.3f}s",
        })
    if report.load_error is not None:
        status = "error"
    elif all(c.status == "passed" for c in report.cases):
        status = "pass"
    else:
        status = "fail"
    return dump_json({"version": 1, "status": status,
                      "max_score": sum(c.max_cents for c in report.cases) / 100,
                      "tests": tests})


def step_output(report: ScoreReport, options: RenderOptions | None = None) -> str:
    """The value of the runner step's ``result`` output: base64 of the UTF-8 JSON."""
    text = render(report, options or RenderOptions())
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def points_line(report: ScoreReport) -> str:
    """``Points X/Y`` exactly as the reporter writes it for this report."""
    earned = sum(c.cents for c in report.cases) / 100
    total = sum(c.max_cents for c in report.cases) / 100
    return f"Points {js_number(earned)}/{js_number(total)}"
