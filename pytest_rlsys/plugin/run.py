"""One grading run inside pytest: the shared ``GradingSession`` (grader, result file,
report, files), its cases as items, and the hooks that print the summary and write the
reports (controller process only, after the child is gone)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from pytest_rlsys import ctrl_c
from pytest_rlsys.grading.scoring import CaseResult
from pytest_rlsys.outputs import terminal
from pytest_rlsys.session import GradingSession

BATTERY_NODEID = "battery.rlsys"  # the node id of the collector that holds the cases


@dataclass(eq=False)  # registered as a plugin object, so it must stay hashable
class GradingRun(GradingSession):
    interrupted: bool = False  # the session ended on a Ctrl-C: nothing is recorded

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
            return terminal.failure_text(failed[0], self.lang)
        return terminal.group_failure_text(failed, len(case_ids), self.lang)

    # -- hooks ------------------------------------------------------------------------
    def pytest_keyboard_interrupt(self) -> None:
        ctrl_c.ending()  # the run is ending (children killed, nothing recorded): bounded

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        # The cases in the order the items will ask for them (after -k, deselection and
        # any reordering plugin): the cases after each are begun while it is judged.
        if self.grader is not None:
            prefix, known = f"{BATTERY_NODEID}::", self.grader.by_id
            order = [
                case_id
                for item in session.items
                if item.nodeid.startswith(prefix)
                for case_id in getattr(item, "case_ids", ())
                if case_id in known
            ]
            self.grader.plan(order)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Nothing graded (--collect-only), or interrupted (Ctrl-C): no score and no file,
        # as in `rlsys grade`: the cases not run are no fault of the submission's.
        self.interrupted = session.exitstatus == pytest.ExitCode.INTERRUPTED
        ctrl_c.ending()  # graded or interrupted: what is left is bounded
        if session.config.option.collectonly or self.interrupted:
            self.close()
            return
        self.finish()  # every process of the submission is gone before anything is written
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
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        width = getattr(getattr(reporter, "_tw", None), "fullwidth", terminal.WIDTH)
        return self.header_lines(config.invocation_params.dir, max(40, width))

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if config.option.collectonly:
            return
        tr = terminalreporter
        width = max(40, getattr(getattr(tr, "_tw", None), "fullwidth", terminal.WIDTH))
        lines = (
            [terminal.labels(self.lang)["interrupted"]]
            if self.interrupted
            else self.summary_lines(config.get_verbosity() > 0, width)
        )
        for line in lines:
            tr.write_line(line, red=line.startswith("ERROR: ") or self.interrupted)
