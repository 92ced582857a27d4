"""What a learner reads (the score table, one failed case) and the entry points of every
output.  Each file format has its own module (scorejson, gradescope, prairielearn, junit,
classroom), picked by name from the table in ``registry``; files are written atomically
(``files.write_atomic``) by the grading process only."""

from __future__ import annotations

from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.messages import HIDDEN_NOTE, NOT_IMPLEMENTED, TODO_OF
from pytest_rlsys.outputs import registry
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import clean

__all__ = ["LABELS", "RenderOptions", "classroom_points_line", "failure_text", "render",
           "terminal_lines", "write_atomic"]

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
    return [clean(line) for line in lines]  # the submission's text is in some of these


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
    return clean("\n".join(lines))


def classroom_points_line(report: ScoreReport) -> str:
    """The ``Points X/Y`` line, exactly as GitHub Classroom's reporter writes it."""
    from pytest_rlsys.outputs.classroom import points_line

    return points_line(report)


def render(kind: str, report: ScoreReport, lang: str = "en",
           options: RenderOptions | None = None) -> str:
    """The text of output ``kind`` (report, gradescope, prairielearn, junit, classroom);
    the renderer comes from the output table (pytest_rlsys.outputs.registry.OUTPUTS)."""
    return registry.render(kind, report, options or RenderOptions(lang=lang))
