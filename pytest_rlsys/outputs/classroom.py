"""GitHub Classroom: the runner result that education/autograding-grading-reporter reads.

The reporter (src/main.js) takes each runner step's ``result`` output, decodes it with
``Buffer.from(value, "base64").toString("utf-8")`` and ``JSON.parse``; it fails the job
when ``status`` is ``"fail"`` or ``"error"``; it prints each test's ``name``,
``status`` (``pass``/``fail``/``error``), ``message`` (errors), ``test_code`` and
``line_no`` (0: none); and src/notify-classroom.js sums ``tests[].score`` in order, when
``max_score`` is set, into the check run's ``Points <sum>/<max_score>`` that Classroom
records.  The file written here is that JSON; ``step_output`` is the base64 a workflow
step puts in ``$GITHUB_OUTPUT``.

The sum is a JavaScript float sum, so the scores are chosen (each within a few ulps of its
hundredths) so that it lands exactly on the report's total: the Points line reads
``Points 97.6/100``, never ``Points 97.60000000000001/100``.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from typing import Any

from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.messages import claim_text
from pytest_rlsys.outputs.cases import title
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import clean, clip, dump_json, js_number, seconds

__all__ = ["exact_running_scores", "points_line", "render", "step_output"]

MAX_TEXT = 2000
_STATUS = {"passed": "pass", "failed": "fail"}


def _left_to_right(scores: Sequence[float]) -> float:
    total = 0.0
    for score in scores:
        total += score  # in order, as JavaScript's forEach does
    return total


def _near(value: float, steps: int) -> list[float]:
    """``value`` and its neighbours up to ``steps`` ulps away, nearest first."""
    out = [value]
    up = down = value
    for _ in range(steps):
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
        out += [up, down]
    return out


def exact_running_scores(cents: Sequence[int]) -> list[float]:
    """A score per case, each within a few ulps of its hundredths, whose left-to-right
    float sum is exactly ``sum(cents) / 100``.

    Only cases with points are nudged: a failed case stays exactly 0.  The last such case
    absorbs the rounding of the sum before it; when no float does (the sum sits on a
    rounding tie), the one before it moves by an ulp first."""
    scores = [value / 100 for value in cents]
    target = sum(cents) / 100
    earning = [i for i, value in enumerate(cents) if value]
    if not earning or _left_to_right(scores) == target:
        return scores
    last = earning[-1]
    previous = earning[-2] if len(earning) > 1 else None
    # The running sum before the last case: as it is, else moved by an ulp or a few of
    # its own (which may be many of the previous score's: 8.39 + 0.52 does not move by
    # an ulp of 0.52), the previous score absorbing the move.
    partials = [_left_to_right(scores[:last])]
    if previous is not None:
        head = _left_to_right(scores[:previous])
        partials = _near(partials[0], 4)
    for partial in partials:
        if previous is not None:
            shift = next((p for p in _near(partial - head, 8) if head + p == partial), None)
            if shift is None:
                continue
            scores[previous] = shift
        before = _left_to_right(scores[:last])
        for candidate in _near(target - before, 8):
            if before + candidate == target:
                scores[last] = candidate
                return scores
    return [value / 100 for value in cents]  # not reached in practice; still near-exact


def render(report: ScoreReport, options: RenderOptions) -> str:
    scores = exact_running_scores([c.cents for c in report.cases])
    tests: list[dict[str, Any]] = []
    for case, score in zip(report.cases, scores, strict=True):
        tests.append(
            {
                "name": title(case, options.lang),
                "status": _STATUS.get(case.status, "error"),
                "score": score,
                "message": clip(clean(case.message), MAX_TEXT),
                # The chapter's check in the run's language (claims are written in zh).
                "test_code": clip(
                    clean(claim_text(case.claim, options.lang) if case.claim else case.call),
                    MAX_TEXT,
                ),
                "filename": "",
                "line_no": 0,
                "execution_time": f"{seconds(case.seconds):.3f}s",
            }
        )
    if report.load_error is not None:
        status = "error"
    elif all(c.status == "passed" for c in report.cases):
        status = "pass"
    else:
        status = "fail"
    return dump_json(
        {
            "version": 1,
            "status": status,
            "max_score": sum(c.max_cents for c in report.cases) / 100,
            "tests": tests,
        }
    )


def step_output(report: ScoreReport, options: RenderOptions | None = None) -> str:
    """The value of the runner step's ``result`` output: base64 of the UTF-8 JSON."""
    text = render(report, options or RenderOptions())
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def points_line(report: ScoreReport) -> str:
    """``Points X/Y`` exactly as the reporter writes it for this report."""
    earned = sum(c.cents for c in report.cases) / 100
    total = sum(c.max_cents for c in report.cases) / 100
    return f"Points {js_number(earned)}/{js_number(total)}"
