"""English sentences in text meant to be Chinese: what a zh learner must never read (issue 44)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from pytest_rlsys.grading.request import GradingRequest
from pytest_rlsys.grading.scoring import CaseResult, RenderOptions, ScoreReport
from pytest_rlsys.messages import Said
from pytest_rlsys.outputs import registry, terminal
from pytest_rlsys.session import GradingSession

# Chinese text quotes the submission's own words (an exception's message) with “ ”.
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|“[^”]*”")
# Code and values: paths, identifiers with _ . ( = or digits, exception classes, numbers.
_CODE = re.compile(
    r"\$\S*|\S*[_.(=/\[{]\S*|\b\w*(?:Error|Exception|Interrupt|Exit)\b|\b0x[0-9a-f]+\b"
)
_WORDS = re.compile(r"[A-Za-z0-9']+(?: +[A-Za-z0-9']+)+")
_FUNCTION_WORDS = frozenset(
    {
        "the",
        "a",
        "an",
        "of",
        "to",
        "is",
        "are",
        "was",
        "not",
        "no",
        "within",
        "with",
        "at",
        "in",
        "on",
        "by",
        "for",
        "from",
        "as",
        "reads",
        "has",
        "have",
        "defines",
        "printed",
        "began",
        "shown",
        "process",
        "exited",
        "code",
        "file",
        "text",
        "save",
        "it",
        "its",
    }
)


def english_sentences(text: str) -> list[str]:
    """Runs of English words in ``text`` once quoted code and values are taken out: three
    words (two of them letters), or two with a function word ("line 7 reads")."""
    bare = _CODE.sub(" ", _QUOTED.sub(" ", text))
    found = []
    for run in _WORDS.findall(bare):
        words = run.split()
        letters = [w for w in words if w.isalpha()]
        if (len(words) >= 3 and len(letters) >= 2) or {w.lower() for w in words} & _FUNCTION_WORDS:
            found.append(run)
    return found


def _data(said: Said | None) -> list[str]:
    """The values a sentence of the grader's names (an exception's text, a limit)."""
    if said is None:
        return []
    return [t for _, v in said.values for t in (_data(v) if isinstance(v, Said) else [v])]


def _not_ours(case: CaseResult) -> list[str]:
    """What a case shows that is not the grader's sentence: the submission's own text (an
    exception's message), the chapter's code and values, names and paths."""
    texts = [case.call, case.claim, case.expected, case.got, case.exc_type, case.path]
    texts += [*case.names, *_data(case.said), *([] if case.said else [case.note])]
    return [t for t in texts if len(t.strip()) > 2]  # a number stays, read as a number


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def check_chinese(report: ScoreReport) -> None:
    """What a learner reads with ``rlsys_lang = "zh"`` holds no English sentence beyond
    the submission's own text, the chapter's code and values: the terminal summary (-v),
    each failure, and every platform file's text."""
    zh = RenderOptions(lang="zh")
    session = GradingSession(None, None, GradingRequest(render=zh), final=report)
    shown = session.summary_lines(verbose=True, width=10**6)
    shown += terminal.terminal_lines(report, "zh")
    shown += [terminal.failure_text(c, "zh") for c in report.cases if c.status != "passed"]
    for kind in ("report", "gradescope", "prairielearn"):
        doc = json.loads(registry.render(kind, report, zh))
        for key in ("reproducibility", "fence", "gpu_result"):
            doc.pop(key, None)  # facts, not words
        shown += _strings(doc)
    junit = ET.fromstring(registry.render("junit", report, zh).encode("utf-8"))
    shown += [t for e in junit.iter() for t in (e.text or "", *e.attrib.values()) if t]
    ours = sorted(
        {t for c in report.cases for t in _not_ours(c)}
        | {t for t in _data(report.load_said) if len(t.strip()) > 2},
        key=len,
        reverse=True,
    )
    found = []
    for text in shown:
        for line in text.splitlines():
            bare = line
            for piece in ours:
                bare = bare.replace(piece, " ")
            if english_sentences(bare):
                found.append((line, english_sentences(bare)))
    assert found == [], found[:8]
