"""The class report's similarity parts, as an instructor acts on them (instructor-only, no
score changes; docs/similarity.md):

- the roster's similarity cell per file: flagged or worth a look, the closest file, the
  signs that flagged it, and a link to the pair's side-by-side view;
- "Near copies": each flagged pair once, its two files in name order (a pair, not a
  direction: nothing here says which file copied which), with the signs that flagged it,
  then the files just under the line listed apart as "worth a look", then the side-by-side
  views (``pairview``);
- files whose code is built at run time, and files not compared.

It reads each row's ``Similarity`` and, for the views, the bytes the row graded
(``BatchRow.data``, never a path), at most ``pairview.MAX_BYTES`` of each.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_rlsys.escaping import clean
from pytest_rlsys.outputs import pairview
from pytest_rlsys.outputs.batch import BatchRow
from pytest_rlsys.resources import solution_path

__all__ = ["NearCell", "Pair", "near_cells", "pairs_of", "similarity_section"]

# "Worth a look": a file whose shared code is this close under the flagging line, or over
# it but not flagged (two classmates who do not also behave alike).
LOOK_BELOW = 0.10


def _e(value: object) -> str:
    return html.escape(clean(value, newlines=False), quote=True)


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


@dataclass(frozen=True)
class NearCell:
    """What the roster says of one file."""

    mark: str  # "flagged" | "worth a look" | "built at run time" | "not compared" | ""
    closest: str
    sign: str  # e.g. "code 0.92", "sentences 5", "behaviour 0.90"
    pair: str  # the id of its side-by-side view, or ""


def _thresholds() -> tuple[float, float, int, float]:
    from pytest_rlsys.similarity import CONFIRMED_ABOVE, MIN_SHARED_SENTENCES, THRESHOLD
    from pytest_rlsys.similarity.birthmark import THRESHOLD as BEHAVES_AT

    return THRESHOLD, CONFIRMED_ABOVE, MIN_SHARED_SENTENCES, BEHAVES_AT


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


def _sign(row: BatchRow, threshold: float) -> str:
    found = row.similarity
    if found.flagged_by:
        return ", ".join(found.flagged_by).replace("hidden", "built at run time")
    return f"code {found.score:.2f}" if found.score is not None else ""


def near_cells(rows: Sequence[BatchRow]) -> dict[str, NearCell]:
    """The roster's similarity cell of every file."""
    threshold = _thresholds()[0]
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
        elif found.score >= threshold - LOOK_BELOW:
            mark = "worth a look"
        else:
            mark = ""
        pair = views.get(_ordered(row.name, closest), "") if closest and mark else ""
        sign = _sign(row, threshold) if mark else ""
        out[row.name] = NearCell(mark, closest if mark else "", sign, pair)
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


def similarity_section(rows: Sequence[BatchRow]) -> str:
    """The "Near copies" section: flagged pairs with the signs that flagged them, files
    worth a look, code built at run time, files not compared (each with the reason), and
    each flagged pair side by side."""
    threshold, confirmed, min_sentences, behaves_at = _thresholds()
    pairs = pairs_of(rows)
    cells = near_cells(rows)
    unread = sorted(
        f"{r.name} ({r.similarity.not_compared})" if r.similarity.not_compared else r.name
        for r in rows
        if r.similarity.score is None
    )
    hidden = sorted(r.name for r in rows if r.similarity.score is not None and r.similarity.hidden)
    look = sorted(name for name, cell in cells.items() if cell.mark == "worth a look")
    body = "".join(
        f'<tr><td>{_e(p.a)}</td><td>{_e(p.b)}</td><td class="n">{_cell(p.code)}</td>'
        f'<td class="n">{_cell(p.sentences, "{}")}</td><td class="n">{_cell(p.behaviour)}</td>'
        f'<td>{_e(p.flagged_by)}</td><td><a href="#{p.ident}">side by side</a></td></tr>'
        for p in pairs
    )
    compared = "compared " if unread else ""
    table = (
        '<table id="similarity-table"><caption>Flagged pairs (each pair once, its files in '
        "name order: a pair, not who copied whom)</caption><thead><tr>"
        '<th scope="col">file</th><th scope="col">file</th>'
        '<th scope="col" class="n">shared code</th>'
        '<th scope="col" class="n">reference sentences</th>'
        '<th scope="col" class="n">behaviour</th><th scope="col">flagged by</th>'
        f'<th scope="col">view</th></tr></thead><tbody>{body}</tbody></table>'
        if pairs
        else f"<p>No {compared}submission is a near copy of the reference or of a classmate"
        + (" by its code, sentences or behaviour (but see below).</p>" if hidden else ".</p>")
    )
    worth = (
        '<p id="similarity-look">Worth a look (not flagged: shared code within '
        f"{LOOK_BELOW:.2f} under the line, or over it without the behaviour that confirms "
        "it): "
        + ", ".join(f"{_e(n)} ({_e(cells[n].closest)}, {_e(cells[n].sign)})" for n in look)
        + ".</p>"
        if look
        else ""
    )
    built = (
        '<p id="similarity-hidden">Code built at run time (the file reaches exec, eval, '
        "compile or the like, or a function it gives is named nowhere in it: its code "
        f"cannot all be compared; read them yourself): {_e(', '.join(hidden))}.</p>"
        if hidden
        else ""
    )
    not_compared = (
        '<p id="similarity-unread">Not compared (not read: not a .py file, a link, a folder '
        "without one .py file, a FIFO or a file over the size limit; or its analysis went "
        f"past a limit; read them yourself): {_e(', '.join(unread))}.</p>"
        if unread
        else ""
    )
    views = ""
    if pairs:
        named = {row.name: row for row in rows}
        read = {name: _source(name, named) for p in pairs for name in (p.a, p.b)}
        views = "<h3>Side by side</h3>" + "".join(
            pairview.pair_view(p.ident, (p.a, read[p.a]), (p.b, read[p.b])) for p in pairs
        )
    return (
        '<section aria-labelledby="h-similarity"><h2 id="h-similarity">Near copies</h2>'
        '<p class="muted">Each file is listed with its closest match, and with the reference '
        "too when it is over the reference's own signs. Shared code: the "
        "share of the smaller file's fingerprints (winnowed, names and layout ignored) the "
        f"other has; {threshold:.2f} or more is flagged. Reference sentences: how many of the "
        "reference's own string literals (its error messages) the file holds word for word; "
        f"{min_sentences} or more is flagged. Behaviour: the weighted share of about "
        "60 calls on inputs the template leaves open (strings for numbers, odd fabric ids, "
        "reports missing keys) on which the file does what the other does; against the "
        f"reference {behaves_at:.2f} or more is flagged; two classmates whose shared code is "
        f"under {confirmed:.2f} are flagged only if both were probed and they also reach it "
        "(a file the probes could not judge is never evidence of likeness). Flagged by: "
        "the signs that flagged the pair. A flag is a reason to read both files, not proof "
        "of copying, and says nothing of which came first: it changes no score.</p>"
        f"{table}{worth}{built}{not_compared}{views}</section>"
    )
