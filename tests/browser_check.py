"""Open the class report in a real headless browser (Chromium) and check it.

Builds a demo class (the reference, the template, planted defects, a submission
that will not load with a hostile message, one with a hostile file name, one
that hangs, an empty folder), runs ``rlsys batch --html`` on it, then opens the
page with ``chromium --headless``: a screenshot, the DOM as the browser built
it, and every console message. The page passes when the browser logs no console
message (an injected script, a blocked load or a parse problem would log one),
its DOM holds no <script> element but the page's own roster sorter and no on*
attribute, and the hostile names appear as text.

Run: python tests/browser_check.py [--out DIR] [--html EXISTING.html]
Exit 0 when the page passes, 1 when it does not, 77 when no Chromium is found.
(tests/plugin/test_class_report.py runs the same check when Chromium is installed.)
"""

from __future__ import annotations

import argparse
import html as html_lib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from pytest_rlsys.resources import exercise_path, solution_path  # noqa: E402

HOSTILE_FILE = "<img src=x onerror=alert(1)>.py"
HOSTILE_FOLDER = "<script>alert(1)"
HOSTILE_MESSAGE = "</td></tr></table><script>alert('pwned')</script>"
# Planted defects, and the learners who made them: a class where some mistakes are common.
DEMO_DEFECTS = {
    "arrival_unchecked": ("dana", "eve", "finn"),
    "margins_flipped": ("gil",),
    "overlap_ignored": ("hana", "ivo"),
    "threshold_inclusive": ("jo",),
}
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
CONSOLE = re.compile(r":CONSOLE[:(]")


def build_class(folder: Path) -> None:
    """Write the demo class's submissions into ``folder``."""
    from tests.unit.test_battery import DEFECTS

    reference = solution_path().read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)  # as root, batch refuses a class folder others can read
    (folder / "alice.py").write_text(reference, encoding="utf-8")
    (folder / "bob.py").write_text(exercise_path().read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "half.py").write_text(
        reference + "\n\ndef evaluate_topology(*args, **kwargs):\n    raise NotImplementedError\n",
        encoding="utf-8",
    )
    for name, _, old, new in DEFECTS:
        for learner in DEMO_DEFECTS.get(name, ()):
            (folder / f"{learner}.py").write_text(reference.replace(old, new), encoding="utf-8")
    (folder / HOSTILE_FILE).write_text(
        f"raise RuntimeError({HOSTILE_MESSAGE!r})\n", encoding="utf-8"
    )
    (folder / HOSTILE_FOLDER).mkdir(exist_ok=True)
    # The reference, made slow to load so that the folder's name is sure to be among the
    # slowest submissions the page lists (where the test looks for it, escaped).
    (folder / HOSTILE_FOLDER / "mine.py").write_text(
        reference + "\n\nimport time\n\ntime.sleep(0.4)\n", encoding="utf-8"
    )
    (folder / "carol.py").write_text("def pipeline_capacity(:\n", encoding="utf-8")
    (folder / "hang.py").write_text(
        "def pipeline_capacity(*a, **k):\n    while True:\n        pass\n\n"
        "transfer_ledger = evaluate_topology = pipeline_capacity\n",
        encoding="utf-8",
    )
    (folder / "empty").mkdir(exist_ok=True)


def run_demo_batch(workdir: Path, seed: int = 7) -> tuple[int, Path, Path]:
    """Grade the demo class; returns (exit code, class.html, grades.json)."""
    from pytest_rlsys.cli import main

    subs = workdir / "subs"
    build_class(subs)
    html, grades = workdir / "class.html", workdir / "grades.json"
    code = main(
        [
            "batch",
            str(subs),
            "--seed",
            str(seed),
            "--timeout",
            "1",
            "--budget",
            "3",
            "--jobs",
            "2",
            "--no-progress",
            "--json",
            str(grades),
            "--html",
            str(html),
        ]
    )
    return code, html, grades


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class _DomScan(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self._script: list[str] | None = None
        self.handlers: list[str] = []
        self.external: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._script = []
        for key, value in attrs:
            if key.startswith("on"):
                self.handlers.append(f"<{tag} {key}>")
            if key in ("src", "href") and value and not value.startswith("#"):
                self.external.append(f"<{tag} {key}={value}>")

    def handle_endtag(self, tag: str) -> None:
        # The page's own roster-sorting script (allowed by its CSP hash) is expected;
        # any other script element is a problem.
        if tag == "script" and self._script is not None:
            from pytest_rlsys.outputs.class_report import SORT_SCRIPT

            self.scripts += "".join(self._script).strip() != SORT_SCRIPT.strip()
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._script.append(data)
            return
        self.text.append(data)


@dataclass
class BrowserResult:
    screenshot: Path
    console: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dom_text: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


def check_in_browser(
    html: Path, screenshot: Path, browser: str, expect_text: tuple[str, ...] = ()
) -> BrowserResult:
    """Screenshot the page, dump its DOM and console; list what is wrong."""
    flags = [
        "--headless",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1200,3600",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to run its sandbox as root
    url = html.resolve().as_uri()
    result = BrowserResult(screenshot)
    with tempfile.TemporaryDirectory(prefix="rlsys-chromium-") as profile:
        common = [browser, *flags, f"--user-data-dir={profile}"]
        shot = subprocess.run(
            [*common, f"--screenshot={screenshot}", url],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        dom = subprocess.run(
            [*common, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=False
        )
    for run in (shot, dom):
        result.console += [line for line in run.stderr.splitlines() if CONSOLE.search(line)]
        if run.returncode != 0:
            result.problems.append(f"chromium exited {run.returncode}: {run.stderr[-500:]}")
    if result.console:
        result.problems.append(f"{len(result.console)} console message(s)")
    if not screenshot.is_file() or screenshot.stat().st_size == 0:
        result.problems.append("no screenshot was written")
    scan = _DomScan()
    scan.feed(dom.stdout)
    result.dom_text = " ".join(" ".join(scan.text).split())
    if "rlsys class report" not in result.dom_text:
        result.problems.append("the DOM does not hold the report (did the page load?)")
    if scan.scripts:
        result.problems.append(f"the DOM holds {scan.scripts} <script> element(s)")
    if scan.handlers:
        result.problems.append(f"event-handler attributes in the DOM: {scan.handlers[:5]}")
    if scan.external:
        result.problems.append(f"external references in the DOM: {scan.external[:5]}")
    for text in expect_text:
        if text not in result.dom_text:
            result.problems.append(f"the page does not show {text!r} as text")
    return result


# Appended to a copy of the page (its Content-Security-Policy removed): lists every
# element wider than the viewport, or reaching past its right edge, into #overflow; what
# a box of its own scrolls (a wide table in its scroller) is inside that box, which is
# measured itself.
_MEASURE = """<pre id="overflow"></pre><script>
function scrolled(el) {
  for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    var x = getComputedStyle(p).overflowX;
    if (x === "auto" || x === "scroll" || x === "hidden") { return true; }
  }
  return false;
}
addEventListener("load", function () {
  var wide = [], view = document.documentElement.clientWidth;
  document.querySelectorAll("body *").forEach(function (el) {
    var box = el.getBoundingClientRect();
    if (el.id !== "overflow" && box.width > 0 && box.right > view + 0.5 && !scrolled(el)) {
      wide.push(el.tagName + (el.id ? "#" + el.id : "") + " right=" + Math.round(box.right));
    }
  });
  if (document.documentElement.scrollWidth > view) { wide.push("page width " +
    document.documentElement.scrollWidth); }
  document.getElementById("overflow").textContent = "measured " + view + ": " + wide.join("; ");
});
</script>"""


def overflow_at(html: Path, browser: str, width: int = 420) -> str:
    """What reaches past the right edge of a ``width``-pixel-wide window ('' when nothing
    does), as Chromium lays the page out."""
    dom = _probed(html, browser, "measure", _MEASURE, width)
    found = re.search(r'<pre id="overflow">measured (\d+): ([^<]*)</pre>', dom)
    if found is None:
        return "the measuring script did not run"
    return found.group(2).strip()


# Appended to a copy of the page: each box that scrolls sideways (a ``.wide`` table's
# scroller) whose content is wider than it, with the two widths.
_SCROLLED = """<pre id="scrolled"></pre><script>
addEventListener("load", function () {
  var wide = [];
  document.querySelectorAll(".wide").forEach(function (box) {
    if (box.scrollWidth > box.clientWidth + 0.5) {
      var inner = box.firstElementChild;
      wide.push((inner && inner.id ? inner.id : "?") + " " + box.scrollWidth + ">" +
        box.clientWidth);
    }
  });
  document.getElementById("scrolled").textContent = "checked: " + wide.join("; ");
});
</script>"""


def scrolling_boxes_at(html: Path, browser: str, width: int = 1280) -> str:
    """The boxes that scroll sideways in a ``width``-pixel-wide window (their table's id,
    its width and the box's), joined with "; " ('' when every table fits)."""
    dom = _probed(html, browser, "scrolled", _SCROLLED, width)
    found = re.search(r'<pre id="scrolled">checked: ([^<]*)</pre>', dom)
    if found is None:
        return "the measuring script did not run"
    return html_lib.unescape(found.group(1).strip())


_WRAPPED = """<pre id="wrapped"></pre><script>
addEventListener("load", function () {
  var broken = [];
  document.querySelectorAll("td.n").forEach(function (cell) {
    var range = document.createRange();
    range.selectNodeContents(cell);
    var lines = {};
    Array.prototype.forEach.call(range.getClientRects(), function (r) {
      if (r.width > 0) { lines[Math.round(r.top)] = true; }
    });
    if (Object.keys(lines).length > 1) { broken.push(cell.textContent); }
  });
  document.getElementById("wrapped").textContent = "checked: " + broken.join(" | ");
});
</script>"""


def wrapped_numbers_at(html: Path, browser: str, width: int = 1280) -> str:
    """The number cells (``td.n``) whose text Chromium lays out on more than one
    line in a ``width``-pixel-wide window, joined with " | " ('' when none)."""
    dom = _probed(html, browser, "wrapped", _WRAPPED, width)
    found = re.search(r'<pre id="wrapped">checked: ([^<]*)</pre>', dom)
    if found is None:
        return "the measuring script did not run"
    return found.group(1).strip()


_BROKEN_WORDS = """<pre id="words"></pre><script>
addEventListener("load", function () {
  var broken = [];
  document.querySelectorAll(SELECTOR).forEach(function (cell) {
    var walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), node;
    while ((node = walk.nextNode())) {
      // a word: no space, and no CJK punctuation (where Chinese lines may break)
      var words = /[^\\s\\u3000-\\u303f\\uff00-\\uff0f\\uff1a-\\uff20]+/g, m;
      while ((m = words.exec(node.data))) {
        var range = document.createRange(), lines = {};
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        Array.prototype.forEach.call(range.getClientRects(), function (r) {
          if (r.width > 0) { lines[Math.round(r.top)] = true; }
        });
        if (Object.keys(lines).length > 1) { broken.push(m[0]); }
      }
    }
  });
  document.getElementById("words").textContent = "checked: " + broken.join(" | ");
});
</script>"""


def broken_words_at(html: Path, browser: str, selector: str, width: int = 1280) -> str:
    """The words (CJK punctuation parts them, as spaces do) inside ``selector``'s elements
    that Chromium breaks across lines in a ``width``-pixel-wide window, joined with " | "
    ('' when none)."""
    script = _BROKEN_WORDS.replace("SELECTOR", json.dumps(selector))
    dom = _probed(html, browser, "words", script, width)
    found = re.search(r'<pre id="words">checked: ([^<]*)</pre>', dom)
    if found is None:
        return "the measuring script did not run"
    return html_lib.unescape(found.group(1).strip())


def _probed(html: Path, browser: str, name: str, script: str, width: int) -> str:
    """The DOM of ``html`` with ``script`` added (its own policy header dropped, so the
    measuring script may run), laid out ``width`` pixels wide."""
    page = html.read_text(encoding="utf-8")
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    probe = html.with_name(f".{html.stem}-{name}.html")
    probe.write_text(page.replace("</body>", script + "</body>"), encoding="utf-8")
    return dom_at(probe.as_uri(), browser, width)


def dom_at(url: str, browser: str, width: int = 1280) -> str:
    """The DOM Chromium holds once ``url`` (a fragment kept) has loaded, its script run."""
    flags = ["--headless", "--disable-gpu", "--hide-scrollbars", f"--window-size={width},2000"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        flags.append("--no-sandbox")
    with tempfile.TemporaryDirectory(prefix="rlsys-chromium-") as profile:
        return subprocess.run(
            [browser, *flags, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        ).stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "benchmarks" / "out",
        help="where the page and its screenshot go",
    )
    parser.add_argument("--html", type=Path, help="check this page instead of a demo class")
    args = parser.parse_args(argv)
    browser = find_browser()
    if browser is None:
        print("browser_check: no Chromium found (apt-get install chromium)", file=sys.stderr)
        return 77
    args.out.mkdir(parents=True, exist_ok=True)
    expect: tuple[str, ...] = ()
    if args.html is None:
        code, html, _ = run_demo_batch(args.out)
        if code != 0:
            print(f"browser_check: rlsys batch exited {code}", file=sys.stderr)
            return 1
        expect = (HOSTILE_FILE, HOSTILE_FOLDER, HOSTILE_MESSAGE)
    else:
        html = args.html
    result = check_in_browser(html, args.out / "class-report.png", browser, expect)
    for line in result.console:
        print(f"console: {line}")
    for problem in result.problems:
        print(f"problem: {problem}")
    print(
        f"browser_check: {'ok' if result.ok else 'FAILED'}; page {html}, "
        f"screenshot {result.screenshot}"
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
