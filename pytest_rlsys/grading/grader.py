"""Grading one submission: the battery, run through the isolation boundary.

Used by the pytest plugin (the cases of its items) and by ``rlsys grade``/``batch``,
each through ``open_grader(request)``.
Nothing here imports pytest.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_rlsys.grading import comparison as plaindata
from pytest_rlsys.grading import identity, isolation, outcomes, private
from pytest_rlsys.grading.isolation import ChildProcess
from pytest_rlsys.grading.outcomes import CallOutcome, Limits, SentCall
from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.grading.rubric import Rubric, assign_points
from pytest_rlsys.grading.scoring import (
    MAX_MESSAGE_CHARS,
    MAX_SHOWN_CHARS,
    CaseResult,
    ScoreReport,
    as_status,
    as_visibility,
    battery_fingerprint,
    bounded,
    bounded_pair,
)
from pytest_rlsys.grading.signature import signature_notes
from pytest_rlsys.grading.submission_file import (  # also the grader's own names
    MAX_SUBMISSION_BYTES as MAX_SUBMISSION_BYTES,
)
from pytest_rlsys.grading.submission_file import SubmissionPathError as SubmissionPathError
from pytest_rlsys.grading.submission_file import read_submission as read_submission
from pytest_rlsys.grading.verdicts import HIDDEN_KIND, PATH_KINDS, Verdict
from pytest_rlsys.messages import HIDDEN_NAMED, Said, said
from pytest_rlsys.resources import FUNCTIONS, solution_path

if TYPE_CHECKING:
    from pytest_rlsys.grading.battery import Case

# Two timeouts in one function and its remaining cases are not tried again: a submission
# whose every function hangs is graded in seconds, not case count x timeout.
TIMEOUTS_PER_FUNCTION = 2
# One call that is never scored: (function, args, kwargs), plain data (``Grader.answer``).
Call = tuple[str, Sequence[Any], Mapping[str, Any]]


def random_seed() -> int:
    """The seed used when none is given (``GradingRequest.battery_seed``)."""
    return GradingRequest().battery_seed


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
    from pytest_rlsys.grading import battery  # here: the plugin starts its child first

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


# How many cases may be begun ahead of the one being judged (``Grader.plan``): their
# calls wait in the child's request pipe while it answers the earlier ones.  The
# reference's 453 cases, child started, same process, 2 shared cores: 1 ahead 132-150 ms
# (minimum), 4: 132, 16: 110-116, 64: 106; 16 keeps the replies a skipped plan leaves
# (stray frames, MAX_STRAY_BYTES) small.
AHEAD_CASES = 16


@dataclass
class _Begun:
    """A case under way: decided without running (``done``), or the outcomes of its
    calls that needed no child and the calls sent (``sent``, a prefix of its calls), to
    the child process ``proc``."""

    case: Case
    began: float
    done: CaseResult | None = None
    sent: list[CallOutcome | SentCall] = field(default_factory=list)
    proc: object = None


@dataclass
class Grader:
    """Grades one submission; the maximum is fixed when this object is built."""

    path: Path
    data: bytes
    seed: int
    limits: Limits = field(default_factory=Limits)
    rubric: Rubric = field(default_factory=Rubric)
    # Why the file was refused before reading (a link, a FIFO...): every case fails with it.
    refusal: Said | None = None
    # Nothing at the path (the refusal says why): a usage error of whoever typed it.
    missing: bool = False
    # A child already started (ChildProcess.standby) with these limits, to load into.
    standby: ChildProcess | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.limits.child_user is not None:
            private.protect_private_files()  # as root: the child must not read the reference
        self.timeouts: dict[str, int] = {}
        self.started: float | None = None
        self.child: ChildProcess | None = None
        self.results: dict[str, CaseResult] = {}
        self._begun: dict[str, _Begun] = {}  # cases begun ahead, in the order planned
        self._next: dict[str, str] = {}  # case id -> the case asked for after it (``plan``)
        self._heard_hidden = False  # whether the running child has had a hidden input
        self._stopped = False  # ``stop``: no case starts any more
        self.decode_error: Said | None = None
        self.learner_notes: list[Said] = []
        self._signature_notes: list[Said] | None = None  # ``report`` reads the source
        self._alone_done = False  # failed cases run again alone (grading.alone), once
        try:
            # As Python reads a file: a UTF-8 BOM is dropped, CRLF / CR become LF.
            self.source = self.data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
        except UnicodeDecodeError as exc:
            self.source = ""
            # The line an editor shows, not a byte offset: lines end at LF, CRLF or CR.
            line = self.data[: exc.start].replace(b"\r\n", b"\n").count(b"\n")
            line += self.data[: exc.start].replace(b"\r\n", b"\n").count(b"\r") + 1
            self.decode_error = said("not_utf8", byte=f"{self.data[exc.start]:02x}", line=line)
        if "\x00" in self.source:
            self.decode_error = said("nul_bytes")
        elif self.decode_error is None and not self.source.strip():
            # Nothing handed in: say so, as rlsys batch and the kits do, not "no function".
            self.decode_error = said("empty_file")
        if self.refusal is not None:
            self.decode_error = self.refusal
        # The private files are protected by now: only then may it load anything.
        adopted = ChildProcess.adopt(self.standby, self.source, str(self.path), self.limits)
        if adopted is not None:
            self.child = adopted
            if self.decode_error is None:  # a file that will load: it loads from now on
                adopted.begin_load()
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
        # A file refused before it was read (a link, a FIFO, too big) has no digest: the
        # digest of no bytes would make every refused file look identical to an empty one.
        self.submission_sha256: str | None = (
            None if self.refusal is not None else hashlib.sha256(self.data).hexdigest()
        )

    # -- running ----------------------------------------------------------------------
    def _child(self) -> ChildProcess:
        if self.child is None:
            self.child = ChildProcess(self.source, str(self.path), list(FUNCTIONS), self.limits)
        if self.started is not None:  # no load or call of it runs past the budget
            self.child.ends_by = self.started + self.limits.budget_s
        return self.child

    def _skip_reason(self, case: Case) -> Verdict | None:
        if self._stopped:
            return Verdict("not_run", "not_reached")
        if case.id in self.ungradable:
            return Verdict("not_run", "self_check")
        assert self.started is not None
        if time.monotonic() - self.started > self.limits.budget_s:
            return Verdict("not_run", "over_budget", limit=self.limits.budget_s)
        for call in case.calls:
            if self.timeouts.get(call.func, 0) >= TIMEOUTS_PER_FUNCTION:
                return Verdict(
                    "timeout", "too_many_timeouts", names=(call.func,), limit=TIMEOUTS_PER_FUNCTION
                )
        return None

    def plan(self, order: Sequence[str]) -> None:
        """The order the cases will be asked for in: while one is judged, the child
        already runs the calls of those after it (``AHEAD_CASES``)."""
        self._next = dict(itertools.pairwise(order))

    def run_case(self, case_id: str, following: str | None = None) -> CaseResult:
        """Run one case (once; later calls return the stored result).  A fault of the
        grader itself scores the case 0 as an error, never shows the case's data.
        ``following``: the case the caller will ask for next (as ``plan`` says)."""
        if following is not None:
            self._next[case_id] = following
        if case_id not in self.results:
            if self.started is None:
                self.started = time.monotonic()  # the budget counts from the first case
            if next(iter(self._begun), case_id) != case_id:
                self._begun.clear()  # cases begun but not asked next: their replies are skipped
            self.results[case_id] = self._run_guarded(self.by_id[case_id])
        return self.results[case_id]

    def _fault(self, case: Case, exc: Exception) -> CaseResult:
        """A fault of the grader itself on ``case``: 0 points, the error type recorded."""
        # Which exception a hidden case provoked could be the submission's choice: the
        # note names it for visible cases only.
        name = type(exc).__name__ if case.visibility == "visible" else "hidden case"
        note = said("grader_fault_note", case=case.id, exc=name)
        self.learner_notes.append(note)
        # The grader's own exception class: never the submission's.
        return self._result(case, Verdict("error", "grader_fault", exc_type=type(exc).__name__))

    def _run_guarded(self, case: Case) -> CaseResult:
        """Run ``case``; a grader fault scores it 0.  The cases planned after it are begun
        as soon as its calls are answered, so that the child works on them while this
        one is judged: the calls reach the child in the same order either way, and each
        case is decided on the same counts (a child lost loses every case begun in it,
        and those are begun again)."""
        begun = self._begun.pop(case.id, None)
        if begun is not None and begun.proc is not self._proc():
            self._begun.clear()  # begun in a child that is gone since
            begun = None
        begun = begun or self._begin(case)
        assert begun is not None  # not ahead: its first call is always sent or answered
        outcomes: list[CallOutcome] | None = None
        try:
            if begun.done is None:
                outcomes = self._collect(begun)
        except Exception as exc:
            begun = _Begun(begun.case, begun.began, done=self._fault(case, exc))
        self._begin_ahead(case)
        if begun.done is not None:
            return begun.done
        assert outcomes is not None
        try:
            return self._judge(case, outcomes, begun.began)
        except Exception as exc:
            return self._fault(case, exc)

    def _proc(self) -> object:
        return self.child.proc if self.child is not None else None

    def _begin_ahead(self, case: Case) -> None:
        """Begin the cases planned after ``case``, up to ``AHEAD_CASES``: the first one
        even when nothing is under way (its child may be started for it), the others
        only by queueing their calls behind (``ChildProcess.send_ahead``).  A hidden case
        is never begun while a visible one is under way, nor the other way round: the
        output is sealed, or the child restarted, with nothing in flight, as one case at
        a time would."""
        if self._begun and next(iter(self._begun.values())).proc is not self._proc():
            self._begun.clear()  # that child is gone: those cases are begun again
        last = case
        while len(self._begun) < AHEAD_CASES:
            following = self.by_id.get(self._next.get(last.id, ""))
            if following is None or following.id in self.results:
                return
            begun = self._begun.get(following.id)
            if begun is None:
                if self._begun and following.visibility != last.visibility:
                    return
                begun = self._begin(following, ahead=bool(self._begun))
                if begun is None:
                    return
                self._begun[following.id] = begun
            waiting = begun.done is None and isinstance(begun.sent[-1], SentCall)
            if waiting and len(begun.sent) < len(following.calls):
                return  # the rest of its calls wait for their turn: none may pass them
            last = following

    def _begin(self, case: Case, ahead: bool = False) -> _Begun | None:
        """Decide whether ``case`` runs, and send its calls: the first one as soon as
        it can be (``ahead``: only behind others, if that costs no wait, else None), the
        others behind it.  Never raises."""
        began = time.monotonic()
        try:
            skip = self._skip_reason(case)
            if skip is not None:
                return _Begun(case, began, done=self._result(case, skip), proc=self._proc())
            if self.decode_error is not None:
                outcome = CallOutcome("load_failed", said=self.decode_error)
                return _Begun(
                    case, began, done=self._judge(case, [outcome for _ in case.calls], began)
                )
            child = self._child()
            if not ahead:
                if case.visibility == "hidden":
                    # print(args) must not show a hidden input; what the submission printed
                    # as it loaded is shown all the same (loaded first, then sealed).
                    child.ensure_loaded()
                    child.seal_output()
                    self._heard_hidden = True
                elif self._heard_hidden:
                    # A visible case after hidden ones (a plugin reordered the items): a
                    # fresh child, so that its message cannot repeat what was kept of a
                    # hidden input.
                    child.restart()
                    self._heard_hidden = False
            sent: list[CallOutcome | SentCall] = []
            for index, call in enumerate(case.calls):
                args, kwargs = list(call.args), dict(call.kwargs)
                one: CallOutcome | SentCall | None
                if index == 0 and not ahead:
                    one = child.begin_call(call.func, args, kwargs)
                else:
                    one = child.send_ahead(call.func, args, kwargs)
                if one is None:
                    break
                sent.append(one)
                if isinstance(one, CallOutcome):
                    break  # answered without the child: the calls after it are not made
            if not sent:
                return None
            return _Begun(case, began, sent=sent, proc=child.proc)
        except Exception as exc:
            return _Begun(case, began, done=self._fault(case, exc), proc=self._proc())

    def _collect(self, begun: _Begun) -> list[CallOutcome]:
        """Every call's outcome: the answers to the calls sent, then the other calls in turn."""
        case, child = begun.case, self._child()
        outcomes: list[CallOutcome] = []
        for index, call in enumerate(case.calls):
            if index < len(begun.sent):
                sent = begun.sent[index]
                outcome = sent if isinstance(sent, CallOutcome) else child.end_call(sent)
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
        if any(o.said is not None and o.said.key == "budget_ended" for o in outcomes):
            verdict = Verdict("not_run", "over_budget", limit=self.limits.budget_s)
            return self._result(case, verdict, time.monotonic() - began)
        verdict = case.check(outcomes)
        result = self._result(case, verdict, time.monotonic() - began)
        if verdict.status != "passed" and any(o.not_implemented for o in outcomes):
            result = dataclasses.replace(result, not_implemented=True)
        return result

    def _result(self, case: Case, verdict: Verdict, seconds: float = 0.0) -> CaseResult:
        """The record of one case.  A hidden case's is built from the grader's closed
        vocabulary only (``HIDDEN_KIND`` and the schema path): no exception class, message,
        line, exit code, value, key of the submission's or per-case time reaches it, so
        the submission cannot choose what it says beyond which word of that list."""
        if case.visibility == "hidden":
            from pytest_rlsys.grading.battery import rule_of  # loaded by now (prepare_battery)

            hidden = HIDDEN_KIND[verdict.kind]
            path = verdict.schema_path if hidden in PATH_KINDS else ""
            return CaseResult(
                id=case.id,
                section=case.section,
                visibility="hidden",
                max_cents=self.cents[case.id],
                status=as_status(verdict.status),
                category=case.category,
                kind=hidden,
                path=path,
                names=verdict.shown_names if hidden in HIDDEN_NAMED else (),
                rule=rule_of(case, path),
                also=verdict.also_paths if hidden in PATH_KINDS else (),
            )
        shown = bounded_pair(verdict.expected or "", verdict.got or "", MAX_SHOWN_CHARS)
        return CaseResult(
            id=case.id,
            section=case.section,
            visibility=as_visibility(case.visibility),
            max_cents=self.cents[case.id],
            status=as_status(verdict.status),
            category=case.category,
            # The call and the claim are the battery's own data (the chapter's inputs),
            # shown whole so that the learner can reproduce the failure (issue 31).
            call=" ; ".join(c.render() for c in case.calls),
            claim=case.claim,
            # Cut around where they first differ, so the difference stays in view.
            expected=shown[0],
            got=shown[1],
            exc_type=bounded(verdict.exc_type, 200),
            seconds=round(seconds, 4),
            kind=verdict.kind,
            path=bounded(verdict.path, 200),
            line=verdict.line,
            note=bounded(verdict.note, MAX_MESSAGE_CHARS),
            said=verdict.said,
            diff=verdict.diff,
            names=tuple(bounded(name, 200) for name in verdict.names),
            todo=verdict.todo,
            limit=verdict.limit,
        )

    def run_all(
        self, progress: Callable[[CaseResult], None] | None = None, keep: bool = False
    ) -> None:
        """Every case in battery order (``rlsys grade``/``batch``), each next case's first
        call sent before the current one is judged.  ``keep``: the child stays for
        ``answer`` (closed on any error all the same)."""
        try:
            ids = [case.id for case in self.cases]
            self.plan(ids)
            for case_id in ids:
                result = self.run_case(case_id)
                if progress:
                    progress(result)
        except BaseException:
            self.close()
            raise
        if not keep:
            self.close()

    def answer(self, calls: Sequence[Call], budget_s: float) -> list[CallOutcome] | None:
        """Calls that are never scored (the similarity report's behaviour probes), made in
        this grader's child after its cases, under its rules: the child's limits and call
        timeout, its output sealed, no call of a function after TIMEOUTS_PER_FUNCTION
        timeouts nor past ``budget_s`` (those are ``grader_error``), ``stop`` ends them.
        None when the file did not load or gives none of the functions: nothing measured."""
        if self.decode_error is not None or self._stopped:
            return None
        child, began = self._child(), time.monotonic()
        child.ends_by = began + budget_s  # a reload within it too
        load = child.ensure_loaded()
        if not load.ok or not any(load.functions.values()):
            return None
        child.seal_output()  # what it prints is never shown: nobody reads it
        timeouts: dict[str, int] = {}
        outcomes: list[CallOutcome] = []
        for func, args, kwargs in calls:
            if self._stopped:
                return None
            spent = time.monotonic() - began > budget_s
            if spent or timeouts.get(func, 0) >= TIMEOUTS_PER_FUNCTION:
                outcomes.append(CallOutcome("grader_error"))
                continue
            outcome = child.call(func, list(args), dict(kwargs))
            if outcome.kind == "timeout":
                timeouts[func] = timeouts.get(func, 0) + 1
            outcomes.append(outcome)
        return outcomes

    def close(self) -> None:
        if self.child is not None:
            self.child.close()

    def stop(self) -> None:
        """End this grading from another thread (an interrupted ``rlsys batch``): no case
        starts from now on, and the call under way ends now, its child killed, instead
        of at its time limit.  The thread running the cases still cleans up after it."""
        self._stopped = True
        if self.child is not None:
            self.child.interrupt()

    # -- results ------------------------------------------------------------------------
    def report(self) -> ScoreReport:
        """Every case, run or not: cases never reached score 0 and count in the maximum."""
        self.close()
        if not self._alone_done and not self._stopped:
            self._alone_done = True
            from pytest_rlsys.grading.alone import keeps_state  # only where a case failed

            if (note := keeps_state(self)) is not None:
                self.learner_notes.append(note)
        results = []
        for case in self.cases:
            result = self.results.get(case.id)
            if result is None:
                result = self._result(case, Verdict("not_run", "not_reached"))
            results.append(result)
        if self._signature_notes is None:
            # A hidden case that passes an optional parameter the file's function lacks
            # fails with only "raised an exception"; this says why from the source alone
            # (read only where a case failed: parsing it cost every grade 8 ms).
            failed = self.decode_error is None and any(r.status != "passed" for r in results)
            self._signature_notes = signature_notes(self.source) if failed else []
        ungraded = sum(r.max_cents for r in results if r.status == "not_run")
        ran_as = None
        if self.child is not None:
            user = self.child.user
            who = said("fresh_uid") if user is not None and user.fresh else self.child.run_as
            ran_as = said("ran_as", user=who)
        load_error, load_exc_type = self._load_failure()
        return ScoreReport(
            cases=results,
            seed=self.seed,
            submission=str(self.path),
            submission_sha256=self.submission_sha256,
            battery_sha256=self.battery_sha256,
            rubric_sha256=self.rubric.sha256,
            notes=list(dict.fromkeys(self.child.notes)) if self.child else [],
            ran_as=ran_as,
            learner_notes=[*self._signature_notes, *self.learner_notes],
            ungraded_cents=ungraded,
            elapsed_s=(time.monotonic() - self.started) if self.started else 0.0,
            load_error=None if load_error is None else load_error.text("en"),
            load_said=load_error,
            load_exc_type=load_exc_type,
            fence=self.child.fence.record() if self.child and self.child.fence else None,
        )

    def _load_failure(self) -> tuple[Said | None, str]:
        """Why the file did not load (every case then failed the same way), else None;
        and the exception its import raised, if it raised one."""
        if self.decode_error is not None:
            return self.decode_error, ""
        load = self.child.load if self.child is not None else None
        if load is not None and not load.ok:
            return load.said or said("as_is", text=load.message), load.exc_type
        return None, ""

    def captured_output(self, lang: str = "en") -> str:
        return self.child.output(lang) if self.child else ""


def open_grader(request: GradingRequest, standby: ChildProcess | None = None) -> Grader:
    """The only way to open a Grader: for ``request.submission``, with the request's seed,
    limits and rubric (the language is the outputs' concern).  A file that cannot be graded
    gives a Grader whose every case fails with the reason, so it is graded 0 and reported
    like any other: a refused one (a link, a FIFO, too big), or nothing at the path (missing,
    a directory: ``missing`` holds the reason, a usage error of whoever typed the path).
    ``standby``: a child already started (``ChildProcess.on_standby``) to load into."""
    path = request.submission
    if path is None:
        raise ValueError("a grading request without a submission opens no grader")
    refusal: Said | None = None
    missing = False
    try:
        data = read_submission(path)
    except SubmissionPathError as exc:
        data, refusal, missing = b"", exc.said, exc.usage
        if missing and standby is not None:
            standby.close()  # nothing will load into it
            standby = None
    return Grader(
        path,
        data,
        request.battery_seed,
        Limits() if missing else request.limits,
        request.rubric,
        refusal=refusal,
        standby=standby,
        missing=missing,
    )


def grade_file(
    path: Path,
    seed: int | None = None,
    limits: Limits | None = None,
    rubric: Rubric | None = None,
) -> ScoreReport:
    """Grade one file end to end in the foreground (tests and benchmarks use this)."""
    request = GradingRequest(
        submission=path,
        seed=seed,
        limits=limits or Limits(),
        rubric=rubric or Rubric(),
    )
    grader = open_grader(request)
    grader.run_all()
    return grader.report()
