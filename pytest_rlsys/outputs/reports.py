"""What a learner reads (the score table, each failed case once, hidden failures by
category) and the entry points of every output.  Each file format has its own module
(scorejson, gradescope, prairielearn, junit, classroom), picked by name from the table in
``registry``; files are written atomically (``files.write_atomic``) by the grading
process only."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.messages import (
    HIDDEN_GROUP,
    HIDDEN_NOTE,
    NOT_IMPLEMENTED,
    claim_text,
    section_label,
)
from pytest_rlsys.outputs import registry
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import clean

__all__ = [
    "LABELS",
    "RenderOptions",
    "classroom_points_line",
    "display_width",
    "failure_text",
    "render",
    "table_lines",
    "terminal_lines",
    "terminal_summary",
    "write_atomic",
]

LABELS = {
    "en": {
        "title": "rlsys score",
        "section": "section",
        "score": "score",
        "cases": "cases",
        "total": "total",
        "points": "points",
        "input": "input",
        "claim": "chapter check",
        "expected": "expected",
        "got": "got",
        "ungraded": "{p:g} points not graded: "
        "{n} cases did not run (deselected, stopped early or out of time); they count as 0",
        "hidden_failed": "hidden cases failed (category only): {n}",
        "not_run": "not run",
        "visible_failed": "failed visible cases (the chapter's checks): {n}",
        "same_failure": "{n} cases ({where}) failed the same way:",
        "not_implemented": "{todo}: not implemented yet ({n} cases score 0)",
        "note": "note",
        "more": "(-v shows every detail)",
        "output": "output of the submission (captured, first {n} characters)",
        "result_error": "result file",
        "result_note": "result file note",
    },
    "zh": {
        "title": "rlsys 得分",
        "section": "部分",
        "score": "得分",
        "cases": "通过用例",
        "total": "总分",
        "points": "分",
        "input": "输入",
        "claim": "章节断言",
        "expected": "期望",
        "got": "实际",
        "ungraded": "{p:g} 分未评：{n} 个用例未运行（被取消选择、提前停止或超出时间），按 0 分计",
        "hidden_failed": "未通过的隐藏用例（只显示类别）：{n} 个",
        "not_run": "未运行",
        "visible_failed": "未通过的公开用例（章节断言）：{n} 个",
        "same_failure": "{n} 个用例（{where}）以同样方式失败：",
        "not_implemented": "{todo}：尚未实现（{n} 个用例计 0 分）",
        "note": "说明",
        "more": "（-v 显示全部细节）",
        "output": "提交文件的输出（已捕获，前 {n} 个字符）",
        "result_error": "结果文件",
        "result_note": "结果文件说明",
    },
}
# Default terminal output fits an 80-column log, so that no line the submission's text
# is part of can wrap and put that text at the start of a line; -v shows everything.
WIDTH = 80


def _labels(lang: str) -> dict[str, str]:
    return LABELS.get(lang, LABELS["en"])


def _fmt(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal (CJK characters take two)."""
    if text.isascii() and text.isprintable():
        return len(text)  # the common case, without importing wcwidth
    import wcwidth

    width = wcwidth.wcswidth(text)
    return width if width >= 0 else len(text)  # control characters: count them as one


def _char_width(char: str) -> int:
    if " " <= char <= "~":
        return 1
    import wcwidth

    return max(0, wcwidth.wcwidth(char))


def pad(text: str, width: int, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` display columns."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


def clip(text: str, width: int = WIDTH) -> str:
    """``text`` cut to ``width`` display columns, ending in '…' when cut."""
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for char in text:
        w = _char_width(char)
        if used + w > width - 1:
            break
        out.append(char)
        used += w
    return "".join(out) + "…"


def wrap(text: str, indent: str = "", width: int = WIDTH) -> list[str]:
    """``text`` broken into lines of at most ``width`` display columns (at spaces when it
    can), each starting with ``indent``."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = indent
        for char in paragraph:
            if display_width(line + char) > width:
                cut = line.rfind(" ")
                if cut > len(indent):
                    lines.append(line[:cut])
                    line = indent + line[cut + 1 :]
                else:
                    lines.append(line)
                    line = indent
            line += char
        lines.append(line)
    return lines


def table_lines(report: ScoreReport, lang: str = "en") -> list[str]:
    """The per-section table, aligned by display width."""
    text = _labels(lang)
    sections = report.sections()
    rows = [(text["section"], text["score"], text["cases"], "")]
    for name, s in sections.items():
        status = NOT_IMPLEMENTED.get(lang) if s["not_implemented"] == s["cases"] else ""
        rows.append(
            (
                section_label(name, lang),
                f"{_fmt(s['score'])} / {_fmt(s['max_score'])}",
                f"{s['passed']}/{s['cases']}",
                status,
            )
        )
    rows.append((text["total"], f"{_fmt(report.score)} / {_fmt(report.max_score)}", "", ""))
    widths = [max(display_width(row[i]) for row in rows) for i in range(3)]
    lines = []
    for label, score, cases, status in rows:
        line = (
            f"{pad(label, max(widths[0], 12))} {pad(score, max(widths[1], 15), True)} "
            f"{pad(cases, max(widths[2], 10), True)}"
        )
        lines.append((line + ("  " + status if status else "")).rstrip())
    return lines


def _hidden_groups(report: ScoreReport, lang: str, skip: set[str]) -> dict[str, int]:
    """One line per hidden failure kind: crashes by message, the rest by category."""
    seen: dict[str, int] = {}
    for case in report.cases:
        if (
            case.visibility != "hidden"
            or case.status in ("passed", "not_run")
            or case.not_implemented
            or case.id in skip
        ):
            continue
        todo = section_label(case.section, lang)
        key = (
            f"{todo}: {case.message}"
            if case.status in ("error", "timeout")
            else f"{todo}: {case.category} ({case.message})"
        )
        seen[key] = seen.get(key, 0) + 1
    return seen


def terminal_lines(report: ScoreReport, lang: str = "en") -> list[str]:
    """The per-section table, how much was not graded, hidden failures by category, notes."""
    text = _labels(lang)
    lines = table_lines(report, lang)
    not_run = [c for c in report.cases if c.status == "not_run"]
    if not_run:
        lines.append(text["ungraded"].format(p=report.ungraded_cents / 100, n=len(not_run)))
    hidden = _hidden_groups(report, lang, set())
    if hidden:
        lines.append(text["hidden_failed"].format(n=sum(hidden.values())))
        lines += [f"  - {m}" + (f" ×{n}" if n > 1 else "") for m, n in hidden.items()]
    lines += [f"{text['note']}: {note}" for note in report.notes]
    return [clean(line, newlines=False) for line in lines]


def failure_text(case: CaseResult, lang: str = "en", verbose: bool = True) -> str:
    """What a learner sees for one failed case: input/expected/got, or just the category.

    ``verbose=False`` cuts every line to the terminal's 100 columns.
    """
    text = _labels(lang)
    lines = [f"[{section_label(case.section, lang)}] {case.category}: {case.message}"]
    if case.visibility == "hidden":
        lines.append(f"  ({HIDDEN_NOTE.get(lang)})")
    if case.visibility == "visible" and case.call:
        lines.append(f"  {text['input']}: {case.call}")
        if case.claim:
            lines.append(f"  {text['claim']}: {claim_text(case.claim, lang)}")
        if case.expected:
            lines.append(f"  {text['expected']}: {case.expected}")
        if case.got:
            lines.append(f"  {text['got']}: {case.got}")
    lines = [clean(line, newlines=False) for line in lines]  # the submission's text
    return "\n".join(lines if verbose else [clip(line) for line in lines])


def group_failure_text(failed: Sequence[CaseResult], total: int, lang: str = "en") -> str:
    """What a learner sees for a TODO's hidden cases (one pytest item): how many failed
    and each kind of failure once, with its count; never an input or a value."""
    kinds: dict[str, int] = {}
    for case in failed:
        line = f"[{section_label(case.section, lang)}] {case.category}: {case.message}"
        kinds[line] = kinds.get(line, 0) + 1
    lines = [HIDDEN_GROUP.get(lang).format(n=len(failed), total=total)]
    lines += [f"{line} ×{n}" if n > 1 else line for line, n in kinds.items()]
    lines.append(f"  ({HIDDEN_NOTE.get(lang)})")
    return "\n".join(clean(line, newlines=False) for line in lines)


def terminal_summary(report: ScoreReport, lang: str = "en", verbose: bool = False) -> list[str]:
    """The learner's summary: the table, each failed visible case once, one line per kind of
    hidden failure, a failure shared by many cases (a load error, a crash) once."""
    text = _labels(lang)
    failed = [c for c in report.cases if c.status not in ("passed", "not_run")]
    lines = table_lines(report, lang)
    not_run = [c for c in report.cases if c.status == "not_run"]
    if not_run:
        lines += wrap(text["ungraded"].format(p=report.ungraded_cents / 100, n=len(not_run)))
    # Failures that say the same thing for many cases (load error, crash): once.
    # A load failure is one fact for every case (hidden ones word it without the
    # submission's text): grouped by its kind, said with a visible case's full message.
    by_message: dict[str, list[CaseResult]] = {}
    for case in failed:
        if case.status in ("error", "timeout") and not case.not_implemented:
            key = "\x00load_failed" if case.kind == "load_failed" else case.message
            by_message.setdefault(key, []).append(case)
    shared = {
        next((c.message for c in cases if c.visibility == "visible"), cases[0].message): cases
        for cases in by_message.values()
        if len(cases) > 1
    }
    done = {c.id for cases in shared.values() for c in cases}
    for message, cases in shared.items():
        where = ", ".join(dict.fromkeys(section_label(c.section, lang) for c in cases))
        lines.append(text["same_failure"].format(n=len(cases), where=where))
        lines += wrap(message, "  ")  # said once, so said in full
    # Template code: one line per TODO, unless the table already says so.
    sections = report.sections()
    not_impl: dict[str, int] = {}
    for case in failed:
        if case.not_implemented and case.id not in done:
            not_impl[case.section] = not_impl.get(case.section, 0) + 1
            done.add(case.id)
    for section, count in not_impl.items():
        if sections[section]["not_implemented"] != sections[section]["cases"]:
            lines.append(text["not_implemented"].format(todo=section_label(section, lang), n=count))
    visible = [c for c in failed if c.visibility == "visible" and c.id not in done]
    if visible:
        lines.append(text["visible_failed"].format(n=len(visible)))
        for case in visible:
            lines += failure_text(case, lang, verbose).splitlines()
    hidden = _hidden_groups(report, lang, done)
    if hidden:
        lines.append(text["hidden_failed"].format(n=sum(hidden.values())))
        lines += [f"  - {m}" + (f" ×{n}" if n > 1 else "") for m, n in hidden.items()]
    if verbose:  # how the grader ran (the uid, ...): for instructors, not learners
        lines += [f"{text['note']}: {note}" for note in report.notes]
    # The submission's text is in some lines: cleaned again here, whoever built them.
    return [clean(line) for line in lines] if verbose else [clip(clean(line)) for line in lines]


def classroom_points_line(report: ScoreReport) -> str:
    """The ``Points X/Y`` line, exactly as GitHub Classroom's reporter writes it."""
    from pytest_rlsys.outputs.classroom import points_line

    return points_line(report)


def render(
    kind: str, report: ScoreReport, lang: str = "en", options: RenderOptions | None = None
) -> str:
    """The text of output ``kind`` (report, gradescope, prairielearn, junit, classroom);
    the renderer comes from the output table (pytest_rlsys.outputs.registry.OUTPUTS)."""
    return registry.render(kind, report, options or RenderOptions(lang=lang))
