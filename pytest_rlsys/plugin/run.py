"""One grading run inside pytest: the Grader, the optional result file, and the hooks that
print the table and write the reports (controller process only, after the child is gone)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading.grader import Grader, SubmissionPathError, random_seed, read_submission
from pytest_rlsys.grading.isolation import Limits
from pytest_rlsys.grading.rubric import Rubric, RubricError, load_rubric
from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.messages import default_lang
from pytest_rlsys.outputs import reports

SHOWN_OUTPUT = 2000


@dataclass
class ResultSection:
    """A graded result file, as cases of section gpu_result."""

    cases: list[CaseResult]
    summary: dict[str, Any]
    sha256: str | None


def grade_result(path: Path, rubric: Rubric) -> ResultSection:
    from pytest_rlsys.resultfile.grading import _not_gradable, grade_document
    from pytest_rlsys.resultfile.loading import load_result_file

    # Read once: the digest and the grade come from the same bytes, and the
    # loader never follows a link or waits on a FIFO.
    loaded = load_result_file(path)
    if loaded.ok and loaded.doc is not None:
        grade = grade_document(loaded.doc, path=loaded.path, points_per_check=rubric.per_check)
    else:
        grade = _not_gradable(loaded, float(rubric.per_check))
    cases = [
        CaseResult(id=c.id, section="gpu_result", visibility="visible",
                   max_cents=round(c.max_score * 100),
                   status=c.status if c.status in ("passed", "failed", "error") else "error",
                   message=c.message, category=c.id.split(".", 1)[-1])
        for c in grade.cases
    ]
    summary = {"path": str(path), "gradable": grade.gradable, "errors": list(grade.errors),
               "notes": list(grade.notes)}
    return ResultSection(cases, summary, loaded.sha256)


def _check_output(flag: str, path: Path) -> None:
    if path.is_dir():
        raise ValueError(f"--rlsys-{flag}: {path} is a directory; give a file path")
    if not path.parent.is_dir():
        raise ValueError(f"--rlsys-{flag}: folder {path.parent} does not exist")


@dataclass(eq=False)  # registered as a plugin object, so it must stay hashable
class GradingSession:
    grader: Grader | None
    result: ResultSection | None
    lang: str
    outputs: dict[str, Path]
    final: ScoreReport | None = None
    write_errors: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, submission: Path | None, result: Path | None, rubric: Path | None,
               seed: int | None, lang: str | None, limits: Limits,
               outputs: dict[str, Path]) -> GradingSession:
        for flag, path in outputs.items():
            _check_output(flag, path)
        try:
            rubric_obj = load_rubric(rubric) if rubric else Rubric()
        except RubricError as exc:
            raise ValueError(f"--rlsys-rubric: {exc}") from None
        lang = lang or default_lang()
        grader = None
        if submission is not None:
            try:
                data = read_submission(submission)
            except SubmissionPathError as exc:
                raise ValueError(f"--rlsys-submission: {exc}") from None
            grader = Grader(submission, data, random_seed() if seed is None else seed, limits,
                            rubric_obj, lang)
        section = None
        if result is not None:
            if not result.exists():
                raise ValueError(f"--rlsys-result: {result}: no such file")
            if result.is_dir():
                raise ValueError(f"--rlsys-result: {result} is a directory; give the JSON file")
            section = grade_result(result, rubric_obj)
        return cls(grader, section, lang, outputs)

    # -- used by the items ----------------------------------------------------------------
    def case_points(self) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        if self.grader is not None:
            out += [(c.id, self.grader.cents[c.id] / 100) for c in self.grader.cases]
        if self.result is not None:
            out += [(c.id, c.max_cents / 100) for c in self.result.cases]
        return out

    def backstop_seconds(self) -> float:
        """Longest any one case may take before pytest-timeout calls it a harness hang."""
        if self.grader is None:
            return 60.0
        limits = self.grader.limits
        longest = max(len(case.calls) for case in self.grader.cases)
        return limits.load_timeout_s + limits.call_timeout_s * longest + 60.0

    def run(self, case_id: str) -> str | None:
        """Run a case; None when it passed, else the learner-facing failure text."""
        if case_id.startswith("gpu_result.") and self.result is not None:
            result = next(c for c in self.result.cases if c.id == case_id)
        else:
            assert self.grader is not None
            result = self.grader.run_case(case_id)
        if result.status == "passed":
            return None
        return reports.failure_text(result, self.lang)

    def close(self) -> None:
        if self.grader is not None:
            self.grader.close()

    # -- hooks ------------------------------------------------------------------------
    def build_report(self) -> ScoreReport:
        if self.grader is not None:
            report = self.grader.report()
        else:
            report = ScoreReport(cases=[], seed=None, submission=None, submission_sha256=None,
                                 battery_sha256=None, lang=self.lang)
        if self.result is not None:
            report.cases.extend(self.result.cases)
            report.gpu_result = self.result.summary
            report.result_sha256 = self.result.sha256
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.close()  # every process of the submission is gone before anything is written
        self.final = self.build_report()
        for name, path in self.outputs.items():
            try:
                reports.write_atomic(path, reports.render(name, self.final, self.lang))
            except OSError as exc:
                self.write_errors.append(f"could not write --rlsys-{name} {path}: "
                                         f"{exc.strerror or exc}")
        if self.write_errors:
            # A grade that was not recorded must not look like a normal run.
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        lines = []
        if self.grader is not None:
            g = self.grader
            lines.append(f"rlsys: submission {g.path} (sha256 {g.submission_sha256[:12]}), "
                         f"seed {g.seed}, {len(g.cases)} cases, max "
                         f"{sum(g.cents.values()) / 100:g} points")
        if self.result is not None:
            lines.append(f"rlsys: result file {self.result.summary['path']}")
        return lines

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        report = self.final or self.build_report()
        tr = terminalreporter
        printed = self.grader.captured_output() if self.grader is not None else ""
        if printed.strip():
            # Shown before the score, each line prefixed, so that nothing the submission
            # prints can pass for a grader line (the real Points line is always last).
            tr.write_sep("-", f"output of the submission (captured, first {SHOWN_OUTPUT} "
                              "characters)")
            for line in printed[:SHOWN_OUTPUT].splitlines():
                tr.write_line(f"| {line}")
        tr.write_sep("=", reports.LABELS.get(self.lang, reports.LABELS["en"])["title"])
        for line in reports.terminal_lines(report, self.lang):
            tr.write_line(line)
        if self.result is not None:
            for error in self.result.summary["errors"]:
                tr.write_line(f"result file: {error}")
            for note in self.result.summary["notes"]:
                tr.write_line(f"result file note: {note}")
        for error in self.write_errors:
            tr.write_line(f"ERROR: {error}", red=True)
        tr.write_line(reports.classroom_points_line(report))
