"""rlsys batch --html: the class report's tables and numbers, escaping, and a real browser."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.cli import main
from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.messages import Msg
from pytest_rlsys.outputs import class_report
from pytest_rlsys.outputs.batch import BatchResult, BatchRow
from pytest_rlsys.outputs.class_words import say
from pytest_rlsys.resources import solution_path
from pytest_rlsys.similarity import Similarity
from tests import browser_check

# Every test here reads one batch of a class (12 s) or a page in Chromium: the plain loop
# leaves them to --run-slow (test_commands keeps rlsys batch in it).
pytestmark = pytest.mark.slow

SEED = 7


class Page(HTMLParser):
    """The page's tables (id -> rows of cell text), tags seen, and attributes."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.tags: dict[str, int] = {}
        self.attrs: list[tuple[str, str, str | None]] = []
        self.by_id: dict[str, str] = {}
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._id_stack: list[tuple[str, str | None]] = []
        self._id_text: dict[str, list[str]] = {}
        self.feed(text)
        self.by_id = {k: " ".join("".join(v).split()) for k, v in self._id_text.items()}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.attrs += [(tag, k, v) for k, v in attrs]
        ident = dict(attrs).get("id")
        self._id_stack.append((tag, ident))
        if ident:
            self._id_text[ident] = []
        if tag == "table":
            self._table = ident or f"table-{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        while self._id_stack:
            open_tag, _ = self._id_stack.pop()
            if open_tag == tag:
                break
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        for _, ident in self._id_stack:
            if ident:
                self._id_text[ident].append(data)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real batch over the demo class (see tests/browser_check.py)."""
    work = tmp_path_factory.mktemp("class")
    code, html, grades = browser_check.run_demo_batch(work, SEED)
    assert code == 0
    text = html.read_text(encoding="utf-8")
    return {
        "dir": work,
        "html": html,
        "text": text,
        "page": Page(text),
        "doc": json.loads(grades.read_text(encoding="utf-8")),
    }


def rows_of(page: Page, table: str) -> dict[str, list[str]]:
    return {row[0]: row[1:] for row in page.tables[table][1:]}


def expected_bins(rows: list[dict[str, Any]], section: str | None) -> list[int]:
    counts = [0] * 10
    for row in rows:
        if row["status"] != "graded":  # the one meaning: loaded and run
            continue
        if section is None:
            score, top = row["score"], row["max_score"]
        else:
            entry = row["report"]["sections"][section]
            score, top = entry["score"], entry["max_score"]
        counts[min(int(100 * score / top // 10), 9)] += 1
    return counts


@pytest.mark.slow
def test_facts_name_the_seed_battery_and_counts(demo: dict[str, Any]) -> None:
    page = demo["page"]
    hashes = {
        r["report"]["reproducibility"]["battery_sha256"]
        for r in demo["doc"]["submissions"]
        if r["status"] == "graded"
    }
    assert len(hashes) == 1
    assert page.by_id["seed"] == str(SEED)
    assert page.by_id["battery"] == hashes.pop()
    assert page.by_id["n-submissions"] == "15"
    # "Graded" means what the CSV's status and rlsys batch's count mean: loaded and run.
    graded = sum(r["status"] == "graded" for r in demo["doc"]["submissions"])
    assert page.by_id["n-graded"] == str(graded) == "12"
    assert page.by_id["n-not-loaded"] == "2"
    assert page.by_id["n-ungraded"] == "1"
    assert page.by_id["n-timed-out"] == "1"


def test_histograms_per_todo_and_overall_match_the_scores(demo: dict[str, Any]) -> None:
    page, rows = demo["page"], demo["doc"]["submissions"]
    table = page.tables["histogram-table"]
    assert table[0] == ["score range (%)", "Overall", "TODO 1", "TODO 2", "TODO 3"]
    body = table[1:11]
    assert [r[0] for r in body] == list(class_report.BIN_LABELS)
    for column, section in enumerate((None, "todo1", "todo2", "todo3"), start=1):
        assert [int(r[column]) for r in body] == expected_bins(rows, section), section
    assert table[11] == ["graded submissions", "12", "12", "12", "12"]
    overall = [int(r[1]) for r in body]
    assert overall[9] >= 2  # the reference and the hostile-named folder score 100
    assert overall[6] >= 1  # half.py: TODO 1 and 2 only, 65 points
    # One chart per histogram, each an SVG image with a title, backed by the table.
    svgs = [a for a in page.attrs if a[0] == "svg" and a[1] == "role"]
    assert len(svgs) == 4 + 1 + 1  # 4 histograms, categories, slowest
    described = [v for t, k, v in page.attrs if t == "figure" and k == "aria-describedby"]
    assert len(described) == 4 and all("histogram-table" in (v or "") for v in described)


def test_hidden_categories_count_attempted_loaded_submissions(demo: dict[str, Any]) -> None:
    page, rows = demo["page"], demo["doc"]["submissions"]
    table = page.tables["categories-table"]
    assert table[0][:3] == ["TODO", "category", "submissions failing"]
    # The top ones shown, the rest folded below them, in the same order.
    assert len(table) - 1 <= class_report.TOP_CATEGORIES
    body = table[1:] + page.tables.get("categories-more", [[]])[1:]
    assert body, "the planted defects fail hidden categories"
    failing = [int(r[2]) for r in body]
    assert failing == sorted(failing, reverse=True)
    assert failing[0] >= 3  # dana, eve and finn share the unchecked-arrival defect
    # Recount one category independently from the JSON reports.
    todo, category = body[0][0], body[0][1]
    section = {"TODO 1": "todo1", "TODO 2": "todo2", "TODO 3": "todo3"}[todo]
    failed, attempted = set(), set()
    for row in rows:
        report = row.get("report")
        if not report or row["submission"] in ("carol.py", browser_check.HOSTILE_FILE):
            continue  # did not load
        if report["sections"][section]["not_implemented"]:
            continue
        for test in report["tests"]:
            # A failed hidden case's category in the JSON names its rule too.
            named = test["category"] == category or test["category"].startswith(
                f"{category} (rule: "
            )
            if (
                not named
                or (test["section"], test["visibility"]) != (section, "hidden")
                or test["status"] in ("not_run", "timeout")
            ):
                continue
            attempted.add(row["submission"])
            if test["status"] != "passed":
                failed.add(row["submission"])
    assert (int(body[0][2]), int(body[0][3])) == (len(failed), len(attempted))
    # The template (all NotImplementedError) and the hang never count as attempts.
    assert "bob.py" not in attempted and "hang.py" not in attempted
    # half.py did not implement TODO 3, so no TODO 3 failure comes from it.
    todo3 = [r for r in body if r[0] == "TODO 3"]
    assert todo3 and all(int(r[2]) == 1 for r in todo3)  # only jo's defect is in TODO 3


def test_roster_lists_every_submission_and_why(demo: dict[str, Any]) -> None:
    page, rows = demo["page"], demo["doc"]["submissions"]
    table = page.tables["roster"]
    assert table[0] == [
        "submission",
        "status",
        "score",
        "TODO 1",
        "TODO 2",
        "TODO 3",
        "why below full marks",
        "similarity (flag, closest, sign)",
    ]
    body = {r[0]: r[1:] for r in table[1:]}
    assert list(body) == sorted(r["submission"] for r in rows)
    for row in rows:
        status, score, *_, why, _near = body[row["submission"]]
        assert status == row["status"]
        if "score" in row:
            assert float(score) == row["score"]
        full = row.get("score") == row.get("max_score") and "score" in row
        assert bool(why) is not full, row["submission"]  # below full marks: one line why
        assert why == row["message"][: class_report.MESSAGE_LIMIT - 1] or why == row["message"]
    # The CSV message says why too (the same text): the template, the hang, the bomb.
    assert "not implemented yet" in body["bob.py"][-2]
    assert "timed out" in body["hang.py"][-2] or "not run" in body["hang.py"][-2]
    # The similarity column: alice handed in the reference itself.
    assert body["alice.py"][-1].startswith("flagged reference (code")


def test_problems_and_slowest_tables(demo: dict[str, Any]) -> None:
    page, rows = demo["page"], demo["doc"]["submissions"]
    problems = {r[0]: r[1:] for r in page.tables["problems-table"][1:]}
    assert set(problems) == {"carol.py", browser_check.HOSTILE_FILE, "hang.py", "empty"}
    assert problems["carol.py"][0] == "did not load" and "SyntaxError" in problems["carol.py"][1]
    assert problems[browser_check.HOSTILE_FILE][0] == "did not load"
    assert browser_check.HOSTILE_MESSAGE in problems[browser_check.HOSTILE_FILE][1]
    assert problems["hang.py"][0] == "timed out" and "cases timed out" in problems["hang.py"][1]
    assert problems["empty"] == [
        "could not be graded",
        "expected one .py file in empty/, or one named rlsys_ledger.py among several, found 0",
    ]
    slowest = page.tables["slowest-table"][1:]
    timed = sorted(((r["seconds"], r["submission"]) for r in rows if "seconds" in r), reverse=True)
    assert len(slowest) == min(len(timed), class_report.SLOWEST)
    assert slowest[0][0] == "hang.py" == timed[0][1]
    assert [float(r[1]) for r in slowest] == pytest.approx(
        [round(s, 2) for s, _ in timed[: len(slowest)]], abs=0.006
    )


def test_learner_strings_are_escaped_and_the_page_is_self_contained(demo: dict[str, Any]) -> None:
    text, page = demo["text"], demo["page"]
    # One script (the roster's sorting), allowed by the page's policy through its hash only.
    assert page.tags.get("script", 0) == 1
    assert text.count("<script>") == 1 and class_report.SORT_SCRIPT in text
    assert f"script-src '{class_report._script_hash()}'" in text
    assert "unsafe-inline" not in text.split("script-src", 1)[1].split('"', 1)[0]
    assert not [a for a in page.attrs if a[1].startswith("on")]
    assert not [a for a in page.attrs if a[1] == "src"]
    # Links only within the page (the contents, the side-by-side views), each to an id on it.
    ids = {v for _, k, v in page.attrs if k == "id"}
    hrefs = [v or "" for _, k, v in page.attrs if k == "href"]
    assert hrefs and all(h.startswith("#") and h[1:] in ids for h in hrefs), hrefs
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text
    assert "<img" not in text and "<script>alert" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in text
    assert "&lt;script&gt;alert(1)" in text
    assert "&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;" in text
    # Names come from the instructor's folder, never from paths inside the reports.
    assert str(demo["dir"]) not in text
    # Every chart sits next to a real table.
    assert {"histogram-table", "categories-table", "problems-table", "slowest-table"} <= set(
        page.tables
    )


def _report(status: str, category: str, battery: str, kind: str = "") -> ScoreReport:
    case = CaseResult(
        id="todo1.c",
        section="todo1",
        visibility="hidden",
        max_cents=10000,
        status=status,  # type: ignore[arg-type]
        category=Msg.same(category),
        kind=kind,
    )
    return ScoreReport([case], 1, "f.py", "0" * 64, battery)


def _result(*rows: BatchRow, seed: int | None = SEED) -> BatchResult:
    return BatchResult(seed, "en", list(rows))


def test_synthetic_rows_edge_cases() -> None:
    alice = BatchRow("a.py", "graded", _report("passed", "c", "a" * 64), seconds=0.5)
    other = BatchRow('q"uote&<b>.py', "graded", _report("failed", "<i>cat</i>", "b" * 64))
    # An empty file: the function is missing, not attempted.
    empty = BatchRow("empty.py", "graded", _report("failed", "x", "b" * 64, "missing_function"))
    with_empty = class_report.summarize(_result(alice, other, empty, seed=None)).categories
    summary = class_report.summarize(_result(alice, other, seed=None))
    assert with_empty == summary.categories  # the empty file attempted nothing
    assert summary.battery_sha256 == ["a" * 64, "b" * 64]
    assert any("different batteries" in n for n in summary.notes)
    assert summary.histograms[0].counts[0] == 1 and summary.histograms[0].counts[9] == 1
    assert [
        (c.category, c.submissions_failed, c.submissions_attempted) for c in summary.categories
    ] == [("<i>cat</i>", 1, 1)]
    page_text = class_report.render_html(summary)
    page = Page(page_text)
    assert page.by_id["seed"] == "—"
    assert "&lt;i&gt;cat&lt;/i&gt;" in page_text and "<i>" not in page_text
    assert "q&quot;uote&amp;&lt;b&gt;.py" in page_text
    assert page.tables["categories-table"][1][1] == "<i>cat</i>"
    # No rows at all: still a page, with empty tables rather than a crash.
    empty = Page(class_report.class_report_html(_result(seed=3)))
    assert empty.by_id["n-submissions"] == "0"
    assert empty.tables["histogram-table"][-1] == ["graded submissions", "0"]


def test_a_category_counts_its_passes_as_attempts_whatever_its_failures_say() -> None:
    # A failed hidden case carries the rule it broke; a passed one does not.  Both are
    # attempts at the same category: 1 failing of 3 attempting, 1 of 3 cases.
    def row(name: str, status: str) -> BatchRow:
        rule = Msg("the margin is not negative", "余量不为负") if status == "failed" else None
        case = CaseResult(
            id="todo1.c",
            section="todo1",
            visibility="hidden",
            max_cents=10000,
            status=status,  # type: ignore[arg-type]
            category=Msg.same("margin at capacity"),
            **({"rule": rule} if rule else {}),
        )
        return BatchRow(name, "graded", ScoreReport([case], 1, name, "0" * 64, "a" * 64))

    rows = [row("a.py", "passed"), row("b.py", "failed"), row("c.py", "passed")]
    summary = class_report.summarize(_result(*rows))
    assert [
        (c.category, c.submissions_failed, c.submissions_attempted, c.cases_failed, c.cases)
        for c in summary.categories
    ] == [("margin at capacity", 1, 3, 1, 3)]
    table = Page(class_report.render_html(summary)).tables["categories-table"]
    assert table[1][2:5] == ["1", "3", "33%"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_empty_file_did_not_load_and_every_count_agrees(tmp_path: Path, lang: str) -> None:
    """An empty file (or blanks only) did not load: 0 of 100 with "the file is empty",
    as `rlsys grade` scores it (course trial r5 M1); the page's header counts it under
    "did not load", as its roster, the CSV and the JSON do, in either language.  A folder
    with no .py file is not the file's doing: not graded, no score."""
    subs = tmp_path / "class"
    subs.mkdir(mode=0o700)
    (subs / "empty.py").write_bytes(b"")
    (subs / "blank.py").write_text(" \n\t\n", encoding="utf-8")
    (subs / "carol.py").write_text("def pipeline_capacity(:\n", encoding="utf-8")
    (subs / "gus").mkdir()
    (subs / "gus" / "notes.txt").write_text("x\n", encoding="utf-8")
    out = {k: tmp_path / f"grades.{k}" for k in ("csv", "json", "html")}
    argv = ["batch", str(subs), "--seed", "3", "--lang", lang, "--no-progress"]
    assert main([*argv, *(a for k, p in out.items() for a in (f"--{k}", str(p)))]) == 0
    with open(out["csv"], encoding="utf-8") as handle:
        csv_rows = {r["submission"]: r for r in csv.DictReader(handle)}
    json_rows = {r["submission"]: r for r in json.loads(out["json"].read_text())["submissions"]}
    page = Page(out["html"].read_text(encoding="utf-8"))
    roster = {r[0]: r[1] for r in page.tables["roster"][1:]}
    said = {"en": "the file is empty", "zh": "文件是空的"}[lang]
    for name in ("empty.py", "blank.py"):
        row = csv_rows[name]
        assert row["status"] == json_rows[name]["status"] == "not_loaded", row
        assert (float(row["score"]), float(row["max_score"])) == (0, 100)
        assert json_rows[name]["report"]["score"] == 0 and said in row["message"]
    status = {"not_loaded": say("st_not_loaded", lang), "not_graded": say("st_not_graded", lang)}
    for key, ident in (("not_loaded", "n-not-loaded"), ("not_graded", "n-ungraded")):
        in_csv = sorted(n for n, r in csv_rows.items() if r["status"] == key)
        assert in_csv == sorted(n for n, r in json_rows.items() if r["status"] == key)
        assert in_csv == sorted(n for n, s in roster.items() if s == status[key]), roster
        assert page.by_id[ident] == str(len(in_csv)), (ident, in_csv)
    assert page.by_id["n-not-loaded"] == "3" and page.by_id["n-ungraded"] == "1"
    problems = {r[0]: r[1:] for r in page.tables["problems-table"][1:]}
    assert problems["empty.py"][0] == say("did not load", lang) and said in problems["empty.py"][1]
    assert csv_rows["gus"]["score"] == "" and "report" not in json_rows["gus"]


def test_unwritable_html_path_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)
    (subs / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "file").write_text("", encoding="utf-8")
    target = tmp_path / "file" / "class.html"  # a folder that is a file
    assert (
        main(
            [
                "batch",
                str(subs),
                "--seed",
                "1",
                "--no-progress",
                "--json",
                str(tmp_path / "g.json"),
                "--html",
                str(target),
            ]
        )
        == 3
    )
    err = capsys.readouterr().err
    # Checked with the other output paths, before anything is graded.
    assert err.startswith("rlsys batch") and "--html" in err and "Traceback" not in err
    assert not (tmp_path / "g.json").exists()


@pytest.mark.skipif(browser_check.find_browser() is None, reason="no Chromium installed")
@pytest.mark.slow
def test_a_real_browser_renders_the_page_without_console_errors(demo: dict[str, Any]) -> None:
    browser = browser_check.find_browser()
    assert browser is not None
    shot = demo["dir"] / "class-report.png"
    result = browser_check.check_in_browser(
        demo["html"],
        shot,
        browser,
        (browser_check.HOSTILE_FILE, browser_check.HOSTILE_FOLDER, browser_check.HOSTILE_MESSAGE),
    )
    assert result.ok, (result.problems, result.console)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(browser_check.find_browser() is None, reason="no Chromium installed")
@pytest.mark.slow
def test_the_browser_check_catches_a_console_error(tmp_path: Path) -> None:
    # The check must be able to fail: a page with a script error is refused.
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><title>rlsys class report</title><p>rlsys class report"
        "<script>undefinedFunction()</script>",
        encoding="utf-8",
    )
    browser = browser_check.find_browser()
    assert browser is not None
    result = browser_check.check_in_browser(bad, tmp_path / "bad.png", browser)
    assert not result.ok
    assert result.console and any("console message" in p for p in result.problems)
    assert any("<script>" in p for p in result.problems)


@pytest.mark.skipif(browser_check.find_browser() is None, reason="no Chromium installed")
def test_the_roster_fits_a_1280_px_window(demo: dict[str, Any], tmp_path: Path) -> None:
    """The demo class's roster scrolled inside its box at 1280 px (1133 px in 1100:
    course trial r5 L-a); it fits from 1024 px up, where a laptop's browser is."""
    browser = browser_check.find_browser()
    assert browser is not None
    for width in (1024, 1280, 1440):
        assert browser_check.scrolling_boxes_at(demo["html"], browser, width) == "", width
    # The check can fail: a roster wider than its box scrolls, and is named.
    wide = tmp_path / "wide.html"
    wide.write_text(
        '<!DOCTYPE html><body><style>.wide{overflow-x:auto}</style><div class="wide">'
        f'<table id="roster"><tr><td>{LONG_NAME}</td></tr></table></div></body>'
    )
    assert browser_check.scrolling_boxes_at(wide, browser, 1280).startswith("roster ")


def test_chinese_reports_are_read_too(tmp_path: Path) -> None:
    # The load-failure wording and the categories follow the batch's language.
    from tests.unit.test_battery import DEFECTS

    reference = solution_path().read_text(encoding="utf-8")
    old, new = next((o, n) for name, _, o, n in DEFECTS if name == "arrival_unchecked")
    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)
    (subs / "李雷.py").write_text(reference.replace(old, new), encoding="utf-8")
    (subs / "韩梅梅.py").write_text("def f(:\n", encoding="utf-8")
    html = tmp_path / "class.html"
    assert (
        main(
            [
                "batch",
                str(subs),
                "--seed",
                "2",
                "--lang",
                "zh",
                "--no-progress",
                "--json",
                str(tmp_path / "g.json"),
                "--html",
                str(html),
            ]
        )
        == 0
    )
    text = html.read_text(encoding="utf-8")
    page = Page(text)
    problems = {r[0]: r[1:] for r in page.tables["problems-table"][1:]}
    assert problems == {"韩梅梅.py": ["未能加载", problems["韩梅梅.py"][1]]}
    assert problems["韩梅梅.py"][1].startswith("无法加载提交文件")
    categories = page.tables["categories-table"][1:]
    assert categories and all(int(r[2]) == 1 and int(r[3]) == 1 for r in categories)
    assert ("td", "lang", "zh") in page.attrs
    assert "李雷.py" in text


LONG_NAME = "w" * 250 + ".py"


@pytest.mark.skipif(browser_check.find_browser() is None, reason="no Chromium installed")
@pytest.mark.slow
def test_no_table_overflows_a_420_px_window_whatever_the_names(
    demo: dict[str, Any], tmp_path: Path
) -> None:
    browser = browser_check.find_browser()
    assert browser is not None
    rows = [  # a graded row: roster, slowest, charts
        BatchRow(LONG_NAME, "graded", _report("failed", "c" * 80, "a" * 64), seconds=1.0),
        BatchRow("trudy \u202e001.py", "not_graded", message="m" * 400),
    ]
    page = tmp_path / "narrow.html"
    page.write_text(class_report.class_report_html(_result(*rows)), encoding="utf-8")
    assert browser_check.overflow_at(page, browser, 420) == ""
    # The check can fail: a table of one long word reaches past the window.
    wide = tmp_path / "wide.html"
    wide.write_text(f"<!DOCTYPE html><body><table><tr><td>{LONG_NAME}</table></body>")
    assert "TABLE" in browser_check.overflow_at(wide, browser, 420)


def test_bidi_and_controls_in_names_are_shown_escaped() -> None:
    rows = [BatchRow("trudy \u202e001.py", "not_graded", message="\x1b[2J")]
    text = class_report.class_report_html(_result(*rows))
    assert "\u202e" not in text and "\x1b" not in text
    assert "trudy \\u202e001.py" in text and "\\x1b[2J" in text


def test_the_stdlib_only_hint_reaches_the_csv_and_the_page(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir(mode=0o700)
    (folder / "numpy_user.py").write_text("import numpy\n", encoding="utf-8")
    grades, page = tmp_path / "grades.csv", tmp_path / "class.html"
    argv = ["batch", str(folder), f"--csv={grades}", f"--html={page}", "--no-progress"]
    assert main(argv) == 0
    hint = "only the standard library is available"
    message = next(csv.DictReader(io.StringIO(grades.read_text(encoding="utf-8"))))["message"]
    assert "numpy" in message and hint in message
    problems = rows_of(Page(page.read_text(encoding="utf-8")), "problems-table")
    assert hint in problems["numpy_user.py"][1]
    assert hint in rows_of(Page(page.read_text(encoding="utf-8")), "roster")["numpy_user.py"][5]


def test_near_copies_list_a_reference_flag_behind_a_classmate_and_hidden_code() -> None:
    from pytest_rlsys.outputs.class_report import similarity_section

    def row(name: str, closest: str | None, score: float, *by: str, **found: Any) -> BatchRow:
        return BatchRow(name, "graded", similarity=Similarity(closest, score, by, **found))

    rows = [
        # dora behaves as the reference (0.90) and shares 0.92 of her code with eve.
        row("dora.py", "eve.py", 0.92, "code", "behaviour", behaviour=0.9, alike=0.86),
        row("eve.py", "dora.py", 0.92, "code", behaviour=0.6, alike=0.86),
        row("blob.py", None, 0.0, "hidden", behaviour=0.7, hidden=True),
        BatchRow("deep.py", "graded", similarity=Similarity(None, None, not_compared="over")),
    ]
    page = similarity_section(rows)
    table = page[page.index('id="similarity-table"') : page.index("</table>")]
    assert table.count("<tr><td>") == 2, table
    assert '<td>dora.py</td><td>eve.py</td><td class="n">0.92</td><td class="n">–</td>' in table
    view = '<td><a href="#pair-1">side by side</a></td></tr>'
    assert f'<td class="n">0.86</td><td>code, behaviour</td>{view}' in table  # the pair's own
    assert '<td>dora.py</td><td>reference</td><td class="n">–</td>' in table
    assert '<td class="n">0.90</td><td>behaviour</td><td><a href="#pair-2">' in table
    assert 'id="similarity-hidden"' in page and "blob.py." in page
    assert "blob.py</td>" not in table
    assert "deep.py (over)" in page  # not compared, with the reason

    # Nothing flagged but hidden code: the sentence does not say the class is clean.
    only = similarity_section([rows[2]])
    assert "No submission is a near copy" in only and "(but see below)" in only


def test_near_copies_list_the_strongest_pair_first() -> None:
    from pytest_rlsys.outputs.class_report import similarity_section

    def row(name: str, closest: str, score: float) -> BatchRow:
        return BatchRow(name, "graded", similarity=Similarity(closest, score, ("code",)))

    page = similarity_section([row("a.py", "b.py", 0.55), row("c.py", "d.py", 0.96)])
    assert page.index("<td>c.py</td>") < page.index("<td>a.py</td>")


def test_a_chinese_batch_says_nothing_in_english(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every word the batch says for the instructor under --lang zh: the terminal summary,
    # each row's folder problem (CSV, page), the similarity reasons and the reference's
    # name in the roster and the pairs table (trial 5's L1).
    import re
    from html import unescape

    from pytest_rlsys.cli import batch as batch_cli
    from tests.english import english_sentences

    subs = tmp_path / "subs"
    subs.mkdir(mode=0o700)
    (subs / "李雷.py").write_text(solution_path().read_text(encoding="utf-8"), encoding="utf-8")
    (subs / "王芳.txt").write_text("笔记\n", encoding="utf-8")
    (subs / "邓洁").mkdir()
    (subs / "邓洁" / "rlsys_ledger.py.txt").write_text("x = 1\n", encoding="utf-8")
    (subs / "韩梅").mkdir()
    for name in ("一.py", "二.py"):
        (subs / "韩梅" / name).write_text("x = 1\n", encoding="utf-8")
    (subs / "周杰.py").symlink_to(solution_path())  # refused: not read
    deep = subs / "分组"
    for _ in range(40):
        deep = deep / "层"
    deep.mkdir(parents=True)
    html, grades = tmp_path / "class.html", tmp_path / "g.csv"
    args = ["batch", str(subs), "--seed", "2", "--lang", "zh", "--no-progress"]
    assert main([*args, "--csv", str(grades), "--html", str(html)]) == 0
    said = capsys.readouterr().err.splitlines()
    rows = list(csv.DictReader(io.StringIO(grades.read_text(encoding="utf-8"))))
    said += [text for row in rows for text in (row["message"], row["similarity_not_compared"])]
    page = html.read_text(encoding="utf-8")
    assert "参考答案" in page  # the reference flagged: the test reaches its name
    page = re.sub(r"<(style|script|details)\b.*?</\1>", "", page, flags=re.S)
    said += [unescape(text) for text in re.split(r"<[^>]+>", page)]
    progress = batch_cli._Progress(1, False, "zh")  # the bar's words on a terminal
    progress.started("李雷.py")
    said.append(progress.slowest())
    english = [(t, english_sentences(t)) for t in said if english_sentences(t)]
    assert english == []
    assert [t for t in said if re.search(r"\breference\b", t)] == []
