"""Grade a pt-verl-closure result file: each claimed check against its evidence.

A file that cannot be read, parsed or validated is not gradable: every check scores 0
with status ``error``. A valid file is graded check by check with ``closure_checks``: a
check scores when the evidence passes it *and* the file claims exactly that (``Finding``
below names every other case). The maximum never depends on the file: 8 ×
points_per_check. Every rule the evidence must satisfy belongs to one of the eight checks
(see docs/result-files.md), so a broken rule costs that check's points and never changes
the maximum. With ``artefacts``, what the run's raw artefacts contradict (re-hashed
adapters, the raw sampler log) counts against the check it bears on, the same way; an
artefact that is absent or unreadable is missing evidence: the check it bears on is
unverified (its points from the file's own evidence kept), never contradicted.

A file holding an integer too large for a float is refused as not gradable
(the checks compute in floats; such a number is no measurement).
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast, get_args

from pytest_rlsys.resultfile import checks as closure_checks
from pytest_rlsys.resultfile.checks.cards import unknown_card_note
from pytest_rlsys.resultfile.checks.configuration import judge_label
from pytest_rlsys.resultfile.checks.evidence import section
from pytest_rlsys.resultfile.loading import (
    DEFAULT_MAX_BYTES,
    LoadedResult,
    Problem,
    load_result_file,
)

# What a grade says about the file as a whole (``ResultGrade.verdict``):
#   passed        every check passes on the evidence and the file claims so
#   contradicted  the evidence contradicts at least one claim (or could not be checked)
#   unverified    nothing is contradicted, but an artefact a claim needs is absent or
#                 unreadable (--artefacts): missing evidence, not a refutation
#   failed        an honest record of a run that failed checks: every claim matches
#   not_gradable  the file could not be read, parsed or validated
VERDICTS: tuple[str, ...] = ("passed", "contradicted", "unverified", "failed", "not_gradable")

SECTION = "gpu_result"

# What the evidence says of one check's claim (``CheckOutcome.finding``):
#   confirmed       claimed passed, and the evidence passes it
#   false_claim     claimed passed, but the evidence refutes it          -> contradicted
#   wrong_failure   claimed failed, but the evidence passes it           -> contradicted
#   honest_failure  claimed failed, and the evidence agrees (or the run  -> failed
#                   is marked failed: a pessimistic claim on partial evidence hides nothing)
#   false_record    the run's status or failure record is refuted by     -> contradicted
#                   its evidence (update_and_sync carries it)
#   not_derivable   the grader could not re-derive the check (a bug)     -> contradicted
#   unverified      claimed passed, the file's evidence passes it, but   -> unverified
#                   an artefact it needs is absent or unreadable
#   not_gradable    the file could not be read, parsed or validated      -> not_gradable
Finding = Literal[
    "confirmed",
    "false_claim",
    "wrong_failure",
    "honest_failure",
    "false_record",
    "not_derivable",
    "unverified",
    "not_gradable",
]
FINDINGS: tuple[Finding, ...] = get_args(Finding)
CONTRADICTING: frozenset[Finding] = frozenset(
    {"false_claim", "wrong_failure", "false_record", "not_derivable"}
)


@dataclass(frozen=True)
class CheckOutcome:
    id: str  # "gpu_result.<check name>"
    score: float
    max_score: float
    status: str  # "passed" | "failed" | "error"
    message: str
    finding: Finding

    def as_dict(self) -> dict[str, Any]:
        """Every field but the finding (the verdict says it for the whole file)."""
        return {k: v for k, v in asdict(self).items() if k != "finding"}


@dataclass(frozen=True)
class ResultGrade:
    path: str
    gradable: bool
    cases: tuple[CheckOutcome, ...]  # always all eight checks, in CHECK_NAMES order
    errors: tuple[str, ...]  # parse/validation errors as "$.path: message"
    notes: tuple[str, ...]  # interpretation notes
    max_score: float  # fixed: 8 * points_per_check

    @property
    def score(self) -> float:
        return sum(case.score for case in self.cases)

    @property
    def verdict(self) -> str:
        """One of ``VERDICTS``."""
        if not self.gradable:
            return "not_gradable"
        if any(case.finding in CONTRADICTING for case in self.cases):
            return "contradicted"
        if any(case.finding == "unverified" for case in self.cases):
            return "unverified"
        if any(case.status != "passed" for case in self.cases):
            return "failed"
        return "passed"

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "gradable": self.gradable,
            "verdict": self.verdict,
            "score": self.score,
            "max_score": self.max_score,
            "cases": [case.as_dict() for case in self.cases],
            "errors": list(self.errors),
            "notes": list(self.notes),
        }


_STAGE_REASON = {
    "read": "could not be read",
    "parse": "is not strict JSON",
    "version": "does not name a known schema_version",
    "schema": "does not match its schema",
}


def not_gradable(loaded: LoadedResult, points: float) -> ResultGrade:
    reason = _STAGE_REASON.get(loaded.stage, "is not valid")
    count = len(loaded.errors)
    # Short: every check carries it, and the errors themselves are listed once
    # with the grade (ResultGrade.errors), not eight times.
    message = (
        f"not gradable: the result file {reason} ({count} error{'s' if count != 1 else ''} "
        "listed once with the grade; check with 'rlsys validate FILE')"
    )
    cases = tuple(
        CheckOutcome(f"{SECTION}.{name}", 0.0, points, "error", message, "not_gradable")
        for name in closure_checks.CHECK_NAMES
    )
    return ResultGrade(
        loaded.path, False, cases, loaded.errors, (), points * len(closure_checks.CHECK_NAMES)
    )


_FALSE_CLAIM = "false claim: claimed passed but the evidence shows"
_WRONG_FAILURE = "claimed failed but the evidence shows it passes"
_FALSE_RECORD = "the run's status or failure record is refuted by its evidence:"
_UNVERIFIED = "not verified (missing evidence, not a refutation):"
# The check whose evidence the status and failure record are judged on.
RECORD_CHECK = "update_and_sync"
# The first note of every graded file: which judge checked the configuration values.
JUDGE_NOTE = "configuration values judged by"


def _grade_check(
    name: str,
    doc: Mapping[str, Any],
    points: float,
    extra: Sequence[str] = (),
    unverified: Sequence[str] = (),
) -> CheckOutcome:
    """``extra``: what the artefacts refute; ``unverified``: what they could not show."""
    case_id = f"{SECTION}.{name}"
    try:
        derived = closure_checks.CHECK_FUNCTIONS[name](doc)
    except Exception as exc:  # a grader bug must cost one check, not the whole report
        message = f"could not re-derive this check: {exc!r}"
        return CheckOutcome(case_id, 0.0, points, "error", message, "not_derivable")
    if extra:
        problems = ([] if derived.passed else [derived.detail]) + list(extra)
        derived = replace(derived, passed=False, detail="; ".join(problems))
    claim = doc["system_decision"]["checks"][name]["passed"]
    if derived.passed and claim and unverified:
        # The file's own evidence passes it: its points stay (a typo in --artefacts must not
        # cost an honest run points; leaving --artefacts out would not), the verdict and the
        # exit code say what could not be checked.
        message = f"{derived.detail}; {_UNVERIFIED} {'; '.join(unverified)}"
        return CheckOutcome(case_id, points, points, "passed", message, "unverified")
    if unverified:  # the file's own evidence decides; what could not be checked is said
        derived = replace(derived, detail="; ".join([derived.detail, *unverified]))
    if derived.passed and claim:
        return CheckOutcome(case_id, points, points, "passed", derived.detail, "confirmed")
    finding: Finding
    if claim:
        finding, message = "false_claim", f"{_FALSE_CLAIM} {derived.detail}"
    elif name == RECORD_CHECK and closure_checks.record_problems(doc):
        # Claiming the check failed does not make a refuted record honest.
        finding, message = "false_record", f"{_FALSE_RECORD} {derived.detail}"
    elif derived.passed and doc.get("status") == "failed":
        # The run stopped: a check it claims failed on partial evidence hides nothing
        # (it scores 0 either way), so it is no contradiction of an honest failed run.
        finding = "honest_failure"
        message = (
            f"reported as failed in a failed run; what was recorded passes it "
            f"({derived.detail}), so it scores 0 without contradicting the file"
        )
    elif derived.passed:
        finding = "wrong_failure"
        message = f"{_WRONG_FAILURE} ({derived.detail}); the claim must match the evidence"
    else:
        finding = "honest_failure"
        message = f"reported as failed, and the evidence agrees: {derived.detail}"
    return CheckOutcome(case_id, 0.0, points, "failed", message, finding)


def whole_problems(message: str, limit: int) -> str:
    """``message`` when it fits ``limit`` characters; else as many of its problems (the
    check joins them with "; ") as fit, whole, and how many more there are, so that a
    shortened account never ends inside a problem (``rlsys result FILE`` lists all)."""
    if len(message) <= limit:
        return message
    problems = message.split("; ")
    kept: list[str] = []
    for problem in problems:
        tail = f"; and {len(problems) - len(kept) - 1} more (rlsys result FILE lists all)"
        if len("; ".join([*kept, problem])) + len(tail) > limit:
            break
        kept.append(problem)
    if not kept:  # one problem longer than the room: said as far as it goes, and so
        return message[: limit - 1] + "…"
    more = len(problems) - len(kept)
    return "; ".join(kept) + f"; and {more} more (rlsys result FILE lists all)"


# --------------------------------------------------------------------------- notes

_KV_KEY = re.compile(r"kv.?cache", re.IGNORECASE)
_SIZE_KEY = re.compile(r"(mb|mib|gb|gib|bytes|size)", re.IGNORECASE)
_SPEED_KEY = re.compile(r"speed.?up|acceleration|throughput.?gain", re.IGNORECASE)
_KV_TEXT = re.compile(r"kv[ _-]?cache|kv 缓存", re.IGNORECASE)
_SIZE_TEXT = re.compile(r"size|大小|容量|\bmi?b\b|\bgi?b\b", re.IGNORECASE)
_SPEED_TEXT = re.compile(r"speed[ -]?up|faster|加速|提速", re.IGNORECASE)
_NEGATION = re.compile(r"\bnot\b|\bno\b|n't|\bnever\b|\bcannot\b|不|非|没有", re.IGNORECASE)
_SENTENCE = re.compile(r"[.;。；!?！？\n]+")

KV_NOTE = (
    "{where}: a whole-GPU peak difference is not a KV-cache size. Whole-GPU samples "
    "include every process on the card, allocator caches, CUDA graphs and the actor's own "
    "memory, and a 0.25 s sampler misses short peaks; the KV cache's size comes from the "
    "engine's own allocation (e.g. vLLM's KV-cache log line), not from this difference."
)
SPEED_NOTE = (
    "{where}: one release/retain pair cannot establish a speed-up. Durations from a single "
    "run include run-order and warm-up effects; a speed-up needs repeated, interleaved pairs "
    "and a spread, and this experiment's checks do not grade one."
)


def _walk(node: object, path: str) -> list[tuple[str, object]]:
    """Every (path, value) under node; iterative so depth cannot blow the stack."""
    found: list[tuple[str, object]] = []
    stack: list[tuple[str, object]] = [(path, node)]
    while stack:
        where, value = stack.pop()
        found.append((where, value))
        if isinstance(value, Mapping):
            stack.extend((f"{where}.{key}", sub) for key, sub in value.items())
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", sub) for i, sub in enumerate(value))
    return sorted(found, key=lambda item: item[0])


def _claims(value: object) -> bool:
    return value is not None and value is not False and value != "" and value != []


def interpretation_notes(doc: Mapping[str, Any]) -> list[str]:
    """Notes for readings the evidence cannot support (SPEC §7 step 5).

    Looks in ``system_decision`` only (the configs legitimately hold keys such
    as vLLM's ``kv_cache_memory_bytes``) for fields or sentences that present a
    peak difference as a KV-cache size or claim a speed-up.
    """
    decision = section(doc, "system_decision")  # not an object: nothing to read
    kv_places: list[str] = []
    speed_places: list[str] = []
    for where, value in _walk(decision, "$.system_decision"):
        key = where.rsplit(".", 1)[-1]
        if _KV_KEY.search(key) and _SIZE_KEY.search(key) and _claims(value):
            kv_places.append(where)
        if _SPEED_KEY.search(key) and _claims(value):
            speed_places.append(where)
        if isinstance(value, str):
            for sentence in _SENTENCE.split(value):
                if _NEGATION.search(sentence):
                    continue
                if _KV_TEXT.search(sentence) and _SIZE_TEXT.search(sentence):
                    kv_places.append(where)
                if _SPEED_TEXT.search(sentence):
                    speed_places.append(where)
    return [KV_NOTE.format(where=where) for where in dict.fromkeys(kv_places)] + [
        SPEED_NOTE.format(where=where) for where in dict.fromkeys(speed_places)
    ]


def _verified_measurements(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The file's own ``system_decision.measurements`` where resource_sampling found them
    equal to what the samples give, in the shape the notes read; None otherwise."""
    found = section(doc, "system_decision").get("measurements")
    if not isinstance(found, Mapping):
        return None
    for name in closure_checks.GROUP_NAMES:
        group = found.get(name)
        phases = group.get("phases") if isinstance(group, Mapping) else None
        if not isinstance(phases, Mapping) or not all(
            isinstance(e, Mapping) and {"sample_count", "duration_s"} <= e.keys()
            for e in phases.values()
        ):
            return None
    return dict(found)


def _evidence_notes(doc: Mapping[str, Any], verified: bool = False) -> list[str]:
    """Plain reading aids: where the whole-run peak is, and phases without samples.
    ``verified``: resource_sampling passed on the evidence, so the file's own measurements
    equal the derived ones and are read instead of deriving them again (issue 40: that
    second derivation was a fifth of the grading time of a one-hour file)."""
    notes: list[str] = []
    if doc.get("status") == "failed":
        failure = section(doc, "failure")
        notes.append(
            f"the run is marked failed ({failure.get('group') or 'group unknown'}, "
            f"{failure.get('phase') or 'phase unknown'}: {failure.get('type')}); "
            "checks that need the missing evidence fail"
        )
    unknown = unknown_card_note(section(doc, "environment"))
    if unknown:
        notes.append(unknown)
    measurements = (_verified_measurements(doc) if verified else None) or (
        closure_checks.derive_measurements(doc)
    )
    interval = doc.get("sampling", {}).get("interval_s")
    for name in closure_checks.GROUP_NAMES:
        group = measurements[name]
        peak, phase = group["sampled_gpu_peak_mb"], group["sampled_gpu_peak_phase"]
        update = group["phases"].get("update", {}).get("sampled_gpu_peak_mb")
        if peak is not None and phase not in (None, "update") and update is not None:
            notes.append(
                f"{name}: the whole-run sampled peak ({peak:g} MiB) is in {phase}, not in the "
                f"update ({update:g} MiB); read the update phase's own peak for the update's "
                "occupancy"
            )
        # Only a phase shorter than the interval may lack a sample; any other
        # empty phase is a coverage failure that resource_sampling reports.
        empty = [
            p
            for p, entry in group["phases"].items()
            if entry["sample_count"] == 0
            and isinstance(interval, (int, float))
            and entry["duration_s"] < interval
        ]
        if empty:
            notes.append(
                f"{name}: {', '.join(empty)} had no resource sample (each is shorter than the "
                f"{interval} s interval); their peak is null, not zero"
            )
    return notes


def _oversized_numbers(doc: object) -> list[str]:
    """Paths of integers too large to be a float (the checks compute in floats)."""
    # float(n) overflows exactly when |n| rounds to 2**1024 or beyond.
    limit = (1 << 1024) - (1 << 970)
    stack: list[object] = [doc]
    found = False
    while stack and not found:  # one cheap pass without paths; paths only when needed
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            stack.extend(cast(dict[str, object], value).values())
        elif kind is list:
            stack.extend(cast(list[object], value))
        elif kind is int and not -limit < cast(int, value) < limit:
            found = True
    if not found:
        return []
    return [w for w, v in _walk(doc, "$") if type(v) is int and not -limit < v < limit]


def _refuse_oversized(path: str, paths: list[str], points: float) -> ResultGrade:
    problems = tuple(
        Problem(where, "integer too large to be a number of this file (it does not fit a float)")
        for where in paths
    )
    loaded = LoadedResult(path, None, None, None, "schema", problems)
    return not_gradable(loaded, points)


def grade_document(
    doc: Mapping[str, Any],
    *,
    path: str = "<document>",
    points_per_check: float = 5.0,
    artefacts: str | os.PathLike[str] | None = None,
    numbers_checked: bool = False,
) -> ResultGrade:
    """Grade an already validated document (see ``resultfile.validate_document``).

    ``numbers_checked``: the document came from ``loads_strict``, which already refused
    every integer too large to be a float (the walk that looks for them is skipped).

    ``artefacts``: the run's raw artefact folder (see ``resultfile.artefacts``);
    what it contradicts fails the check it bears on; what it lacks leaves that check
    unverified.
    """
    points = float(points_per_check)
    oversized = [] if numbers_checked else _oversized_numbers(doc)
    if oversized:
        return _refuse_oversized(path, oversized, points)
    refuted: dict[str, list[str]] = {}
    unverified: dict[str, list[str]] = {}
    if artefacts is not None:
        from pytest_rlsys.resultfile.artefacts import artefact_problems

        found = artefact_problems(doc, Path(artefacts))
        refuted, unverified = found.refuted, found.unverified
    with closure_checks.shared_readings():  # each group's samples read once for all checks
        cases = tuple(
            _grade_check(name, doc, points, refuted.get(name, ()), unverified.get(name, ()))
            for name in closure_checks.CHECK_NAMES
        )
        try:
            sampled = next(c for c in cases if c.id == f"{SECTION}.resource_sampling")
            verified = sampled.finding == "confirmed" and not refuted.get("resource_sampling")
            notes = tuple(interpretation_notes(doc) + _evidence_notes(doc, verified))
        except Exception as exc:  # notes are advisory; never let them break the grade
            notes = (f"could not produce interpretation notes: {exc!r}",)
    notes = (f"{JUDGE_NOTE} {judge_label()}", *notes)
    return ResultGrade(path, True, cases, (), notes, points * len(closure_checks.CHECK_NAMES))


def grade_result_file(
    path: str | os.PathLike[str],
    points_per_check: float = 5.0,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    artefacts: str | os.PathLike[str] | None = None,
    limit_option: str | None = None,
) -> ResultGrade:
    """Load, validate and grade one result file; never raises for bad input.
    ``limit_option``: the caller's option that raises ``max_bytes`` (``load_result_file``).

    >>> grade = grade_result_file("run.json")
    >>> grade.gradable, grade.score, grade.max_score   # e.g. (True, 40.0, 40.0)
    """
    loaded = load_result_file(path, max_bytes=max_bytes, limit_option=limit_option)
    if not loaded.ok or loaded.doc is None:
        return not_gradable(loaded, float(points_per_check))
    # The checks make many short-lived lists and no reference cycle, and the document's
    # hundred thousand containers are live throughout: each collection the allocations
    # would trigger walks them all for nothing (issue 40; the parse does the same).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return grade_document(
            loaded.doc,
            path=loaded.path,
            points_per_check=points_per_check,
            artefacts=artefacts,
            numbers_checked=True,
        )
    finally:
        if collecting:
            gc.enable()
