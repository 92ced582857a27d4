"""The facts of a class report (``rlsys batch --html``), from the batch's typed rows:
histograms, the hidden categories most failed, the problems, the slowest, the roster.
``class_report`` renders them; nothing here is HTML.  "Graded" has one meaning everywhere
(``is_graded``): the file loaded and its cases ran."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pytest_rlsys.grading.scoring import ScoreReport, bounded
from pytest_rlsys.messages import LOAD_FAILED, section_label
from pytest_rlsys.outputs.batch import SECTIONS, BatchResult, BatchRow
from pytest_rlsys.outputs.class_words import say
from pytest_rlsys.outputs.wording import category, load_error_text

__all__ = [
    "BIN_LABELS",
    "MESSAGE_LIMIT",
    "SLOWEST",
    "CategoryFailures",
    "ClassSummary",
    "Histogram",
    "Problem",
    "RosterRow",
    "is_graded",
    "summarize",
]

BIN_LABELS: tuple[str, ...] = tuple(f"{10 * i}–{10 * i + 10}" for i in range(10))
TOP_CATEGORIES = 15
SLOWEST = 10
MESSAGE_LIMIT = 300


@dataclass
class Histogram:
    """Counts of scores (as a percentage of the maximum) in ten 10-point bins."""

    title: str
    counts: list[int]
    scores: list[float]  # percentages, for the summary statistics

    @property
    def total(self) -> int:
        return sum(self.counts)


@dataclass
class CategoryFailures:
    section: str
    category: str
    submissions_failed: int
    submissions_attempted: int
    cases_failed: int
    cases: int


@dataclass
class Problem:
    submission: str
    kind: str  # "could not be graded" | "did not load" | "timed out" (class_words keys)
    detail: str


@dataclass
class ClassSummary:
    seed: int | None
    battery_sha256: list[str]
    lang: str
    submissions: int
    graded: int
    histograms: list[Histogram]
    categories: list[CategoryFailures]
    problems: list[Problem]
    slowest: list[tuple[str, float, str]]  # name, seconds, score text
    notes: list[str] = field(default_factory=list)
    roster: list[RosterRow] = field(default_factory=list)


def _pct(score: float, max_score: float) -> float | None:
    return 100.0 * score / max_score if max_score > 0 else None


def _histogram(title: str, percents: Iterable[float | None]) -> Histogram:
    scores = [p for p in percents if p is not None]
    counts = [0] * 10
    for value in scores:
        counts[min(max(int(value // 10), 0), 9)] += 1
    return Histogram(title, counts, scores)


def _short(text: str, limit: int = MESSAGE_LIMIT) -> str:
    return bounded(" ".join(str(text).split()), limit)


def is_graded(row: BatchRow) -> bool:
    """The one meaning of "graded" (CSV status, rlsys batch, this page): loaded and run."""
    return row.status == "graded" and row.report is not None and row.report.load_error is None


@dataclass
class RosterRow:
    submission: str
    status: str  # the CSV's: graded | not_loaded | not_graded
    score: float | None
    max_score: float | None
    sections: dict[str, float]
    why: str  # one line, '' at full marks


def _roster(result: BatchResult) -> list[RosterRow]:
    out = []
    for row in result.rows:
        cells = row.cells(result.seed, result.lang)
        report = row.scored
        out.append(
            RosterRow(
                row.name,
                row.status,
                report.score if report is not None else None,
                report.max_score if report is not None else None,
                {s: float(cells[s]) for s in SECTIONS if s in cells},
                _short(str(cells["message"] or "")),
            )
        )
    out.sort(key=lambda r: r.submission)
    return out


def _score_text(report: ScoreReport | None) -> str:
    return "—" if report is None else f"{report.score:g} / {report.max_score:g}"


def _problem(row: BatchRow, lang: str) -> Problem | None:
    """Why ``row`` is listed with the problems (it did not load, could not be graded or
    timed out), None when it is not."""
    report = row.report
    if row.status == "not_graded":  # its status first: not tried, whatever its report
        return Problem(row.name, "could not be graded", _short(row.message))
    if report is not None and (row.status == "not_loaded" or report.load_error is not None):
        # The row's message is the load error with its hint (stdlib only, ...).
        said = row.cells(None, lang)["message"] or load_error_text(report, lang)
        return Problem(row.name, "did not load", _short(LOAD_FAILED.get(lang).format(error=said)))
    if report is None or row.status != "graded":
        return Problem(row.name, "could not be graded", _short(row.message))
    # A case that hung (kind timed_out) apart from those not run after its function
    # timed out too often (status timeout too): only the first say what hung.
    stopped = [c for c in report.cases if c.status == "timeout"]
    hung = [c for c in stopped if c.kind in ("", "timed_out")]
    if not stopped:
        return None
    where = sorted({f"{section_label(c.section, lang)}: {category(c, lang)}" for c in hung})
    skipped = len(stopped) - len(hung)
    detail = say("hung", lang, hung=len(hung), total=len(report.cases), where="; ".join(where))
    detail += say("skipped", lang, n=skipped) if skipped else ""
    return Problem(row.name, "timed out", _short(detail))


def _histograms(graded: Sequence[ScoreReport], lang: str) -> list[Histogram]:
    overall = _histogram(say("overall", lang), (_pct(r.score, r.max_score) for r in graded))
    per = [r.sections() for r in graded]
    names = sorted({name for sections in per for name in sections})
    return [overall] + [
        _histogram(
            section_label(name, lang),
            (_pct(s[name]["score"], s[name]["max_score"]) for s in per if name in s),
        )
        for name in names
    ]


def _categories(graded: Sequence[tuple[str, ScoreReport]], lang: str) -> list[CategoryFailures]:
    """Hidden categories: among submissions that loaded, in the TODOs they attempted,
    cases that ran to an answer.  A TODO still raising NotImplementedError, a function
    not written at all (an empty file) or one that hangs fails every category and says
    nothing about which idea was missed; timeouts are listed on their own."""
    tally: dict[tuple[str, str], _Tally] = {}
    for name, report in graded:
        sections = report.sections()
        for case in report.cases:
            unwritten = sections[case.section]["not_implemented"] == sections[case.section]["cases"]
            if (
                case.visibility != "hidden"
                or case.status in ("not_run", "timeout")
                or case.kind == "missing_function"
                or unwritten
            ):
                continue
            # The battery's plain name: a failed hidden case's words add the rule it
            # broke (``wording.category``), which would tally it apart from its passes.
            slot = tally.setdefault((case.section, case.category.get(lang)), _Tally())
            slot.attempted.add(name)
            slot.cases += 1
            if case.status != "passed":
                slot.failed.add(name)
                slot.cases_failed += 1
    categories = [
        CategoryFailures(sec, cat, len(s.failed), len(s.attempted), s.cases_failed, s.cases)
        for (sec, cat), s in tally.items()
        if s.failed
    ]
    categories.sort(key=lambda c: (-c.submissions_failed, -c.cases_failed, c.section, c.category))
    return categories


@dataclass
class _Tally:
    failed: set[str] = field(default_factory=set)
    attempted: set[str] = field(default_factory=set)
    cases_failed: int = 0
    cases: int = 0


def summarize(result: BatchResult) -> ClassSummary:
    """What the page shows, from the batch's typed rows.  One definition of "graded", as
    the CSV's status and rlsys batch's count: the file loaded and its cases ran.  A file
    that did not load scores 0 and is listed with the problems, as is one that could not
    be tried."""
    graded = [(row.name, row.report) for row in result.rows if row.report and is_graded(row)]
    problems = [p for row in result.rows if (p := _problem(row, result.lang)) is not None]
    timed = [
        (row.name, row.seconds, _score_text(row.scored))
        for row in result.rows
        if row.seconds is not None
    ]
    timed.sort(key=lambda item: (-item[1], item[0]))
    hashes = sorted({r.battery_sha256 for _, r in graded if r.battery_sha256})
    notes = []
    if len(hashes) > 1:
        notes.append(say("batteries", result.lang))
    return ClassSummary(
        seed=result.seed,
        battery_sha256=hashes,
        lang=result.lang,
        submissions=len(result.rows),
        graded=len(graded),
        histograms=_histograms([r for _, r in graded], result.lang),
        categories=_categories(graded, result.lang),
        problems=problems,
        slowest=timed[:SLOWEST],
        notes=notes,
        roster=_roster(result),
    )
