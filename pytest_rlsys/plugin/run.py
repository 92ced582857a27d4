"""One grading run inside pytest: the Grader, the optional result file, and the hooks that
print the table and write the reports (controller process only, after the child is gone)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading.grader import Grader, SubmissionPathError, open_grader, zero_report
from pytest_rlsys.grading.isolation import ChildProcess
from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.grading.rubric import Rubric
from pytest_rlsys.grading.scoring import CaseResult, RenderOptions, ScoreReport
from pytest_rlsys.messages import Msg
from pytest_rlsys.outputs import reports
from pytest_rlsys.outputs.text import clean
from pytest_rlsys.settings import by_name

BATTERY_NODEID = "battery.rlsys"  # the node id of the collector that holds the cases
SHOWN_OUTPUT = 2000
SHOWN_LINES = 20  # without -v


@dataclass
class ResultSection:
    """A graded result file, as cases of section gpu_result."""

    cases: list[CaseResult]
    summary: dict[str, Any]
    sha256: str | None


def grade_result(path: Path, rubric: Rubric) -> ResultSection:
    from pytest_rlsys.resultfile.grade import grade_document, not_gradable
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
            status="passed"
            if c.status == "passed"
            else "failed"
            if c.status == "failed"
            else "error",
            note=c.message,  # the check's own account (English, as result files are)
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


def write_outputs(
    outputs: Mapping[str, Path], report: ScoreReport, options: RenderOptions
) -> list[str]:
    """Write every requested output; the problems, one line each (never raises)."""
    errors: list[str] = []
    for name, path in outputs.items():
        try:
            reports.write_atomic(path, reports.render(name, report, options.lang, options))
        except OSError as exc:
            errors.append(f"could not write --rlsys-{name} {path}: {exc.strerror or exc}")
        except Exception as exc:  # a renderer fault must not cost the other outputs
            errors.append(f"could not render --rlsys-{name}: {type(exc).__name__}: {exc}")
    return errors


@dataclass(eq=False)  # registered as a plugin object, so it must stay hashable
class GradingRun:
    grader: Grader | None
    result: ResultSection | None
    request: GradingRequest
    final: ScoreReport | None = None
    write_errors: list[str] = field(default_factory=list)
    cleanup_errors: list[str] = field(default_factory=list)  # shown; the grade still stands

    @property
    def lang(self) -> str:
        return self.request.lang

    @classmethod
    def open(cls, request: GradingRequest, standby: ChildProcess | None = None) -> GradingRun:
        """Open the request's grader and grade its result file.  A submission with
        nothing at its path still gets its platform files (score 0 and the reason)
        before the usage error (ValueError) is raised."""
        grader = None
        if request.submission is not None:
            try:
                grader = open_grader(request, standby)
            except SubmissionPathError as exc:
                message = f"{by_name('submission').pytest_flag}: {exc}"
                write_outputs(request.outputs, zero_report(request, str(exc)), request.render)
                raise ValueError(message) from None
        try:
            section = grade_result(request.result, request.rubric) if request.result else None
        except BaseException:
            if grader is not None:
                grader.close()  # its child may already be loading the submission
            raise
        return cls(grader, section, request)

    # -- used by the items ----------------------------------------------------------------
    def items(self) -> list[tuple[str, tuple[str, ...], float]]:
        """The pytest items: (name, case ids, points).  Each visible case and each check of
        a result file is an item of its own; the hidden cases of a TODO are one item,
        ``todoN.hidden``: they are graded and reported case by case all the same (score
        files, the summary's categories), but a learner can act on them only as a group,
        and pytest's own cost per item would be most of the run (benchmarks/)."""
        out: list[tuple[str, tuple[str, ...], float]] = []
        if self.grader is not None:
            cents = self.grader.cents
            members: dict[str, list[str]] = {}  # item name -> case ids, in battery order
            for case in self.grader.cases:
                name = f"{case.section}.hidden" if case.visibility == "hidden" else case.id
                members.setdefault(name, []).append(case.id)
            out += [
                (name, tuple(ids), sum(cents[i] for i in ids) / 100)
                for name, ids in members.items()
            ]
        if self.result is not None:
            out += [(c.id, (c.id,), c.max_cents / 100) for c in self.result.cases]
        return out

    def is_hidden(self, case_ids: tuple[str, ...]) -> bool:
        by_id = self.grader.by_id if self.grader is not None else {}
        return any(i in by_id and by_id[i].visibility == "hidden" for i in case_ids)

    def _result(self, case_id: str) -> CaseResult:
        if case_id.startswith("gpu_result.") and self.result is not None:
            return next(c for c in self.result.cases if c.id == case_id)
        assert self.grader is not None
        return self.grader.run_case(case_id)

    def run(self, case_ids: tuple[str, ...]) -> str | None:
        """Run an item's cases; None when all passed, else the learner-facing text."""
        failed = [r for r in map(self._result, case_ids) if r.status != "passed"]
        if not failed:
            return None
        if len(case_ids) == 1:
            return reports.failure_text(failed[0], self.lang)
        return reports.group_failure_text(failed, len(case_ids), self.lang)

    def close(self) -> None:
        if self.grader is not None:
            try:
                self.grader.close()
            except Exception as exc:  # cleanup never stops the reports from being written
                self.cleanup_errors.append(f"cleanup after the submission failed: {exc!r}")

    # -- hooks ------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        # The cases in the order the items will ask for them (after -k, deselection and
        # any reordering plugin), so the background thread runs exactly those.
        if self.grader is not None:
            prefix = f"{BATTERY_NODEID}::"
            self.grader.plan(
                [
                    case_id
                    for item in session.items
                    if item.nodeid.startswith(prefix)
                    for case_id in getattr(item, "case_ids", ())
                ]
            )

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
            )
        if self.result is not None:
            report.cases.extend(self.result.cases)
            report.gpu_result = self.result.summary
            report.result_sha256 = self.result.sha256
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.close()  # every process of the submission is gone before anything is written
        self.final = self.build_report()
        self.write_errors += write_outputs(self.request.outputs, self.final, self.request.render)
        if self.write_errors:
            # A grade that was not recorded must not look like a normal run.
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Short by default: our summary lists each failure once, so pytest's FAILURES
        # section and short summary would only repeat it.  -v (or an explicit --tb / -r)
        # brings pytest's detail back.
        config = session.config
        if config.get_verbosity() > 0:
            return
        if config.option.tbstyle == "auto":
            config.option.tbstyle = "no"
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and config.option.reportchars in ("fE", ""):
            reporter.reportchars = ""

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        lines = []
        if self.grader is not None:
            g = self.grader
            shown = os.path.relpath(g.path, config.invocation_params.dir)
            lines.append(f"rlsys: submission {g.path if shown.startswith('..') else shown}")
            lines.append(
                f"rlsys: seed {g.seed}, {len(g.cases)} cases, max "
                f"{sum(g.cents.values()) / 100:g} points, sha256 "
                f"{g.submission_sha256[:12]}"
            )
        if self.result is not None:
            lines.append(f"rlsys: result file {self.result.summary['path']}")
        # A learner may name the file (or the result file) with escapes: shown escaped.
        return [clean(line, newlines=False) for line in lines]

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        report = self.final or self.build_report()
        tr = terminalreporter
        verbose = config.get_verbosity() > 0
        text = reports.LABELS.get(self.lang, reports.LABELS["en"])

        def fit(line: str) -> str:
            line = clean(line, newlines=False)  # result-file text and paths are not ours
            return line if verbose else reports.clip(line)

        printed = self.grader.captured_output() if self.grader is not None else ""
        if printed.strip():
            # Shown before the score, each line prefixed, so that nothing the submission
            # prints can pass for a grader line (the real Points line is always last).
            width = max(40, getattr(getattr(tr, "_tw", None), "fullwidth", reports.WIDTH))
            # In display columns (write_sep counts characters: a CJK title ran 17 over).
            tr.write_line(reports.rule("-", text["output"].format(n=SHOWN_OUTPUT), width))
            shown = printed[:SHOWN_OUTPUT].splitlines()
            for line in shown if verbose else shown[:SHOWN_LINES]:
                # Every piece of a long line keeps the fence, even on an 80-column log.
                for piece in reports.wrap(clean(line, newlines=False), "| ", reports.WIDTH - 2):
                    tr.write_line(piece)
            if not verbose and len(shown) > SHOWN_LINES:
                tr.write_line(f"| ... {text['more']}")
        width = max(40, getattr(getattr(tr, "_tw", None), "fullwidth", reports.WIDTH))
        tr.write_line(reports.rule("=", text["title"], width))  # display columns, for zh
        for line in reports.terminal_summary(report, self.lang, verbose, width):
            tr.write_line(line)
        if self.result is not None:
            for error in self.result.summary["errors"]:
                tr.write_line(fit(f"{text['result_error']}: {error}"))
            for note in self.result.summary["notes"]:
                tr.write_line(fit(f"{text['result_note']}: {note}"))
        for error in self.write_errors:
            tr.write_line(clean(f"ERROR: {error}", newlines=False), red=True)
        for error in self.cleanup_errors:
            tr.write_line(f"warning: {clean(error, newlines=False)}")
        tr.write_line(reports.classroom_points_line(report))
