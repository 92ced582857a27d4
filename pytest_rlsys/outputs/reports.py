"""Every output of a grading run, built from one ScoreReport: terminal text, the score
JSON, Gradescope, PrairieLearn, JUnit XML and GitHub Classroom.  Files are written
atomically (temp file + rename) by the grading process only."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.messages import HIDDEN_NOTE, NOT_IMPLEMENTED, TODO_OF

LABELS = {
    "en": {"title": "rlsys score", "section": "section", "score": "score", "cases": "cases",
           "total": "total", "points": "points", "input": "input", "claim": "chapter check",
           "expected": "expected", "got": "got", "ungraded": "{p:g} points not graded: "
           "{n} cases did not run (deselected, stopped early or out of time); they count as 0",
           "hidden_failed": "hidden cases failed (category only): {n}",
           "not_run": "not run"},
    "zh": {"title": "rlsys 得分", "section": "部分", "score": "得分", "cases": "通过用例",
           "total": "总分", "points": "分", "input": "输入", "claim": "章节断言",
           "expected": "期望", "got": "实际", "ungraded": "{p:g} 分未评：{n} 个用例未运行"
           "（被取消选择、提前停止或超出时间），按 0 分计",
           "hidden_failed": "未通过的隐藏用例（只显示类别）：{n} 个",
           "not_run": "未运行"},
}


def _fmt(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def terminal_lines(report: ScoreReport, lang: str = "en") -> list[str]:
    """The per-section table, then how much was not graded."""
    text = LABELS.get(lang, LABELS["en"])
    lines = [f"{text['section']:<12} {text['score']:>15} {text['cases']:>10}"]
    sections = report.sections()
    for name, s in sections.items():
        label = TODO_OF.get(name, name)
        status = f"  {NOT_IMPLEMENTED.get(lang)}" if s["not_implemented"] == s["cases"] else ""
        lines.append(f"{label:<12} {_fmt(s['score']) + ' / ' + _fmt(s['max_score']):>15} "
                     f"{str(s['passed']) + '/' + str(s['cases']):>10}{status}")
    lines.append(f"{text['total']:<12} {_fmt(report.score) + ' / ' + _fmt(report.max_score):>15}")
    not_run = [c for c in report.cases if c.status == "not_run"]
    if not_run:
        lines.append(text["ungraded"].format(p=report.ungraded_cents / 100, n=len(not_run)))
    hidden = [c for c in report.cases if c.visibility == "hidden" and c.status not in
              ("passed", "not_run") and not c.not_implemented]
    if hidden:
        lines.append(text["hidden_failed"].format(n=len(hidden)))
        seen: dict[str, int] = {}
        for case in hidden:
            todo = TODO_OF.get(case.section, case.section)
            # Crashes and load failures say the same for every case: group them by message.
            key = (f"{todo}: {case.message}" if case.status in ("error", "timeout")
                   else f"{todo}: {case.category} ({case.message})")
            seen[key] = seen.get(key, 0) + 1
        for message, count in seen.items():
            lines.append(f"  - {message}" + (f" ×{count}" if count > 1 else ""))
    for note in report.notes:
        lines.append(f"note: {note}")
    return lines


def failure_text(case: CaseResult, lang: str = "en") -> str:
    """What a learner sees for one failed case: input/expected/got, or just the category."""
    text = LABELS.get(lang, LABELS["en"])
    lines = [f"[{TODO_OF.get(case.section, case.section)}] {case.category}: {case.message}"]
    if case.visibility == "hidden":
        lines.append(f"  ({HIDDEN_NOTE.get(lang)})")
    if case.visibility == "visible" and case.call:
        lines.append(f"  {text['input']}: {case.call}")
        if case.claim:
            lines.append(f"  {text['claim']}: {case.claim}")
        if case.expected:
            lines.append(f"  {text['expected']}: {case.expected}")
        if case.got:
            lines.append(f"  {text['got']}: {case.got}")
    return "\n".join(lines)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _dump(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def score_json(report: ScoreReport) -> str:
    return _dump(report.to_json())


def gradescope_json(report: ScoreReport, lang: str = "en") -> str:
    tests = [
        {"name": c.id, "number": str(i + 1), "score": c.cents / 100,
         "max_score": c.max_cents / 100,
         "status": "passed" if c.status == "passed" else "failed",
         "output": failure_text(c, lang) if c.status != "passed" else "",
         "tags": [c.section, c.visibility], "visibility": "visible"}
        for i, c in enumerate(report.cases)
    ]
    return _dump({"score": report.score, "execution_time": round(report.elapsed_s, 3),
                  "output": "\n".join(terminal_lines(report, lang)), "visibility": "visible",
                  "stdout_visibility": "hidden", "tests": tests})


def prairielearn_json(report: ScoreReport, lang: str = "en") -> str:
    total = report.max_score
    tests = [
        {"name": c.id, "description": c.category, "points": c.cents / 100,
         "max_points": c.max_cents / 100, "message": c.message if c.status != "passed" else "",
         "output": failure_text(c, lang) if c.status != "passed" else ""}
        for c in report.cases
    ]
    return _dump({"gradable": True, "score": report.score / total if total else 0.0,
                  "points": report.score, "max_points": total,
                  "message": "\n".join(terminal_lines(report, lang)), "tests": tests})


def junit_xml(report: ScoreReport, lang: str = "en") -> str:
    """JUnit XML with per-case points as properties (readable by any CI)."""
    failures = sum(c.status == "failed" for c in report.cases)
    errors = sum(c.status in ("error", "timeout") for c in report.cases)
    skipped = sum(c.status == "not_run" for c in report.cases)
    suite = ET.Element("testsuite", name="rlsys", tests=str(len(report.cases)),
                       failures=str(failures), errors=str(errors), skipped=str(skipped),
                       time=f"{report.elapsed_s:.3f}")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="score", value=_fmt(report.score))
    ET.SubElement(props, "property", name="max_score", value=_fmt(report.max_score))
    ET.SubElement(props, "property", name="seed", value=str(report.seed))
    for case in report.cases:
        section, _, name = case.id.partition(".")
        element = ET.SubElement(suite, "testcase", classname=f"rlsys.{section}", name=name,
                                time=f"{case.seconds:.4f}")
        case_props = ET.SubElement(element, "properties")
        ET.SubElement(case_props, "property", name="points", value=_fmt(case.cents / 100))
        ET.SubElement(case_props, "property", name="max_points",
                      value=_fmt(case.max_cents / 100))
        if case.status == "failed":
            ET.SubElement(element, "failure", message=case.message).text = failure_text(case,
                                                                                        lang)
        elif case.status in ("error", "timeout"):
            ET.SubElement(element, "error", message=case.message,
                          type=case.status).text = failure_text(case, lang)
        elif case.status == "not_run":
            ET.SubElement(element, "skipped", message=case.message)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def classroom_json(report: ScoreReport) -> str:
    """GitHub Classroom runner result (the reporter reads it and prints Points X/Y)."""
    status = {"passed": "pass", "failed": "fail"}
    tests = [{"name": c.id, "status": status.get(c.status, "error"), "score": c.cents / 100,
              "message": c.message, "test_code": c.claim, "filename": "", "line_no": 0,
              "execution_time": f"{c.seconds:.3f}s"} for c in report.cases]
    overall = "pass" if all(c.status == "passed" for c in report.cases) else "fail"
    return _dump({"version": 1, "status": overall, "max_score": report.max_score,
                  "tests": tests})


def classroom_points_line(report: ScoreReport) -> str:
    return f"Points {_fmt(report.score)}/{_fmt(report.max_score)}"


def render(kind: str, report: ScoreReport, lang: str = "en") -> str:
    """The text of output ``kind`` (report, gradescope, prairielearn, junit, classroom)."""
    if kind == "report":
        return score_json(report)
    if kind == "classroom":
        return classroom_json(report)
    if kind == "gradescope":
        return gradescope_json(report, lang)
    if kind == "prairielearn":
        return prairielearn_json(report, lang)
    if kind == "junit":
        return junit_xml(report, lang)
    raise ValueError(f"unknown output kind {kind!r}")
