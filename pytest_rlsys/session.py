"""One grading run, whoever drives it: the request's grader and result file, one report,
the files it asks for and the terminal summary.  ``rlsys grade`` runs it directly;
the pytest plugin runs its cases as items (``plugin.run``).  Nothing here imports pytest."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from pytest_rlsys.grading import fence
from pytest_rlsys.grading.grader import Grader, SubmissionPathError, open_grader
from pytest_rlsys.grading.isolation import ChildProcess
from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.grading.rubric import Rubric
from pytest_rlsys.grading.scoring import MAX_MESSAGE_CHARS, CaseResult, ScoreReport, as_status
from pytest_rlsys.messages import Msg, Said, said
from pytest_rlsys.outputs import terminal
from pytest_rlsys.outputs.files import write_outputs
from pytest_rlsys.outputs.text import clean

__all__ = ["GradingSession", "ResultSection", "grade_result"]

SHOWN_OUTPUT = 2000
SHOWN_LINES = 20  # without -v


@dataclass
class ResultSection:
    """A graded result file, as cases of section gpu_result."""

    cases: list[CaseResult]
    summary: dict[str, Any]
    sha256: str | None


def grade_result(path: Path, rubric: Rubric) -> ResultSection:
    from pytest_rlsys.resultfile.grade import grade_document, not_gradable, whole_problems
    from pytest_rlsys.resultfile.loading import load_result_file

    # Read once: the digest and the grade come from the same bytes, and the
    # loader never follows a link or waits on a FIFO.
    loaded = load_result_file(path)
    if loaded.ok and loaded.doc is not None:
        grade = grade_document(loaded.doc, path=loaded.path, points_per_check=rubric.per_check)
    else:
        grade = not_gradable(loaded, float(rubric.per_check))
    cases = [
        CaseResult(
            id=c.id,
            section="gpu_result",
            visibility="visible",
            max_cents=round(c.max_score * 100),
            status=as_status(c.status if c.status in ("passed", "failed") else "error"),
            # The check's own account (English, as result files are), shortened at a
            # problem's end: the terminal caps a message, and a cut one hides its end.
            note=whole_problems(c.message, MAX_MESSAGE_CHARS),
            category=Msg.same(c.id.split(".", 1)[-1]),
        )
        for c in grade.cases
    ]
    summary = {
        "path": str(path),
        "gradable": grade.gradable,
        "errors": list(grade.errors),
        "notes": list(grade.notes),
    }
    return ResultSection(cases, summary, loaded.sha256)


@dataclass(eq=False)  # the plugin registers a subclass as a plugin object: hashable
class GradingSession:
    grader: Grader | None
    result: ResultSection | None
    request: GradingRequest
    final: ScoreReport | None = None
    write_errors: list[str] = field(default_factory=list)
    cleanup_errors: list[Said] = field(default_factory=list)  # shown; the grade still stands

    @property
    def lang(self) -> str:
        return self.request.lang

    @classmethod
    def open(
        cls, request: GradingRequest, standby: ChildProcess | None = None, row: bool = False
    ) -> Self:
        """Open the request's grader and grade its result file.  The one place for a path
        with nothing to grade: its files are written (score 0 and the reason), then
        SubmissionPathError (a usage error) is raised; ``row`` (a batch's row, whose
        path vanished after the folder was listed): graded 0 with the reason instead."""
        grader = open_grader(request, standby) if request.submission is not None else None
        if grader is not None and grader.missing and not row:
            grader.run_all()
            write_outputs(request.outputs, grader.report(), request.render)
            assert grader.refusal is not None  # missing: the reason is its refusal
            raise SubmissionPathError(grader.refusal, usage=True)
        try:
            section = grade_result(request.result, request.rubric) if request.result else None
        except BaseException:
            if grader is not None:
                grader.close()  # its child may already be loading the submission
            raise
        return cls(grader, section, request)

    def close(self) -> None:
        if self.grader is not None:
            try:
                self.grader.close()
            except Exception as exc:  # cleanup never stops the reports from being written
                self.cleanup_errors.append(said("cleanup_failed", exc=repr(exc)))

    def build_report(self) -> ScoreReport:
        if self.grader is not None:
            report = self.grader.report()
        else:
            report = ScoreReport(
                cases=[],
                seed=None,
                submission=None,
                submission_sha256=None,
                battery_sha256=None,
                rubric_sha256=self.request.rubric.sha256,
            )
        if self.result is not None:
            report.cases.extend(self.result.cases)
            report.gpu_result = self.result.summary
            report.result_sha256 = self.result.sha256
        return report

    def finish(self) -> ScoreReport:
        """Every process of the submission gone, then the report and its files."""
        self.close()
        self.final = self.build_report()
        self.write_errors += write_outputs(self.request.outputs, self.final, self.request.render)
        return self.final

    def header_lines(self, here: Path, width: int = terminal.WIDTH) -> list[str]:
        """What is graded (paths shown relative to ``here`` when below it), in the run's
        language, each line fitted to ``width`` columns."""
        facts: list[tuple[str, dict[str, str]]] = []
        if self.grader is not None:
            g = self.grader
            shown = os.path.relpath(g.path, here)
            facts.append(
                ("head_submission", {"path": str(g.path if shown.startswith("..") else shown)})
            )
            sha = g.submission_sha256[:12] if g.submission_sha256 else ""
            facts.append(
                (
                    "head_battery",
                    {
                        "seed": str(g.seed),
                        "n": str(len(g.cases)),
                        "p": f"{sum(g.cents.values()) / 100:g}",
                        "sha": sha or terminal.labels(self.lang)["head_not_read"],
                    },
                )
            )
            facts.append(("head_fence", {"fence": fence.for_limits(g.limits).line(self.lang)}))
        if self.result is not None:
            facts.append(("head_result", {"path": str(self.result.summary["path"])}))
        # A learner may name the file (or the result file) with escapes: shown escaped.
        return terminal.header_lines(facts, self.lang, width)

    def summary_lines(self, verbose: bool, width: int) -> list[str]:
        """The terminal summary: what the submission printed (fenced), the score table
        and failures, the result file's errors and notes, write and cleanup problems,
        and the Points line, always last."""
        report = self.final or self.build_report()
        text = terminal.labels(self.lang)

        def fit(line: str) -> list[str]:
            # Result-file text and paths are not ours: one line, inert, then wrapped at
            # the terminal's width, never cut (the error may be the only line naming it).
            return terminal.fit(clean(line, newlines=False), width)

        lines: list[str] = []
        printed = self.grader.captured_output(self.lang) if self.grader is not None else ""
        if printed.strip():
            # Shown before the score, each line prefixed, so that nothing the submission
            # prints can pass for a grader line (the real Points line is always last).
            lines.append(terminal.rule("-", text["output"].format(n=SHOWN_OUTPUT), width))
            shown = printed[:SHOWN_OUTPUT].splitlines()
            for line in shown if verbose else shown[:SHOWN_LINES]:
                # Every piece of a long line keeps the fence, even on an 80-column log.
                lines += terminal.wrap(clean(line, newlines=False), "| ", terminal.WIDTH - 2)
            if not verbose and len(shown) > SHOWN_LINES:
                lines.append(f"| ... {text['more']}")
        lines.append(terminal.rule("=", text["title"], width))  # display columns, for zh
        lines += terminal.terminal_summary(report, self.lang, verbose, width)
        if self.result is not None:
            for label, key in (("result_error", "errors"), ("result_note", "notes")):
                lines += [
                    p for item in self.result.summary[key] for p in fit(f"{text[label]}: {item}")
                ]
        lines += [clean(f"ERROR: {error}", newlines=False) for error in self.write_errors]
        warned = [f"{text['warning']}: {error.text(self.lang)}" for error in self.cleanup_errors]
        lines += [clean(line, newlines=False) for line in warned]
        lines.append(terminal.points_line(report, self.lang))
        return lines
