"""What a learner reads, as text: the score table, each failed case once, hidden failures
by category, the shared-failure and stdlib-only lines, wrapped for a terminal.  The pytest
run's summary prints these lines; the platform files (Gradescope, PrairieLearn, JUnit)
reuse them."""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from typing import Any

from pytest_rlsys.grading.comparison import float_source
from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.grading.signature import parse_expression
from pytest_rlsys.grading.verdicts import MISSING
from pytest_rlsys.messages import (
    HIDDEN_GROUP,
    HIDDEN_NOTE,
    IN_PARENS,
    LABELS,
    NOT_IMPLEMENTED,
    RAISED,
    claim_text,
    section_label,
)
from pytest_rlsys.outputs.text import clean, js_number
from pytest_rlsys.outputs.wording import (
    Kind,
    category,
    kind_lines,
    message,
    rule_of,
    shared_message,
    with_hint,
)

__all__ = [
    "CONTINUED",
    "LABELS",
    "WIDTH",
    "call_lines",
    "clip",
    "display_width",
    "failure_text",
    "fit",
    "group_failure_text",
    "header_lines",
    "hidden_heading",
    "hidden_later_line",
    "labels",
    "points_line",
    "points_text",
    "resource_failure",
    "rule",
    "table_lines",
    "terminal_lines",
    "terminal_summary",
    "with_hint",
    "wrap",
]

# The learner's terminal (rules):
# - The grader's own text is wrapped, never cut, at the terminal's width (WIDTH when it
#   is not known, e.g. a log).  Every continuation line starts with its line's indent and
#   CONTINUED, so text that wrapped (the submission's text included: it is escaped by
#   ``clean`` to one line first) can never pose as a line of its own at the left margin.
# - A failed visible case shows its whole input (the battery's own data); one that does
#   not fit on a line is pretty-printed, one argument per line.
WIDTH = 80
CONTINUED = "  ↳ "


def header_lines(facts: Sequence[tuple[str, dict[str, str]]], lang: str, width: int) -> list[str]:
    """The run's header, from (label key, fields) facts, in ``lang``, each line fitted to
    ``width`` columns (``fit``: wrapped at spaces, continued with CONTINUED)."""
    words = {key: LABELS[key] for key, _ in facts}
    return [
        piece
        for key, fields in facts
        for piece in fit(clean(words[key].fill(lang, fields), newlines=False), width)
    ]


def labels(lang: str) -> dict[str, str]:
    """The terminal's words in ``lang`` (English when there are none)."""
    return {key: words.get(lang) for key, words in LABELS.items()}


def points_text(value: float) -> str:
    """``5`` for 5.0, ``1.67`` otherwise."""
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


# Chinese breaks between characters, but never before closing punctuation nor after
# opening (the line-breaking rules of CJK text); English breaks at spaces.
_NO_BREAK_BEFORE = frozenset("，。、；：！？）」』】〉》”’…,.;:!?)]}")
_NO_BREAK_AFTER = frozenset("（「『【〈《“‘([{")


def _break_at(line: str, start: int) -> int:
    """The last place after ``start`` where ``line`` may break (-1: none): a space (then
    dropped), or between two characters one of which is wide (CJK)."""
    for i in range(len(line) - 1, start, -1):
        before, char = line[i - 1], line[i]
        if char == " ":
            return i
        if (
            (_char_width(before) == 2 or _char_width(char) == 2)
            and before != " "
            and char not in _NO_BREAK_BEFORE
            and before not in _NO_BREAK_AFTER
        ):
            return i
    return -1


def wrap(text: str, indent: str = "", width: int = WIDTH) -> list[str]:
    """``text`` broken into lines of at most ``width`` display columns (at spaces, or
    between Chinese characters, when it can), each starting with ``indent``."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = indent
        for char in paragraph:
            if display_width(line + char) > width:
                cut = _break_at(line + char, len(indent))  # before ``char`` too
                if cut > len(indent):
                    lines.append(line[:cut].rstrip(" "))
                    line = indent + line[cut:].lstrip(" ")
                else:
                    lines.append(line)
                    line = indent
                if char == " " and line == indent:
                    continue  # the space the line broke at
            line += char
        lines.append(line)
    return lines


def fit(line: str, width: int = WIDTH) -> list[str]:
    """``line`` as it is when it fits ``width`` columns, else wrapped (at spaces, or
    between Chinese characters, when it can), each continuation line starting with the
    line's indent and CONTINUED."""
    if display_width(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip(" "))]
    lead = indent + CONTINUED
    width = max(width, display_width(lead) + 20)  # a very narrow terminal still gets text
    first = wrap(line, "", width)[0]
    return [first, *wrap(line[len(first) :].strip(" "), lead, width)]


def rule(char: str, title: str, width: int = WIDTH) -> str:
    """``=== title ===`` across ``width`` display columns (a CJK title counts double)."""
    side = max(1, (width - display_width(title) - 2) // 2)
    line = f"{char * side} {title} {char * side}"
    return line + char * max(0, width - display_width(line))


class _NonFiniteFloats(ast.NodeTransformer):
    """``float('nan')``, ``float('inf')`` and ``float('-inf')`` (how a call's source writes
    them, ``comparison.source``) as the constants ``ast.literal_eval`` accepts."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "float"
            and isinstance(arg, ast.Constant)
            and arg.value in ("nan", "inf", "-inf")
        ):
            return ast.copy_location(ast.Constant(float(arg.value)), node)
        return self.generic_visit(node)


class _Source:
    """A non-finite float for ``pprint``, which writes it as ``repr`` does (``nan``)."""

    def __init__(self, value: float) -> None:
        self.text = float_source(value)

    def __repr__(self) -> str:
        return self.text


def _as_source(value: Any) -> Any:
    """``value`` with each non-finite float wrapped, so ``pprint`` writes Python source."""
    if type(value) is float and not math.isfinite(value):
        return _Source(value)
    if type(value) is dict:
        return {k: _as_source(v) for k, v in value.items()}
    if type(value) is list:
        return [_as_source(v) for v in value]
    return value


def call_lines(call: str, label: str, width: int = WIDTH) -> list[str]:
    """``  label: call`` on one line when it fits, else each call pretty-printed with one
    argument per line; a call that is not plain literal data is wrapped instead."""
    line = f"  {label}: {call}"
    if display_width(line) <= width:
        return [line]
    import pprint

    lines = [f"  {label}:"]
    for part in call.split(" ; "):
        try:
            node = _NonFiniteFloats().visit(parse_expression(part)).body
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                raise ValueError(part)
            args = [ast.literal_eval(arg) for arg in node.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            return fit(line, width)
        lines.append(f"    {node.func.id}(")
        room = max(20, width - 6)
        for name, value in [*((None, a) for a in args), *kwargs.items()]:
            text = pprint.pformat(_as_source(value), width=room, sort_dicts=False)
            if name is not None:
                text = f"{name}={text}"
            pieces = text.splitlines()
            pieces[-1] += ","
            lines += [f"      {piece}" for piece in pieces]
        lines.append("    )")
    return [piece for line in lines for piece in fit(line, width)]


def table_lines(report: ScoreReport, lang: str = "en") -> list[str]:
    """The per-section table, aligned by display width."""
    text = labels(lang)
    sections = report.sections()
    rows = [(text["section"], text["score"], text["cases"], "")]
    for name, s in sections.items():
        status = NOT_IMPLEMENTED.get(lang) if s["not_implemented"] == s["cases"] else ""
        rows.append(
            (
                section_label(name, lang),
                f"{points_text(s['score'])} / {points_text(s['max_score'])}",
                f"{s['passed']}/{s['cases']}",
                status,
            )
        )
    total = f"{points_text(report.score)} / {points_text(report.max_score)}"
    rows.append((text["total"], total, "", ""))
    widths = [max(display_width(row[i]) for row in rows) for i in range(3)]
    lines = []
    for label, score, cases, status in rows:
        line = (
            f"{pad(label, max(widths[0], 12))} {pad(score, max(widths[1], 15), True)} "
            f"{pad(cases, max(widths[2], 10), True)}"
        )
        lines.append((line + ("  " + status if status else "")).rstrip())
    return lines


def hidden_heading(groups: dict[str, int], lang: str = "en") -> str:
    """``hidden cases failed (category only): 14 cases of 13 kinds`` (or just ``3``)."""
    text = labels(lang)
    n, kinds = sum(groups.values()), len(groups)
    many = text["of_one_kind"] if kinds == 1 else text["of_kinds"]  # not "of 1 kinds"
    count = text["n_cases"].format(n=n) if kinds == n else many.format(n=n, k=kinds)
    return text["hidden_failed"].format(n=count)


def _hidden_groups(report: ScoreReport, lang: str, skip: set[str]) -> dict[str, int]:
    """One line per hidden failure kind: crashes by message, the rest by category."""
    seen: dict[Kind, int] = {}
    for case in report.cases:
        if (
            case.visibility != "hidden"
            or case.status in ("passed", "not_run")
            or case.not_implemented
            or case.id in skip
        ):
            continue
        todo = section_label(case.section, lang)
        key: Kind = (
            (f"{todo}: {message(case, lang)}", "", "")
            if case.status in ("error", "timeout")
            else (
                f"{todo}: {case.category.get(lang)}",
                rule_of(case, lang),
                IN_PARENS.fill(lang, {"text": message(case, lang)}),
            )
        )
        seen[key] = seen.get(key, 0) + 1
    return kind_lines(seen, lang)


def terminal_lines(report: ScoreReport, lang: str = "en") -> list[str]:
    """The per-section table, how much was not graded, hidden failures by category, notes."""
    text = labels(lang)
    lines = table_lines(report, lang)
    not_run = [c for c in report.cases if c.status == "not_run"]
    if not_run:
        lines.append(text["ungraded"].format(p=report.ungraded_cents / 100, n=len(not_run)))
    hidden = _hidden_groups(report, lang, set())
    if hidden:
        lines.append(hidden_heading(hidden, lang))
        lines += [f"  - {m}" + (f" ×{n}" if n > 1 else "") for m, n in hidden.items()]
    # How the grader ran (the uid, the interpreter) is instructor detail, kept in the score
    # JSON; a learner reads only a note that their score is affected by the grader's fault.
    lines += [f"{text['note']}: {note.text(lang)}" for note in report.learner_notes]
    return [clean(line, newlines=False) for line in lines]


def hidden_later_line(points: float, cases: int, visibility: str, lang: str = "en") -> str:
    """Where hidden results are held back: how many points, and when they are shown."""
    text = labels(lang)
    return text["hidden_later"].format(n=cases, p=points, when=text.get(visibility, visibility))


def failure_text(case: CaseResult, lang: str = "en", width: int | None = None) -> str:
    """What a learner sees for one failed case: input/expected/got, or just the category.

    ``width``: wrap every line at that many columns (``fit``) and pretty-print a long
    input; None (files) keeps one line per item.
    """
    text = labels(lang)
    lines = [f"[{section_label(case.section, lang)}] {category(case, lang)}: {message(case, lang)}"]
    if case.visibility == "hidden":
        lines.append(f"  ({HIDDEN_NOTE.get(lang)})")
    calls: list[str] = []
    if case.visibility == "visible" and case.call:
        calls = (
            call_lines(case.call, text["input"], width)
            if width is not None
            else [f"  {text['input']}: {case.call}"]
        )
        if case.claim:
            lines.append(f"  {text['claim']}: {claim_text(case.claim, lang)}")
        if case.expected:
            lines.append(f"  {text['expected']}: {case.expected}")
        if case.got:
            got = (
                text["missing"] if case.kind == "missing_key" and case.got == MISSING else case.got
            )
            lines.append(f"  {text['got']}: {got}")
    lines = [clean(line, newlines=False) for line in lines]  # the submission's text
    lines[1:1] = [clean(line, newlines=False) for line in calls]  # the battery's own data
    if width is None:
        return "\n".join(lines)
    return "\n".join(piece for line in lines for piece in fit(line, width))


def group_failure_text(failed: Sequence[CaseResult], total: int, lang: str = "en") -> str:
    """What a learner sees for a TODO's hidden cases (one pytest item): how many failed
    and each kind of failure once, with its count; never an input or a value."""
    kinds: dict[Kind, int] = {}
    for case in failed:
        head = f"[{section_label(case.section, lang)}] {case.category.get(lang)}"
        kind = (head, rule_of(case, lang), f": {message(case, lang)}")
        kinds[kind] = kinds.get(kind, 0) + 1
    lines = [HIDDEN_GROUP.get(lang).format(n=len(failed), total=total)]
    lines += [f"{line} ×{n}" if n > 1 else line for line, n in kind_lines(kinds, lang).items()]
    lines.append(f"  ({HIDDEN_NOTE.get(lang)})")
    return "\n".join(clean(line, newlines=False) for line in lines)


# Exhausted whatever the input: one failure, however many cases it hit.
_RESOURCE_ERRORS = ("MemoryError", "RecursionError")


def resource_failure(case: CaseResult, lang: str = "en") -> str | None:
    """``raised MemoryError`` (the grader's own words) when ``case`` failed that way."""
    # From the typed record, never the message: only a visible case keeps its class.
    if case.kind in ("raised", "raised_other") and case.exc_type in _RESOURCE_ERRORS:
        return RAISED.fill(lang, {"exc": case.exc_type, "at": ""})
    return None


def _shared_failures(failed: list[CaseResult]) -> dict[tuple[str, str], list[CaseResult]]:
    """Failures that say the same thing for many cases (load error, crash, a resource
    exhausted whatever the input), grouped by the records' facts, never by their words."""
    by_fact: dict[tuple[str, str], list[CaseResult]] = {}
    for case in failed:
        if case.not_implemented:
            continue
        if resource_failure(case) is not None:  # per TODO: one function, one place it fails
            key = ("resource", f"{case.section} {case.exc_type}")
        elif case.kind == "load_failed":  # one submission, one load error: said once
            key = ("load_failed", "")
        elif case.status in ("error", "timeout"):
            key = (
                case.kind,
                repr((case.path, case.note, case.exc_type, case.limit, case.names)),
            )
        else:
            continue
        by_fact.setdefault(key, []).append(case)
    return {k: cases for k, cases in by_fact.items() if len(cases) > 1}


class _Summary:
    """The learner's summary, built by small named passes (as pytest's ``summary_*``):
    each appends its lines and marks the cases it said, so no case is said twice."""

    def __init__(self, report: ScoreReport, lang: str, verbose: bool, width: int) -> None:
        self.report, self.lang, self.verbose, self.width = report, lang, verbose, width
        self.text = labels(lang)
        self.failed = [c for c in report.cases if c.status not in ("passed", "not_run")]
        self.done: set[str] = set()
        self.lines: list[str] = []

    def summary_table(self) -> None:
        self.lines += table_lines(self.report, self.lang)

    def summary_ungraded(self) -> None:
        not_run = [c for c in self.report.cases if c.status == "not_run"]
        if not_run:  # one line: ``fit`` wraps it at the terminal's width
            p = self.report.ungraded_cents / 100
            self.lines.append(self.text["ungraded"].format(p=p, n=len(not_run)))

    def summary_shared(self) -> None:
        for cases in _shared_failures(self.failed).values():
            self.done |= {c.id for c in cases}
            where = ", ".join(dict.fromkeys(section_label(c.section, self.lang) for c in cases))
            self.lines.append(self.text["same_failure"].format(n=len(cases), where=where))
            said = next(
                (shared_message(c, self.lang) for c in cases if c.visibility == "visible"),
                resource_failure(cases[0], self.lang) or message(cases[0], self.lang),
            )
            hint = self.report.load_exc_type if cases[0].kind == "load_failed" else ""
            self.lines.append(f"  {with_hint(said, hint, self.lang)}")  # said once, in full
            if cases[0].kind == "timed_out":  # which checks hung: their categories, once
                self.lines += list(
                    dict.fromkeys(
                        f"  - [{section_label(c.section, self.lang)}] {category(c, self.lang)}"
                        for c in cases
                    )
                )

    def summary_not_implemented(self) -> None:
        """Template code: one line per TODO, unless the table already says so."""
        sections = self.report.sections()
        counts: dict[str, int] = {}
        for case in self.failed:
            if case.not_implemented and case.id not in self.done:
                counts[case.section] = counts.get(case.section, 0) + 1
                self.done.add(case.id)
        for section, count in counts.items():
            if sections[section]["not_implemented"] != sections[section]["cases"]:
                todo = section_label(section, self.lang)
                self.lines.append(self.text["not_implemented"].format(todo=todo, n=count))

    def summary_visible(self) -> None:
        visible = [c for c in self.failed if c.visibility == "visible" and c.id not in self.done]
        if visible:
            self.lines.append(self.text["visible_failed"].format(n=len(visible)))
            for case in visible:
                self.lines += failure_text(case, self.lang, self.width).splitlines()

    def summary_hidden(self) -> None:
        hidden = _hidden_groups(self.report, self.lang, self.done)
        if hidden:
            self.lines.append(hidden_heading(hidden, self.lang))
            self.lines += [f"  - {m}" + (f" ×{n}" if n > 1 else "") for m, n in hidden.items()]

    def summary_notes(self) -> None:
        """Instructor detail (how the grader ran) with -v; a learner's notes always."""
        note, report = self.text["note"], self.report
        shown = [*report.notes, *filter(None, [report.ran_as])] if self.verbose else []
        shown += report.learner_notes
        self.lines += [f"{note}: {n.text(self.lang)}" for n in shown]

    def render(self) -> list[str]:
        for summary in (
            self.summary_table,
            self.summary_ungraded,
            self.summary_shared,
            self.summary_not_implemented,
            self.summary_visible,
            self.summary_hidden,
            self.summary_notes,
        ):
            summary()
        # The submission's text is in some lines: cleaned again here, whoever built them.
        fitted = (fit(clean(line, newlines=False), self.width) for line in self.lines)
        return [piece for pieces in fitted for piece in pieces]


def terminal_summary(
    report: ScoreReport, lang: str = "en", verbose: bool = False, width: int = WIDTH
) -> list[str]:
    """The learner's summary: the table, each failed visible case once, one line per kind of
    hidden failure, a failure shared by many cases (a load error, a crash) once; every
    line wrapped at ``width`` columns (``fit``)."""
    return _Summary(report, lang, verbose, width).render()


def points_line(report: ScoreReport, lang: str = "en") -> str:
    """``Points X/Y``: the terminal's last line, in ``lang`` (no platform reads it; the
    Actions kit's notice, which tools read, keeps "Points X/Y" in every language): the
    cases' hundredths summed, then one division, so it is the exact total."""
    earned = sum(c.cents for c in report.cases) / 100
    total = sum(c.max_cents for c in report.cases) / 100
    return labels(lang)["points_line"].format(points=f"{js_number(earned)}/{js_number(total)}")
