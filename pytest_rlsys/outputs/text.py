"""Make any Python string safe for every writer: valid UTF-8, valid XML 1.0 character data,
and nothing that moves a terminal's cursor or reorders a line.

The submission is hostile, and its text (exception messages, type names, captured output)
reaches the reports.  The grader already escapes it (grading.isolation); the writers do
it again, so that no report can fail or lie whatever reaches them.  A Python ``str`` can
hold what no file format can carry: lone surrogates (``"\\ud800"``, unencodable as UTF-8),
noncharacters (``"\\uffff"``, not XML), C0/C1 controls (escape sequences, ``\\r``
overwrites), and format characters (bidi overrides, zero-width joiners) that draw a line
other than the one stored.  Every character that is not printable is replaced by its
visible Python escape (``\\ud800``, ``\\x1b``, ``\\u202e``, as ``ascii()`` writes it), so
nothing is silently lost and the result is plain printable text.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

__all__ = ["clean", "clean_tree", "clip", "dump_json", "is_clean", "js_number", "seconds"]

# Blocks in which every code point is printable (checked by tests/test_interop.py):
# printable ASCII, Latin-1 without NBSP and the soft hyphen, Greek and Cyrillic,
# punctuation without U+2028-202F and U+205F+, arrows, maths, box drawing, CJK symbols
# without the ideographic space, kana, CJK ideographs, Hangul, full-width forms.  Anything
# else is a candidate and the callback decides, so common text takes the fast path.
SAFE_BLOCKS = (
    "\t\x20-\x7e\xa1-\xac\xae-\xff\u0370-\u0377\u037a-\u037f\u0384-\u038a"
    "\u038c\u038e-\u03a1\u03a3-\u04ff\u2010-\u2027\u2030-\u205e\u2190-\u23ff"
    "\u2500-\u27bf\u3001-\u303f\u3041-\u3096\u3099-\u30ff\u4e00-\u9fff"
    "\uac00-\ud7a3\uff01-\uffbe"
)


@functools.cache
def _candidates(newlines: bool) -> re.Pattern[str]:
    """Characters outside SAFE_BLOCKS (compiled on first need: most text never needs it)."""
    return re.compile(f"[^\n{SAFE_BLOCKS}]" if newlines else f"[^{SAFE_BLOCKS}]")


def _unsafe(ch: str, newlines: bool) -> bool:
    """Not printable (``str.isprintable``, the rule the grader applies to the submission's
    text too): controls, format characters (bidi, zero-width), surrogates, noncharacters
    and other unassigned code points, private use, line separators, spaces other than
    ' '.  Tabs stay, and newlines unless one line is wanted."""
    if ch == "\t" or (ch == "\n" and newlines):
        return False
    return not ch.isprintable()


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def clean(text: object, *, newlines: bool = True) -> str:
    """``text`` as safe printable text; ``newlines=False`` also escapes ``\\n`` (one line).

    Never raises: a non-string is converted with ``str`` first (and if even that fails,
    a fixed placeholder is used)."""
    if not isinstance(text, str):
        try:
            text = str(text)
        except Exception:  # a hostile __str__ must not stop a report
            return "<unprintable>"
    text = str.__str__(text)  # a str subclass could override methods used below
    if text.isprintable():  # the common case, checked in C
        return text
    if newlines and "\t" not in text and all(line.isprintable() for line in text.split("\n")):
        return text  # printable lines: only the newlines were not

    replace = _replace_multiline if newlines else _replace_one_line
    return _candidates(newlines).sub(replace, text)


@functools.lru_cache(maxsize=4096)
def _replacement(ch: str, newlines: bool) -> str:
    return _escape(ch) if _unsafe(ch, newlines) else ch


def _replace_multiline(match: re.Match[str]) -> str:
    return _replacement(match.group(), True)


def _replace_one_line(match: re.Match[str]) -> str:
    return _replacement(match.group(), False)


def is_clean(text: str, *, newlines: bool = True) -> bool:
    return not any(_unsafe(ch, newlines) for ch in _candidates(newlines).findall(text))


def clip(text: str, limit: int) -> str:
    """At most about ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)"


def clean_tree(value: Any) -> Any:
    """A copy of JSON-like data with every string (keys too) cleaned and every non-finite
    float replaced by None, so that ``json.dumps(..., allow_nan=False)`` cannot fail."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {clean(k): clean_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_tree(v) for v in value]
    return clean(value)


def dump_json(doc: Any) -> str:
    """JSON text of ``doc`` after clean_tree: always valid UTF-8, never raises on content."""
    return json.dumps(clean_tree(doc), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def seconds(value: float) -> float:
    """A duration fit for any file: finite and not negative (else 0)."""
    # ``+ 0.0`` turns -0.0 into 0.0, which formats without a sign.
    return value + 0.0 if math.isfinite(value) and value >= 0 else 0.0


def js_number(value: float) -> str:
    """A number as JavaScript's ``String(n)`` writes it (for the values scores take):
    ``65`` not ``65.0``, ``65.5`` not ``65.50``."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(float(value))
