"""Score records: how each case ended and the report that holds them (the score
document they are written as is ``outputs.scorejson``'s).

The vocabularies every layer compares against are declared here once, as ``Literal``
aliases, so that mypy rejects a misspelt status or output name wherever it is compared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard, get_args

from pytest_rlsys.grading.comparison import common_prefix
from pytest_rlsys.grading.verdicts import ValueDiff
from pytest_rlsys.messages import Msg, Said

__all__ = [
    "OUTPUT_KINDS",
    "PLATFORM_VISIBILITIES",
    "SCORE_SCHEMA_ID",
    "STATUSES",
    "VISIBILITIES",
    "CaseResult",
    "OutputKind",
    "PlatformVisibility",
    "RenderOptions",
    "ScoreReport",
    "Status",
    "Visibility",
    "as_status",
    "as_visibility",
    "battery_fingerprint",
    "bounded",
    "bounded_pair",
    "is_status",
]

SCORE_SCHEMA_ID = "https://rlsys.invalid/schemas/rlsys-score.v1.json"

# How one case ended.  "not_run": never tried (budget, deselected, self-check); it counts 0.
Status = Literal["passed", "failed", "error", "timeout", "not_run"]
# Whether a case shows its inputs to the learner.
Visibility = Literal["visible", "hidden"]
# When a platform (Gradescope) shows a test to students; the names are Gradescope's.
PlatformVisibility = Literal["visible", "hidden", "after_due_date", "after_published"]
# The files a grading run can write; each has a renderer in pytest_rlsys.outputs.
OutputKind = Literal["report", "gradescope", "prairielearn", "junit"]

STATUSES: tuple[Status, ...] = get_args(Status)
VISIBILITIES: tuple[Visibility, ...] = get_args(Visibility)
PLATFORM_VISIBILITIES: tuple[PlatformVisibility, ...] = get_args(PlatformVisibility)
OUTPUT_KINDS: tuple[OutputKind, ...] = get_args(OutputKind)


@dataclass(frozen=True)
class RenderOptions:
    """What the instructor chose about the output files (not about grading); part of a
    grading request (``grading.request``), read by every renderer."""

    lang: str = "en"
    # Gradescope visibility of the hidden cases (e.g. after_due_date).
    hidden_visibility: PlatformVisibility = "visible"


def is_status(value: object) -> TypeGuard[Status]:
    return value in STATUSES


def as_status(value: str) -> Status:
    """``value`` as a Status; anything else is a programming error, never a learner's."""
    if is_status(value):
        return value
    raise ValueError(f"unknown case status {value!r} (expected one of {STATUSES})")


def as_visibility(value: str) -> Visibility:
    for known in VISIBILITIES:
        if value == known:
            return known
    raise ValueError(f"unknown case visibility {value!r} (expected one of {VISIBILITIES})")


# Every text of a case record is bounded where the record is built (``bounded``), and a
# message worded from one is bounded again when it is written (``outputs.wording``), so
# the score document has a size bound: at most MAX_CASE_JSON_BYTES per case plus
# MAX_REPORT_EXTRA_BYTES (tests/plugin/test_trust.py checks it against the worst submission).
MAX_MESSAGE_CHARS = 1200
MAX_SHOWN_CHARS = 600  # call, claim, expected, got (visible cases)
MAX_CASE_JSON_BYTES = 4 * (MAX_MESSAGE_CHARS + 4 * MAX_SHOWN_CHARS) * 2 + 2048
MAX_REPORT_EXTRA_BYTES = 64 * 1024


def bounded(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying so."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bounded_pair(want: str, got: str, limit: int) -> tuple[str, str]:
    """``want`` and ``got`` each cut to ``limit`` characters as ``bounded`` cuts, but
    around where they first differ: cut at the end, a difference past the limit was not
    shown and the learner saw two equal-looking values."""
    if len(want) <= limit and len(got) <= limit:
        return want, got
    at = common_prefix(want, got)
    return _window(want, at, limit), _window(got, at, limit)


def _window(text: str, at: int, limit: int) -> str:
    """At most ``limit`` characters of ``text`` holding index ``at``, cut ends marked."""
    if len(text) <= limit:
        return text
    start = max(0, min(at - limit // 4, len(text) - (limit - 1)))
    if start == 0:
        return text[: limit - 1] + "…"
    if len(text) - start <= limit - 1:
        return "…" + text[start:]
    return "…" + text[start : start + limit - 2] + "…"


UNNAMED = Msg("", "")
_SECTION_COUNTS = ("score", "max_score", "passed", "cases", "not_run", "not_implemented")


@dataclass(frozen=True)
class CaseResult:
    """How one case ended, as facts: no sentence in any language.  ``outputs.wording``
    words it (``message``, ``category``) in the output's language when an output is
    written; a hidden case holds only its kind and a schema path besides its identity."""

    id: str
    section: str
    visibility: Visibility
    max_cents: int
    status: Status
    category: Msg = UNNAMED  # the battery's name for what the case checks
    call: str = ""  # visible cases only: the call that was made
    claim: str = ""  # visible cases only: the chapter's assertion
    expected: str = ""  # visible cases only
    got: str = ""  # visible cases only
    seconds: float = 0.0
    not_implemented: bool = False  # the call raised NotImplementedError (template code)
    # The kind of outcome, from the grader's closed vocabulary (grading.verdicts): a
    # ProblemKind for a visible case, a HiddenKind for a hidden one; "" for a result-file
    # check, whose ``note`` is the check's own account.
    kind: str = ""
    path: str = ""  # visible: the JSON path of a value problem; hidden: a schema path
    exc_type: str = ""  # visible cases only: the exception's class
    line: int | None = None  # visible cases only: the line it was raised at
    # Visible cases only, as ``grading.verdicts.Verdict`` holds them: the call's own text,
    # where and how a value differs, the names and the limit the words need, and the
    # section of a function not yet written.
    note: str = ""
    said: Said | None = None  # ``note`` as the grader's own fact (a timeout, a crash...)
    diff: ValueDiff | None = None
    names: tuple[str, ...] = ()
    todo: str = ""
    limit: float | None = None
    # Hidden cases: the template's sentence of the rule the case grades (where it failed).
    rule: Msg = UNNAMED
    also: tuple[str, ...] = ()  # hidden cases: the schema paths of other keys that differ

    @property
    def cents(self) -> int:
        return self.max_cents if self.status == "passed" else 0


@dataclass
class ScoreReport:
    cases: list[CaseResult]
    seed: int | None
    submission: str | None
    submission_sha256: str | None
    battery_sha256: str | None
    # Notes as the grader's own facts, worded in the output's language; the field says
    # who reads them: instructor detail (how the child ran) with -v and in the score
    # JSON, a learner's notes (a parameter the file lacks, a grader fault) everywhere.
    notes: list[Said] = field(default_factory=list)
    ran_as: Said | None = None  # who the submission ran as (a note for instructors)
    learner_notes: list[Said] = field(default_factory=list)
    ungraded_cents: int = 0
    elapsed_s: float = 0.0
    gpu_result: dict[str, Any] | None = None  # path, gradable, errors, notes
    result_sha256: str | None = None
    # The rubric file the points came from (its text's sha256); None: the default rubric.
    # A learner's run may take it from the learner's own folder: the report says so.
    rubric_sha256: str | None = None
    # Why the submission could not be graded at all (it did not load, or there was no
    # file to load); None when it was graded.  Platforms that can say "not gradable"
    # (PrairieLearn) do so instead of recording a zero.
    load_error: str | None = None  # its English; ``load_said`` is the fact to word
    load_said: Said | None = None
    # The exception the import raised, when it raised one (ModuleNotFoundError: a hint).
    load_exc_type: str = ""
    # The fence the submission ran behind (grading.fence.Fence.record()); None: no child.
    fence: dict[str, Any] | None = None

    def sections(self) -> dict[str, dict[str, Any]]:
        """Per section: points (score, max_score) and counts of its cases."""
        out: dict[str, dict[str, Any]] = {}
        for case in self.cases:
            entry = out.setdefault(case.section, dict.fromkeys(_SECTION_COUNTS, 0))
            entry["score"] += case.cents
            entry["max_score"] += case.max_cents
            entry["cases"] += 1
            entry["passed"] += case.status == "passed"
            entry["not_run"] += case.status == "not_run"
            entry["not_implemented"] += case.not_implemented
        for entry in out.values():
            entry["score"] = entry["score"] / 100
            entry["max_score"] = entry["max_score"] / 100
        return out

    @property
    def score(self) -> float:
        return sum(c.cents for c in self.cases) / 100

    @property
    def max_score(self) -> float:
        return sum(c.max_cents for c in self.cases) / 100


def battery_fingerprint(files: Sequence[bytes], seed: int) -> str:
    """Hash of the battery's code and reference, plus the seed, for reproducibility."""
    digest = hashlib.sha256()
    for blob in files:
        digest.update(hashlib.sha256(blob).digest())
    digest.update(str(seed).encode())
    return digest.hexdigest()
