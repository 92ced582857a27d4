"""What a kit's run script leaves for its platform after ``rlsys grade --report SCORE``:
the fence that graded, for the instructor, and the files GitHub-hosted platforms read.

``python -P -m pytest_rlsys.outputs.kits.reports KIND SCORE [--problem P] [--error E]``

- ``note``: one line on stdout naming the fence (Gradescope shows a script's output to
  instructors only).
- ``actions``: the score table, the fence and any reason, appended to
  ``$GITHUB_STEP_SUMMARY``; the score report copied to ``$RLSYS_ARTIFACT`` for
  ``actions/upload-artifact``; the ``Points X/Y`` notice (and a warning with the reason
  when there was no file to grade or it did not load), and a log line saying the score
  and that reason in the report's language; exit 1 below full marks (the job fails, as
  a failed test would), 0 at full marks.  An infrastructure error (``--error`` with no
  learner's problem: no seed, no score report) is no score: the summary says so, the
  workflow gets an ``::error::`` and no ``Points`` line, exit 1.
- ``classroom50``: ``./result.json`` valid against ``classroom50/result/v1``
  (schemas/result-v1.schema.json of foundation50/classroom50: integer scores, the fixed
  top-level keys, one test per TODO) and ``./release-body.md`` with the fence.  Exit 0
  when graded (a learner's problem, such as no file, is a grade of 0 with its reason);
  1 on an infrastructure error (no score report without a learner's problem, a variable
  the runner sets missing): the runner then records an error, not a score.

Only numbers, our own words and the fence (the machine's) are written unescaped; a reason
can hold a learner's file names and is escaped for Markdown and HTML, and kept off column 0
of the log (GitHub reads ``::command::`` lines there).
"""

from __future__ import annotations

import argparse
import datetime
import html
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_rlsys.escaping import say
from pytest_rlsys.messages import DIFF_WORDS, Msg, section_label
from pytest_rlsys.outputs import fenceline
from pytest_rlsys.outputs.text import js_number
from pytest_rlsys.safe_read import UnsafeFile, read_regular_file

__all__ = [
    "Outcome",
    "actions_summary",
    "classroom50_result",
    "fence_text",
    "integer_points",
    "main",
    "points_line",
    "release_body",
]

MAX_SCORE_BYTES = 4 * 1024 * 1024  # our own report; a cap all the same
MAX_REASON = 500
RESULT_SCHEMA = "classroom50/result/v1"
# What the Classroom 50 runner sets for autograder.py (runner.py run_entrypoint); the
# runner stamps owner, assignment_type, datetime and submitted_by itself afterwards.
C50_REQUIRED = ("CLASSROOM", "ASSIGNMENT", "SUBMISSION_TAG", "COMMIT_URL", "RELEASE_URL")

# No file to grade (none, several) is the learner's problem: 0, as the score file says.
NOT_GRADED = Msg(
    "No file was graded, so the score is 0: {why}", "没有可评分的文件，因此得 0 分：{why}"
)
DID_NOT_LOAD = Msg(
    "The file did not load, so every case scores 0: {why}",
    "文件未能加载，所有用例均为 0 分：{why}",
)
# A TODO the file leaves as the template has it (the report's ``not_implemented``).
NOT_DONE = Msg("{todo}: not implemented yet", "{todo}：尚未实现")
BROKEN_HEAD = Msg("rlsys: not graded (infrastructure error)", "rlsys：未评分（基础设施错误）")
BROKEN = Msg(
    "This is not a score: the course's grading set-up is broken ({why}). Nothing was "
    "graded; the course staff must fix the set-up and run the grading again.",
    "这不是分数：课程的评分配置有误（{why}）。未进行任何评分；需由课程教师修好配置后重新评分。",
)
# The notice keeps "Points X/Y" in every language (the terminal's last line, a format
# tools read); what a person reads says it in the report's language.
SCORE_HEAD = Msg("rlsys score: Points {points}", "rlsys 得分：{points}")
TABLE_HEAD = Msg("| Part | Points | Max |", "| 部分 | 得分 | 满分 |")
TOTAL = Msg("total", "总计")
C50_HEAD = Msg("classroom50 autograde", "classroom50 自动评分")
C50_TABLE = Msg("| Test | Result | Score |", "| 测试 | 结果 | 得分 |")
PASS, FAIL = Msg("PASS", "通过"), Msg("FAIL", "未通过")
ADVISORY = Msg(
    "Advisory: the learner owns this repository and its workflow.",
    "仅供参考：学习者拥有此仓库及其工作流。",
)


class Outcome:
    """One grading as the run script left it: the score report (None when there is
    none), a learner's problem, or the reason it could not grade."""

    def __init__(self, doc: dict[str, Any] | None, problem: str = "", error: str = "") -> None:
        self.doc = doc
        self.problem = problem
        self.error = error

    @property
    def lang(self) -> str:
        repro = (self.doc or {}).get("reproducibility") or {}
        return "zh" if repro.get("lang") == "zh" else "en"

    @property
    def broken(self) -> bool:
        """An infrastructure error: no score report and no learner's problem to say why."""
        return self.doc is None and not self.problem

    @property
    def load_error(self) -> str:
        """Why the graded file did not load ('' when it loaded)."""
        said = (self.doc or {}).get("load_error")
        return _reason(said) if isinstance(said, str) else ""

    @property
    def why(self) -> str:
        """Why there is no score: the learner's problem first."""
        return _reason(self.problem or self.error or "the grader produced no score report")

    def reason(self, markdown: bool = True) -> str:
        """The learner-facing line saying why the file scored nothing ('' when graded):
        the learner's problem, or why the file did not load; Markdown-escaped unless
        ``markdown`` is False (a log line)."""
        inert = _md if markdown else _reason
        if self.doc is None:
            return NOT_GRADED.fill(self.lang, {"why": inert(self.why)})
        if self.load_error:
            return DID_NOT_LOAD.fill(self.lang, {"why": inert(self.load_error)})
        return ""

    def not_done(self) -> dict[str, str]:
        """Each TODO the file leaves unimplemented, with the words that say so."""
        sections = (self.doc or {}).get("sections") or {}
        return {
            name: NOT_DONE.fill(self.lang, {"todo": section_label(name, self.lang)})
            for name, s in sections.items()
            if isinstance(s, dict) and s.get("not_implemented") is True
        }

    def sections(self) -> list[tuple[str, float, float]]:
        """(section, points, max points) in the report's order; none without a report."""
        sections = (self.doc or {}).get("sections") or {}
        return [
            (name, float(s.get("score", 0)), float(s.get("max_score", 0)))
            for name, s in sections.items()
            if isinstance(s, dict)
        ]


def _reason(text: str) -> str:
    """A reason as one inert line: printable characters only, bounded."""
    text = "".join(c if c.isprintable() else " " for c in text).strip()
    return text[:MAX_REASON]


# Inside a line (a reason never starts one), only these can start GitHub Markdown: a
# backslash escape, a code span (in which an escape would show), emphasis, strikethrough, a
# link or image; HTML and entities are escaped as HTML.  "_" emphasises only at a word's
# edge: inside a name (rlsys_ledger.py) it stays as written, as does every other
# character (a backslash before "." would show wherever Markdown is not rendered).
_MARKUP = re.compile(r"[\\`*\[\]~]|_+")


def _md(text: str) -> str:
    """Text a learner may have named, made inert in GitHub Markdown (HTML and markup),
    with a backslash only where Markdown needs one."""
    text = html.escape(_reason(text), quote=False)

    def inert(m: re.Match[str]) -> str:
        before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
        if m.group()[0] == "_" and before.isalnum() and after.isalnum():
            return m.group()
        return "".join(f"\\{c}" for c in m.group())

    return _MARKUP.sub(inert, text)


def fence_text(doc: Mapping[str, Any] | None, lang: str = "en") -> str:
    """The fence line of a score report (``fenceline.fence_text`` of its ``fence``)."""
    return fenceline.fence_text((doc or {}).get("fence"), lang)


def _points(outcome: Outcome) -> str:
    """``X/Y``, the exact points (0/100 when ungraded)."""
    doc = outcome.doc or {}
    got, top = float(doc.get("score", 0)), float(doc.get("max_score", 100))
    return f"{js_number(got)}/{js_number(top)}"


def points_line(outcome: Outcome) -> str:
    """``Points X/Y``, as the terminal's last line says it (0/100 when ungraded)."""
    return f"Points {_points(outcome)}"


def _apportion(cents: Sequence[int]) -> list[int]:
    """Whole points adding up to the total rounded half up: each part rounded down, then
    one more point to the parts with the largest remainders (stable order)."""
    extra = (sum(cents) + 50) // 100 - sum(c // 100 for c in cents)
    lifted = sorted((i for i, c in enumerate(cents) if c % 100), key=lambda i: -(cents[i] % 100))
    bonus = set(lifted[: max(0, extra)])
    return [c // 100 + (i in bonus) for i, c in enumerate(cents)]


def integer_points(sections: Sequence[tuple[str, float, float]]) -> list[tuple[str, int, int]]:
    """Whole points per section for a platform that takes integers only (Classroom 50).

    The earned total is the exact total rounded half up, shared out by the largest
    remainder, so the parts add up to it and a full section keeps its full points; the
    maxima are shared out the same way, and no part exceeds its maximum (with maxima that
    are not whole points, as no default rubric has, that cap can cost the total a point)."""
    got = _apportion([round(g * 100) for _, g, _ in sections])
    top = _apportion([round(t * 100) for _, _, t in sections])
    return [(name, min(g, t), t) for (name, _, _), g, t in zip(sections, got, top, strict=True)]


def _table(outcome: Outcome) -> list[str]:
    lang = outcome.lang
    rows = [TABLE_HEAD.get(lang), "|---|--:|--:|"]
    for name, got, top in outcome.sections():
        rows.append(f"| {section_label(name, lang)} | {js_number(got)} | {js_number(top)} |")
    doc = outcome.doc or {}
    total = TOTAL.get(lang)
    rows.append(
        f"| **{total}** | **{js_number(float(doc.get('score', 0)))}** "
        f"| **{js_number(float(doc.get('max_score', 0)))}** |"
    )
    return rows


def actions_summary(outcome: Outcome) -> str:
    """The job summary: the score, per TODO, the fence that graded, why the file scored
    nothing when it did; or, on an infrastructure error, that there is no score."""
    lang = outcome.lang
    if outcome.broken:
        return f"### {BROKEN_HEAD.get(lang)}\n\n{BROKEN.fill(lang, {'why': _md(outcome.why)})}\n"
    lines = [f"### {SCORE_HEAD.fill(lang, {'points': _points(outcome)})}", ""]
    if outcome.doc is not None:
        lines += [*_table(outcome), ""]
    lines += _reasons(outcome)
    lines += [fence_text(outcome.doc, lang), "", f"_{ADVISORY.get(lang)}_", ""]
    return "\n".join(lines)


def _reasons(outcome: Outcome) -> list[str]:
    """Why the file scored nothing, or which TODOs it leaves undone, as bold lines."""
    said = [outcome.reason()] if outcome.reason() else map(_md, outcome.not_done().values())
    return [line for text in said for line in (f"**{text}**", "")]


def full_marks(outcome: Outcome) -> bool:
    doc = outcome.doc or {}
    top = float(doc.get("max_score", 0))
    return top > 0 and round(float(doc.get("score", 0)) * 100) == round(top * 100)


def classroom50_result(outcome: Outcome, env: Mapping[str, str]) -> dict[str, Any]:
    """``result.json`` for Classroom 50 (``classroom50/result/v1``).  ``owner``,
    ``assignment_type`` and ``datetime`` are written as the runner will stamp them (it
    overwrites them: they are its to say), so the file is valid on its own."""
    if outcome.doc is None:  # a learner's problem: one test, failed, worth the assignment
        tests = [
            {
                "test-name": "rlsys",
                "passed": False,
                "score": 0,
                "max-score": 100,
                "message": _reason(outcome.why),
            }
        ]
    else:
        exact = outcome.sections()
        # A file that did not load: the reason on every TODO's row (each scored 0 for it);
        # a TODO left as the template has it: that, on its row.
        undone = outcome.not_done()
        tests = [
            {
                "test-name": section_label(name, outcome.lang),
                "passed": round(real[1] * 100) == round(real[2] * 100),  # not a rounded pass
                "score": got,
                "max-score": top,
                **_message(outcome.load_error or undone.get(name, "")),
            }
            for (name, got, top), real in zip(integer_points(exact), exact, strict=True)
        ]
    owner = env.get("OWNER") or env.get("USERNAME") or env.get("GITHUB_ACTOR") or "unknown"
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "schema": RESULT_SCHEMA,
        "classroom": env["CLASSROOM"],
        "assignment": env["ASSIGNMENT"],
        "assignment_type": "group" if env.get("ASSIGNMENT_TYPE") == "group" else "individual",
        "owner": owner,
        "submission": env["SUBMISSION_TAG"],
        "commit": env["COMMIT_URL"],
        "release": env["RELEASE_URL"],
        "review": env.get("REVIEW_URL") or env["COMMIT_URL"],
        "datetime": now,
        "graded_at": now,
        "score": sum(t["score"] for t in tests),
        "max-score": sum(t["max-score"] for t in tests),
        "tests": tests,
    }


def _message(text: str) -> dict[str, str]:
    return {"message": text} if text else {}


def release_body(outcome: Outcome, result: Mapping[str, Any]) -> str:
    """``release-body.md``: what the runner would synthesize (score line, per-test
    table), then the exact points, the fence that graded, and any reason."""
    lang = outcome.lang
    lines = [f"### {C50_HEAD.get(lang)}: {result['score']}/{result['max-score']}", ""]
    lines += [C50_TABLE.get(lang), "|---|---|---|"]
    for test in result["tests"]:
        verdict = (PASS if test["passed"] else FAIL).get(lang)
        lines.append(f"| {test['test-name']} | {verdict} | {test['score']} / {test['max-score']} |")
    lines.append("")
    lines += _reasons(outcome)
    if outcome.doc is not None:
        lines += [SCORE_HEAD.fill(lang, {"points": _points(outcome)}), ""]
    lines += [fence_text(outcome.doc, lang), ""]
    return "\n".join(lines)


def load(path: str) -> dict[str, Any] | None:
    """The score report, or None when there is none (or it is not ours)."""
    try:
        doc = json.loads(read_regular_file(path, MAX_SCORE_BYTES))
    except (OSError, UnsafeFile, ValueError):
        return None
    return doc if isinstance(doc, dict) and "sections" in doc else None


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def workflow_data(text: str) -> str:
    """Text made safe as a workflow command's message (GitHub's escapeData)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _actions(outcome: Outcome) -> int:
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), actions_summary(outcome))
    artifact = os.environ.get("RLSYS_ARTIFACT")
    if artifact:
        if outcome.broken:
            doc: dict[str, Any] = {"infrastructure_error": outcome.why}
        else:
            doc = outcome.doc or {"not_graded": outcome.why, "score": 0, "max_score": 100}
        Path(artifact).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", "utf-8")
    if outcome.broken:
        say(f"  rlsys: infrastructure error, not a score: {outcome.why}")
        commands = [
            f"::error title=rlsys::{workflow_data(BROKEN.fill(outcome.lang, {'why': outcome.why}))}"
        ]
    else:
        commands = [f"::notice title=rlsys::{points_line(outcome)}"]
        # What the score file and the summary say, in the report's language (the notice
        # keeps the machine-read "Points X/Y"); indented: never a workflow command.
        said = [SCORE_HEAD.fill(outcome.lang, {"points": _points(outcome)}), outcome.reason(False)]
        say("  " + DIFF_WORDS["and"].get(outcome.lang).join(filter(None, said)))
        why = outcome.load_error or (outcome.why if outcome.doc is None else "")
        if why:
            commands.insert(0, f"::warning title=rlsys::{workflow_data(why)}")
    # The grade step prints these once workflow commands are on again.
    announce = os.environ.get("RLSYS_ANNOUNCE")
    if announce:
        Path(announce).write_text("".join(f"{c}\n" for c in commands), encoding="utf-8")
    else:
        for command in commands:
            say(command)
    return 0 if full_marks(outcome) else 1


def _classroom50(outcome: Outcome) -> int:
    missing = [name for name in C50_REQUIRED if not os.environ.get(name)]
    if missing:
        say(
            f"rlsys: {', '.join(missing)} not set: Classroom 50's runner sets them; run "
            "autograder.py through it (or set them by hand to try it)",
            err=True,
        )
        return 1
    if outcome.broken:  # no learner to blame: the runner records an error, not a score
        say(f"rlsys: infrastructure error, not a score: {outcome.why}", err=True)
        _append(os.environ.get("GITHUB_STEP_SUMMARY"), actions_summary(outcome))
        return 1
    result = classroom50_result(outcome, os.environ)
    Path("result.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    Path("release-body.md").write_text(release_body(outcome, result), encoding="utf-8")
    head = SCORE_HEAD.fill(outcome.lang, {"points": _points(outcome)})
    say(f"  {head}; {fence_text(outcome.doc, outcome.lang)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_rlsys.outputs.kits.reports")
    parser.add_argument("kind", choices=("note", "actions", "classroom50"))
    parser.add_argument("score")
    parser.add_argument("--problem", default="")
    parser.add_argument("--error", default="")
    args = parser.parse_args(argv)
    outcome = Outcome(load(args.score), args.problem, args.error)
    if args.kind == "note":
        say(f"rlsys: {fence_text(outcome.doc)}")
        return 0
    if args.kind == "actions":
        return _actions(outcome)
    return _classroom50(outcome)


if __name__ == "__main__":
    sys.exit(main())
