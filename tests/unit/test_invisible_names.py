"""Names made only of characters that draw nothing (docs/threat-model.md, "One escaping
rule at every edge"): Python calls them printable, so they passed the rule and a roster
row showed a blank name.  The class is derived here from Unicode's own character names
and categories, not from the table in escaping.py."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from pytest_rlsys.escaping import clean, clean_line, csv_cell, is_clean

# What a font draws as empty space though the character is printable to Python: the
# fillers (Hangul, Khitan; not the gap fillers of Indic scripts, drawn as a mark), blank
# patterns (braille), variation selectors and the combining grapheme joiner
# (default-ignorable: drawn only as a change to a neighbour).
_BLANK_WORDS = ("FILLER", "PATTERN BLANK", "VARIATION SELECTOR", "GRAPHEME JOINER")


def _draws_nothing() -> list[str]:
    found = []
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        name = unicodedata.name(ch, "")
        drawn = name.endswith(("GAP FILLER", "LINE FILLER")) or "GAP FILLER-" in name
        if ch.isprintable() and not drawn and any(word in name for word in _BLANK_WORDS):
            found.append(ch)
    return found


def test_every_printable_character_that_draws_nothing_is_escaped() -> None:
    blank = _draws_nothing()
    assert {"\u3164", "\u1160", "\u115f", "\u2800", "\uffa0", "\ufe0f"} <= set(blank)
    assert [ch for ch in blank if clean(ch) == ch] == []
    assert [ch for ch in blank if is_clean(ch)] == []


@pytest.mark.parametrize("name", ["\u3164\u3164", "\u2800\u2800\u2800", "\u115f\u1160", "\uffa0"])
def test_a_name_of_blank_characters_is_visible_in_every_edge(name: str) -> None:
    for shown in (clean(name), clean_line(name), str(csv_cell(name))):
        assert shown.strip() and shown.isascii(), shown
        assert "\\u" in shown


def test_honest_names_are_unchanged() -> None:
    for name in ("alice", "张伟", "김민준", "Zoë", "ｆｕｌｌ", "Ωμέγα"):
        assert clean(name) == name
