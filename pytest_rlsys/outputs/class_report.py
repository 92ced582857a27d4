"""The class report of a batch run: one self-contained HTML file for the instructor.

``rlsys batch DIR --html class.html`` writes it from the batch rows (each graded
row carries its full score report under ``"report"``). The page needs no network
and reads whole without script: CSS and SVG are inline; one inline script, allowed by
the page's Content-Security-Policy through its hash only, sorts the roster and opens the
side-by-side view a link lands on. Every word is the batch's language (``class_words``;
``rlsys_lang``, ``--lang``). A roster
lists every submission with its scores and, below full marks, why in one line; the
hidden-category table shows the most failed and folds the rest. "Graded" has one
meaning everywhere (``is_graded``): the file loaded and its cases ran. Every chart
has a real ``<table>`` with the same numbers next to it, and no chart relies on
colour (bars carry their numbers). Learner-derived strings (submission names,
messages) are HTML-escaped on the way out; names come from the instructor's folder
(the row's ``submission``), never from paths inside the reports.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from pytest_rlsys import __version__
from pytest_rlsys.escaping import html_text as _e
from pytest_rlsys.messages import section_label
from pytest_rlsys.outputs.batch import BatchResult
from pytest_rlsys.outputs.class_charts import hbar_svg, histogram_svg, html_table
from pytest_rlsys.outputs.class_summary import (
    BIN_LABELS,
    MESSAGE_LIMIT,
    SLOWEST,
    TOP_CATEGORIES,
    CategoryFailures,
    ClassSummary,
    Histogram,
    Problem,
    RosterRow,
    is_graded,
    summarize,
)
from pytest_rlsys.outputs.class_words import say
from pytest_rlsys.outputs.near_copies import (
    NearCell,
    near_cells,
    shown_name,
    similarity_section,
)

__all__ = [
    "BIN_LABELS",
    "MESSAGE_LIMIT",
    "SLOWEST",
    "TOP_CATEGORIES",
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
]


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",
sans-serif;margin:0 auto;max-width:1100px;padding:1rem 1.5rem;color:#111;background:#fff;
line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:2px solid #111;padding-bottom:.2rem}h3{font-size:1.05rem;margin:.2rem 0}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.92rem}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border:1px solid #888;padding:.2rem .55rem;text-align:left;vertical-align:top;
overflow-wrap:break-word}
.wide{overflow-x:auto;max-width:100%}#roster th,#roster td{word-break:keep-all}
@media (min-width:700px){#roster td.t:first-child{min-width:9rem}#roster td.near{min-width:9rem}
#roster td.why{min-width:14rem}}
@media (min-width:1150px){#roster td.t:first-child,#roster td.near{min-width:12rem}
#roster td.why{min-width:16rem}}
table{max-width:100%}.wide>table{max-width:none;margin:0}.wide{margin:.4rem 0 1rem}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.n{white-space:nowrap;overflow-wrap:normal}
@media (max-width:600px){body{padding:.5rem}th,td{padding:.15rem .25rem;overflow-wrap:anywhere}
.wide>table{max-width:100%}}
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
details.why>summary{cursor:pointer}details.why:not([open])>summary::after{content:" …"}
"""

# A "why" longer than this folds behind its first part (one root cause, many words).
WHY_FOLD = 140


def _stats(hist: Histogram, lang: str) -> str:
    if not hist.scores:
        return say("no_graded", lang)
    scores = hist.scores
    return say(
        "stats",
        lang,
        n=len(scores),
        mean=f"{statistics.fmean(scores):.1f}",
        median=f"{statistics.median(scores):.1f}",
        min=f"{min(scores):.1f}",
        max=f"{max(scores):.1f}",
    )


def _histogram_block(hist: Histogram, index: int, lang: str) -> str:
    ident = f"hist-{index}"
    title = say("distribution", lang, title=hist.title)
    return (
        f'<figure aria-describedby="{ident}-s histogram-table">'
        f"<figcaption>{_e(title)}</figcaption>"
        f"{histogram_svg(hist.counts, ident, title, say('axis', lang))}"
        f'<p id="{ident}-s" class="muted">{_e(_stats(hist, lang))}</p></figure>'
    )


def _histogram_table(histograms: Sequence[Histogram], lang: str) -> str:
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
        f'<table id="histogram-table"><caption>{_e(say("hist_caption", lang))}</caption>'
        f'<thead><tr><th scope="col">{_e(say("score_range", lang))}</th>{head}</tr></thead>'
        f'<tbody>{body}</tbody><tfoot><tr><th scope="row">'
        f"{_e(say('graded_submissions', lang))}</th>{total}</tr></tfoot></table>"
    )


def _category_table(ident: str, caption: str, cats: Sequence[CategoryFailures], lang: str) -> str:
    lang_attr = ' lang="zh"' if lang == "zh" else ""
    rows = "".join(
        f'<tr><td class="nw">{_e(section_label(c.section, lang))}</td>'
        f'<td class="t"{lang_attr}>{_e(c.category)}'
        f'</td><td class="n">{c.submissions_failed}</td><td class="n">'
        f'{c.submissions_attempted}</td><td class="n">'
        f"{100 * c.submissions_failed / max(c.submissions_attempted, 1):.0f}%</td>"
        f'<td class="n">{c.cases_failed} / {c.cases}</td></tr>'
        for c in cats
    )
    counts = ("failing", "attempting", "share_failing", "failed_cases")
    heads = [("TODO", False), (say("category", lang), False)]
    heads += [(say(key, lang), True) for key in counts]
    return html_table(ident, caption, heads, rows)


def _category_block(summary: ClassSummary) -> str:
    lang = summary.lang
    if not summary.categories:
        return f"<p>{_e(say('no_category', lang))}</p>"
    # The chart shows the most failed; the table below it lists every failed category.
    top = summary.categories[:TOP_CATEGORIES]
    labels = [f"{section_label(c.section, lang)}: {c.category}" for c in top]
    values = [float(c.submissions_failed) for c in top]
    title = say("top_categories", lang, n=len(top))
    rest = summary.categories[TOP_CATEGORIES:]
    folded = (
        f"<details><summary>{_e(say('more_categories', lang, n=len(rest)))}</summary>"
        + _category_table("categories-more", say("other_categories", lang), rest, lang)
        + "</details>"
        if rest
        else ""
    )
    return (
        f"<figure><figcaption>{_e(title)}</figcaption>"
        f"{hbar_svg(labels, values, 'cat', title, '{:.0f}')}</figure>"
        + _category_table("categories-table", say("top_table", lang, n=len(top)), top, lang)
        + folded
        + f'<p class="muted">{_e(say("categories_note", lang, n=summary.graded))}</p>'
    )


# Sorts the roster by a column when its header is clicked, and opens the side-by-side
# view a link lands on; the page reads the same without it (a view opens with a click).
# Allowed by the page's Content-Security-Policy through its hash only.
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
})();
(function () {
  function open() {
    var target = location.hash && document.getElementById(location.hash.slice(1));
    if (target && target.tagName === "DETAILS") { target.open = true; }
  }
  addEventListener("hashchange", open);
  open();
})();"""


def _script_hash() -> str:
    import base64
    import hashlib

    digest = hashlib.sha256(SORT_SCRIPT.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


# The roster's similarity column sorts flagged first (its data-v), then worth a look.
_NEAR_ORDER = {"flagged": 0, "built at run time": 1, "worth a look": 2, "not compared": 3}


def _near_cell(cell: NearCell | None, lang: str) -> str:
    if cell is None:
        return '<td class="near" data-v="9">—</td>'
    if not cell.mark:  # not flagged: how close its closest file is, for comparison
        shown = (
            say("closest_score", lang, name=shown_name(cell.closest, lang), score=cell.sign)
            if cell.closest
            else "—"
        )
        return f'<td class="near t muted" data-v="8">{_e(shown)}</td>'
    closest = f" {_e(shown_name(cell.closest, lang))}" if cell.closest else ""
    sign = f" ({_e(cell.sign_text(lang))})" if cell.sign else ""
    link = f' <a href="#{cell.pair}">{_e(say("side_by_side", lang))}</a>' if cell.pair else ""
    order = _NEAR_ORDER.get(cell.mark, 9)
    mark = _e(say(cell.mark, lang))
    return f'<td class="near t" data-v="{order}"><strong>{mark}</strong>{closest}{sign}{link}</td>'


def _why_cell(why: str) -> str:
    """The one line why; a long one folded after its first part (its root cause)."""
    if len(why) <= WHY_FOLD:
        return f'<td class="t why" data-v="{_e(why)}">{_e(why)}</td>'
    cut = why[:WHY_FOLD].rsplit(" ", 1)[0] if " " in why[:WHY_FOLD] else why[:WHY_FOLD]
    return (
        f'<td class="t why" data-v="{_e(why)}"><details class="why"><summary>{_e(cut)}'
        f"</summary>{_e(why[len(cut) :])}</details></td>"
    )


def _roster_block(summary: ClassSummary, near: Mapping[str, NearCell] | None = None) -> str:
    lang = summary.lang
    if not summary.roster:
        return f"<p>{_e(say('no_submission', lang))}</p>"
    heads = [say("submission", lang), say("status", lang), say("score", lang)]
    heads += ["TODO 1", "TODO 2", "TODO 3", say("why", lang)]
    if near is not None:
        heads.append(say("similarity", lang))
    head = "".join(
        f'<th scope="col"><button type="button" data-col="{i}">{_e(h)}</button></th>'
        for i, h in enumerate(heads)
    )

    def num(value: float | None) -> str:
        shown = "—" if value is None else f"{value:g}"
        return f'<td class="n" data-v="{-1 if value is None else value:g}">{shown}</td>'

    def status(row: RosterRow) -> str:
        word = say(f"st_{row.status}", lang)
        return f'<td class="nw" data-v="{_e(row.status)}">{_e(word)}</td>'

    rows = "".join(
        f'<tr><td class="t" data-v="{_e(r.submission)}">{_e(r.submission)}</td>'
        f"{status(r)}{num(r.score)}"
        + "".join(num(r.sections.get(s)) for s in ("todo1", "todo2", "todo3"))
        + _why_cell(r.why)
        + (_near_cell(near.get(r.submission), lang) if near is not None else "")
        + "</tr>"
        for r in summary.roster
    )
    return (
        f'<div class="wide"><table id="roster"><caption>{_e(say("roster_caption", lang))}'
        f"</caption><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _problems_block(summary: ClassSummary) -> str:
    lang = summary.lang
    if not summary.problems:
        return f"<p>{_e(say('no_problem', lang))}</p>"
    rows = "".join(
        f'<tr><td class="t">{_e(p.submission)}</td><td>{_e(say(p.kind, lang))}</td>'
        f'<td class="t">{_e(p.detail)}</td></tr>'
        for p in summary.problems
    )
    heads = [(say(key, lang), False) for key in ("submission", "problem", "detail")]
    return html_table("problems-table", say("problems_caption", lang), heads, rows, wide=True)


def _slowest_block(summary: ClassSummary) -> str:
    lang = summary.lang
    if not summary.slowest:
        return f"<p>{_e(say('no_timing', lang))}</p>"
    title = say("slowest_title", lang, n=len(summary.slowest))
    rows = "".join(
        f'<tr><td class="t">{_e(name)}</td><td class="n">{seconds:.2f}</td>'
        f'<td class="n">{_e(score)}</td></tr>'
        for name, seconds, score in summary.slowest
    )
    chart = hbar_svg(
        [s[0] for s in summary.slowest], [s[1] for s in summary.slowest], "slow", title, "{:.2f} s"
    )
    heads = [(say(key, lang), key != "submission") for key in ("submission", "seconds", "score")]
    return f"<figure><figcaption>{_e(title)}</figcaption>{chart}</figure>" + html_table(
        "slowest-table", say("slowest_head", lang), heads, rows
    )


def _nav(near: Mapping[str, NearCell] | None, lang: str) -> str:
    """Every section one click from the top; the near copies with their count."""
    flagged = sum(c.mark == "flagged" for c in (near or {}).values())
    look = sum(c.mark == "worth a look" for c in (near or {}).values())
    links = [
        ("h-similarity", say("nav_near", lang, flagged=flagged, look=look)),
        ("h-roster", say("roster", lang)),
        ("h-scores", say("scores", lang)),
        ("h-categories", say("categories", lang)),
        ("h-problems", say("problems", lang)),
        ("h-slowest", say("slowest", lang)),
    ]
    items = "".join(f'<li><a href="#{ident}">{_e(text)}</a></li>' for ident, text in links)
    return f'<nav aria-label="{_e(say("nav", lang))}" id="toc"><ul>{items}</ul></nav>'


def _facts(summary: ClassSummary) -> str:
    lang = summary.lang
    hashes = "".join(f"<code>{_e(h)}</code><br>" for h in summary.battery_sha256) or "—"
    kinds = {
        kind: sum(p.kind == kind for p in summary.problems)
        for kind in ("could not be graded", "did not load", "timed out")
    }
    seed = "—" if summary.seed is None else str(summary.seed)
    facts = [
        ("submissions", "n-submissions", str(summary.submissions)),
        ("graded", "n-graded", str(summary.graded)),
        ("did not load", "n-not-loaded", str(kinds["did not load"])),
        ("could not be graded", "n-ungraded", str(kinds["could not be graded"])),
        ("timed out", "n-timed-out", str(kinds["timed out"])),
    ]
    items = "".join(
        f'<dt>{_e(say(key, lang))}</dt><dd id="{ident}">{value}</dd>' for key, ident, value in facts
    )
    return (
        f'<dl class="facts" id="facts">{items}'
        f'<dt>{_e(say("seed", lang))}</dt><dd id="seed"><code>{_e(seed)}</code></dd>'
        f'<dt>{_e(say("battery", lang))}</dt><dd id="battery">{hashes}</dd>'
        f"<dt>pytest-rlsys</dt><dd>{_e(__version__)}</dd></dl>"
    )


def render_html(summary: ClassSummary, near: Mapping[str, NearCell] | None = None) -> str:
    """The page: inline CSS and SVG only, no external reference; ``near`` (each file's
    similarity cell) adds the roster's similarity column and the link to the near copies
    at the top."""
    lang = summary.lang
    histograms = "".join(_histogram_block(h, i, lang) for i, h in enumerate(summary.histograms))
    notes = "".join(f'<p class="note">{_e(n)}</p>' for n in summary.notes)

    def section(ident: str, key: str, body: str) -> str:
        return (
            f'<section aria-labelledby="{ident}"><h2 id="{ident}">{_e(say(key, lang))}</h2>'
            f"{body}</section>\n"
        )

    return f"""<!DOCTYPE html>
<html lang="{"zh" if lang == "zh" else "en"}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src '{_script_hash()}'">
<title>{_e(say("title", lang))}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<h1>{_e(say("title", lang))}</h1>
{_nav(near, lang)}
{_facts(summary)}
{notes}
{
        section(
            "h-scores",
            "scores",
            f'<p class="muted">{_e(say("scores_note", lang))}</p>'
            f'<div class="charts">{histograms}</div>' + _histogram_table(summary.histograms, lang),
        )
    }{section("h-roster", "roster", _roster_block(summary, near))}{
        section("h-categories", "categories_head", _category_block(summary))
    }{section("h-problems", "problems_head", _problems_block(summary))}{
        section("h-slowest", "slowest_head", _slowest_block(summary))
    }</main>
<script>{SORT_SCRIPT}</script>
</body>
</html>
"""


def class_report_html(result: BatchResult) -> str:
    """The whole page for a batch: the near copies' side-by-side views come from the bytes
    each row graded (``BatchRow.data``), never from a path."""
    page = render_html(summarize(result), near_cells(result.rows))
    section = similarity_section(result.rows, result.lang)
    return page.replace("</main>", section + "</main>", 1)
