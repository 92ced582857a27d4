"""English sentences in text meant to be Chinese: what a zh learner must never read (issue 44)."""

from __future__ import annotations

import re

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
