"""The batch CSV's message column (and the class roster's "why"): why a report is below
full marks, in one line of the grader's own words."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.grading.verdicts import HIDDEN_KIND
from pytest_rlsys.messages import NOT_IMPLEMENTED, Msg, section_label
from pytest_rlsys.outputs.terminal import (
    clip,
    display_width,
    labels,
    points_text,
    resource_failure,
)
from pytest_rlsys.outputs.text import clean
from pytest_rlsys.outputs.wording import category, load_error_text, message, shared_message

if TYPE_CHECKING:
    from pytest_rlsys.grading.verdicts import ProblemKind

__all__ = ["below_full_marks"]

OTHER_KINDS = Msg(" (+{n} other kind{s})", "（另有 {n} 类）")


def below_full_marks(report: ScoreReport, lang: str = "en", limit: int = 300) -> str:
    """Why ``report`` is below full marks, in one line of the grader's own words ('' at
    full marks): per TODO below its maximum, its score and its most common failure (with
    its count, and how many other kinds there were).  For the batch CSV's message column
    and the class roster."""
    if report.load_error is not None:  # said even when there is no case to lose
        return clip(clean(load_error_text(report, lang), newlines=False), limit)
    if report.score >= report.max_score:
        return ""
    below = {s: e for s, e in report.sections().items() if e["score"] < e["max_score"]}
    share = max(80, limit // len(below) - 2)
    parts = [_section_line(report, s, e, lang, share) for s, e in below.items()]
    return clip(clean("; ".join(parts), newlines=False), limit)


def _section_line(
    report: ScoreReport, section: str, entry: dict[str, Any], lang: str, share: int
) -> str:
    """One TODO below its maximum: its score and its most common failure, in ``share``
    columns."""
    kinds: dict[str, list[CaseResult]] = {}
    for case in report.cases:
        if case.section == section and case.status != "passed":
            kinds.setdefault(_failure_key(case, lang), []).append(case)
    # The cause before its consequence: two timeouts, not the 58 cases they left not
    # run ("already timed out too often"), head the line.
    ran = [group for group in kinds.values() if not all(map(_left_not_run, group))]
    cases = max(ran or kinds.values(), key=len)
    # A visible case of that kind says it with its detail; a hidden one only its kind.
    top = next(
        (_failure_kind(c, lang) for c in cases if c.visibility == "visible"),
        _failure_kind(cases[0], lang),
    )
    named = list(dict.fromkeys(filter(None, (category(c, lang) for c in cases))))
    listed = ""
    if len(named) > 1 and top in named:
        # One kind of failure (an exception...) over cases of several categories: the
        # kind in its own words, then each category, never one under another's name.
        top = next(
            (shared_message(c, lang) for c in cases if c.visibility == "visible"),
            message(cases[0], lang),
        )
        listed = f": {'; '.join(named)}"
    others = len(kinds) - 1
    more = OTHER_KINDS.fill(lang, {"n": str(others), "s": "s" * (others > 1)}) if others else ""
    points = f"{points_text(entry['score'])}/{points_text(entry['max_score'])}"
    head, tail = f"{section_label(section, lang)} {points}: ", f" ×{len(cases)}{more}"
    # Each TODO below its maximum keeps its share of the line; the failure's words are
    # cut first (at a space), so its count and the other kinds are always said.
    room = max(24, share - display_width(head + tail))
    return clip(f"{head}{_cut_at_word(top, room)}{tail}{listed}", share)


def _cut_at_word(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns at its last space that fits, ending in '…'."""
    if display_width(text) <= width:
        return text
    cut = clip(text, width)[:-1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"


def _left_not_run(case: CaseResult) -> bool:
    """A case not tried, or not tried because its function timed out too often (the
    grader marks those "timeout", kind too_many_timeouts): a consequence, not a cause."""
    return case.status == "not_run" or case.kind == "too_many_timeouts"


def _failure_key(case: CaseResult, lang: str) -> str:
    """Which failures count as one kind: one that says the same for every input (load,
    crash, timeout, an exception) by its typed kind, visible and hidden cases together
    (a hidden case keeps no exception class); anything else by its words."""
    kind = str(HIDDEN_KIND.get(cast("ProblemKind", case.kind), case.kind))
    if kind in _SHARED_KINDS:
        return "\0" + kind
    return _failure_kind(case, lang)


# Kinds that say the same thing whatever the input (so one line, with a count, says it).
_SHARED_KINDS = frozenset(
    {
        "raised",
        "wrong_exception",
        "timed_out",
        "too_many_timeouts",
        "crashed",
        "load_failed",
        "missing_function",
    }
)


def _failure_kind(case: CaseResult, lang: str) -> str:
    """What went wrong in ``case``, in words many cases can share."""
    if case.not_implemented:
        return NOT_IMPLEMENTED.get(lang)
    if case.status == "not_run":
        return labels(lang)["not_run"]
    resource = resource_failure(case, lang)
    if resource is not None:
        return resource
    if case.status in ("error", "timeout"):
        return message(case, lang)
    return category(case, lang) or message(case, lang)
