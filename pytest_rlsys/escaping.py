"""The one escaping rule, and the terminal edge every command writes through (``say``).

Any Python string becomes safe printable text: valid UTF-8, valid XML 1.0 character data,
nothing that moves a terminal's cursor or reorders a line.  A ``str`` can hold what no
file format can carry: lone surrogates (``"\\ud800"``), noncharacters (``"\\uffff"``),
C0/C1 controls (escape sequences, ``\\r`` overwrites) and format characters (bidi
overrides, zero-width joiners) that draw a line other than the one stored.  Every
character that is not printable (``str.isprintable``; tabs and, unless one line is
wanted, newlines excepted), and every printable one that draws nothing
(``DRAWS_NOTHING``: Hangul fillers, the braille blank, variation selectors), is replaced
by its visible escape (``\\ud800``, ``\\x1b``, ``\\u202e``, ``\\u3164``), so
nothing is silently lost and no name is blank.

Edge-specific rules build on ``clean``: ``clean_line`` (one line, runs of spaces
collapsed, bounded: the submission's own texts), ``clean_output`` (captured output, tabs
as spaces), ``csv_cell`` (OWASP formula neutralising).  HTML and XML writers escape
markup after ``clean``; JSON writers go through ``outputs.text.dump_json``.

Two edges apply ``clean`` to everything written, whoever built the text: ``say`` (the
terminal: stdout, stderr) and ``outputs.files.write_atomic`` (every output file).  No
module writes text another way (tests/unit/test_output_edges.py walks the package and
fails on a ``print``, a ``.write`` or a text ``open`` outside them, a short reasoned
list excepted), so an escape cannot be forgotten.  The rules per format are in
docs/threat-model.md ("Output edges").
"""

from __future__ import annotations

import functools
import html
import re
import sys
import unicodedata
from typing import TextIO

__all__ = [
    "clean",
    "clean_document",
    "clean_line",
    "clean_output",
    "csv_cell",
    "is_clean",
    "roster_name",
    "say",
]

# Blocks in which every code point is printable (checked by tests/unit/test_interop.py):
# printable ASCII, Latin-1 without NBSP and the soft hyphen, Greek and Cyrillic,
# punctuation without U+2028-202F and U+205F+, arrows, maths, box drawing, CJK symbols
# without the ideographic space, kana, CJK ideographs, Hangul, full-width forms.  Anything
# else is a candidate and the callback decides, so common text takes the fast path.
SAFE_BLOCKS = (
    "\t\x20-\x7e\xa1-\xac\xae-\xff\u0370-\u0377\u037a-\u037f\u0384-\u038a"
    "\u038c\u038e-\u03a1\u03a3-\u04ff\u2010-\u2027\u2030-\u205e\u2190-\u23ff"
    "\u2500-\u27bf\u3001-\u303f\u3041-\u3096\u3099-\u30ff\u4e00-\u9fff"
    "\uac00-\ud7a3\uff01-\uff9f\uffa1-\uffbe"
)

# Printable to Python, yet drawn as nothing: a name made of them is a blank roster row.
# Unicode's Default_Ignorable_Code_Point that ``isprintable`` lets through (its format
# characters, Cf, are already not printable): Other_Default_Ignorable_Code_Point and
# Variation_Selector of PropList.txt (Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the
# combining grapheme joiner, Khmer inherent vowels, Mongolian and other variation
# selectors, tags, the Khitan filler), plus the braille pattern blank U+2800, a symbol
# with an empty glyph.
DRAWS_NOTHING = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2065\u2800\u3164"
    "\ufe00-\ufe0f\uffa0\ufff0-\ufff8\U00016fe4\U000e0000-\U000e0fff]"
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
    return not ch.isprintable() or DRAWS_NOTHING.match(ch) is not None


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
    if text.isascii() or not DRAWS_NOTHING.search(text):
        if text.isprintable():  # the common case, checked in C
            return text
        if newlines and "\t" not in text and all(ln.isprintable() for ln in text.split("\n")):
            return text  # printable lines: only the newlines were not

    replace = _replace_multiline if newlines else _replace_one_line
    return _candidates(newlines).sub(replace, text)


def html_text(value: object) -> str:
    """Text for an HTML page: escaped (controls, bidi, zero-width shown as ``\\u202e``), then
    markup-escaped."""
    return html.escape(clean(value, newlines=False), quote=True)


def roster_name(name: str) -> str:
    """A file name as a roster shows it, every row told apart from every other: two names
    that are one text to Unicode (``café`` composed, and ``cafe`` + U+0301 as macOS writes
    it) draw the same row, so a name not in NFC shows its combining marks escaped
    (``cafe\\u0301.py``); and spaces a page or a spreadsheet cell does not show (leading,
    trailing, two or more in a row: ``Li Na `` and ``Li  Na`` beside ``Li Na``) are shown
    as ``\\x20``.  A backslash is shown as ``\\x5c``, so that no name spells another's
    escape (a file named ``cafe\\u0301.py`` beside the decomposed ``café.py``).  Nearly
    every name is shown as it is."""
    name = name.replace("\\", "\\x5c")
    if not unicodedata.is_normalized("NFC", name):
        name = "".join(_escape(ch) if unicodedata.combining(ch) else ch for ch in name)
    return _UNSEEN_SPACES.sub(lambda m: "\\x20" * len(m.group()), name)


# Spaces a rendering drops or merges: at either end, or two or more together.
_UNSEEN_SPACES = re.compile(r"^ +| +$| {2,}")


@functools.lru_cache(maxsize=4096)
def _replacement(ch: str, newlines: bool) -> str:
    return _escape(ch) if _unsafe(ch, newlines) else ch


def _replace_multiline(match: re.Match[str]) -> str:
    return _replacement(match.group(), True)


def _replace_one_line(match: re.Match[str]) -> str:
    return _replacement(match.group(), False)


def is_clean(text: str, *, newlines: bool = True) -> bool:
    return not any(_unsafe(ch, newlines) for ch in _candidates(newlines).findall(text))


_SPACE_RUN = re.compile(" {2,}")


def clean_line(text: str, limit: int = 500) -> str:
    """Text the submission chose, made safe to print: one line (tabs escaped too),
    nothing invisible, runs of spaces collapsed (padding cannot push text onto a fake
    line of its own), at most ``limit`` characters."""
    return _SPACE_RUN.sub(" ", clean(text[:limit].replace("\t", "\\t"), newlines=False))


def clean_output(text: str) -> str:
    """Captured output made safe to print: lines stay, tabs become spaces, every other
    non-printable character (ANSI escapes, carriage returns, bidi overrides) is escaped."""
    return clean(text.replace("\t", "    "))


# OWASP "CSV Injection": a cell a spreadsheet would read as a formula starts with one of
# these; prefixing a single quote makes it text (and the quote is shown, not hidden).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A CSV cell: numbers and None as they are, text cleaned to one line and, when a
    spreadsheet would take it for a formula, prefixed with ``'``."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = value if isinstance(value, str) else str(value)
    if text.startswith(_FORMULA_START):  # checked before cleaning: \t and \r lead too
        return "'" + clean(text, newlines=False)
    return clean(text, newlines=False)


def say(text: object = "", *, err: bool = False, end: str = "\n", to: TextIO | None = None) -> None:
    """The terminal edge: ``text`` cleaned (its lines kept) and written to stdout, stderr
    (``err``) or the stream ``to``.  Every command's terminal text goes through here."""
    stream = to if to is not None else sys.stderr if err else sys.stdout
    stream.write(clean_document(text) + end)


def clean_document(text: object) -> str:
    """A whole document (a CSV, a page, a report) as ``clean`` makes it, its ``\\r\\n``
    line ends kept (a CSV's, RFC 4180): what both edges write."""
    if not isinstance(text, str):
        return clean(text)
    return "\r\n".join(clean(part) for part in str.__str__(text).split("\r\n"))
