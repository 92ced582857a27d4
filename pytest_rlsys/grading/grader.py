"""Grading one submission: the battery, run through the isolation boundary.

Used by the pytest plugin (one case per test item) and by ``rlsys grade``/``batch``.
Nothing here imports pytest.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rlsys.grading import battery as battery_module
from pytest_rlsys.grading import comparison as plaindata
from pytest_rlsys.grading import isolation
from pytest_rlsys.grading.battery import FUNCTIONS, Case, build_battery, load_reference, self_check
from pytest_rlsys.grading.isolation import CallOutcome, ChildSession, Limits
from pytest_rlsys.grading.rubric import Rubric, assign_points
from pytest_rlsys.grading.scoring import (
    CaseResult,
    ScoreReport,
    as_status,
    as_visibility,
    battery_fingerprint,
)
from pytest_rlsys.messages import Msg
from pytest_rlsys.resources import solution_path

# Two timeouts in one function and its remaining cases are not tried again: a submission
# whose every function hangs is graded in seconds, not case count x timeout.
TIMEOUTS_PER_FUNCTION = 2
MAX_SUBMISSION_BYTES = 2 * 1024 * 1024


NOT_REACHED = Msg("not run (deselected or stopped early)", "未运行（被取消选择或提前停止）")


class SubmissionPathError(ValueError):
    """The submission path is unusable (missing, a directory, unreadable)."""


def random_seed() -> int:
    return secrets.randbelow(2**31)


def read_submission(path: Path) -> bytes:
    if not path.exists():
        raise SubmissionPathError(f"{path}: no such file")
    if path.is_dir():
        raise SubmissionPathError(f"{path} is a directory; give the path of your .py file")
    try:
        size = path.stat().st_size
        if size > MAX_SUBMISSION_BYTES:
            raise SubmissionPathError(
                f"{path} is {size} bytes; a submission may be at most "
                f"{MAX_SUBMISSION_BYTES // 1024 // 1024} MiB of Python source")
        return path.read_bytes()
    except OSError as exc:
        raise SubmissionPathError(f"{path}: cannot be read ({exc.strerror})") from None


@dataclass(frozen=True)
class PreparedBattery:
    cases: tuple[Case, ...]
    ungradable: frozenset[str]
    sha256: str


@functools.lru_cache(maxsize=8)
def prepare_battery(seed: int) -> PreparedBattery:
    """The cases, the reference's self-check and the battery hash for one seed.

    Cached: every submission of a batch shares the seed, so this is done once per batch
    rather than once per submission.  Cases are immutable and never mutated when run.
    """
    reference = load_reference()
    cases = tuple(build_battery(seed, reference))
    code_files = [Path(battery_module.__file__).read_bytes(),
                  Path(isolation.__file__).read_bytes(),
                  Path(plaindata.__file__).read_bytes(), solution_path().read_bytes()]
    return PreparedBattery(cases, frozenset(self_check(cases, reference)),
                           battery_fingerprint(code_files, seed))


@dataclass
class Grader:
    """Grades one submission; the maximum is fixed when this object is built."""

    path: Path
    data: bytes
    seed: int
    limits: Limits = field(default_factory=Limits)
    rubric: Rubric = field(default_factory=Rubric)
    lang: str = "en"

    def __post_init__(self) -> None:
        prepared = prepare_battery(self.seed)
        self.cases: list[Case] = list(prepared.cases)
        self.by_id = {c.id: c for c in self.cases}
        self.cents = assign_points(self.cases, self.rubric)
        self.ungradable = prepared.ungradable
        self.results: dict[str, CaseResult] = {}
        self.timeouts: dict[str, int] = {}
        self.started: float | None = None
        self.notes: list[str] = []
        self.session: ChildSession | None = None
        self.decode_error: str | None = None
        try:
            self.source = self.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.source = ""
            self.decode_error = (
                f"the file is not UTF-8 text (byte 0x{self.data[exc.start]:02x} at offset "
                f"{exc.start}); save it as UTF-8")
        if "\x00" in self.source:
            self.decode_error = "the file contains NUL bytes; is it really a Python file?"
        self.battery_sha256 = prepared.sha256
        self.submission_sha256 = hashlib.sha256(self.data).hexdigest()

    # -- running ----------------------------------------------------------------------
    def _session(self) -> ChildSession:
        if self.session is None:
            self.session = ChildSession(self.source, str(self.path), list(FUNCTIONS),
                                        self.limits)
            self.notes.extend(self.session.notes)
        return self.session

    def _skip_reason(self, case: Case) -> tuple[str, Msg] | None:
        if case.id in self.ungradable:
            return "not_run", Msg("not graded: the reference fails this case's self-check",
                                  "未评分：参考实现未通过该用例的自检")
        assert self.started is not None
        if time.monotonic() - self.started > self.limits.budget_s:
            return "not_run", Msg(
                f"not run: the submission's time budget of {self.limits.budget_s:g} s is used up",
                f"未运行：提交的总时间预算 {self.limits.budget_s:g} 秒已用完")
        for call in case.calls:
            if self.timeouts.get(call.func, 0) >= TIMEOUTS_PER_FUNCTION:
                return "timeout", Msg(
                    f"not run: {call.func}() already timed out {TIMEOUTS_PER_FUNCTION} times",
                    f"未运行：{call.func}() 已超时 {TIMEOUTS_PER_FUNCTION} 次")
        return None

    def run_case(self, case_id: str) -> CaseResult:
        """Run one case (once; later calls return the stored result)."""
        if case_id in self.results:
            return self.results[case_id]
        case = self.by_id[case_id]
        if self.started is None:
            self.started = time.monotonic()
        began = time.monotonic()
        skip = self._skip_reason(case)
        if skip is not None:
            status, msg = skip
            result = self._result(case, status, msg)
        elif self.decode_error is not None:
            outcome = CallOutcome("load_failed", message=self.decode_error)
            result = self._judge(case, [outcome for _ in case.calls], began)
        else:
            outcomes: list[CallOutcome] = []
            session = self._session()
            for call in case.calls:
                outcome = session.call(call.func, list(call.args), dict(call.kwargs))
                outcomes.append(outcome)
                if outcome.kind == "timeout":
                    self.timeouts[call.func] = self.timeouts.get(call.func, 0) + 1
                if outcome.kind not in ("returned", "raised"):
                    # Later calls of this case are not made; the check sees the failure.
                    outcomes += [outcome] * (len(case.calls) - len(outcomes))
                    break
            result = self._judge(case, outcomes, began)
        self.results[case_id] = result
        return result

    def _judge(self, case: Case, outcomes: list[CallOutcome], began: float) -> CaseResult:
        verdict = case.check(outcomes)
        result = self._result(case, verdict.status, verdict.problem, verdict.expected,
                              verdict.got, time.monotonic() - began)
        if verdict.status != "passed" and any(o.not_implemented for o in outcomes):
            result = dataclasses.replace(result, not_implemented=True)
        return result

    def _result(self, case: Case, status: str, problem: Msg | None, expected: str | None = None,
                got: str | None = None, seconds: float = 0.0) -> CaseResult:
        category = case.category.get(self.lang)
        message = problem.get(self.lang) if problem else ""
        if case.visibility == "hidden" and status not in ("passed", "not_run"):
            # Hidden cases never reveal inputs or values: keep the kind of failure only.
            message = _redact(message)
        visible = case.visibility == "visible"
        return CaseResult(
            id=case.id, section=case.section, visibility=as_visibility(case.visibility),
            max_cents=self.cents[case.id], status=as_status(status), message=message,
            category=category,
            call=" ; ".join(c.render() for c in case.calls) if visible else "",
            claim=case.claim if visible else "",
            expected=(expected or "") if visible else "",
            got=(got or "") if visible else "", seconds=round(seconds, 4))

    def run_all(self, progress: Callable[[CaseResult], None] | None = None) -> None:
        try:
            for case in self.cases:
                result = self.run_case(case.id)
                if progress:
                    progress(result)
        finally:
            self.close()

    def close(self) -> None:
        if self.session is not None:
            self.session.close()

    # -- results ------------------------------------------------------------------------
    def report(self) -> ScoreReport:
        """Every case, run or not: cases never reached score 0 and count in the maximum."""
        self.close()
        results = []
        for case in self.cases:
            result = self.results.get(case.id)
            if result is None:
                result = self._result(case, "not_run", NOT_REACHED)
            results.append(result)
        ungraded = sum(r.max_cents for r in results if r.status == "not_run")
        notes = list(dict.fromkeys(self.notes))
        if self.session is not None:
            notes.append(f"the submission ran as {self.session.run_as}")
        return ScoreReport(
            cases=results, seed=self.seed, submission=str(self.path),
            submission_sha256=self.submission_sha256, battery_sha256=self.battery_sha256,
            lang=self.lang, notes=notes, ungraded_cents=ungraded,
            elapsed_s=(time.monotonic() - self.started) if self.started else 0.0,
            load_error=self._load_error())

    def _load_error(self) -> str | None:
        """Why the file did not load (every case then failed the same way), else None."""
        if self.decode_error is not None:
            return self.decode_error
        load = self.session.load if self.session is not None else None
        return load.message if load is not None and not load.ok else None

    def captured_output(self) -> str:
        return self.session.output() if self.session else ""


def _redact(message: str) -> str:
    """Drop values from a hidden case's message: the JSON path or exception type stays."""
    if message.startswith("$"):
        return message.split(":", 1)[0] + ": wrong value"
    for marker in (":", "："):
        if marker in message and message.split(marker, 1)[0].startswith(("raised", "抛出")):
            return message.split(marker, 1)[0]
    return message


def grade_file(path: Path, seed: int | None = None, limits: Limits | None = None,
               rubric: Rubric | None = None, lang: str = "en") -> ScoreReport:
    """Grade one file end to end (the CLI and batch use this)."""
    grader = Grader(path, read_submission(path), random_seed() if seed is None else seed,
                    limits or Limits(), rubric or Rubric(), lang)
    grader.run_all()
    return grader.report()
