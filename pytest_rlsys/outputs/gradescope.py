"""Gradescope ``results.json``, as its autograder specification describes it
(https://gradescope-autograders.readthedocs.io/en/latest/specs/, source
gradescope/autograder_samples docs/specs.md): top-level ``score``, ``output`` and the
``*_format``/``*visibility`` fields, one ``tests[]`` entry per case.

- Names are readable (section · kind · category), numbered ``section.case``.
- Scores are hundredths of a point, the precision Gradescope shows; the top-level score
  is the exact sum of the tests' scores (it overrides the tests' total when given).
- The top-level output is the score table; ``simple_format`` (the default) would render
  it as HTML and collapse its columns, so it is sent as escaped HTML in a ``<pre>``.
  Test outputs are ``text``: Gradescope shows them verbatim, nothing is interpreted.
- Hidden cases get the visibility the instructor chose (e.g. ``after_due_date``), and so
  does every field that carries their results: the top-level output is always visible,
  so when hidden cases are not ``visible`` it shows the visible cases' table only (no
  total or per-TODO score that includes hidden points, no hidden category) and one line
  saying when the rest is shown.  Gradescope itself hides the total score from students
  while any test is ``after_due_date`` or ``after_published``, but not for ``hidden``
  tests, which it means for tests worth no points (specs.md, "Controlling Test Case
  Visibility").
- The fence that graded is in the top-level ``extra_data`` (stored, not shown to students);
  the kit's run_autograder also prints it to its instructor-only output.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

from pytest_rlsys.grading.scoring import ScoreReport
from pytest_rlsys.outputs import terminal
from pytest_rlsys.outputs.cases import numbered, title
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import clean, clip, dump_json, seconds
from pytest_rlsys.outputs.wording import load_error_text

__all__ = ["render"]

MAX_TEST_OUTPUT = 4000


def _top_lines(report: ScoreReport, options: RenderOptions) -> list[str]:
    """The always-visible top-level table: without hidden results unless they are visible."""
    if options.hidden_visibility == "visible":
        return terminal.terminal_lines(report, options.lang)
    shown = [c for c in report.cases if c.visibility != "hidden"]
    held = [c for c in report.cases if c.visibility == "hidden"]
    lines = terminal.terminal_lines(dataclasses.replace(report, cases=shown), options.lang)
    if held:
        lines.append(
            terminal.hidden_later_line(
                sum(c.max_cents for c in held) / 100,
                len(held),
                options.hidden_visibility,
                options.lang,
            )
        )
    return lines


def render(report: ScoreReport, options: RenderOptions) -> str:
    lang = options.lang
    tests: list[dict[str, Any]] = []
    for number, case in numbered(report.cases):
        tests.append(
            {
                "name": title(case, lang),
                "name_format": "text",
                "number": number,
                "score": case.cents / 100,
                "max_score": case.max_cents / 100,
                "status": "passed" if case.status == "passed" else "failed",
                "output": (
                    clip(clean(terminal.failure_text(case, lang)), MAX_TEST_OUTPUT, lang)
                    if case.status != "passed"
                    else ""
                ),
                "output_format": "text",
                "tags": [case.section, case.visibility, case.status],
                "visibility": options.hidden_visibility
                if case.visibility == "hidden"
                else "visible",
                "extra_data": {"id": clean(case.id, newlines=False)},
            }
        )
    table = "\n".join(clean(line) for line in _top_lines(report, options))
    if report.load_error is not None:
        table = clean(load_error_text(report, lang)) + "\n\n" + table
    doc: dict[str, Any] = {
        # Sum in hundredths, then one division: the same float as the tests' exact total.
        "score": sum(case.cents for case in report.cases) / 100,
        "execution_time": round(seconds(report.elapsed_s), 3),
        "output": f"<pre>{html.escape(table)}</pre>",
        "output_format": "html",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    if report.fence is not None:  # stored, never shown to students (specs.md extra_data)
        doc["extra_data"] = {"fence": report.fence}
    return dump_json(doc)
