"""Grading one submission: the battery, run through the isolation boundary.

Used by the pytest plugin (one case per test item) and by ``rlsys grade``/``batch``.
Nothing here imports pytest.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import hashlib
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_rlsys.grading import comparison as plaindata
from pytest_rlsys.grading import identity, isolation, outcomes, private
from pytest_rlsys.grading.ahead import RunAhead
from pytest_rlsys.grading.isolation import ChildProcess
from pytest_rlsys.grading.outcomes import CallOutcome, Limits, SentCall
from pytest_rlsys.grading.rubric import Rubric, assign_points
from pytest_rlsys.grading.scoring import (
    CaseResult,
    ScoreReport,
    as_status,
    as_visibility,
    battery_fingerprint,
)
from pytest_rlsys.messages import WRONG_VALUE, Msg
from pytest_rlsys.resources import FUNCTIONS, solution_path
from pytest_rlsys.safe_read import UnsafeFile, read_regular_file

if TYPE_CHECKING:
    from pytest_rlsys.grading.battery import Case

# Two timeouts in one function and its remaining cases are not tried again: a submission
# whose every function hangs is graded in seconds, not case count x timeout.
TIMEOUTS_PER_FUNCTION = 2
MAX_SUBMISSION_BYTES = 2 * 1024 * 1024


NOT_REACHED = Msg("not run (deselected or stopped early)", "未运行（被取消选择或提前停止）")


class SubmissionPathError(ValueError):
    """The submission cannot be graded from this path.

    ``usage`` is True when there is nothing to grade at all (no such path, a directory):
    a usage error of whoever typed the path.  Otherwise the file was refused (a symbolic
    link, a FIFO or device, too big, unreadable): that is graded as 0 with the reason."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


def random_seed() -> int:
    """The seed used when none is given (callers' name for it): fixed by the battery
    version, not random, so the same file graded twice gets the same report."""
    from pytest_rlsys.grading import battery

    return battery.default_seed()


def _linked_folder(path: Path) -> str | None:
    """The first folder on ``path`` (as given) that is a symbolic link, if any."""
    current = Path()
    for part in path.parts[:-1]:
        current = current / part
        if str(current) == current.anchor:
            continue
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return str(current)
        except OSError:
            return None
    return None


def read_submission(path: Path) -> bytes:
    """Read a submission as the grader (often root) without trusting its folder: only a
    regular file, reached through no symbolic link (neither the file nor a folder on its
    path), never blocking, at most ``MAX_SUBMISSION_BYTES`` (``safe_read``)."""
    linked = _linked_folder(path)
    if linked is not None:
        raise SubmissionPathError(
            f"{path}: the folder {linked} is a symbolic link; the grader follows no links: "
            "give the real path"
        )
    try:
        return read_regular_file(path, MAX_SUBMISSION_BYTES)
    except UnsafeFile as exc:
        mib = MAX_SUBMISSION_BYTES // 1024 // 1024
        message, usage = {
            "missing": (f"{path}: no such file", True),
            "directory": (f"{path} is a directory; give the path of your .py file", True),
            "link": (
                f"{path} is a symbolic link; the grader reads only a regular file: "
                "submit the .py file itself",
                False,
            ),
            "special": (
                f"{path} is not a regular file (a FIFO, device or socket); "
                "submit the .py file itself",
                False,
            ),
            "too_big": (
                f"{path} is over {mib} MiB; a submission may be at most {mib} MiB of Python source",
                False,
            ),
            "bad_name": (f"{path}: not a usable file name", True),
            "unreadable": (f"{path}: cannot be read ({exc.detail})", False),
        }[exc.kind]
        raise SubmissionPathError(message, usage=usage) from None


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
    # Imported here: a background grader starts the submission's process first (run_ahead).
    from pytest_rlsys.grading import battery

    reference = battery.load_reference()
    reference_outcomes: dict[int, tuple[battery.Call, CallOutcome]] = {}
    cases = tuple(battery.build_battery(seed, reference, reference_outcomes))
    code_files = [
        *(path.read_bytes() for path in battery.package_files()),
        Path(isolation.__file__).read_bytes(),
        Path(identity.__file__).read_bytes(),
        Path(outcomes.__file__).read_bytes(),
        Path(plaindata.__file__).read_bytes(),
        solution_path().read_bytes(),
    ]
    return PreparedBattery(
        cases,
        frozenset(battery.self_check(cases, reference, reference_outcomes)),
        battery_fingerprint(code_files, seed),
    )


@dataclass
class _Begun:
    """A case under way: decided without running (``done``) or its first call sent."""

    case: Case
    began: float
    done: CaseResult | None = None
    first: CallOutcome | SentCall | None = None


@dataclass
class Grader:
    """Grades one submission; the maximum is fixed when this object is built."""

    path: Path
    data: bytes
    seed: int
    limits: Limits = field(default_factory=Limits)
    rubric: Rubric = field(default_factory=Rubric)
    lang: str = "en"
    # Why the file was refused before reading (a link, a FIFO...): every case fails with it.
    refusal: str | None = None
    # Load the submission at once and run the cases in a background thread (run_ahead).
    background: bool = False
    # A child already started (ChildProcess.standby) with these limits, to load into.
    standby: ChildProcess | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.limits.child_user is not None:
            private.protect_private_files()  # as root: the child must not read the reference
        self.results: dict[str, CaseResult] = {}
        self.timeouts: dict[str, int] = {}
        self.started: float | None = None
        self.notes: list[str] = []
        self.child: ChildProcess | None = None
        self.ahead: RunAhead[CaseResult] | None = None
        self._begun: dict[str, _Begun] = {}  # the next case, its first call already sent
        self.decode_error: str | None = None
        try:
            # As Python reads a file: a UTF-8 BOM is dropped, CRLF / CR become LF.
            self.source = self.data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
        except UnicodeDecodeError as exc:
            self.source = ""
            self.decode_error = (
                f"the file is not UTF-8 text (byte 0x{self.data[exc.start]:02x} at offset "
                f"{exc.start}); save it as UTF-8"
            )
        if "\x00" in self.source:
            self.decode_error = "the file contains NUL bytes; is it really a Python file?"
        if self.refusal is not None:
            self.decode_error = self.refusal
        if self.standby is not None:
            if self.standby.limits == self.limits:
                # The private files are protected by now: only then may it load anything.
                self.standby.source, self.standby.filename = self.source, str(self.path)
                self.child = self.standby
            else:
                self.standby.close()
        if self.background:
            self.run_ahead()  # the child starts while the battery is prepared
        try:
            prepared = prepare_battery(self.seed)
            self.cases: list[Case] = list(prepared.cases)
            self.by_id = {c.id: c for c in self.cases}
            self.cents = assign_points(self.cases, self.rubric)
        except BaseException:
            self.close()  # no child may outlive a grader that was never made
            raise
        self.ungradable = prepared.ungradable
        self.battery_sha256 = prepared.sha256
        self.submission_sha256 = hashlib.sha256(self.data).hexdigest()
        if self.ahead is not None:
            self.ahead.expect([case.id for case in self.cases])  # the items' usual order

    # -- running ----------------------------------------------------------------------
    def _child(self) -> ChildProcess:
        if self.child is None:
            self.child = ChildProcess(self.source, str(self.path), list(FUNCTIONS), self.limits)
        return self.child

    def _skip_reason(self, case: Case) -> tuple[str, Msg] | None:
        if case.id in self.ungradable:
            return "not_run", Msg(
                "not graded: the reference fails this case's self-check",
                "未评分：参考实现未通过该用例的自检",
            )
        assert self.started is not None
        if time.monotonic() - self.started > self.limits.budget_s:
            return "not_run", Msg(
                f"not run: the submission's time budget of {self.limits.budget_s:g} s is used up",
                f"未运行：提交的总时间预算 {self.limits.budget_s:g} 秒已用完",
            )
        for call in case.calls:
            if self.timeouts.get(call.func, 0) >= TIMEOUTS_PER_FUNCTION:
                return "timeout", Msg(
                    f"not run: {call.func}() already timed out {TIMEOUTS_PER_FUNCTION} times",
                    f"未运行：{call.func}() 已超时 {TIMEOUTS_PER_FUNCTION} 次",
                )
        return None

    def run_ahead(self) -> None:
        """Load the submission now and run the cases in a background thread, in the
        battery's order until ``plan`` names the order they will be asked in
        (``grading.ahead``): the pytest items then only collect the results.  The grade
        is the same as running each case when asked."""
        if self.ahead is not None or self.results or self.decode_error is not None:
            return
        child = self._child()  # made here, so that close() can always stop it
        self.started = time.monotonic()  # the budget counts from the load, as in run_case
        self.ahead = RunAhead(child.ensure_loaded, self._run_ahead_case, self._undo_ahead)

    def plan(self, order: Sequence[str]) -> None:
        """The cases the caller will ask for, in the order it will ask."""
        if self.ahead is not None:
            self.ahead.plan([case_id for case_id in order if case_id in self.by_id])

    def _undo_ahead(self) -> None:
        """Back to where no case ran (the background thread guessed the order wrong): a
        fresh child, whose load prints anew, and no timeouts counted."""
        self.timeouts.clear()
        self._begun.clear()
        if self.child is not None:
            self.child.restart()

    def _run_ahead_case(self, case_id: str, following: str | None) -> CaseResult:
        # self.by_id exists by now: the worker runs cases only after __post_init__.
        return self._run_guarded(
            self.by_id[case_id], self.by_id[following] if following is not None else None
        )

    def backstop_seconds(self) -> float:
        """How long a wait for one case may last before it means the grader hangs: the
        load and every call of the longest case at their limits, with a minute to spare
        (the background thread may be loading the submission first)."""
        longest = max((len(case.calls) for case in self.cases), default=1)
        return self.limits.load_timeout_s + self.limits.call_timeout_s * longest + 60.0

    def _stop_ahead(self, kill: bool) -> None:
        ahead, self.ahead = self.ahead, None
        if ahead is not None:
            child = self.child
            interrupt = child.stop if kill and child is not None else None
            limits = self.limits
            ahead.stop(interrupt, timeout=limits.load_timeout_s + limits.call_timeout_s + 10)

    def run_case(self, case_id: str, following: str | None = None) -> CaseResult:
        """Run one case (once; later calls return the stored result).  A fault of the
        grader itself scores the case 0 as an error, never shows the case's data.
        ``following``: the case the caller will ask for next (see ``_run_guarded``)."""
        if case_id in self.results:
            return self.results[case_id]
        case = self.by_id[case_id]
        if self.ahead is not None:
            try:
                ahead = self.ahead.take(case_id, self.backstop_seconds())
            except TimeoutError:
                # A hang of the grader itself (the submission's limits are far below):
                # stop the thread and its child; the remaining cases end at once.
                self.notes.append(f"internal grader error: no result for case {case_id}")
                self._stop_ahead(kill=True)
                raise
            if ahead is not None:
                self.results[case_id] = ahead
                return ahead
            guessed = not self.ahead.planned
            self._stop_ahead(kill=False)  # from here on this thread drives the child
            if guessed:
                self._undo_ahead()  # all it ran was a guess: start clean
            else:
                self._begun.clear()  # a call sent for a case not asked: its reply is skipped
        if self.started is None:
            self.started = time.monotonic()
        result = self._run_guarded(case, self.by_id[following] if following else None)
        self.results[case_id] = result
        return result

    def _fault(self, case: Case, exc: Exception) -> CaseResult:
        """A fault of the grader itself on ``case``: 0 points, the error type recorded."""
        self.notes.append(f"internal grader error in case {case.id}: {type(exc).__name__}")
        return self._result(
            case,
            "error",
            Msg(
                f"the grader failed while checking this case ({type(exc).__name__}); "
                "it scores 0 and the error is recorded for the instructor",
                f"评分器在检查此用例时出错（{type(exc).__name__}）；此用例记 0 分，"
                "错误已记录给教师",
            ),
        )

    def _run_guarded(self, case: Case, following: Case | None = None) -> CaseResult:
        """Run ``case``; a grader fault scores it 0.  ``following``: the case that will run
        next, whose first call is sent as soon as this case's calls are answered, so that
        the child works on it while this one is judged (the calls reach the child in the
        same order either way, and the next case is decided on the same counts)."""
        begun = self._begun.pop(case.id, None) or self._begin(case)
        outcomes: list[CallOutcome] | None = None
        try:
            if begun.done is None:
                outcomes = self._collect(begun)
        except Exception as exc:
            begun = _Begun(begun.case, begun.began, done=self._fault(case, exc))
        if following is not None and following.id not in self._begun:
            self._begun[following.id] = self._begin(following)
        if begun.done is not None:
            return begun.done
        assert outcomes is not None
        try:
            if case.visibility == "hidden":
                outcomes = [hidden_outcome(o) for o in outcomes]
            return self._judge(case, outcomes, begun.began)
        except Exception as exc:
            return self._fault(case, exc)

    def _begin(self, case: Case) -> _Begun:
        """Decide whether ``case`` runs, and send its first call.  Never raises."""
        began = time.monotonic()
        try:
            skip = self._skip_reason(case)
            if skip is not None:
                status, msg = skip
                return _Begun(case, began, done=self._result(case, status, msg))
            if self.decode_error is not None:
                outcome = CallOutcome("load_failed", message=self.decode_error)
                return _Begun(
                    case, began, done=self._judge(case, [outcome for _ in case.calls], began)
                )
            call = case.calls[0]
            first = self._child().begin_call(call.func, list(call.args), dict(call.kwargs))
            return _Begun(case, began, first=first)
        except Exception as exc:
            return _Begun(case, began, done=self._fault(case, exc))

    def _collect(self, begun: _Begun) -> list[CallOutcome]:
        """Every call's outcome: the first one's answer, then the other calls in turn."""
        case, child = begun.case, self._child()
        outcomes: list[CallOutcome] = []
        for index, call in enumerate(case.calls):
            if index == 0 and begun.first is not None:
                first = begun.first
                outcome = first if isinstance(first, CallOutcome) else child.end_call(first)
            else:
                outcome = child.call(call.func, list(call.args), dict(call.kwargs))
            outcomes.append(outcome)
            if outcome.kind == "timeout":
                self.timeouts[call.func] = self.timeouts.get(call.func, 0) + 1
            if outcome.kind not in ("returned", "raised"):
                # Later calls of this case are not made; the check sees the failure.
                outcomes += [outcome] * (len(case.calls) - len(outcomes))
                break
        return outcomes

    def _judge(self, case: Case, outcomes: list[CallOutcome], began: float) -> CaseResult:
        verdict = case.check(outcomes)
        result = self._result(
            case,
            verdict.status,
            verdict.problem,
            verdict.expected,
            verdict.got,
            time.monotonic() - began,
        )
        if verdict.status != "passed" and any(o.not_implemented for o in outcomes):
            result = dataclasses.replace(result, not_implemented=True)
        return result

    def _result(
        self,
        case: Case,
        status: str,
        problem: Msg | None,
        expected: str | None = None,
        got: str | None = None,
        seconds: float = 0.0,
    ) -> CaseResult:
        category = case.category.get(self.lang)
        message = problem.get(self.lang) if problem else ""
        if case.visibility == "hidden" and status not in ("passed", "not_run"):
            # Hidden cases never reveal inputs or values: keep the kind of failure only.
            message = _redact(message, self.lang)
        visible = case.visibility == "visible"
        return CaseResult(
            id=case.id,
            section=case.section,
            visibility=as_visibility(case.visibility),
            max_cents=self.cents[case.id],
            status=as_status(status),
            message=message,
            category=category,
            call=" ; ".join(c.render() for c in case.calls) if visible else "",
            claim=case.claim if visible else "",
            expected=(expected or "") if visible else "",
            got=(got or "") if visible else "",
            seconds=round(seconds, 4),
        )

    def run_all(self, progress: Callable[[CaseResult], None] | None = None) -> None:
        """Every case in battery order (``rlsys grade``/``batch``), each next case's first
        call sent before the current one is judged, as the background thread does."""
        try:
            ids = [case.id for case in self.cases]
            for case_id, following in zip(ids, [*ids[1:], None], strict=True):
                result = self.run_case(case_id, following)
                if progress:
                    progress(result)
        finally:
            self.close()

    def close(self) -> None:
        self._stop_ahead(kill=True)
        if self.child is not None:
            self.child.close()

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
        notes = list(dict.fromkeys(self.notes + (self.child.notes if self.child else [])))
        if self.child is not None:
            notes.append(f"the submission ran as {self.child.run_as}")
        return ScoreReport(
            cases=results,
            seed=self.seed,
            submission=str(self.path),
            submission_sha256=self.submission_sha256,
            battery_sha256=self.battery_sha256,
            lang=self.lang,
            notes=notes,
            ungraded_cents=ungraded,
            elapsed_s=(time.monotonic() - self.started) if self.started else 0.0,
            load_error=self._load_error(),
        )

    def _load_error(self) -> str | None:
        """Why the file did not load (every case then failed the same way), else None."""
        if self.decode_error is not None:
            return self.decode_error
        load = self.child.load if self.child is not None else None
        return load.message if load is not None and not load.ok else None

    def captured_output(self) -> str:
        return self.child.output() if self.child else ""


# Exception names a hidden-case message may show: the builtin ones.  Any other class name
# is the submission's own text (it could spell out the call's arguments), so it is shown
# only as "an exception of the submission's own class".
BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
)
OWN_EXCEPTION = "an exception of the submission's own class"
OWN_OBJECT = "object of the submission's own class"


def _hide_types(value: object) -> object:
    """``value`` with every non-plain stand-in's type name replaced by a fixed word."""
    if type(value) is dict:
        if plaindata.NONPLAIN_MARK in value:
            return {plaindata.NONPLAIN_MARK: OWN_OBJECT}
        return {k: _hide_types(v) for k, v in value.items()}
    if type(value) is list:
        return [_hide_types(v) for v in value]
    return value


# A hidden case's outcome keeps no text the submission chose: its exception message, the
# exit code or signal it ended with (sys.exit(N) for input N), the bytes of a forged reply.
_HIDDEN_MESSAGES = {
    "raised": "",
    "crashed": "the submission's process ended during the call (it exited or was killed)",
    "protocol": "the grader could not read the answer (a garbled reply)",
}


def hidden_outcome(outcome: CallOutcome) -> CallOutcome:
    """What a hidden case's check may see of an outcome: no text of the submission's (its
    exception message, its class names), so no message can carry the hidden inputs out."""
    exc_type = (
        outcome.exc_type
        if outcome.exc_type in BUILTIN_EXCEPTIONS
        else (OWN_EXCEPTION if outcome.exc_type else "")
    )
    return dataclasses.replace(
        outcome,
        # The line is the submission's choice too: a file can raise on line N for input N.
        line=None,
        exc_type=exc_type,
        message=_HIDDEN_MESSAGES.get(outcome.kind, outcome.message),
        value=_hide_types(outcome.value),
    )


def _redact(message: str, lang: str = "en") -> str:
    """Drop values from a hidden case's message: the JSON path or exception type stays."""
    if message.startswith("$"):
        return message.split(":", 1)[0] + ": " + WRONG_VALUE.get(lang)
    for marker in (":", "："):
        if marker in message and message.split(marker, 1)[0].startswith(("raised", "抛出")):
            return message.split(marker, 1)[0]
    return message


def open_grader(
    path: Path,
    seed: int | None = None,
    limits: Limits | None = None,
    rubric: Rubric | None = None,
    lang: str = "en",
    background: bool = False,
    standby: ChildProcess | None = None,
) -> Grader:
    """A Grader for ``path``.  A refused file (a link, a FIFO, too big) gives a Grader whose
    every case fails with the reason, so it is graded 0 and reported like any other; only
    a path with nothing to grade (missing, a directory) raises SubmissionPathError.
    ``background``: see ``Grader.run_ahead``; ``standby``: a child to load into."""
    refusal: str | None = None
    try:
        data = read_submission(path)
    except SubmissionPathError as exc:
        if exc.usage:
            raise
        data, refusal = b"", str(exc)
    return Grader(
        path,
        data,
        random_seed() if seed is None else seed,
        limits or Limits(),
        rubric or Rubric(),
        lang,
        refusal=refusal,
        background=background,
        standby=standby,
    )


def grade_file(
    path: Path,
    seed: int | None = None,
    limits: Limits | None = None,
    rubric: Rubric | None = None,
    lang: str = "en",
) -> ScoreReport:
    """Grade one file end to end (the CLI and batch use this)."""
    grader = open_grader(path, seed, limits, rubric, lang)
    grader.run_all()
    return grader.report()


def zero_report(
    path: Path, reason: str, seed: int | None = None, rubric: Rubric | None = None, lang: str = "en"
) -> ScoreReport:
    """The report of a submission that could not be graded at all: every case 0, with the
    reason, so that platforms still show a grade and an explanation."""
    grader = Grader(
        path,
        b"",
        random_seed() if seed is None else seed,
        Limits(),
        rubric or Rubric(),
        lang,
        refusal=reason,
    )
    grader.run_all()
    report = grader.report()
    report.submission_sha256 = None
    return report
