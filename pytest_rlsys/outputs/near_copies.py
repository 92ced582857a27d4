"""The class report's similarity parts, as an instructor acts on them (instructor-only, no
score changes; docs/similarity.md):

- the roster's similarity cell per file: flagged or worth a look, the closest file, the
  signs that flagged it (or make it worth a look), and a link to the pair's side-by-side
  view;
- "Near copies": each flagged pair once, its two files in name order (a pair, not a
  direction: nothing here says which file copied which), with the signs that flagged it,
  then the files worth a look (``Similarity.look_by``: code just under the line, or
  behaviour alone) listed apart, then the side-by-side views (``pairview``);
- files whose code is built at run time, and files not compared.

It reads each row's ``Similarity`` and, for the views, the bytes the row graded
(``BatchRow.data``, never a path), at most ``pairview.MAX_BYTES`` of each.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_rlsys.escaping import html_text as _e
from pytest_rlsys.outputs import pairview
from pytest_rlsys.outputs.batch import BatchRow
from pytest_rlsys.outputs.class_charts import html_table
from pytest_rlsys.outputs.class_words import say
from pytest_rlsys.resources import solution_path

__all__ = ["NearCell", "Pair", "near_cells", "pairs_of", "shown_name", "similarity_section"]


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


@dataclass(frozen=True)
class Pair:
    """A flagged pair: two files in name order (the reference always second)."""

    a: str
    b: str
    code: float | None  # shared code; None where the pair was flagged by another sign
    sentences: int | None  # reference sentences: a reference pair's only
    behaviour: float | None
    flagged_by: str = ""  # the signs that flagged it (Similarity.flagged_by)
    ident: str = ""  # its side-by-side view's id: "pair-1", in the table's order


_SIGN_WORDS = re.compile(r"built at run time|code|sentences|behaviour")


@dataclass(frozen=True)
class NearCell:
    """What the roster says of one file (an unmarked one: its closest file and shared
    code, for comparison)."""

    mark: str  # "flagged" | "worth a look" | "built at run time" | "not compared" | ""
    closest: str
    sign: str  # e.g. "code 0.92", "code, behaviour"; unmarked: the shared code, "0.31"
    pair: str  # the id of its side-by-side view, or ""

    def sign_text(self, lang: str) -> str:
        """``sign`` in ``lang`` (its words are the similarity check's sign names)."""
        return _SIGN_WORDS.sub(lambda m: say(m.group(), lang), self.sign)


def shown_name(name: str, lang: str) -> str:
    """A file's name as the page shows it: the reference's in ``lang``."""
    from pytest_rlsys.similarity import REFERENCE

    return say("reference", lang) if name == REFERENCE else name


def _thresholds() -> tuple[float, float, int, float, float]:
    from pytest_rlsys.similarity import CONFIRMED_ABOVE, MIN_SHARED_SENTENCES, THRESHOLD
    from pytest_rlsys.similarity.birthmark import THRESHOLD as BEHAVES_AT
    from pytest_rlsys.similarity.decide import LOOK_BELOW

    return THRESHOLD, CONFIRMED_ABOVE, MIN_SHARED_SENTENCES, BEHAVES_AT, LOOK_BELOW


def _ordered(x: str, y: str) -> tuple[str, str]:
    from pytest_rlsys.similarity import REFERENCE

    if REFERENCE in (x, y):
        return (y, x) if x == REFERENCE else (x, y)
    return (x, y) if x <= y else (y, x)


def _pairs_of_row(row: BatchRow) -> list[Pair]:
    """The flagged pairs of one row: its closest classmate when code flagged it, and the
    reference when it is the closest or the file is over a reference's own signs (even
    when a classmate's code is closer: else the pair's line hides that flag)."""
    from pytest_rlsys.similarity import REFERENCE

    found = row.similarity
    signs = [sign for sign in found.flagged_by if sign != "hidden"]
    if not signs or found.score is None:
        return []
    theirs = found.closest or ""
    out: list[Pair] = []
    if theirs != REFERENCE and any(sign.startswith("code") for sign in signs):
        # Between classmates the behaviour shown is the pair's (birthmark.alike).
        key = _ordered(row.name, theirs)
        out.append(Pair(*key, found.score, None, found.alike, ", ".join(signs)))
    own = [sign for sign in signs if sign in ("sentences", "behaviour")]
    if theirs == REFERENCE or own:
        code, by = (found.score, signs) if theirs == REFERENCE else (None, own)
        key = _ordered(row.name, REFERENCE)
        out.append(Pair(*key, code, found.sentences, found.behaviour, ", ".join(by)))
    return out


def pairs_of(rows: Sequence[BatchRow]) -> list[Pair]:
    """Every flagged pair once, strongest shared code first."""
    pairs: dict[tuple[str, str], Pair] = {}
    for row in rows:
        for pair in _pairs_of_row(row):
            pairs.setdefault((pair.a, pair.b), pair)
    ranked = sorted(pairs.values(), key=lambda p: (p.code is None, -(p.code or 0), p.a, p.b))
    return [dataclasses.replace(p, ident=f"pair-{i}") for i, p in enumerate(ranked, 1)]


def _sign(row: BatchRow) -> str:
    found = row.similarity
    if found.flagged_by:
        return ", ".join(found.flagged_by).replace("hidden", "built at run time")
    value = {"code": found.score, "behaviour": found.behaviour}
    return ", ".join(f"{sign} {value[sign] or 0:.2f}" for sign in found.look_by)


def near_cells(rows: Sequence[BatchRow]) -> dict[str, NearCell]:
    """The roster's similarity cell of every file."""
    views = {(p.a, p.b): p.ident for p in pairs_of(rows)}
    out = {}
    for row in rows:
        found = row.similarity
        if found.score is None:
            out[row.name] = NearCell("not compared", "", found.not_compared, "")
            continue
        closest = found.closest or ""
        if [sign for sign in found.flagged_by if sign != "hidden"]:
            mark = "flagged"
        elif found.hidden:
            mark = "built at run time"
        elif found.look_by:
            mark = "worth a look"
        else:
            mark = ""
        pair = views.get(_ordered(row.name, closest), "") if closest and mark else ""
        sign = _sign(row) if mark else f"{found.score:.2f}"
        out[row.name] = NearCell(mark, closest, sign, pair)
    return out


def _source(name: str, rows: dict[str, BatchRow]) -> str | None:
    """The text a pair's file holds: the bytes its row graded (the reference's own file)."""
    from pytest_rlsys.similarity import REFERENCE

    if name == REFERENCE:
        try:
            return solution_path().read_text(encoding="utf-8")
        except OSError:
            return None
    row = rows.get(name)
    if row is None or row.data is None or len(row.data) > pairview.MAX_BYTES:
        return None
    return row.data.decode("utf-8", errors="replace")


def _cell(value: float | int | None, fmt: str = "{:.2f}") -> str:
    return "–" if value is None else fmt.format(value)


def _pairs_table(pairs: Sequence[Pair], lang: str) -> str:
    body = "".join(
        f"<tr><td>{_e(shown_name(p.a, lang))}</td><td>{_e(shown_name(p.b, lang))}</td>"
        f'<td class="n">{_cell(p.code)}</td><td class="n">{_cell(p.sentences, "{}")}</td>'
        f'<td class="n">{_cell(p.behaviour)}</td>'
        f"<td>{_e(_SIGN_WORDS.sub(lambda m: say(m.group(), lang), p.flagged_by))}</td>"
        f'<td><a href="#{p.ident}">{_e(say("side_by_side", lang))}</a></td></tr>'
        for p in pairs
    )
    numbers = ("shared_code", "reference_sentences", "behaviour")
    keys = ("file", "file", *numbers, "flagged_by", "view")
    heads = [(say(key, lang), key in numbers) for key in keys]
    return html_table("similarity-table", say("pairs_caption", lang), heads, body, wide=True)


def _listed(ident: str, key: str, names: Sequence[str], lang: str, **fields: object) -> str:
    """A paragraph listing files (empty when there is none)."""
    if not names:
        return ""
    return f'<p id="{ident}">{_e(say(key, lang, files=", ".join(names), **fields))}</p>'


def _views(rows: Sequence[BatchRow], pairs: Sequence[Pair], lang: str) -> str:
    if not pairs:
        return ""
    from pytest_rlsys.similarity import REFERENCE

    named = {row.name: row for row in rows}
    read = {name: _source(name, named) for p in pairs for name in (p.a, p.b)}
    return f"<h3>{_e(say('views_head', lang))}</h3>" + "".join(
        pairview.pair_view(
            p.ident,
            (shown_name(p.a, lang), read[p.a]),
            (shown_name(p.b, lang), read[p.b]),
            lang,
            reference=p.b == REFERENCE,
        )
        for p in pairs
    )


def similarity_section(rows: Sequence[BatchRow], lang: str = "en") -> str:
    """The "Near copies" section: flagged pairs with the signs that flagged them, files
    worth a look, code built at run time, files not compared (each with the reason), and
    each flagged pair side by side (a link to one opens it)."""
    threshold, confirmed, min_sentences, behaves_at, below = _thresholds()
    pairs = pairs_of(rows)
    cells = near_cells(rows)
    unread = sorted(
        f"{r.name} ({r.similarity.not_compared})" if r.similarity.not_compared else r.name
        for r in rows
        if r.similarity.score is None
    )
    hidden = sorted(r.name for r in rows if r.similarity.score is not None and r.similarity.hidden)
    look = [
        f"{name} ({shown_name(cells[name].closest, lang)}, {cells[name].sign_text(lang)})"
        for name in sorted(n for n, cell in cells.items() if cell.mark == "worth a look")
    ]
    compared = say("compared", lang) if unread else ""
    table = (
        _pairs_table(pairs, lang)
        if pairs
        else f"<p>{_e(say('no_pair_but' if hidden else 'no_pair', lang, compared=compared))}</p>"
    )
    note = say(
        "near_note",
        lang,
        threshold=f"{threshold:.2f}",
        sentences=min_sentences,
        behaves=f"{behaves_at:.2f}",
        confirmed=f"{confirmed:.2f}",
    )
    return (
        '<section aria-labelledby="h-similarity"><h2 id="h-similarity">'
        f'{_e(say("near_head", lang))}</h2><p class="muted">{_e(note)}</p>{table}'
        + _listed(
            "similarity-look",
            "worth_look",
            look,
            lang,
            below=f"{below:.2f}",
            behaves=f"{behaves_at:.2f}",
        )
        + _listed("similarity-hidden", "built_files", hidden, lang)
        + _listed("similarity-unread", "unread_files", unread, lang)
        + _views(rows, pairs, lang)
        + "</section>"
    )
