"""The class report's near copies as an instructor acts on them (pytest_rlsys/outputs/
near_copies.py, pairview.py): a pair is a pair (no direction), files just under the line
are listed apart, the roster says each file's flag, and a flagged pair is shown side by
side with the passages it shares highlighted, escaped, linear in the files' sizes."""

from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.outputs import pairview
from pytest_rlsys.outputs.batch import BatchResult, BatchRow
from pytest_rlsys.outputs.class_report import class_report_html
from pytest_rlsys.outputs.near_copies import near_cells, pairs_of, similarity_section
from pytest_rlsys.resources import exercise_path, solution_path
from pytest_rlsys.similarity import CONFIRMED_ABOVE, THRESHOLD, Similarity
from tests import browser_check


def _row(
    name: str,
    closest: str | None = None,
    score: float = 0.1,
    *by: str,
    data: str | None = None,
    **found: Any,
) -> BatchRow:
    similarity = Similarity(closest, score, by, **found)
    raw = None if data is None else data.encode("utf-8")
    return BatchRow(name, "graded", similarity=similarity, data=raw)


def _page(rows: list[BatchRow]) -> str:
    return class_report_html(BatchResult(1, "en", rows))


def _disguised(source: str) -> str:
    """A copy as a learner hides one: names changed, comments added, layout changed."""
    renamed = re.sub(r"\bstage_rates\b", "rates_of_stages", source)
    renamed = re.sub(r"\barrival_rate\b", "incoming", renamed)
    return "# my own work\n" + renamed.replace("    ", "  ").replace("\n\n\n", "\n\n")


def test_a_classmate_pair_is_one_pair_in_name_order_whoever_flagged_it() -> None:
    rows = [
        _row("zed.py", "amy.py", 0.92, "code", alike=0.9),
        _row("amy.py", "zed.py", 0.92, "code", alike=0.9),
        _row("bo.py", "yan.py", 0.88, "code"),  # yan's closest: another
        _row("yan.py", "kim.py", 0.3),
    ]
    pairs = pairs_of(rows)
    assert [(p.a, p.b) for p in pairs] == [("amy.py", "zed.py"), ("bo.py", "yan.py")]
    page = similarity_section(rows)
    table = page[page.index('id="similarity-table"') : page.index("</table>")]
    assert "<td>amy.py</td><td>zed.py</td>" in table and "zed.py</td><td>amy.py" not in table
    # Nothing says which copied which: no "copy of", "original", "source" in the table.
    assert not re.search(r"copy of|original|copied from", table, re.IGNORECASE)


def test_files_just_under_the_line_are_worth_a_look_and_listed_apart() -> None:
    # The decision sets look_by (tests/unit/test_similarity_decide.py); the page shows it.
    rows = [
        _row("near.py", "x.py", round(THRESHOLD - 0.04, 2), look_by=("code",)),
        _row("far.py", "x.py", round(THRESHOLD - 0.3, 2)),
        # Over the code line between classmates but not behaving alike: not flagged.
        _row("style.py", "x.py", round(CONFIRMED_ABOVE - 0.1, 2), alike=0.2, look_by=("code",)),
        # Behaving as the reference with neither its code nor its sentences: never flagged.
        _row("acts.py", "reference", 0.28, behaviour=0.897, look_by=("behaviour",)),
        _row("x.py", "near.py", 0.2),
    ]
    cells = near_cells(rows)
    assert {n for n, c in cells.items() if c.mark == "worth a look"} == {
        "near.py",
        "style.py",
        "acts.py",
    }
    assert cells["far.py"].mark == "" and cells["x.py"].mark == ""
    assert cells["acts.py"].sign == "behaviour 0.90" and cells["acts.py"].pair == ""
    page = similarity_section(rows)
    look = page[page.index('id="similarity-look"') :]
    look = look[: look.index("</p>")]
    assert "near.py (x.py, code" in look and "style.py (x.py, code" in look
    assert "acts.py (reference, behaviour 0.90)" in look and "far.py" not in look
    assert 'id="similarity-table"' not in page  # nothing flagged: no pair
    zh = similarity_section(rows, "zh")
    assert "acts.py (参考答案, 行为 0.90)" in zh


def test_the_roster_says_each_file_s_flag_closest_and_sign() -> None:
    rows = [
        _row("amy.py", "zed.py", 0.92, "code", alike=0.9),
        _row("zed.py", "amy.py", 0.92, "code", alike=0.9),
        _row("ref.py", "reference", 0.4, "sentences", sentences=6),
        _row("ok.py", "amy.py", 0.2),
    ]
    page = _page(rows)
    roster = page[page.index('id="roster"') : page.index("</table>", page.index('id="roster"'))]
    assert "similarity (flag, closest, sign)" in roster
    assert "<strong>flagged</strong> zed.py" in roster and "(code)" in roster
    assert "<strong>flagged</strong> reference" in roster and "(sentences)" in roster
    # The near copies are one click from the top, with their count.
    toc = page[page.index('id="toc"') : page.index("</nav>")]
    assert 'href="#h-similarity"' in toc and "3 flagged" in toc
    assert page.index('id="toc"') < page.index('id="h-scores"')


def test_a_flagged_pair_is_shown_side_by_side_with_what_it_shares() -> None:
    original = solution_path().read_text(encoding="utf-8")
    hostile = '\n# </pre><script>alert(1)</script>\nNOTE = "<img src=x onerror=alert(1)>"\n'
    rows = [
        _row("amy.py", "zed.py", 0.95, "code", alike=0.9, data=original + hostile),
        _row("zed.py", "amy.py", 0.95, "code", alike=0.9, data=_disguised(original)),
        _row("own.py", "amy.py", 0.1, data=exercise_path().read_text("utf-8")),
    ]
    page = _page(rows)
    view = page[page.index('id="pair-1"') :]
    view = view[: view.index("</details>")]
    panes = view.split("<pre>")[1:]
    assert len(panes) == 2 and all(p.count("<mark>") >= 1 for p in panes)
    # Most of each file is shared: the disguise (names, layout, a comment) changes nothing.
    shares = [int(s) for s in re.findall(r"— (\d+)% highlighted", view)]
    assert len(shares) == 2 and min(shares) >= 80, shares
    # The learner's text is escaped, never markup.
    assert "<script>alert" not in page and "&lt;/pre&gt;&lt;script&gt;" in view
    assert "<img" not in page
    # The roster and the table link to the view.
    assert page.count('href="#pair-1"') == 3  # the pair's table row and both roster rows


def test_a_reference_pair_says_the_chapter_s_reference_is_not_shown() -> None:
    # "reference" is two texts; only the package's solution can be shown, so a copy of the
    # chapter's printed code shows less highlighted than its shared-code figure (course
    # trial: "1.00 shared" beside a view "56 % highlighted", labelled only "reference").
    original = solution_path().read_text(encoding="utf-8")
    rows = [
        _row("amy.py", "reference", 1.0, "code", data=_disguised(original)),
        _row("own.py", "amy.py", 0.1, data=exercise_path().read_text("utf-8")),
    ]
    for lang, words in (("en", "fingerprints only"), ("zh", "只以指纹形式")):
        page = class_report_html(BatchResult(1, lang, rows))
        view = page[page.index('id="pair-1"') :]
        assert words in view[: view.index("</details>")]
    # A classmate pair has no such note.
    pair = [
        _row("amy.py", "zed.py", 0.95, "code", alike=0.9, data=original),
        _row("zed.py", "amy.py", 0.95, "code", alike=0.9, data=_disguised(original)),
    ]
    assert "fingerprints only" not in _page(pair)


def test_the_template_both_start_from_is_not_highlighted() -> None:
    template = exercise_path().read_text(encoding="utf-8")
    spans_a, spans_b = pairview.shared_spans(template, template + "\nx = 1\n")
    assert spans_a == [] and spans_b == []
    # The control: the reference against itself is one shared passage or more.
    reference = solution_path().read_text(encoding="utf-8")
    assert pairview.shared_spans(reference, reference)[0]


def test_shared_spans_are_linear_and_capped() -> None:
    """A file is cut at 256 KiB; the work is one hash per token (no pair of positions is
    ever compared), so the most repetitive input, the worst case of a quadratic
    matcher, is one merged span."""
    line = "total = total + rates[index] * weights[index]\n"
    big = line * (2 * pairview.MAX_BYTES // len(line))
    toks = pairview.tokens(big)
    assert toks[-1][2] <= pairview.MAX_BYTES < len(big)
    spans_a, spans_b = pairview.shared_spans(big, big)
    assert len(spans_a) == len(spans_b) == 1
    assert spans_a[0][1] - spans_a[0][0] > pairview.MAX_BYTES * 0.9


def test_a_file_that_cannot_be_shown_says_so() -> None:
    rows = [
        _row("amy.py", "zed.py", 0.95, "code", alike=0.9, data="x = 1\n" * 60_000),  # >256 KiB
        _row("zed.py", "amy.py", 0.95, "code", alike=0.9),  # no bytes kept
    ]
    page = similarity_section(rows)
    assert "not shown side by side" in page and "<pre>" not in page


def _graded(name: str, i: int) -> BatchRow:
    """A graded row scoring 94.5x of 100 (TODO 1 passed, TODO 2 failed), with a message."""
    cases = [
        CaseResult(
            id="todo1.c0",
            section="todo1",
            visibility="visible",
            max_cents=9451 + i,
            status="passed",
        ),
        CaseResult(
            id="todo2.c0", section="todo2", visibility="visible", max_cents=549 - i, status="failed"
        ),
    ]
    report = ScoreReport(
        cases=cases, seed=1, submission=name, submission_sha256=None, battery_sha256=None
    )
    found = Similarity("x.py", 0.2 + i / 1000)
    return BatchRow(name, "graded", report=report, similarity=found, message="m " * 60)


@pytest.mark.slow
@pytest.mark.skipif(browser_check.find_browser() is None, reason="no Chromium installed")
def test_number_cells_never_break_at_1280_px(tmp_path: Path) -> None:
    browser = browser_check.find_browser()
    assert browser is not None
    rows = [_graded(f"learner_with_a_rather_long_name_{i:02d}.py", i) for i in range(30)]
    rows[0].similarity = Similarity("reference", 0.97, ("code", "sentences"), 12, 0.93)
    page = tmp_path / "class.html"
    page.write_text(_page(rows), encoding="utf-8")
    for width in (1280, 700, 420):
        assert browser_check.wrapped_numbers_at(page, browser, width) == "", width
    # The control: without the rule, the same page breaks them (94./51) at 420 px.
    loose = tmp_path / "loose.html"
    loose.write_text(
        page.read_text("utf-8").replace(
            "td.n{white-space:nowrap;overflow-wrap:normal}", "td{overflow-wrap:anywhere}"
        ),
        encoding="utf-8",
    )
    assert "94.51" in browser_check.wrapped_numbers_at(loose, browser, 420)


@pytest.mark.slow  # a page in Chromium: 1.5-4 s
@pytest.mark.skipif(browser_check.find_browser() is None, reason="no Chromium installed")
def test_the_roster_breaks_no_word_at_1280_px(tmp_path: Path) -> None:
    """Roster columns wide enough for their words: headers, statuses, flags, and names of a
    real class's length (Gradescope's submission_NNNNNNNNN) are never cut mid-word."""
    browser = browser_check.find_browser()
    assert browser is not None
    rows = [_graded(f"submission_28193401{i:02d}", i) for i in range(30)]
    for row in rows:
        assert row.report is not None
        cases = row.report.cases
        cases[1] = dataclasses.replace(cases[1], note="the bottleneck stage is wrong " * 8)
    rows[0].similarity = Similarity("reference", 0.97, ("code", "sentences"), 12, 0.93)
    rows[1].similarity = Similarity("submission_2819340102", 0.81)
    page = tmp_path / "class.html"
    page.write_text(_page(rows), encoding="utf-8")
    assert browser_check.broken_words_at(page, browser, "#roster th, #roster td") == ""
    # The control: letting any cell break anywhere breaks the same roster's words.
    loose = tmp_path / "loose.html"
    text = page.read_text("utf-8").replace("overflow-wrap:break-word}", "overflow-wrap:anywhere}")
    loose.write_text(re.sub(r"min-width:\d+rem", "min-width:0", text), encoding="utf-8")
    assert browser_check.broken_words_at(loose, browser, "#roster th, #roster td") != ""


class _Words(HTMLParser):
    """The page's visible words outside code: text nodes, not in <pre>, <code>, <style>,
    <script>; plus the title and aria labels a reader hears."""

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("pre", "code", "style", "script"):
            self.skip += 1
        self.words += [v for k, v in attrs if k == "aria-label" and v]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("pre", "code", "style", "script"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.words.append(data)


# What a zh page may still spell in Latin letters: names, identifiers and units.
_LATIN_OK = re.compile(
    r"TODO|SHA|pytest|rlsys|NotImplementedError|exec|eval|compile|fabric|id|FIFO|KiB|py|"
    r"winnowing|n|s|reference|\w+\.py|submission_\w+"
)


def test_the_class_page_is_all_chinese_under_zh() -> None:
    """rlsys_lang = "zh": every word of the page is the catalogue's Chinese (class_words),
    the roster, the near copies and the side-by-side views included."""
    source = solution_path().read_text("utf-8")
    rows = [
        _row("amy.py", "zed.py", 0.92, "code", data=source, alike=0.9),
        _row("zed.py", "amy.py", 0.92, "code", data=_disguised(source), alike=0.9),
        _row("near.py", "x.py", round(THRESHOLD - 0.04, 2)),
        _row("x.py", "near.py", 0.2),
        _row("gen.py", "x.py", 0.3, hidden=True),
        _row("link.py", None, None, not_compared="a link"),  # type: ignore[arg-type]
    ]
    page = class_report_html(BatchResult(1, "zh", rows))
    assert '<html lang="zh">' in page
    parser = _Words()
    parser.feed(page)
    english = [
        word
        for text in parser.words
        for word in re.findall(r"[A-Za-z][A-Za-z_.]*", text)
        if not _LATIN_OK.fullmatch(word) and word != "a" and word != "link"
    ]
    assert english == [], sorted(set(english))
    # The same page in English has the words the Chinese replaced (the check can fail).
    parser = _Words()
    parser.feed(class_report_html(BatchResult(1, "en", rows)))
    assert any("flagged" in text for text in parser.words)


@pytest.mark.slow  # a page in Chromium: 1.5-4 s
@pytest.mark.skipif(browser_check.find_browser() is None, reason="no Chromium installed")
def test_a_side_by_side_link_lands_on_an_opened_view(tmp_path: Path) -> None:
    """The roster's "side by side" link (#pair-N) opens the view it lands on (the page's
    one hashed script; without script a click on its summary opens it)."""
    browser = browser_check.find_browser()
    assert browser is not None
    source = solution_path().read_text("utf-8")
    rows = [
        _row("amy.py", "zed.py", 0.92, "code", data=source, alike=0.9),
        _row("zed.py", "amy.py", 0.92, "code", data=_disguised(source), alike=0.9),
    ]
    page = tmp_path / "class.html"
    page.write_text(_page(rows), encoding="utf-8")
    assert 'href="#pair-1"' in page.read_text("utf-8")
    opened = browser_check.dom_at(page.as_uri() + "#pair-1", browser)
    assert re.search(r'<details id="pair-1" class="pair" open="">', opened), opened[-2000:]
    # The control: loaded without the fragment, the view stays folded.
    plain = browser_check.dom_at(page.as_uri(), browser)
    assert '<details id="pair-1" class="pair">' in plain


@pytest.mark.slow  # a page in Chromium: 1.5-4 s
@pytest.mark.skipif(browser_check.find_browser() is None, reason="no Chromium installed")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_roster_at_800_px_breaks_no_word_and_stays_inside_the_window(
    tmp_path: Path, lang: str
) -> None:
    """A laptop's half screen (trial 5's L2, L9): the roster's words are never cut (its
    "why" column, its similarity, a zh status such as 已评分) and nothing reaches past the
    window's right edge: a roster wider than the window scrolls inside its own box."""
    browser = browser_check.find_browser()
    assert browser is not None
    why = (
        "TODO 2 28.59/35: raised an exception where a result was due: accepts one fabric "
        "with bandwidths 0.5 tolerances apart (relative tolerance) ×14 (+2 other kinds)"
    )
    rows = [_graded(f"B-{i:02d} Zhang Wei 张伟 ({i})", i) for i in range(12)]
    for i, row in enumerate(rows):
        row.message = why
        row.similarity = Similarity(rows[(i + 1) % 12].name, 0.97, ("code", "behaviour"), 12, 0.9)
    rows[0].similarity = Similarity("reference", 0.99, ("code", "sentences"), 12, 0.93)
    page = tmp_path / "class.html"
    page.write_text(class_report_html(BatchResult(1, lang, rows)), encoding="utf-8")
    assert browser_check.broken_words_at(page, browser, "#roster th, #roster td", 800) == ""
    assert browser_check.overflow_at(page, browser, 800) == ""
    # At 1280 px it fits without scrolling, its words whole (course trial r5 L-a).
    assert browser_check.scrolling_boxes_at(page, browser, 1280) == ""
    assert browser_check.broken_words_at(page, browser, "#roster th, #roster td", 1280) == ""
