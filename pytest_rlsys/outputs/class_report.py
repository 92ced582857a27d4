"""The class report of a batch run: one self-contained HTML file for the instructor.

``rlsys batch DIR --html class.html`` writes it from the batch rows (each graded
row carries its full score report under ``"report"``). The page needs no network
and reads whole without script: CSS and SVG are inline; one inline script, allowed by
the page's Content-Security-Policy through its hash only, sorts the roster. A roster
lists every submission with its scores and, below full marks, why in one line; the
hidden-category table shows the most failed and folds the rest. "Graded" has one
meaning everywhere (``is_graded``): the file loaded and its cases ran. Every chart
has a real ``<table>`` with the same numbers next to it, and no chart relies on
colour (bars carry their numbers). Learner-derived strings (submission names,
messages) are HTML-escaped on the way out; names come from the instructor's folder
(the row's ``submission``), never from paths inside the reports.
"""

from __future__ import annotations

import html
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_rlsys import __version__
from pytest_rlsys.escaping import clean
from pytest_rlsys.grading.scoring import ScoreReport, bounded
from pytest_rlsys.messages import LOAD_FAILED, TODO_OF
from pytest_rlsys.outputs.batch import SECTIONS, BatchResult, BatchRow
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.outputs.near_copies import NearCell, near_cells, similarity_section
from pytest_rlsys.outputs.wording import category, load_error_text

__all__ = [
    "BIN_LABELS",
    "CategoryFailures",
    "ClassSummary",
    "Histogram",
    "Problem",
    "RosterRow",
    "class_report_html",
    "is_graded",
    "render_html",
    "similarity_section",
    "summarize",
    "write_class_report",
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
    kind: str  # "could not be graded" | "did not load" | "timed out"
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


def _bin(percent: float) -> int:
    return min(max(int(percent // 10), 0), 9)


def _pct(score: float, max_score: float) -> float | None:
    return 100.0 * score / max_score if max_score > 0 else None


def _histogram(title: str, percents: Iterable[float | None]) -> Histogram:
    scores = [p for p in percents if p is not None]
    counts = [0] * 10
    for value in scores:
        counts[_bin(value)] += 1
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
        report = row.report
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
    where = sorted({f"{c.section}: {category(c, lang)}" for c in hung})
    skipped = len(stopped) - len(hung)
    detail = f"{len(hung)} of {len(report.cases)} cases timed out ({'; '.join(where)})"
    detail += f"; {skipped} more were not run after them" if skipped else ""
    return Problem(row.name, "timed out", _short(detail))


def _histograms(graded: Sequence[ScoreReport]) -> list[Histogram]:
    overall = _histogram("Overall", (_pct(r.score, r.max_score) for r in graded))
    per = [r.sections() for r in graded]
    names = sorted({name for sections in per for name in sections})
    return [overall] + [
        _histogram(
            TODO_OF.get(name, name),
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
            slot = tally.setdefault((case.section, category(case, lang)), _Tally())
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
        (row.name, row.seconds, _score_text(row.report))
        for row in result.rows
        if row.seconds is not None
    ]
    timed.sort(key=lambda item: (-item[1], item[0]))
    hashes = sorted({r.battery_sha256 for _, r in graded if r.battery_sha256})
    notes = []
    if len(hashes) > 1:
        notes.append(
            "the submissions were graded with different batteries; compare their scores with care"
        )
    return ClassSummary(
        seed=result.seed,
        battery_sha256=hashes,
        lang=result.lang,
        submissions=len(result.rows),
        graded=len(graded),
        histograms=_histograms([r for _, r in graded]),
        categories=_categories(graded, result.lang),
        problems=problems,
        slowest=timed[:SLOWEST],
        notes=notes,
        roster=_roster(result),
    )


# --------------------------------------------------------------------------- HTML


def _e(value: object) -> str:
    """Text for the page: escaped (controls, bidi, zero-width shown as ``\\u202e``), then
    markup-escaped."""
    return html.escape(clean(value, newlines=False), quote=True)


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",
sans-serif;margin:0 auto;max-width:1100px;padding:1rem 1.5rem;color:#111;background:#fff;
line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:2px solid #111;padding-bottom:.2rem}h3{font-size:1.05rem;margin:.2rem 0}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.92rem}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border:1px solid #888;padding:.2rem .55rem;text-align:left;vertical-align:top;
overflow-wrap:anywhere}
table{max-width:100%}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.n{white-space:nowrap;overflow-wrap:normal}
@media (max-width:600px){body{padding:.5rem}th,td{padding:.15rem .25rem}}
thead th{background:#eee}
code{font-size:.85rem;word-break:break-all}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(330px,100%),1fr));
gap:1rem 2rem}
figure{margin:0}figcaption{font-weight:600;margin-bottom:.2rem}
svg{max-width:100%;height:auto}svg text{font-family:inherit}
.facts{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr);gap:.15rem 1rem;
overflow-wrap:anywhere}
.facts dt{font-weight:600}.facts dd{margin:0}
.note{border-left:4px solid #111;padding:.2rem .6rem;background:#f4f4f4}
.muted{color:#444}
.nw{white-space:nowrap}
p{overflow-wrap:anywhere}
nav ul{display:flex;flex-wrap:wrap;gap:.2rem 1.2rem;list-style:none;padding:0;margin:.6rem 0}
.sbs{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(420px,100%),1fr));gap:1rem}
.sbs pre{overflow:auto;max-height:36rem;font-size:.8rem;border:1px solid #888;padding:.4rem;
margin:0;white-space:pre}
mark{background:#ffe08a;color:#111;text-decoration:underline 2px;text-underline-offset:.35em}
details.pair{margin:.6rem 0}details.pair>summary{font-weight:600;cursor:pointer}
"""


def _histogram_svg(values: Sequence[int], ident: str, title: str) -> str:
    width, height, left, bottom, top = 340, 190, 14, 34, 18
    plot_w, plot_h = width - 2 * left, height - bottom - top
    peak = max(values, default=0) or 1
    step = plot_w / max(len(values), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{ident}-t">'
        f'<title id="{ident}-t">{_e(title)}</title>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - left}" y2="{top + plot_h}" '
        'stroke="#111"/>',
    ]
    for i, value in enumerate(values):
        bar_h = plot_h * value / peak
        x = left + i * step
        y = top + plot_h - bar_h
        parts.append(
            f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{step - 4:.1f}" '
            f'height="{bar_h:.1f}" fill="#3b3b3b"/>'
        )
        parts.append(
            f'<text x="{x + step / 2:.1f}" y="{y - 3:.1f}" font-size="11" '
            f'text-anchor="middle">{value}</text>'
        )
    # Ticks at the bin edges (0, 10, ... 100), as on a histogram's axis.
    for i in range(len(values) + 1):
        x = left + i * step
        parts.append(
            f'<line x1="{x:.1f}" y1="{top + plot_h}" x2="{x:.1f}" '
            f'y2="{top + plot_h + 4}" stroke="#111"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 15}" font-size="10" '
            f'text-anchor="middle">{10 * i}</text>'
        )
    parts.append(
        f'<text x="{width / 2:.1f}" y="{height - 3}" font-size="10" '
        'text-anchor="middle">score, % of the maximum</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _hbar_svg(
    labels: Sequence[str], values: Sequence[float], ident: str, title: str, fmt: str = "{:g}"
) -> str:
    row_h, label_w, width = 22, 330, 700
    height = row_h * max(len(values), 1) + 8
    plot_w = width - label_w - 70
    peak = max(values, default=0) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{ident}-t">'
        f'<title id="{ident}-t">{_e(title)}</title>'
    ]
    for i, (name, value) in enumerate(zip(labels, values, strict=True)):
        y = 4 + i * row_h
        bar_w = plot_w * value / peak
        name = clean(name, newlines=False)  # cut as shown: an escape is 6 characters
        shown = name if len(name) <= 52 else name[:51] + "…"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 15}" font-size="10.5" '
            f'text-anchor="end">{_e(shown)}</text>'
        )
        parts.append(
            f'<rect x="{label_w}" y="{y + 3}" width="{bar_w:.1f}" height="{row_h - 6}" '
            'fill="#3b3b3b"/>'
        )
        parts.append(
            f'<text x="{label_w + bar_w + 5:.1f}" y="{y + 15}" font-size="11">'
            f"{_e(fmt.format(value))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _stats(hist: Histogram) -> str:
    if not hist.scores:
        return "no graded submission"
    return (
        f"n = {len(hist.scores)}, mean {statistics.fmean(hist.scores):.1f}%, "
        f"median {statistics.median(hist.scores):.1f}%, "
        f"min {min(hist.scores):.1f}%, max {max(hist.scores):.1f}%"
    )


def _histogram_block(hist: Histogram, index: int) -> str:
    ident = f"hist-{index}"
    title = f"{hist.title}: score distribution"
    return (
        f'<figure aria-describedby="{ident}-s histogram-table">'
        f"<figcaption>{_e(title)}</figcaption>"
        f"{_histogram_svg(hist.counts, ident, title)}"
        f'<p id="{ident}-s" class="muted">{_e(_stats(hist))}</p></figure>'
    )


def _histogram_table(histograms: Sequence[Histogram]) -> str:
    """One table behind all the histograms: a row per score range, a column per chart."""
    head = "".join(f'<th scope="col" class="n">{_e(h.title)}</th>' for h in histograms)
    body = "".join(
        f'<tr><th scope="row">{_e(label)}</th>'
        + "".join(f'<td class="n">{h.counts[i]}</td>' for h in histograms)
        + "</tr>"
        for i, label in enumerate(BIN_LABELS)
    )
    total = "".join(f'<td class="n">{h.total}</td>' for h in histograms)
    return (
        '<table id="histogram-table"><caption>Score distribution: submissions per '
        "score range (the histograms above, as a table)</caption>"
        f'<thead><tr><th scope="col">score range (%)</th>{head}</tr></thead>'
        f'<tbody>{body}</tbody><tfoot><tr><th scope="row">graded submissions</th>'
        f"{total}</tr></tfoot></table>"
    )


def _category_block(summary: ClassSummary) -> str:
    if not summary.categories:
        return "<p>No hidden case failed in an attempted TODO of a submission that loaded.</p>"
    lang_attr = ' lang="zh"' if summary.lang == "zh" else ""
    # The chart shows the most failed; the table below it lists every failed category.
    top = summary.categories[:TOP_CATEGORIES]
    labels = [f"{TODO_OF.get(c.section, c.section)}: {c.category}" for c in top]
    values = [float(c.submissions_failed) for c in top]

    def table(ident: str, caption: str, cats: Sequence[CategoryFailures]) -> str:
        rows = "".join(
            f'<tr><td class="nw">{_e(TODO_OF.get(c.section, c.section))}</td>'
            f"<td{lang_attr}>{_e(c.category)}"
            f'</td><td class="n">{c.submissions_failed}</td><td class="n">'
            f'{c.submissions_attempted}</td><td class="n">'
            f"{100 * c.submissions_failed / max(c.submissions_attempted, 1):.0f}%</td>"
            f'<td class="n">{c.cases_failed} / {c.cases}</td></tr>'
            for c in cats
        )
        return (
            f'<table id="{ident}"><caption>{_e(caption)}</caption>'
            '<thead><tr><th scope="col">TODO</th><th scope="col">category</th>'
            '<th scope="col" class="n">submissions failing</th>'
            '<th scope="col" class="n">submissions attempting</th>'
            '<th scope="col" class="n">share failing</th>'
            '<th scope="col" class="n">failed cases / cases</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )

    title = (
        f"The {len(top)} hidden categories most often failed "
        "(submissions failing at least one case)"
    )
    rest = summary.categories[TOP_CATEGORIES:]
    folded = (
        f"<details><summary>{len(rest)} more hidden categories failed less often</summary>"
        + table("categories-more", "The other hidden categories failed at least once", rest)
        + "</details>"
        if rest
        else ""
    )
    return (
        f"<figure><figcaption>{_e(title)}</figcaption>"
        f"{_hbar_svg(labels, values, 'cat', title, '{:.0f}')}</figure>"
        + table("categories-table", f"The {len(top)} most often failed, as a table", top)
        + folded
        + f'<p class="muted">Counted over the {summary.graded} graded submissions, in the '
        "TODOs each attempted (a TODO still raising NotImplementedError or not written at "
        "all is left out, so "
        "&quot;submissions attempting&quot; can be fewer), over the cases that ran to an "
        "answer (timeouts are listed in the next section).</p>"
    )


# Sorts the roster by a column when its header is clicked; the page reads the same
# without it.  Allowed by the page's Content-Security-Policy through its hash only.
SORT_SCRIPT = """(function () {
  var table = document.getElementById("roster");
  if (!table) { return; }
  var body = table.tBodies[0], order = {};
  table.querySelectorAll("thead button").forEach(function (button) {
    button.addEventListener("click", function () {
      var col = Number(button.getAttribute("data-col")), up = order[col] = !order[col];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
        return up ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
})();"""


def _script_hash() -> str:
    import base64
    import hashlib

    digest = hashlib.sha256(SORT_SCRIPT.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


# The roster's similarity column sorts flagged first (its data-v), then worth a look.
_NEAR_ORDER = {"flagged": 0, "built at run time": 1, "worth a look": 2, "not compared": 3}


def _near_cell(cell: NearCell | None) -> str:
    if cell is None or not cell.mark:
        return '<td data-v="9">—</td>'
    closest = f" {_e(cell.closest)}" if cell.closest else ""
    sign = f" ({_e(cell.sign)})" if cell.sign else ""
    link = f' <a href="#{cell.pair}">side by side</a>' if cell.pair else ""
    order = _NEAR_ORDER.get(cell.mark, 9)
    return f'<td data-v="{order}"><strong>{_e(cell.mark)}</strong>{closest}{sign}{link}</td>'


def _roster_block(summary: ClassSummary, near: Mapping[str, NearCell] | None = None) -> str:
    if not summary.roster:
        return "<p>No submission.</p>"
    heads = ["submission", "status", "score", "TODO 1", "TODO 2", "TODO 3", "why below full marks"]
    if near is not None:
        heads.append("similarity (flag, closest, sign)")
    head = "".join(
        f'<th scope="col"><button type="button" data-col="{i}">{_e(h)}</button></th>'
        for i, h in enumerate(heads)
    )

    def num(value: float | None) -> str:
        shown = "—" if value is None else f"{value:g}"
        return f'<td class="n" data-v="{-1 if value is None else value:g}">{shown}</td>'

    rows = "".join(
        f'<tr><td data-v="{_e(r.submission)}">{_e(r.submission)}</td>'
        f'<td data-v="{_e(r.status)}">{_e(r.status)}</td>{num(r.score)}'
        + "".join(num(r.sections.get(s)) for s in ("todo1", "todo2", "todo3"))
        + f'<td data-v="{_e(r.why)}">{_e(r.why)}</td>'
        + (_near_cell(near.get(r.submission)) if near is not None else "")
        + "</tr>"
        for r in summary.roster
    )
    return (
        '<table id="roster"><caption>Every submission (click a column to sort)</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def _problems_block(summary: ClassSummary) -> str:
    if not summary.problems:
        return "<p>Every submission loaded and none timed out.</p>"
    rows = "".join(
        f"<tr><td>{_e(p.submission)}</td><td>{_e(p.kind)}</td><td>{_e(p.detail)}</td></tr>"
        for p in summary.problems
    )
    return (
        '<table id="problems-table"><caption>Submissions that did not load, could not be '
        'graded, or timed out</caption><thead><tr><th scope="col">submission</th>'
        '<th scope="col">problem</th><th scope="col">detail</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _slowest_block(summary: ClassSummary) -> str:
    if not summary.slowest:
        return "<p>No timing recorded.</p>"
    title = f"The {len(summary.slowest)} slowest submissions (seconds to grade)"
    rows = "".join(
        f'<tr><td>{_e(name)}</td><td class="n">{seconds:.2f}</td>'
        f'<td class="n">{_e(score)}</td></tr>'
        for name, seconds, score in summary.slowest
    )
    chart = _hbar_svg(
        [s[0] for s in summary.slowest], [s[1] for s in summary.slowest], "slow", title, "{:.2f} s"
    )
    return (
        f"<figure><figcaption>{_e(title)}</figcaption>{chart}</figure>"
        '<table id="slowest-table"><caption>Slowest submissions</caption><thead><tr>'
        '<th scope="col">submission</th><th scope="col" class="n">seconds</th>'
        f'<th scope="col" class="n">score</th></tr></thead><tbody>{rows}</tbody></table>'
    )


def _nav(near: Mapping[str, NearCell] | None) -> str:
    """Every section one click from the top; the near copies with their count."""
    flagged = sum(c.mark == "flagged" for c in (near or {}).values())
    look = sum(c.mark == "worth a look" for c in (near or {}).values())
    links = [
        ("h-similarity", f"Near copies ({flagged} flagged, {look} worth a look)"),
        ("h-roster", "Roster"),
        ("h-scores", "Score distribution"),
        ("h-categories", "Hidden categories"),
        ("h-problems", "Problems"),
        ("h-slowest", "Slowest"),
    ]
    items = "".join(f'<li><a href="#{ident}">{_e(text)}</a></li>' for ident, text in links)
    return f'<nav aria-label="sections" id="toc"><ul>{items}</ul></nav>'


def render_html(summary: ClassSummary, near: Mapping[str, NearCell] | None = None) -> str:
    """The page: inline CSS and SVG only, no script, no external reference; ``near``
    (each file's similarity cell) adds the roster's similarity column and the link to
    the near copies at the top."""
    hashes = "".join(f"<code>{_e(h)}</code><br>" for h in summary.battery_sha256) or "—"
    kinds = {
        kind: sum(p.kind == kind for p in summary.problems)
        for kind in ("could not be graded", "did not load", "timed out")
    }
    histograms = "".join(_histogram_block(h, i) for i, h in enumerate(summary.histograms))
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in summary.notes)
    seed = "—" if summary.seed is None else str(summary.seed)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src '{_script_hash()}'">
<title>rlsys class report</title>
<style>{CSS}</style>
</head>
<body>
<main>
<h1>rlsys class report</h1>
{_nav(near)}
<dl class="facts" id="facts">
<dt>submissions</dt><dd id="n-submissions">{summary.submissions}</dd>
<dt>graded</dt><dd id="n-graded">{summary.graded}</dd>
<dt>did not load</dt><dd id="n-not-loaded">{kinds["did not load"]}</dd>
<dt>could not be graded</dt><dd id="n-ungraded">{kinds["could not be graded"]}</dd>
<dt>timed out</dt><dd id="n-timed-out">{kinds["timed out"]}</dd>
<dt>seed</dt><dd id="seed"><code>{_e(seed)}</code></dd>
<dt>battery SHA-256</dt><dd id="battery">{hashes}</dd>
<dt>pytest-rlsys</dt><dd>{_e(__version__)}</dd>
</dl>
{notes}
<section aria-labelledby="h-scores"><h2 id="h-scores">Score distribution</h2>
<p class="muted">Graded submissions only (files that did not load score 0 and are listed
below); each range includes its lower bound, and 100% falls in 90–100.</p>
<div class="charts">{histograms}</div>
{_histogram_table(summary.histograms)}</section>
<section aria-labelledby="h-roster"><h2 id="h-roster">Roster</h2>
{_roster_block(summary, near)}</section>
<section aria-labelledby="h-categories"><h2 id="h-categories">Hidden categories most often
failed</h2>{_category_block(summary)}</section>
<section aria-labelledby="h-problems"><h2 id="h-problems">Submissions that did not load or
timed out</h2>{_problems_block(summary)}</section>
<section aria-labelledby="h-slowest"><h2 id="h-slowest">Slowest submissions</h2>
{_slowest_block(summary)}</section>
</main>
<script>{SORT_SCRIPT}</script>
</body>
</html>
"""


def class_report_html(result: BatchResult) -> str:
    """The whole page for a batch: the near copies' side-by-side views come from the bytes
    each row graded (``BatchRow.data``), never from a path."""
    page = render_html(summarize(result), near_cells(result.rows))
    return page.replace("</main>", similarity_section(result.rows) + "</main>", 1)


def write_class_report(path: Path, result: BatchResult) -> None:
    """Write the page atomically; an OSError (unwritable path) is left to the caller."""
    write_atomic(path, class_report_html(result))
