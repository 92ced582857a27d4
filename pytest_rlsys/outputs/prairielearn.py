"""PrairieLearn external-grader ``results.json`` (docs/externalGrading.md, "Grading
results"; read by apps/prairielearn/src/lib/externalGraderCommon.ts makeGradingResult).

``score`` is the fraction in [0, 1]; ``tests[]`` carry ``points``/``max_points``; the
``message`` ends with the fence that graded (``fenceline``).  A
submission that did not load is ``"gradable": false`` with the reason in
``format_errors``: PrairieLearn then awards nothing and charges no attempt; the
``message`` says the same reason first, as the terminal says it (PrairieLearn shows
``format_errors`` apart from the message).  The file must
stay under 1 MB, so long texts are clipped.
"""

from __future__ import annotations

from typing import Any

from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.messages import LOAD_FAILED
from pytest_rlsys.outputs import terminal
from pytest_rlsys.outputs.cases import title
from pytest_rlsys.outputs.fenceline import fence_text
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import clean, clip, dump_json
from pytest_rlsys.outputs.wording import load_error_text, message

__all__ = ["MAX_BYTES", "render"]

MAX_BYTES = 1_000_000  # PrairieLearn's documented limit on results.json
MAX_TEXT = 2000


def render(report: ScoreReport, options: RenderOptions) -> str:
    lang = options.lang
    earned = sum(case.cents for case in report.cases)
    total = sum(case.max_cents for case in report.cases)
    tests: list[dict[str, Any]] = [
        {
            "name": title(case, lang),
            "description": clean(case.id, newlines=False),
            "points": case.cents / 100,
            "max_points": case.max_cents / 100,
            "message": clip(clean(message(case, lang)), MAX_TEXT, lang)
            if case.status != "passed"
            else "",
            "output": (
                clip(clean(terminal.failure_text(case, lang)), MAX_TEXT, lang)
                if case.status != "passed"
                else ""
            ),
        }
        for case in report.cases
    ]
    said = load_error_text(report, lang)
    # The load error first, as the learner's terminal says it (the syntax error's line,
    # the byte that is not UTF-8): the table alone says only its kind.
    failed = report.load_error is not None
    lines = [LOAD_FAILED.get(lang).format(error=said), ""] if failed else []
    lines += terminal.terminal_lines(report, lang)
    doc: dict[str, Any] = {
        "gradable": report.load_error is None,
        "score": min(1.0, max(0.0, earned / total)) if total else 0.0,
        "points": earned / 100,
        "max_points": total / 100,
        # The fence that graded, last: PrairieLearn shows the message to instructors too.
        "message": clip(
            "\n".join(clean(line) for line in lines),
            20 * MAX_TEXT,
            lang,
        )
        + "\n\n"
        + fence_text(report.fence, lang),
        "tests": tests,
    }
    if failed:
        doc["format_errors"] = [clip(clean(said), MAX_TEXT, lang)]
    text = dump_json(doc)
    if len(text.encode("utf-8")) > MAX_BYTES:  # keep the grade, drop the detail
        for test in tests:
            test["output"] = ""
        text = dump_json(doc)
    return text
