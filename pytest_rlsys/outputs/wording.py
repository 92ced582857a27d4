"""A case's words, in the output's language, from its record (``grading.scoring.CaseResult``).

The grader keeps facts: a kind from the closed vocabulary (``grading.verdicts``), a path,
an exception's class and line, the call's own text.  Every renderer asks here for the
sentence when it writes its file, so the language is an output option only and no code
reads a sentence back.  A hidden case is worded from its kind and schema path alone
(``messages.HIDDEN_WORDS``); whatever else its record held could not reach its words.
"""

from __future__ import annotations

from collections import Counter

from pytest_rlsys.grading.scoring import MAX_MESSAGE_CHARS, CaseResult, ScoreReport, bounded
from pytest_rlsys.grading.verdicts import ValueDiff
from pytest_rlsys.messages import (
    AT_LINE,
    DIFF_WORDS,
    LABELS,
    PROBLEM_WORDS,
    RAISED,
    RULE_AGAIN,
    RULE_FIRST,
    TODO_OF,
    TYPE_DUE,
    WITH_RULE,
    Msg,
    hidden_message,
)

__all__ = [
    "Kind",
    "category",
    "diff_text",
    "kind_lines",
    "load_error_text",
    "message",
    "rule_of",
    "shared_message",
    "with_hint",
]

_DUE_OF = {f"not_a_{due}": words for due, words in TYPE_DUE.items()}  # comparison's names
_KEYS = {(True, False): "keys_missing", (False, True): "keys_extra", (True, True): "keys_both"}


def diff_text(diff: ValueDiff, lang: str = "en") -> str:
    """Where and how a value differs: the path, then what failed (a type, keys, the order
    or the value) in ``lang``, with the values and type names as they are."""
    due = _DUE_OF.get(diff.how)
    how = "wrong_type" if due else diff.how
    if how == "keys":
        how = _KEYS.get((bool(diff.missing), bool(diff.extra)), "wrong_value")
    fields = {
        "path": diff.path,
        "want": diff.want,
        "got": diff.got,
        "want_type": diff.want_type,
        "got_type": diff.got_type,
        "due": due.get(lang) if due else "",
        "missing": str(list(diff.missing)),
        "extra": str(list(diff.extra)),
    }
    said = DIFF_WORDS.get(how, DIFF_WORDS["wrong_value"]).fill(lang, fields)
    if diff.also:
        also = DIFF_WORDS["and"].get(lang).join(diff_text(more, lang) for more in diff.also)
        said += DIFF_WORDS["also"].fill(lang, {"also": also})
    return said


def _fill(words: Msg, case: CaseResult, lang: str) -> str:
    """``words`` in ``lang``, its fields filled from ``case``."""
    fields = {
        "exc": case.exc_type,
        "at": AT_LINE.fill(lang, {"line": str(case.line)})
        if type(case.line) is int and case.line > 0
        else "",
        "todo": TODO_OF.get(case.todo, case.todo),
        "names": ", ".join(case.names),
        "key": repr(case.names[0]) if case.names else "",
        "limit": "" if case.limit is None else f"{case.limit:g}",
        "path": case.path,
        "note": case.note
        if case.said is None
        else bounded(case.said.text(lang), MAX_MESSAGE_CHARS),
    }
    return words.fill(lang, fields)


def _visible(case: CaseResult, lang: str) -> str:
    if case.diff is not None:
        return diff_text(case.diff, lang)
    if not case.kind:  # a result-file check: its own account (resultfile), as it is
        return case.note
    return _fill(PROBLEM_WORDS[case.kind], case, lang)


def message(case: CaseResult, lang: str = "en") -> str:
    """What went wrong in ``case``, in ``lang``; "" for a passed case."""
    if case.visibility == "hidden":
        return (
            hidden_message(case.kind, case.path, lang, case.names, case.also) if case.kind else ""
        )
    return bounded(_visible(case, lang), MAX_MESSAGE_CHARS)


def shared_message(case: CaseResult, lang: str = "en") -> str:
    """``message``, for a failure said once for many cases (a resource exhausted, a
    crash): an exception is named with its line and its text, never what this one case
    expected instead (the same exception answered where ValueError was due)."""
    if case.visibility == "visible" and case.kind in ("raised", "raised_other"):
        with_text = bool(case.kind == "raised" and case.note)
        return bounded(
            _fill(PROBLEM_WORDS["raised"] if with_text else RAISED, case, lang), MAX_MESSAGE_CHARS
        )
    return message(case, lang)


def category(case: CaseResult, lang: str = "en") -> str:
    """The battery's name for what ``case`` checks, in ``lang``; a failed hidden case's
    names the template's rule it grades too, so its few words point at one sentence."""
    rule = rule_of(case, lang)
    if rule:
        return WITH_RULE.fill(lang, {"category": case.category.get(lang), "rule": rule})
    return case.category.get(lang)


def rule_of(case: CaseResult, lang: str = "en") -> str:
    """The template's rule a failed hidden case names ('' for any other case)."""
    if case.visibility == "hidden" and case.status != "passed":
        return case.rule.get(lang)
    return ""


# One line of a list of failure kinds: the words before its rule, the rule ('' when it
# names none), the words after.
Kind = tuple[str, str, str]


def kind_lines(kinds: dict[Kind, int], lang: str = "en") -> dict[str, int]:
    """Each kind's line (with its count): a rule that several kinds grade is said in full
    at its first and by its number after, so a list of ten kinds under one rule reads
    its sentence once; a rule one kind names is said as ``category`` says it."""
    uses = Counter(rule for _, rule, _ in kinds if rule)
    numbers: dict[str, str] = {}
    lines: dict[str, int] = {}
    for (head, rule, tail), n in kinds.items():
        fields = {"category": head, "rule": rule}
        if not rule:
            said = head
        elif uses[rule] == 1:
            said = WITH_RULE.fill(lang, fields)
        elif rule in numbers:
            said = RULE_AGAIN.fill(lang, {**fields, "n": numbers[rule]})
        else:
            numbers[rule] = str(len(numbers) + 1)
            said = RULE_FIRST.fill(lang, {**fields, "n": numbers[rule]})
        lines[said + tail] = lines.get(said + tail, 0) + n
    return lines


def load_error_text(report: ScoreReport, lang: str = "en") -> str:
    """Why the submission could not be graded at all, in ``lang`` ("" when it was), with
    what to do about a missing module: every writer says the load error through this, so
    the terminal, each platform's file and each kit give the same reason."""
    said = report.load_said.text(lang) if report.load_said is not None else report.load_error
    return with_hint(said, report.load_exc_type, lang) if said else ""


def with_hint(message: str, exc_type: str, lang: str = "en") -> str:
    """``message`` and, when the import failed for a missing module, that only the standard
    library is there (the child runs without site-packages)."""
    if exc_type == "ModuleNotFoundError":
        return f"{message} ({LABELS['stdlib_only'].get(lang)})"
    return message
